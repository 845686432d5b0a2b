package source

import (
	"path"
	"strings"
	"testing"
)

func TestNeedMatcher(t *testing.T) {
	m := CompileNeeds([]Need{
		{Pattern: "/etc/os-release"},
		{Pattern: "**/*.dist-info/*"},
		{Pattern: "**/torch/lib/*.so*", ELF: true},
		{Pattern: "**/lib/python3*/os.py"},
		{Pattern: "**/*.so.*", ELF: true},
	})
	for _, tc := range []struct {
		p           string
		needed, elf bool
	}{
		{"/etc/os-release", true, false},
		{"/etc/os-release.bak", false, false},
		{"/venv/lib/python3.12/site-packages/torch-2.11.0.dist-info/METADATA", true, false},
		{"/root/.cache/uv/archive-v0/x/torch-2.11.0.dist-info/RECORD", true, false},
		{"/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", true, true},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", true, true},
		{"/usr/lib/python3.12/os.py", true, false},
		{"/usr/lib/python2.7/os.py", false, false},
		{"/dist-info/METADATA", false, false},
	} {
		n, e := m.Match(tc.p)
		if n != tc.needed || e != tc.elf {
			t.Errorf("Match(%s) = %v, %v; want %v, %v", tc.p, n, e, tc.needed, tc.elf)
		}
	}
}

// matchComponent agrees with path.Match on star-only patterns.
func TestMatchComponentAgreesWithPathMatch(t *testing.T) {
	pats := []string{"*", "a*", "*a", "*a*", "a*b", "a*b*c", "*.so.*", "ld-musl-*.so.1", "**", "x", "", "*aa*aa"}
	names := []string{"", "a", "ab", "ba", "abc", "aXbYc", "libc.so.6", "x.so", "ld-musl-x86_64.so.1", "aaa", "aaaa", "aaXaa", strings.Repeat("a", 50)}
	for _, p := range pats {
		for _, s := range names {
			want, _ := path.Match(p, s)
			if got := matchComponent(p, s); got != want {
				t.Errorf("matchComponent(%q, %q) = %v, path.Match says %v", p, s, got, want)
			}
		}
	}
}
