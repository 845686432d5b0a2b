package toolchain

import (
	"regexp"
	"testing"
)

// The scans that replaced the two version expressions (compiled on every
// doctor start) accept and capture exactly what they did.
func FuzzVersionScansMatchTheirRegexps(f *testing.F) {
	gccVersion := regexp.MustCompile(`^\d{1,3}(\.\d{1,4}){0,2}$`)
	nameVersionRe := regexp.MustCompile(`-(\d{1,3}(?:\.\d{1,4}){0,2})$`)
	for _, s := range []string{"", "13", "12.3", "13.2.0", "1234", "1.2.3.4", "1.23456", "1..2", "1.", ".1", "12.3.0 ", "١٣",
		"gcc-13", "x86_64-linux-gnu-g++-12", "gcc", "gcc-", "gcc-13.2.0.1", "gcc-13-", "g++-12.3", "clang-18.1.8", "a-1-2", "-7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isGCCVersion(s), gccVersion.MatchString(s); got != want {
			t.Errorf("isGCCVersion(%q) = %v, the regexp %v", s, got, want)
		}
		m := nameVersionRe.FindStringSubmatch(s)
		want := ""
		if m != nil {
			want = m[1]
		}
		if got, ok := nameVersion(s); got != want || ok != (m != nil) {
			t.Errorf("nameVersion(%q) = %q, %v; the regexp %q, %v", s, got, ok, want, m != nil)
		}
	})
}
