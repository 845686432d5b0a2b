package explain

import (
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// TestLibcudaDir: the link command names only the 64-bit folder Triton's
// assertion printed, never a 32-bit one or a path a shell would split.
func TestLibcudaDir(t *testing.T) {
	for _, tc := range []struct{ located, want string }{
		{"'/lib/x86_64-linux-gnu/libcuda.so.1'", "/lib/x86_64-linux-gnu"},
		{"'/usr/lib/i386-linux-gnu/libcuda.so.1', '/usr/lib/x86_64-linux-gnu/libcuda.so.1'", "/usr/lib/x86_64-linux-gnu"},
		{"'/usr/lib32/libcuda.so.1'", ""},
		{"'/lib64/libcuda.so.1'", "/lib64"},
		{"'/lib64/libcuda.so'", ""},
		{"'/x86_64 dir; rm -rf ~/libcuda.so.1'", ""},
		{"", ""},
	} {
		if got := libcudaDir(tc.located); got != tc.want {
			t.Errorf("libcudaDir(%q) = %q, want %q", tc.located, got, tc.want)
		}
	}
}

// TestLibcudaFixOrder: Triton's own check that found nothing in the loader
// cache puts ldconfig first; ld's "cannot find -lcuda" puts the link first.
func TestLibcudaFixOrder(t *testing.T) {
	e := &env{}
	first := func(caps map[string]string) string { return e.fixes(finding.LibcudaNotLinkable, caps)[0].Title }
	if got := first(map[string]string{"triton_assert": "libcuda.so cannot found"}); !strings.Contains(got, "ldconfig") || strings.HasPrefix(got, "Give the linker") {
		t.Errorf("assertion without a location: first fix %q, want the loader cache", got)
	}
	if got := first(map[string]string{"ldcache": "make sure GPU is set up and then run"}); !strings.Contains(got, "sudo ldconfig") {
		t.Errorf("triton 3.x's ldconfig hint: first fix %q, want the loader cache", got)
	}
	if got := first(map[string]string{}); !strings.HasPrefix(got, "Give the linker the unversioned libcuda.so") {
		t.Errorf("ld's cannot find -lcuda: first fix %q, want the link", got)
	}
}
