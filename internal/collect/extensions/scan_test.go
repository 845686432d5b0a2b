package extensions

import (
	"regexp"
	"testing"
)

// isCUDARuntime, a scan run for every needed library of every extension,
// matches what ^libcudart\.so\.(\d+)(\.0)?$ matched.
func FuzzIsCUDARuntimeMatchesRegexp(f *testing.F) {
	re := regexp.MustCompile(`^libcudart\.so\.(\d+)(\.0)?$`)
	for _, s := range []string{"libcudart.so.12", "libcudart.so.13", "libcudart.so.11.0", "libcudart.so.0", "libcudart.so.0.0",
		"libcudart.so.", "libcudart.so..0", "libcudart.so.1.0.0", "libcudart.so.12.1", "libcudart.so", "libcudart.so.١٢",
		"libcudart_static.a", "xlibcudart.so.12", "libcudart.so.12 ", "libcudart.so.12.00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isCUDARuntime(s), re.MatchString(s); got != want {
			t.Errorf("isCUDARuntime(%q) = %v, the regexp %v", s, got, want)
		}
	})
}
