package report

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestLabelRulesMatchAPI: validLabelKey and validLabelValue accept exactly
// what k8s.io/apimachinery's validation accepts, on edge cases and on
// random strings over the characters that matter.
func TestLabelRulesMatchAPI(t *testing.T) {
	cases := []string{"", "a", "A", "-", "a-", "-a", "a_b", "a.b", "_a", "a/b", "/a", "a/", "a//b", "a/b/c", "fastpath.io/x", "Fastpath.io/x",
		"fastpath.io/a-b_c.D", "a..b/x", "a.-b/x", "é", "a\x00", strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("a", 253) + "/x", strings.Repeat("a", 254) + "/x", strings.Repeat("a.", 126) + "a/x", "fastpath.io/" + strings.Repeat("b", 64)}
	r := rand.New(rand.NewPCG(17, 1))
	const chars = "aZ0-_./\xc3"
	for range 20000 {
		b := make([]byte, r.IntN(10))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := validLabelKey(s), len(validation.IsQualifiedName(s)) == 0; got != want {
			t.Errorf("validLabelKey(%q) = %v, the API says %v", s, got, want)
		}
		if got, want := validLabelValue(s), len(validation.IsValidLabelValue(s)) == 0; got != want {
			t.Errorf("validLabelValue(%q) = %v, the API says %v", s, got, want)
		}
	}
}
