// Package report renders facts and findings for people (text, Markdown) and
// programs (JSON).
package report

import (
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
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(indenter{w})
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// indenter indents what a json.Encoder writes (one whole value per Write)
// on its way to w.
type indenter struct{ w io.Writer }

func (in indenter) Write(compact []byte) (int, error) {
	// Indented JSON of fastpath's documents is about 1.6 times the compact.
	if _, err := in.w.Write(indentJSON(make([]byte, 0, len(compact)*2), compact)); err != nil {
		return 0, err
	}
	return len(compact), nil
}

// indentJSON appends src, compact JSON as encoding/json writes it (ending
// in a newline), to dst indented by two spaces as json.Indent does: each
// element on its own line, ": " after a key, empty objects and arrays kept
// as {} and [].
func indentJSON(dst, src []byte) []byte {
	depth := 0
	needIndent := false // just after { or [: indent unless it closes at once
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			newline()
		}
		switch c {
		case '"':
			// Copy the string whole: a quote inside it is escaped.
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
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
	return dst
}
