// Package safetext neutralises control characters in text that came from
// untrusted input (a root's os-release, a wheel's METADATA, a log line, a
// model config) before it reaches a terminal (F9). A terminal acts on escape
// sequences: it can clear the screen, rewrite the title, move the cursor to
// overwrite a finding, or set the clipboard (OSC 52). fastpath shows such
// characters as visible escapes instead.
//
// Escapes are written the way JSON writes them (\u001b), so the Writer can
// sit under every output, JSON included, without changing what a JSON
// reader decodes: encoding/json leaves DEL, C1 controls and bidi overrides
// raw, and \u007f decodes to the same character.
package safetext

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// unsafeRune reports whether r must not reach a terminal raw: C0 controls
// but tab and newline (carriage return included: it overwrites a line), DEL,
// the C1 controls (U+009B is a one-byte CSI), and the bidirectional
// overrides and isolates that reorder what is shown ("Trojan Source").
func unsafeRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Clean returns s with every unsafe character written as \uXXXX and every
// byte that is not UTF-8 as \xNN; tab and newline are kept. It returns s
// itself when there is nothing to change. This is the one sanitiser:
// renderers that cannot rely on the Writer (Prometheus labels, whose
// format has no \u escape) call it on each field.
func Clean(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	appendClean(&b, s)
	return b.String()
}

func appendClean(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case unsafeRune(r):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// ColourCodes are the escape sequences fastpath itself writes to a
// terminal (the palettes of internal/report and internal/explain, and the
// progress line of remote); a Writer made with colour on lets exactly these
// through. Untrusted text could contain them too: at worst it changes a
// colour, it cannot move the cursor, erase, retitle or reach the clipboard.
//
// A fixed list matched by hand, not a package-level regexp: compiling one
// in the package's init cost every start of fastpath (issue 17).
// TestColourCodesAreTheRegexp compares it with the regexp it replaced.
var ColourCodes = colourCodes{"\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[33m", "\x1b[34m", "\r\x1b[K", "\x1b[K"}

type colourCodes []string

// FindString returns the code s starts with, or "" (as the anchored
// regexp's FindString did).
func (c colourCodes) FindString(s string) string {
	for _, code := range c {
		if strings.HasPrefix(s, code) {
			return code
		}
	}
	return ""
}

// Writer cleans everything written through it with Clean's rules, keeping a
// partial UTF-8 character at the end of one Write for the next. Call Flush
// when done. Safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	colour  bool
	pending []byte
}

// NewWriter returns a Writer onto w; with colour, ColourCodes pass.
func NewWriter(w io.Writer, colour bool) *Writer {
	return &Writer{w: w, colour: colour}
}

// Unwrap returns the writer underneath (for terminal checks).
func (s *Writer) Unwrap() io.Writer { return s.w }

func (s *Writer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := p
	if len(s.pending) > 0 {
		buf = append(s.pending, p...)
		s.pending = nil
	}
	cut := len(buf) - partialTail(buf)
	if cut < len(buf) {
		s.pending = append([]byte(nil), buf[cut:]...)
	}
	if err := s.emit(buf[:cut]); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a partial character held back (as \xNN escapes).
func (s *Writer) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	s.pending = nil
	return s.emit(p)
}

func (s *Writer) emit(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if safeASCII(p) {
		// Nothing to clean (Clean would return it as it is): written
		// without the copy into a string, which for a 5 MB JSON report
		// cost more than writing it.
		_, err := s.w.Write(p)
		return err
	}
	str := string(p)
	if !s.colour || !strings.ContainsAny(str, "\x1b\r") {
		_, err := io.WriteString(s.w, Clean(str))
		return err
	}
	var b strings.Builder
	for len(str) > 0 {
		i := strings.IndexAny(str, "\x1b\r")
		if i < 0 {
			appendClean(&b, str)
			break
		}
		appendClean(&b, str[:i])
		str = str[i:]
		if m := ColourCodes.FindString(str); m != "" {
			b.WriteString(m)
			str = str[len(m):]
			continue
		}
		appendClean(&b, str[:1])
		str = str[1:]
	}
	_, err := io.WriteString(s.w, b.String())
	return err
}

// safeASCII reports whether p is printable ASCII, tabs and newlines only:
// text in which unsafeRune finds nothing.
func safeASCII(p []byte) bool {
	for _, c := range p {
		if (c < 0x20 && c != '\t' && c != '\n') || c >= 0x7f {
			return false
		}
	}
	return true
}

// partialTail returns how many bytes at the end of p begin a UTF-8
// character that is not complete yet (0 to 3).
func partialTail(p []byte) int {
	for k := 1; k <= 3 && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a start byte: is its character complete?
			if utf8.FullRune(p[len(p)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}
