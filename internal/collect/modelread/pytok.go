package modelread

import (
	"errors"
	"fmt"
)

// A small Python tokenizer: enough of the language's lexical rules
// (comments, every string form, brackets, backslash continuations,
// indentation) to cut a modeling file into logical lines of tokens. It is not
// a parser; the scanner in pyscan.go reads statements off these lines. It
// never executes anything, never panics and is bounded: a file larger than
// maxPySource or with more than maxPyTokens tokens is refused.

// maxPySource caps a modeling file: the largest in transformers 5.24 is under
// 400 KB.
const maxPySource = 4 << 20

// maxPyTokens caps the tokens of one file (about one token per 4 bytes in
// real files).
const maxPyTokens = 2 << 20

type pyTokKind uint8

const (
	pyName pyTokKind = iota + 1
	pyString
	pyNumber
	pyOp
)

type pyToken struct {
	kind pyTokKind
	// text is the name, number or operator; for a string, its body between
	// the quotes with escapes left as written (prefix dropped).
	text string
	line int
}

// pyLine is one logical line: its indentation (columns), the physical line
// it starts on, and its tokens.
type pyLine struct {
	indent int
	line   int
	toks   []pyToken
}

func (l *pyLine) is(i int, kind pyTokKind, text string) bool {
	return i >= 0 && i < len(l.toks) && l.toks[i].kind == kind && l.toks[i].text == text
}

func (l *pyLine) startsWith(words ...string) bool {
	for i, w := range words {
		if i >= len(l.toks) || l.toks[i].text != w || l.toks[i].kind == pyString {
			return false
		}
	}
	return true
}

var errPyTooLarge = errors.New("python source too large")

// tokenizePython cuts src into logical lines.
func tokenizePython(src []byte) ([]pyLine, error) {
	if len(src) > maxPySource {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", errPyTooLarge, len(src), maxPySource)
	}
	var (
		lines  []pyLine
		cur    *pyLine
		depth  int // bracket depth: newlines inside brackets continue the line
		line   = 1
		ntoks  int
		i      int
		atBOL  = true // at the beginning of a physical line outside brackets
		indent int
	)
	emit := func(t pyToken) error {
		ntoks++
		if ntoks > maxPyTokens {
			return fmt.Errorf("%w: more than %d tokens", errPyTooLarge, maxPyTokens)
		}
		if cur == nil {
			lines = append(lines, pyLine{indent: indent, line: t.line})
			cur = &lines[len(lines)-1]
		}
		cur.toks = append(cur.toks, t)
		return nil
	}
	endLine := func() {
		cur = nil
		atBOL = true
	}
	for i < len(src) {
		c := src[i]
		if atBOL && depth == 0 && cur == nil {
			// Measure indentation; blank and comment-only lines do not count.
			col, j := 0, i
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\f') {
				if src[j] == '\t' {
					col = (col/8 + 1) * 8
				} else if src[j] == ' ' {
					col++
				}
				j++
			}
			indent, i, atBOL = col, j, false
			continue
		}
		switch {
		case c == '\n':
			line++
			i++
			if depth == 0 {
				endLine()
			}
		case c == '\r' || c == ' ' || c == '\t' || c == '\f':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			// Explicit line joining.
			i++
			if src[i] == '\r' {
				i++
			}
			if i < len(src) && src[i] == '\n' {
				i++
			}
			line++
		case isPyIdentStart(c):
			j := i
			for j < len(src) && isPyIdentPart(src[j]) {
				j++
			}
			word := string(src[i:j])
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && isStringPrefix(word) {
				body, end, nl, err := scanPyString(src, j, hasF(word))
				if err != nil {
					return lines, fmt.Errorf("line %d: %w", line, err)
				}
				if err := emit(pyToken{kind: pyString, text: body, line: line}); err != nil {
					return lines, err
				}
				line += nl
				i = end
				continue
			}
			if err := emit(pyToken{kind: pyName, text: word, line: line}); err != nil {
				return lines, err
			}
			i = j
		case c == '"' || c == '\'':
			body, end, nl, err := scanPyString(src, i, false)
			if err != nil {
				return lines, fmt.Errorf("line %d: %w", line, err)
			}
			if err := emit(pyToken{kind: pyString, text: body, line: line}); err != nil {
				return lines, err
			}
			line += nl
			i = end
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (isPyIdentPart(src[j]) || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			if err := emit(pyToken{kind: pyNumber, text: string(src[i:j]), line: line}); err != nil {
				return lines, err
			}
			i = j
		default:
			op := pyOperator(src[i:])
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth > 0 {
					depth--
				}
			}
			if err := emit(pyToken{kind: pyOp, text: op, line: line}); err != nil {
				return lines, err
			}
			i += len(op)
		}
	}
	return lines, nil
}

func isPyIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isPyIdentPart(c byte) bool { return isPyIdentStart(c) || c >= '0' && c <= '9' }

func isStringPrefix(w string) bool {
	if len(w) > 2 {
		return false
	}
	for _, r := range w {
		switch r {
		case 'r', 'R', 'b', 'B', 'u', 'U', 'f', 'F', 't', 'T':
		default:
			return false
		}
	}
	return true
}

func hasF(w string) bool {
	for _, r := range w {
		if r == 'f' || r == 'F' || r == 't' || r == 'T' {
			return true
		}
	}
	return false
}

// scanPyString reads a string literal starting at the quote src[i]; it
// returns the body, the index after the literal and the newlines inside. In
// an f-string, quotes inside replacement fields ({...}) belong to nested
// expressions (allowed from Python 3.12) and do not end it.
func scanPyString(src []byte, i int, fstring bool) (string, int, int, error) {
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	start := i + 1
	if triple {
		start = i + 3
	}
	j, nl, braces := start, 0, 0
	for j < len(src) {
		c := src[j]
		switch {
		case c == '\\' && braces == 0:
			if j+1 < len(src) && src[j+1] == '\n' {
				nl++
			}
			j += 2
			continue
		case c == '\n':
			if !triple && braces == 0 {
				return "", 0, 0, errors.New("unterminated string")
			}
			nl++
		case fstring && c == '{':
			if braces == 0 && j+1 < len(src) && src[j+1] == '{' {
				j += 2
				continue
			}
			braces++
		case fstring && c == '}' && braces > 0:
			braces--
		case braces > 0 && (c == '"' || c == '\''):
			// A nested string inside a replacement field.
			_, end, n, err := scanPyString(src, j, false)
			if err != nil {
				return "", 0, 0, err
			}
			nl += n
			j = end
			continue
		case c == q && braces == 0:
			if !triple {
				return string(src[start:j]), j + 1, nl, nil
			}
			if j+2 < len(src) && src[j+1] == q && src[j+2] == q {
				return string(src[start:j]), j + 3, nl, nil
			}
		}
		j++
	}
	return "", 0, 0, errors.New("unterminated string")
}

var pyOps3 = []string{"**=", "//=", ">>=", "<<=", "...", "!=", "=="}
var pyOps2 = []string{"**", "//", ">>", "<<", "<=", ">=", "==", "!=", "->", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":="}

func pyOperator(b []byte) string {
	for _, set := range [][]string{pyOps3, pyOps2} {
		for _, op := range set {
			if len(b) >= len(op) && string(b[:len(op)]) == op {
				return op
			}
		}
	}
	return string(b[:1])
}
