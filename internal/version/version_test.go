package version

import (
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		// CUDA releases, as kb's tables and nvcc spell them.
		{"12.8", "12.8", 0},
		{"12.8", "12.8.0", 0},
		{"12.8", "12.10", -1}, // numbers, not strings
		{"12.9", "13.0", -1},
		{"13.0.88", "13.0", 1},
		// NVIDIA drivers.
		{"580.159.04", "580.159.4", 0},
		{"580.65.06", "580.159.04", -1},
		{"550.54.15", "550.54.14", 1},
		{"570.26", "570.26.0", 0},
		{"580", "575.51.03", 1},
		// Compilers and Python installs.
		{"13.3.0", "9.5.0", 1},
		{"3.12.3", "3.12.10", -1},
		{"3.13.0rc1", "3.13.0", 1}, // a suffix is more components; PEP 440 is pep440's
		{"2.11.0+cu128", "2.11.0", 1},
		{"5.0.0.dev0", "5.0.0", 0},
		// Names and paths: the digit runs are the version.
		{"python3.9", "python3.12", -1},
		{"/usr/lib/python3.12/os.py", "/usr/lib/python3.9/os.py", 1},
		{"/root/.pyenv/versions/2.7.18", "/root/.pyenv/versions/3.12.3", -1},
		{"cmake-3.28", "cmake-3.5", 1},
		{"2.7", "2.11.0+cu128", -1},
		// Odd and hostile input never panics and still orders.
		{"", "", 0},
		{"", "0", 0},
		{"", "1", -1},
		{"x.y", "0.0", 0},
		{"1..2", "1.2", 0},
		{strings.Repeat("9", 40), "999999999999999999", 1},
		{strings.Repeat("9", 40), strings.Repeat("9", 50), 0},
		{"1." + strings.Repeat("0.", 5000) + "1", "1", 1},
	} {
		if got := Compare(tc.a, tc.b); got != tc.want {
			t.Errorf("Compare(%.40q, %.40q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Compare(tc.b, tc.a); got != -tc.want {
			t.Errorf("Compare(%.40q, %.40q) = %d, want %d (antisymmetry)", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestLessSorts(t *testing.T) {
	in := []string{"3.13.0rc1", "3.12.10", "3.12", "3.13.0", "3.12.0", "3.8.19", "3.12.3"}
	want := []string{"3.8.19", "3.12", "3.12.0", "3.12.3", "3.12.10", "3.13.0", "3.13.0rc1"} // rc1: more components
	for range 3 {
		got := slices.Clone(in)
		slices.SortFunc(got, func(a, b string) int {
			switch {
			case Less(a, b):
				return -1
			case Less(b, a):
				return 1
			}
			return 0
		})
		if !slices.Equal(got, want) {
			t.Fatalf("sorted %q, want %q", got, want)
		}
		slices.Reverse(in)
	}
	for _, v := range in {
		if Less(v, v) {
			t.Errorf("Less(%q, %q): not strict", v, v)
		}
	}
}

func FuzzCompare(f *testing.F) {
	for _, s := range []string{"12.8", "580.159.04", "3.13.0rc1", "", "..", "99999999999999999999"} {
		f.Add(s, "12.8.0")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if Compare(a, b) != -Compare(b, a) {
			t.Fatalf("Compare(%q, %q) is not antisymmetric", a, b)
		}
		if Compare(a, a) != 0 || Less(a, a) {
			t.Fatalf("%q is not equal to itself", a)
		}
		if Less(a, b) && Less(b, a) {
			t.Fatalf("Less(%q, %q) both ways", a, b)
		}
	})
}
