// Package report renders facts and findings for people (text, Markdown) and
// programs (JSON).
package report

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
)

// Doctor is the JSON document of `fastpath doctor --json`, declared in
// diagnose so that remote and fleet need not import a renderer.
type Doctor = diagnose.Doctor

// JSON writes v indented, with a trailing newline: what a json.Encoder
// with SetIndent("", "  ") writes, byte for byte. The Encoder indents
// through encoding/json's validating scanner, a state machine run on every
// byte: on a 5,000-distribution environment (4.6 MB of JSON) that was
// about 50 ms and 25 MB of garbage. The document here comes from
// json.Marshal's own encoder, so it is valid and has no whitespace outside
// strings, and indenting it needs only to know where strings are.
//
// A doctor report of a big environment is encoded in parts, on every core
// (doctorParts).
func JSON(w io.Writer, v any) error {
	if d, ok := v.(Doctor); ok {
		if segs, ok := doctorParts(d); ok {
			return indenter{w}.writeSegments(segs, indentChunk)
		}
	}
	enc := json.NewEncoder(indenter{w})
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// indenter indents what a json.Encoder writes (one whole value per Write)
// on its way to w.
type indenter struct{ w io.Writer }

// indentChunk is how many indented bytes are held before they are written
// (a var so that tests can cut the output everywhere). A whole indented
// report held at once was 9 MB at 5,000 distributions, allocated and
// zeroed for one Write.
var indentChunk = 256 << 10

func (in indenter) Write(compact []byte) (int, error) {
	if err := in.writeSegments([][]byte{compact}, indentChunk); err != nil {
		return 0, err
	}
	return len(compact), nil
}

// writeSegments writes the compact JSON that segs hold one after the other
// (none cutting a token in two) indented, in writes of about chunk bytes.
func (in indenter) writeSegments(segs [][]byte, chunk int) error {
	total := 0
	for _, s := range segs {
		total += len(s)
	}
	ind := jsonIndent{dst: make([]byte, 0, min(2*total, chunk+chunk/4))}
	for _, rest := range segs {
		for len(rest) > 0 {
			// Whole tokens up to about chunk bytes of output, then a write.
			rest = ind.indent(rest, chunk)
			if len(ind.dst) >= chunk {
				if _, err := in.w.Write(ind.dst); err != nil {
					return err
				}
				ind.dst = ind.dst[:0]
			}
		}
	}
	if len(ind.dst) > 0 {
		if _, err := in.w.Write(ind.dst); err != nil {
			return err
		}
	}
	return nil
}

// indentJSON appends src, compact JSON as encoding/json writes it (ending
// in a newline), to dst indented by two spaces as json.Indent does: each
// element on its own line, ": " after a key, empty objects and arrays kept
// as {} and [].
func indentJSON(dst, src []byte) []byte {
	ind := jsonIndent{dst: dst}
	ind.indent(src, -1)
	return ind.dst
}

// spaces indent a line, two per level.
const spaces = "                                                                "

// jsonIndent is indentJSON's state, kept between the pieces of one
// document.
type jsonIndent struct {
	dst        []byte
	depth      int
	needIndent bool // just after { or [: indent unless it closes at once
}

// indent appends the indented form of src to dst, stopping after the token
// that takes dst past limit bytes (never, for a negative limit), and
// returns what is left of src.
func (in *jsonIndent) indent(src []byte, limit int) []byte {
	dst, depth, needIndent := in.dst, in.depth, in.needIndent
	newline := func() {
		dst = append(dst, '\n')
		for n := 2 * depth; n > 0; {
			k := min(n, len(spaces))
			dst = append(dst, spaces[:k]...)
			n -= k
		}
	}
	i := 0
	for ; i < len(src); i++ {
		if limit >= 0 && len(dst) >= limit {
			break
		}
		c := src[i]
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			newline()
		}
		switch c {
		case '"':
			// Copy the string whole: a quote inside it is escaped, that is
			// preceded by an odd number of backslashes.
			j := i + 1
			for {
				k := bytes.IndexByte(src[j:], '"')
				if k < 0 {
					j = len(src)
					break
				}
				j += k
				back := 0
				for back < j-i-1 && src[j-1-back] == '\\' {
					back++
				}
				if back%2 == 0 {
					break
				}
				j++
			}
			j = min(j, len(src)-1)
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			needIndent = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	in.dst, in.depth, in.needIndent = dst, depth, needIndent
	return src[i:]
}
