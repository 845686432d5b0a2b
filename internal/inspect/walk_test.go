package inspect

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestWalk walks a site-packages-like tree with the hazards of real ones: nested
// folders, a link back to an ancestor (a loop), a link to a file and the file itself,
// a dangling link, a fifo, a host-only ELF, text and empty files, a truncated fatbin.
func TestWalk(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "site-packages", "ext")
	copyFile(t, realBin("sm80_sm90_ptx90.so"), filepath.Join(pkg, "_C.so"))
	copyFile(t, realBin("axpy.sm_90.cubin"), filepath.Join(pkg, "deep", "er", "k.cubin"))
	copyFile(t, realBin("axpy.fatbin"), filepath.Join(root, "site-packages", "k.fatbin"))
	copyFile(t, realBin("rdc.o"), filepath.Join(root, "build", "rdc.o"))
	tr := fixture.New(root).
		File("site-packages/ext/__init__.py", "import torch\n").
		File("site-packages/ext/empty.so", "").
		File("site-packages/ext/abc", "\x7fEL"). // shorter than a magic
		ELFExec("site-packages/bin/tool", elf.EM_X86_64)
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	// A fatbin cut short: its header promises more bytes than there are.
	fb, err := os.ReadFile(realBin("axpy.fatbin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "build", "cut.fatbin"), fb[:len(fb)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "_C.so", filepath.Join(pkg, "_C.so.1"))                        // the same file again
	symlink(t, "../..", filepath.Join(pkg, "deep", "loop"))                   // a loop back to site-packages
	symlink(t, "missing.so", filepath.Join(pkg, "dangling.so"))               // dangling
	symlink(t, "self", filepath.Join(root, "build", "self"))                  // a link to itself
	if err := syscall.Mkfifo(filepath.Join(pkg, "fifo"), 0o644); err != nil { // opening it would block
		t.Fatal(err)
	}

	type row struct {
		Path    string
		Fatbins int
		Entries int
		SASS    string
		Err     string
	}
	var got []row
	Walk([]string{root}, func(f *File) {
		rel, _ := filepath.Rel(root, f.Path)
		msg := f.Error
		if i := strings.LastIndex(msg, ": "); i >= 0 && f.Open != nil {
			msg = msg[i+2:] // the cause, without the path
		}
		got = append(got, row{rel, f.Fatbins, f.Entries, strings.Join(f.SASS, " "), msg})
	})
	want := []row{
		{"build/cut.fatbin", 0, 0, "", "fatbin: fatbin size 5312 runs past the section end (2648 bytes left) at offset 0x0"},
		{"build/rdc.o", 1, 2, "sm_80", ""},
		{"build/self", 0, 0, "", "too many levels of symbolic links"},
		{"site-packages/ext/_C.so", 2, 5, "sm_80 sm_90", ""},
		{"site-packages/ext/dangling.so", 0, 0, "", "no such file or directory"},
		{"site-packages/ext/deep/er/k.cubin", 0, 1, "sm_90", ""},
		{"site-packages/k.fatbin", 1, 2, "sm_80", ""},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("walk (-want +got):\n%s", d)
	}

	// Named on the command line, every file is reported, CUDA or not; a folder named
	// through a link is walked.
	got = nil
	Walk([]string{filepath.Join(root, "site-packages/bin/tool"), filepath.Join(pkg, "__init__.py"), filepath.Join(pkg, "fifo"),
		filepath.Join(pkg, "deep/loop/ext/deep")}, func(f *File) {
		rel, _ := filepath.Rel(root, f.Path)
		msg := f.Error
		if i := strings.LastIndex(msg, ": "); i >= 0 && f.Open != nil {
			msg = msg[i+2:]
		}
		got = append(got, row{rel, f.Fatbins, f.Entries, strings.Join(f.SASS, " "), msg})
	})
	want = []row{
		{"site-packages/bin/tool", 0, 0, "", ""},
		{"site-packages/ext/__init__.py", 0, 0, "", "not an ELF file or fatbin"},
		{"site-packages/ext/fifo", 0, 0, "", "a fifo, not a regular file"},
		{"site-packages/ext/deep/loop/ext/deep/er/k.cubin", 0, 1, "sm_90", ""},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("named files (-want +got):\n%s", d)
	}
}
