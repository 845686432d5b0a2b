package pyenv

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// csvFirstFields is how RECORD was read before recordReader: encoding/csv
// with LazyQuotes and any number of fields, each record's first field.
func csvFirstFields(br *bufio.Reader) []string {
	r := csv.NewReader(br)
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	var out []string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, rec[0])
	}
}

func readerFirstFields(br *bufio.Reader) []string {
	r := &recordReader{}
	r.reset(br)
	var out []string
	for {
		first, err := r.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, "error: "+err.Error())
		}
		out = append(out, string(first))
	}
}

// errAfter is a reader that fails after its text, as a disk might.
type errAfter struct{ r io.Reader }

func (e errAfter) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		return n, errors.New("read failed")
	}
	return n, err
}

// FuzzRecordReaderAgrees: recordReader gives each record's first field
// (and the error that ends them) exactly as encoding/csv did, on any text:
// quoted fields across lines, "" and bare quotes, \r\n and a last \r,
// empty lines, lines longer than the buffer (16 bytes here), a read error.
func FuzzRecordReaderAgrees(f *testing.F) {
	for _, s := range []string{
		"torch/__init__.py,sha256=abc,123\ntorch/lib/libc10.so,sha256=def,456\n",
		"a,b,c\r\n\r\n\"quoted, with comma\",x\n\"multi\nline\",y\n",
		"\"a\"\"b\",1\n\"bare \" quote\",2\n\"unterminated\n",
		"x,\"second field\nspans lines\",3\nnext,1\n",
		"last line without newline\r",
		",empty first\n\n\n\"\",2\n",
		"a very long first field that does not fit in sixteen bytes,1\n",
		"\"q\"x,1\n\"q\"\n\"q\"\"\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, failing bool) {
		open := func() *bufio.Reader {
			var r io.Reader = strings.NewReader(s)
			if failing {
				r = errAfter{r}
			}
			return bufio.NewReaderSize(r, 16)
		}
		want, got := csvFirstFields(open()), readerFirstFields(open())
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Fatalf("%q:\n got %q\nwant %q", s, got, want)
		}
	})
}
