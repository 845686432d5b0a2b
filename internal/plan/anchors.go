package plan

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// anchorHrefs returns the href of every <a> start tag of an HTML page (a
// PEP 503 project page or a find-links page), in order, as the HTML5
// tokenizer reads them: tag and attribute names in any case, values
// quoted, single-quoted or bare, character references in values decoded,
// and nothing read inside comments, <!...> and <?...> declarations, or the
// raw text of script, style, textarea, title, xmp, iframe, noembed,
// noframes, noscript and plaintext. An anchor without an href, or with an
// empty one, gives nothing; a tag cut short by the end of the page ends the
// reading, as it does in the tokenizer.
//
// It is a small tokenizer of our own so that golang.org/x/net/html, whose
// package init builds a 2,231-entry entity map on every fastpath start
// (issue 17), stays out of the binary. index_oracle_test.go holds x/net's
// tokenizer as the oracle: real pages, and a fuzz test on arbitrary input.
// One divergence is accepted: of the named character references only
// &amp; &lt; &gt; &quot; (with or without ';', either case) and &apos; are
// decoded; any other name is left as written. Index pages write none in
// hrefs (PyPI escapes '&' only, as &amp;); pip's parser (html.unescape)
// would decode them all.
func anchorHrefs(page []byte) []string {
	z := anchorScanner{b: page}
	return z.run()
}

type anchorScanner struct {
	b     []byte
	i     int      // next byte to read
	hrefs []string // found so far
}

// scanEnd stops the scan: the page ended inside a construct (the
// tokenizer's error token, after which nothing more is read).
type scanEnd struct{}

func (z *anchorScanner) run() (hrefs []string) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(scanEnd); !ok {
				panic(r)
			}
		}
		hrefs = z.hrefs
	}()
	for {
		lt := bytes.IndexByte(z.b[z.i:], '<')
		if lt < 0 {
			return
		}
		z.i += lt + 1
		c := z.peek()
		switch {
		case isASCIILetter(c):
			name := z.tag(true)
			if raw := rawTextTag(name); raw != "" {
				z.skipRawText(raw)
			}
		case c == '/':
			z.i++
			switch c := z.peek(); {
			case c == '>':
				z.i++ // "</>" is dropped
			case isASCIILetter(c):
				z.tag(false)
			default:
				z.untilCloseAngle() // a bogus comment
			}
		case c == '!':
			z.i++
			z.markupDeclaration()
		case c == '?':
			z.untilCloseAngle()
		}
		// any other byte after '<' is text; reading goes on from it
	}
}

// peek returns the next byte, ending the scan at the end of the page.
func (z *anchorScanner) peek() byte {
	if z.i >= len(z.b) {
		panic(scanEnd{})
	}
	return z.b[z.i]
}

// next reads one byte, ending the scan at the end of the page.
func (z *anchorScanner) next() byte {
	c := z.peek()
	z.i++
	return c
}

func (z *anchorScanner) untilCloseAngle() {
	gt := bytes.IndexByte(z.b[z.i:], '>')
	if gt < 0 {
		panic(scanEnd{})
	}
	z.i += gt + 1
}

// markupDeclaration reads what follows "<!": a comment, or a doctype or
// bogus comment up to the next '>'.
func (z *anchorScanner) markupDeclaration() {
	if len(z.b)-z.i < 2 {
		panic(scanEnd{})
	}
	if z.b[z.i] == '-' && z.b[z.i+1] == '-' {
		z.i += 2
		z.comment()
		return
	}
	z.untilCloseAngle()
}

// comment reads to the end of a comment: "-->", "--!>", or a '>' right
// after the opening "<!--" and any dashes ("<!-->", "<!--->").
func (z *anchorScanner) comment() {
	dashes, atStart := 0, true
	for {
		c := z.next()
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || atStart {
				return
			}
		case '!':
			if dashes >= 2 {
				switch z.next() {
				case '>':
					return
				case '-':
					dashes, atStart = 1, false
					continue
				}
			}
		}
		dashes, atStart = 0, false
	}
}

// tag reads a start or end tag from its name's first letter through its
// '>', attributes included (an end tag's are read and dropped: a quoted
// '>' in them does not end the tag). For a start tag named "a" it records
// the first href. It returns the tag's name, lower-cased.
func (z *anchorScanner) tag(start bool) string {
	nameStart := z.i
	var name []byte
	for {
		c := z.next()
		if isTagSpace(c) {
			name = z.b[nameStart : z.i-1]
			break
		}
		if c == '/' || c == '>' {
			z.i--
			name = z.b[nameStart:z.i]
			break
		}
	}
	isA := start && len(name) == 1 && name[0]|0x20 == 'a'
	var href []byte
	found := false
	z.skipSpace()
	for {
		if z.next() == '>' {
			break
		}
		z.i--
		key, val := z.attribute()
		if isA && !found && asciiLower(key) == "href" {
			href, found = val, true
		}
		z.skipSpace()
	}
	if isA && len(href) > 0 {
		if v := attrValue(href); v != "" {
			z.hrefs = append(z.hrefs, v)
		}
	}
	if !start {
		return ""
	}
	return asciiLower(name)
}

