package main

import (
	"testing"

	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
)

// TestLazyRegexpsCompile: every regular expression the binary declares with
// lazyregexp compiles (they are compiled on first use, not at start, so a
// bad one would otherwise panic only when its command runs).
func TestLazyRegexpsCompile(t *testing.T) {
	if bad := lazyregexp.CompileAll(); len(bad) > 0 {
		t.Fatalf("expressions that do not compile:\n%s", bad)
	}
}
