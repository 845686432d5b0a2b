package lazyregexp

import (
	"regexp"
	"slices"
	"sync"
	"testing"
)

var version = New(`^(\d+)\.(\d+)$`)

// TestSameAnswers: the lazy expression answers as the compiled one.
func TestSameAnswers(t *testing.T) {
	plain := regexp.MustCompile(version.String())
	for _, s := range []string{"12.8", "x12.8", "13.0", "", "1.2.3"} {
		if got, want := version.MatchString(s), plain.MatchString(s); got != want {
			t.Errorf("MatchString(%q) = %v, want %v", s, got, want)
		}
		if got, want := version.FindStringSubmatch(s), plain.FindStringSubmatch(s); !slices.Equal(got, want) {
			t.Errorf("FindStringSubmatch(%q) = %q, want %q", s, got, want)
		}
		if got, want := version.ReplaceAllString(s, "$2.$1"), plain.ReplaceAllString(s, "$2.$1"); got != want {
			t.Errorf("ReplaceAllString(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestConcurrentFirstUse: many goroutines racing to the first use get one
// compiled expression (run with -race).
func TestConcurrentFirstUse(t *testing.T) {
	r := New(`a+b`)
	var wg sync.WaitGroup
	got := make([]*regexp.Regexp, 16)
	for i := range got {
		wg.Go(func() { got[i] = r.Regexp() })
	}
	wg.Wait()
	for _, g := range got {
		if g != got[0] || g == nil {
			t.Fatal("first use compiled more than one expression")
		}
	}
}

func TestCompileAllReportsBadExpressions(t *testing.T) {
	New(`(unclosed`)
	bad := CompileAll()
	if len(bad) != 1 {
		t.Fatalf("CompileAll = %q, want the one bad expression", bad)
	}
	allMu.Lock()
	all = all[:len(all)-1]
	allMu.Unlock()
}