// asciiLower lower-cases A to Z only, as the tokenizer does for names.
func asciiLower(b []byte) string {
	out := []byte(string(b))
	for i, c := range out {
		if 'A' <= c && c <= 'Z' {
			out[i] = c + 'a' - 'A'
		}
	}
	return string(out)
}

// attribute reads one attribute: a name (a leading '=' belongs to it; it
// ends at space, '/', '>' or '='), then optionally '=' and a value, quoted
// or bare. A '/' where '=' could come is taken and ends the attribute.
func (z *anchorScanner) attribute() (key, val []byte) {
	keyStart := z.i
	for {
		c := z.next()
		if c == '=' && z.i-1 == keyStart {
			continue
		}
		if c == '=' || c == '/' || c == '>' || isTagSpace(c) {
			z.i--
			break
		}
	}
	key = z.b[keyStart:z.i]
	z.skipSpace()
	switch z.next() {
	case '/':
		return key, nil
	case '=':
	default:
		z.i--
		return key, nil
	}
	z.skipSpace()
	switch q := z.next(); q {
	case '>':
		z.i--
		return key, nil
	case '"', '\'':
		end := bytes.IndexByte(z.b[z.i:], q)
		if end < 0 {
			panic(scanEnd{})
		}
		val = z.b[z.i : z.i+end]
		z.i += end + 1
		return key, val
	default:
		valStart := z.i - 1
		for {
			c := z.next()
			if isTagSpace(c) {
				return key, z.b[valStart : z.i-1]
			}
			if c == '>' {
				z.i--
				return key, z.b[valStart:z.i]
			}
		}
	}
}

func (z *anchorScanner) skipSpace() {
	for isTagSpace(z.peek()) {
		z.i++
	}
}

// rawTextTag names the elements whose content the tokenizer reads as text
// up to their end tag ("" for any other).
func rawTextTag(name string) string {
	switch name {
	case "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript", "plaintext":
		return name
	}
	return ""
}

// skipRawText moves past the raw text of element tag to its end tag (left
// to be read as a tag); plaintext has none, and a script's end tag is
// looked for as the HTML5 script states do ("<!--" escapes, a nested
// "<script" hides the next "</script>").
func (z *anchorScanner) skipRawText(tag string) {
	switch tag {
	case "plaintext":
		panic(scanEnd{})
	case "script":
		z.skipScript()
		return
	}
	for {
		lt := bytes.Index(z.b[z.i:], []byte("</"))
		if lt < 0 {
			panic(scanEnd{})
		}
		z.i += lt
		if z.endTagAhead(tag) {
			return
		}
		z.i += 2
	}
}

// endTagAhead reports whether "</tag" and a space, '/' or '>' start at
// z.i (tag's letters in either case); the end of the page inside it ends
// the scan.
func (z *anchorScanner) endTagAhead(tag string) bool {
	j := z.i + 2
	for k := 0; k < len(tag); k++ {
		if j >= len(z.b) {
			panic(scanEnd{})
		}
		if z.b[j]|0x20 != tag[k] {
			return false
		}
		j++
	}
	if j >= len(z.b) {
		panic(scanEnd{})
	}
	c := z.b[j]
	return isTagSpace(c) || c == '/' || c == '>'
}

// skipScript follows the HTML5 script data states to the "</script" that
// ends the element, leaving z.i at its '<'.
func (z *anchorScanner) skipScript() {
	const (
		data = iota
		escaped
		escapedDash
		escapedDashDash
		doubleEscaped
		doubleEscapedDash
		doubleEscapedDashDash
	)
	state := data
	for {
		c := z.next()
		switch state {
		case data:
			if c != '<' {
				continue
			}
			switch z.next() {
			case '/':
				z.i -= 2
				if z.endTagAhead("script") {
					return
				}
				z.i += 2
			case '!':
				if z.next() == '-' {
					if z.next() == '-' {
						state = escapedDashDash
					} else {
						z.i--
					}
				} else {
					z.i--
				}
			default:
				z.i--
			}
		case escaped, escapedDash, escapedDashDash:
			switch {
			case c == '-':
				state = min(state+1, escapedDashDash)
			case c == '<':
				state = escaped
				switch d := z.next(); {
				case d == '/':
					z.i -= 2
					if z.endTagAhead("script") {
						return
					}
					z.i += 2
				case isASCIILetter(d):
					z.i--
					if z.scriptWordAhead() {
						state = doubleEscaped
					}
				default:
					z.i--
					state = data
				}
			case c == '>' && state == escapedDashDash:
				state = data
			default:
				state = escaped
			}
		case doubleEscaped, doubleEscapedDash, doubleEscapedDashDash:
			switch {
			case c == '-':
				state = min(state+1, doubleEscapedDashDash)
			case c == '<':
				state = doubleEscaped
				if z.next() == '/' {
					z.i -= 2
					if z.endTagAhead("script") {
						z.i += len("</script>")
						state = escaped
					} else {
						z.i += 2
					}
				} else {
					z.i--
				}
			case c == '>' && state == doubleEscapedDashDash:
				state = data
			default:
				state = doubleEscaped
			}
		}
	}
}

