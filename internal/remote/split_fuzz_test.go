package remote

import (
	"slices"
	"strings"
	"testing"
)

// FuzzSplit: a template is the user's flag, but --via comes from scripts and
// fleet files too: Split never panics, and what it accepts survives
// quoting: Split(Quote(w1) Quote(w2)...) gives the same words back.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{
		"ssh {}", `ssh -o 'ProxyCommand=ssh -W %h:%p bastion' {}`, `sh -c "sleep 1; echo \"hi\" \$x" {}`,
		`a\ b c\\d ''`, "a 'b", `a "b`, `a \`, "ssh {} | tee", `ssh "$HOST"`, "ssh \\\n {}", "a\nb", "$'x'", "((", "case",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		q := make([]string, len(words))
		for i, w := range words {
			q[i] = Quote(w)
		}
		again, err := Split(strings.Join(q, " "))
		if err != nil {
			t.Fatalf("Split(%q) = %q, whose quoting %q does not split: %v", s, words, strings.Join(q, " "), err)
		}
		if len(words) == 0 {
			words = nil
		}
		if !slices.Equal(again, words) {
			t.Fatalf("Split(%q) = %q; quoted and split again: %q", s, words, again)
		}
	})
}
