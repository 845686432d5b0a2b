package torch

import (
	"regexp"
	"testing"
)

// cmakeABIFlag, a scan, finds the flag the regexp it replaced found.
func FuzzCMakeABIFlagMatchesRegexp(f *testing.F) {
	re := regexp.MustCompile(`-D_GLIBCXX_USE_CXX11_ABI=([01])\b`)
	for _, s := range []string{`set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=0")`, "-D_GLIBCXX_USE_CXX11_ABI=1", "-D_GLIBCXX_USE_CXX11_ABI=10",
		"-D_GLIBCXX_USE_CXX11_ABI=1_", "-D_GLIBCXX_USE_CXX11_ABI=2 -D_GLIBCXX_USE_CXX11_ABI=1;", "-D_GLIBCXX_USE_CXX11_ABI=", "",
		"-D_GLIBCXX_USE_CXX11_ABI=0é", "-D_GLIBCXX_USE_CXX11_ABI=1\n", "-D_GLIBCXX_USE_CXX11_ABI=0a -D_GLIBCXX_USE_CXX11_ABI=0-"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := re.FindSubmatch(data)
		got, ok := cmakeABIFlag(data)
		if ok != (m != nil) || (ok && got != m[1][0]) {
			t.Errorf("cmakeABIFlag(%q) = %q, %v; the regexp %q", data, got, ok, m)
		}
	})
}
