package safetext

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestColourCodesAreTheRegexp: ColourCodes finds what the anchored regexp
// it replaced found, on every code, their prefixes and extensions, and
// random strings of escape-sequence bytes.
func TestColourCodesAreTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^(?:\x1b\[(?:0|1|2|31|33|34)m|\r\x1b\[K|\x1b\[K)`)
	var cases []string
	for _, c := range ColourCodes {
		for i := range len(c) + 1 {
			cases = append(cases, c[:i], c[:i]+"x", c+c[:i], "x"+c)
		}
	}
	r := rand.New(rand.NewPCG(86, 1))
	const bytes = "\x1b\r[0123456789mKx;"
	for range 20000 {
		b := make([]byte, r.IntN(7))
		for i := range b {
			b[i] = bytes[r.IntN(len(bytes))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := ColourCodes.FindString(s), re.FindString(s); got != want {
			t.Errorf("ColourCodes.FindString(%q) = %q, the regexp says %q", s, got, want)
		}
	}
}
