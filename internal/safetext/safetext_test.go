package safetext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile strings: a screen clear, a retitle, OSC 52 (set the clipboard), a
// one-byte C1 CSI, a carriage return that overwrites the line, a bidi
// override, DEL, a NUL, a lone invalid byte.
var hostile = []string{
	"\x1b[2J\x1b[H", "\x1b]0;pwned\x07", "\x1b]52;c;cm0gLXJmIH4=\x07", "\u009b31m", "ok\rERROR",
	"\u202egnp.exe", "a\x7fb", "nul\x00", "bad\xffbyte", "\x1b[31m",
}

func assertSafe(t *testing.T, s string) {
	t.Helper()
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			t.Errorf("invalid UTF-8 left in %q", s)
		}
		if unsafeRune(r) {
			t.Errorf("unsafe %U left in %q", r, s)
		}
	}
}

func TestF9CleanNeutralisesControls(t *testing.T) {
	for _, h := range hostile {
		c := Clean("pre " + h + " post\tend\n")
		assertSafe(t, c)
		if !strings.HasPrefix(c, "pre ") || !strings.HasSuffix(c, " post\tend\n") {
			t.Errorf("Clean(%q) = %q lost the safe text", h, c)
		}
	}
	if got := Clean("\x1b[2J"); got != `\u001b[2J` {
		t.Errorf("Clean(ESC[2J) = %q", got)
	}
	if s := "plain — UTF-8 ✓"; Clean(s) != s {
		t.Errorf("Clean changed safe text %q", s)
	}
}

// The Writer is lossless for JSON: what a JSON reader decodes is unchanged.
func TestF9WriterKeepsJSONMeaning(t *testing.T) {
	v := map[string]string{}
	for i, h := range hostile {
		v[string(rune('a'+i))] = h
	}
	raw, _ := json.Marshal(v)
	var out bytes.Buffer
	w := NewWriter(&out, false)
	for i := 0; i < len(raw); i += 3 { // split mid-character on purpose
		w.Write(raw[i:min(i+3, len(raw))])
	}
	w.Flush()
	assertSafe(t, out.String())
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("cleaned JSON does not parse: %v\n%s", err, out.String())
	}
	var want map[string]string
	json.Unmarshal(raw, &want)
	for k := range want {
		if back[k] != want[k] {
			t.Errorf("%s: %q became %q", k, want[k], back[k])
		}
	}
}

// With colour on, fastpath's own palette passes; nothing else does.
func TestF9WriterColourAllowlist(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, true)
	w.Write([]byte("\x1b[31merror\x1b[0m \x1b[2J\x1b]0;t\x07 \r\x1b[K"))
	w.Flush()
	want := "\x1b[31merror\x1b[0m \\u001b[2J\\u001b]0;t\\u0007 \r\x1b[K"
	if out.String() != want {
		t.Errorf("got %q\nwant %q", out.String(), want)
	}
	out.Reset()
	w = NewWriter(&out, false)
	w.Write([]byte("\x1b[31merror"))
	if out.String() != `\u001b[31merror` {
		t.Errorf("colour off: %q", out.String())
	}
}

func FuzzF9Clean(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, s string) {
		assertSafe(t, Clean(s))
		var out bytes.Buffer
		w := NewWriter(&out, false)
		w.Write([]byte(s))
		w.Flush()
		assertSafe(t, out.String())
	})
}

// TestSafeASCIIAgreesWithUnsafeRune: the Writer's fast path for plain
// ASCII lets through exactly the bytes that unsafeRune lets through.
func TestSafeASCIIAgreesWithUnsafeRune(t *testing.T) {
	for c := range 0x80 {
		if safeASCII([]byte{byte(c)}) == unsafeRune(rune(c)) {
			t.Errorf("byte %#x: safeASCII %v, unsafeRune %v", c, safeASCII([]byte{byte(c)}), unsafeRune(rune(c)))
		}
	}
	for c := 0x80; c < 0x100; c++ {
		if safeASCII([]byte{'a', byte(c)}) {
			t.Errorf("byte %#x taken as plain ASCII", c)
		}
	}
}
