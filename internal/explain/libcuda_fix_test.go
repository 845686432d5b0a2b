package explain

import (
	"os"
	"slices"
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

// TestLdirsAsFiles: the -L folders of triton 3.x's command, a cut entry dropped.
func TestLdirsAsFiles(t *testing.T) {
	got := libcudaDir(ldirsAsFiles(", '-L/lib/i386-linux-gnu', '-L/lib/x86_64-linux-gnu', '-L/usr/lib/x86_6…"))
	if got != "/lib/i386-linux-gnu" && got != "/lib/x86_64-linux-gnu" {
		t.Fatalf("got %q", got)
	}
	if got != "/lib/x86_64-linux-gnu" {
		t.Errorf("got %q, want the 64-bit folder", got)
	}
	if got := ldirsAsFiles(", '-L/usr/lib/x86_6…"); got != "" {
		t.Errorf("a cut entry gave %q", got)
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

// TestLibcudaLinkNamesLoggedFolder: triton 3.x's failed command names the
// folders ldconfig lists libcuda.so.1 in; the link command uses the 64-bit one.
func TestLibcudaLinkNamesLoggedFolder(t *testing.T) {
	f, err := os.Open("testdata/logs/triton-lcuda.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Default().Scan(f)
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(s, nil)
	if len(fs) == 0 || fs[0].ID != finding.LibcudaNotLinkable {
		t.Fatalf("findings %v", ids(fs))
	}
	if want := "sudo ln -s libcuda.so.1 /lib/x86_64-linux-gnu/libcuda.so"; !slices.Contains(fs[0].Fixes[0].Commands, want) {
		t.Errorf("first fix %+v, want the command %q", fs[0].Fixes[0], want)
	}
}
