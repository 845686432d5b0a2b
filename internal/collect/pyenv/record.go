package pyenv

import (
	"bufio"
	"bytes"
	"io"
)

// recordReader reads the first field of each record of a RECORD file, as
// encoding/csv reads it with LazyQuotes and any number of fields: the
// same records (a quoted field may span lines, so the other fields are
// parsed too, for where the record ends), the same first fields, the same
// errors. encoding/csv made a string of every record (25,000 in a
// 5,000-distribution environment) and grew its buffers for every file;
// this keeps one buffer, and the caller copies the few fields it keeps.
// FuzzRecordReaderAgrees checks it against encoding/csv.
type recordReader struct {
	br    *bufio.Reader
	raw   []byte // a line longer than br's buffer
	first []byte // the record's first field
}

// reset makes r read br, keeping its buffers.
func (r *recordReader) reset(br *bufio.Reader) {
	r.br, r.raw, r.first = br, r.raw[:0], r.first[:0]
}

// readLine is encoding/csv's: a line with its "\n" ("\r\n" made "\n"), a
// final line without one (a last "\r" dropped), or io.EOF.
func (r *recordReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.raw = append(r.raw[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			r.raw = append(r.raw, line...)
		}
		line = r.raw
	}
	if len(line) > 0 && err == io.EOF {
		err = nil
		if line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
	}
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, err
}

// lengthNL is 1 when b ends with a newline.
func lengthNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

// next returns the first field of the next record (valid until the next
// call), or io.EOF after the last; a read error is returned with the
// record it cut, as encoding/csv returns it.
func (r *recordReader) next() ([]byte, error) {
	var line []byte
	var errRead error
	for errRead == nil { // empty lines are skipped
		line, errRead = r.readLine()
		if errRead == nil && len(line) == lengthNL(line) {
			line = nil
			continue
		}
		break
	}
	if errRead == io.EOF {
		return nil, errRead
	}
	r.first = r.first[:0]
	field := 0 // which field of the record is being read
	keep := func(b []byte) {
		if field == 0 {
			r.first = append(r.first, b...)
		}
	}
parseField:
	for {
		if len(line) == 0 || line[0] != '"' {
			// An unquoted field: up to the next comma, or the line's end.
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				keep(line[:len(line)-lengthNL(line)])
				break parseField
			}
			keep(line[:i])
			line = line[i+1:]
			field++
			continue
		}
		// A quoted field: up to a quote followed by a comma or the end of
		// a line, across lines; "" is a quote, any other quote is kept
		// as it is (LazyQuotes).
		line = line[1:]
		for {
			i := bytes.IndexByte(line, '"')
			switch {
			case i >= 0:
				keep(line[:i])
				quote := line[i : i+1]
				line = line[i+1:]
				switch {
				case len(line) > 0 && line[0] == '"':
					keep(line[:1])
					line = line[1:]
				case len(line) > 0 && line[0] == ',':
					line = line[1:]
					field++
					continue parseField
				case len(line) == lengthNL(line):
					break parseField
				default:
					keep(quote)
				}
			case len(line) > 0:
				keep(line)
				if errRead != nil {
					break parseField
				}
				line, errRead = r.readLine()
				if errRead == io.EOF {
					errRead = nil
				}
			default: // the input ended inside the quotes
				break parseField
			}
		}
	}
	return r.first, errRead
}
