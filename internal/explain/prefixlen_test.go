package explain

import (
	"regexp"
	"testing"
)

// The prefixes isoLen and levelLen strip were regular expressions before the
// block scanner made normalizing a hot path; the expressions stay here as
// the reference the hand-written matchers must agree with.
var (
	isoPrefixRef   = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?(?: ?\|)? ?`)
	levelPrefixRef = regexp.MustCompile(`^(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL) [0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)? \[?[A-Za-z0-9_./-]+:[0-9]+\] ?`)
)

var prefixSeeds = []string{
	"2024-04-26T02:20:01.5211732Z ##[error]x",
	"2024-09-27 23:42:23,326 | INFO x",
	"2024-09-27 23:42:23+02:00 x",
	"2024-09-27 23:42:23-0700|x",
	"2024-09-27T23:42:23",
	"2024-09-27T23:42:2",
	"ERROR 01-11 13:09:40 engine.py:366] x",
	"INFO 06-05 06:18:13 [multiproc_executor.py:470] x",
	"WARNING 06-05 06:18:13.123 [a.py:1]",
	"WARN 06-05 06:18:13 a.py:] x",
	"CRITICAL 06-05 06:18:13 [a b.py:1] x",
	"",
}

func FuzzPrefixLens(f *testing.F) {
	for _, s := range prefixSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkPrefixLens(t, s)
	})
}

func TestPrefixLensMatchReference(t *testing.T) {
	for _, s := range prefixSeeds {
		checkPrefixLens(t, s)
	}
}

func checkPrefixLens(t *testing.T, s string) {
	t.Helper()
	if got, want := isoLen([]byte(s)), len(isoPrefixRef.FindString(s)); got != want {
		t.Errorf("isoLen(%q) = %d, the expression matches %d bytes", s, got, want)
	}
	if got, want := levelLen([]byte(s)), len(levelPrefixRef.FindString(s)); got != want {
		t.Errorf("levelLen(%q) = %d, the expression matches %d bytes", s, got, want)
	}
}