// scriptWordAhead reads "script" (either case) and a space, '/' or '>'
// at z.i; on a mismatch it stops before the byte that differs.
func (z *anchorScanner) scriptWordAhead() bool {
	for k := 0; k < len("script"); k++ {
		if z.next()|0x20 != "script"[k] {
			z.i--
			return false
		}
	}
	c := z.next()
	if isTagSpace(c) || c == '/' || c == '>' {
		return true
	}
	z.i--
	return false
}

// attrValue is an attribute value as the tokenizer returns it: NUL as
// U+FFFD, CR LF and CR as LF, character references decoded
// (anchorHrefs says which).
func attrValue(raw []byte) string {
	if bytes.IndexByte(raw, 0) < 0 && bytes.IndexByte(raw, '\r') < 0 && bytes.IndexByte(raw, '&') < 0 {
		return string(raw)
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case 0:
			b.WriteRune(utf8.RuneError)
		case '\r':
			b.WriteByte('\n')
			if i+1 < len(raw) && raw[i+1] == '\n' {
				i++
			}
		case '&':
			r, n := charRef(raw[i:])
			b.WriteRune(r)
			i += n - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// charRef decodes the character reference at s[0] == '&' in an attribute
// value, returning the character and the bytes it took ('&' and 1 when
// there is none).
func charRef(s []byte) (rune, int) {
	if len(s) > 2 && s[1] == '#' {
		return numericRef(s)
	}
	i := 1
	for i < len(s) && (isASCIILetter(s[i]) || '0' <= s[i] && s[i] <= '9') {
		i++
	}
	name := string(s[1:i])
	semi := i < len(s) && s[i] == ';'
	if semi {
		i++
	} else if i < len(s) && s[i] == '=' {
		return '&', 1 // "&amp=" in a value is text (legacy query strings)
	}
	var r rune
	switch name {
	case "amp", "AMP":
		r = '&'
	case "lt", "LT":
		r = '<'
	case "gt", "GT":
		r = '>'
	case "quot", "QUOT":
		r = '"'
	case "apos":
		if semi {
			r = '\''
		}
	}
	if r == 0 {
		return '&', 1
	}
	return r, i
}

// numericRef decodes "&#123;" or "&#x7b;" (the ';' optional); code points
// the HTML5 tokenizer replaces are replaced.
func numericRef(s []byte) (rune, int) {
	i := 2
	base := rune(10)
	if s[i] == 'x' || s[i] == 'X' {
		base = 16
		i++
	}
	start := i
	var x rune
	for ; i < len(s); i++ {
		d := hexDigit(s[i])
		if d < 0 || d >= base {
			break
		}
		if x <= 0x10FFFF {
			x = x*base + d
		}
	}
	if i == start {
		return '&', 1
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	switch {
	case 0x80 <= x && x <= 0x9F:
		x = windows1252(x)
	case x == 0, 0xD800 <= x && x <= 0xDFFF, x > 0x10FFFF:
		x = utf8.RuneError
	}
	return x, i
}

// windows1252 is the HTML5 tokenizer's replacement for a numeric reference
// to a C1 control: the character windows-1252 puts there (five of them have
// none and stay).
func windows1252(x rune) rune {
	switch x {
	case 0x80:
		return '\u20AC'
	case 0x82:
		return '\u201A'
	case 0x83:
		return '\u0192'
	case 0x84:
		return '\u201E'
	case 0x85:
		return '\u2026'
	case 0x86:
		return '\u2020'
	case 0x87:
		return '\u2021'
	case 0x88:
		return '\u02C6'
	case 0x89:
		return '\u2030'
	case 0x8A:
		return '\u0160'
	case 0x8B:
		return '\u2039'
	case 0x8C:
		return '\u0152'
	case 0x8E:
		return '\u017D'
	case 0x91:
		return '\u2018'
	case 0x92:
		return '\u2019'
	case 0x93:
		return '\u201C'
	case 0x94:
		return '\u201D'
	case 0x95:
		return '\u2022'
	case 0x96:
		return '\u2013'
	case 0x97:
		return '\u2014'
	case 0x98:
		return '\u02DC'
	case 0x99:
		return '\u2122'
	case 0x9A:
		return '\u0161'
	case 0x9B:
		return '\u203A'
	case 0x9C:
		return '\u0153'
	case 0x9E:
		return '\u017E'
	case 0x9F:
		return '\u0178'
	}
	return x
}

func hexDigit(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// isTagSpace is the HTML tokenizer's white space.
func isTagSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}
