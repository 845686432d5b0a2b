package source

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// folderTree is a root with a metadata folder as pip leaves one, and the
// hostile entries a Folder must treat exactly as Open does.
func folderTree(t *testing.T) (root, host string) {
	t.Helper()
	root, host = t.TempDir(), t.TempDir()
	dist := filepath.Join(root, "site", "pkg-1.0.dist-info")
	if err := os.MkdirAll(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dist, "METADATA"), "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\nlong text\n")
	write(filepath.Join(dist, "RECORD"), "pkg/__init__.py,,\n")
	write(filepath.Join(host, "secret"), "host secret\n")
	write(filepath.Join(root, "inside"), "inside the root\n")
	// A link to an absolute path means that path inside the root, never
	// the host's; a relative one climbing out stops at the root's top.
	if err := os.Symlink(filepath.Join(host, "secret"), filepath.Join(dist, "ABS")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../../../../../inside", filepath.Join(dist, "CLIMB")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dist, "FIFO"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dist, "SUB"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The folder reached through a link, as lib64 -> lib.
	if err := os.Symlink("site", filepath.Join(root, "site64")); err != nil {
		t.Fatal(err)
	}
	return root, host
}

func readAllFile(f File, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

// A Folder answers every name as Open does: the same bytes for files, the
// same refusals (a FIFO never opened, a link never leaving the root), and
// absent names absent, whether the folder was listed or not, through a
// View or on the source itself.
func TestFolderOpensAsOpenDoes(t *testing.T) {
	root, _ := folderTree(t)
	names := []string{"METADATA", "RECORD", "ABS", "CLIMB", "FIFO", "SUB", "absent", "a/b", "..", ""}
	for _, dir := range []string{"/site/pkg-1.0.dist-info", "/site64/pkg-1.0.dist-info"} {
		{
			src, err := Root(root, Env{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []Source{src, NewCache(src).View()} {
				d := OpenFolder(s, dir)
				if d.f == nil {
					t.Fatalf("%T: OpenFolder(%s) fell back to the generic path", s, dir)
				}
				for _, n := range names {
					withDeadline(t, 5*time.Second, "Folder.Open("+n+")", func() {
						got, gerr := readAllFile(d.Open(n))
						want, werr := readAllFile(s.Open(dir + "/" + n))
						if got != want || (gerr == nil) != (werr == nil) {
							t.Errorf("%T %s/%s: Folder gave %q, %v; Open gave %q, %v", s, dir, n, got, gerr, want, werr)
						}
						if gerr != nil && werr != nil && errors.Is(werr, ErrNotRegular) != errors.Is(gerr, ErrNotRegular) {
							t.Errorf("%T %s/%s: Folder error %v, Open error %v", s, dir, n, gerr, werr)
						}
					})
				}
				d.Close()
			}
		}
	}
}

// What the hostile entries must read as, spelled out (the test above only
// says Folder and Open agree).
func TestFolderHostileEntries(t *testing.T) {
	root, _ := folderTree(t)
	src, err := Root(root, Env{})
	if err != nil {
		t.Fatal(err)
	}
	d := OpenFolder(src, "/site/pkg-1.0.dist-info")
	defer d.Close()
	if got, err := readAllFile(d.Open("METADATA")); err != nil || got[:22] != "Metadata-Version: 2.1\n" {
		t.Errorf("METADATA = %q, %v", got, err)
	}
	if got, err := readAllFile(d.Open("ABS")); err == nil {
		t.Errorf("ABS (a link to a host path) read %q: it must resolve inside the root, where it does not exist", got)
	}
	if got, err := readAllFile(d.Open("CLIMB")); err != nil || got != "inside the root\n" {
		t.Errorf("CLIMB = %q, %v; want the root's own file", got, err)
	}
	withDeadline(t, 5*time.Second, "opening a FIFO", func() {
		if _, err := d.Open("FIFO"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("FIFO: %v, want ErrNotRegular", err)
		}
	})
	if _, err := d.Open("absent"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v, want ErrNotExist", err)
	}
}

// A file swapped for a FIFO between its lstat and its open is still
// refused, by the type of the opened file, and the open does not block.
func TestFolderSwappedForFIFO(t *testing.T) {
	root, _ := folderTree(t)
	src, err := Root(root, Env{})
	if err != nil {
		t.Fatal(err)
	}
	d := OpenFolder(src, "/site/pkg-1.0.dist-info")
	defer d.Close()
	rec := filepath.Join(root, "site", "pkg-1.0.dist-info", "RECORD")
	testHookFolderOpen = func(name string) {
		if name != "RECORD" {
			return
		}
		if err := os.Remove(rec); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(rec, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { testHookFolderOpen = nil }()
	withDeadline(t, 5*time.Second, "opening a swapped-in FIFO", func() {
		if f, err := d.Open("RECORD"); !errors.Is(err, ErrNotRegular) {
			if f != nil {
				f.Close()
			}
			t.Errorf("RECORD swapped for a FIFO after its lstat: %v, want ErrNotRegular", err)
		}
	})
}

// A file read through a Folder is in the run's cache: a later Open of its
// path is served from memory, and the run counts one file.
func TestFolderReadsKeptInCache(t *testing.T) {
	root, _ := folderTree(t)
	src, err := Root(root, Env{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(src)
	v1, v2 := c.View(), c.View()
	d := OpenFolder(v1, "/site/pkg-1.0.dist-info")
	first, err := readAllFile(d.Open("METADATA"))
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	again, err := readAllFile(v2.Open("/site/pkg-1.0.dist-info/METADATA"))
	if err != nil || again != first {
		t.Fatalf("Open after Folder.Open: %q, %v; want %q", again, err, first)
	}
	if st := v2.Stats(); st.Cached != 1 || st.Bytes != 0 {
		t.Errorf("the second read: %+v; want it served from the cache (cached 1, 0 bytes read)", st)
	}
	if files, bytes := c.Totals(); files != 1 || bytes != int64(len(first)) {
		t.Errorf("Totals = %d files, %d bytes; want 1 file, %d bytes", files, bytes, len(first))
	}
}

// Sources without folders (RootPlain here; images too) and folders that
// cannot be opened give a Folder that opens each path with Open.
func TestFolderFallsBack(t *testing.T) {
	root, _ := folderTree(t)
	plain, err := RootPlain(root, Env{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := Root(root, Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src Source
		dir string
	}{{plain, "/site/pkg-1.0.dist-info"}, {src, "/site/absent.dist-info"}, {src, "/inside"}} {
		d := OpenFolder(tc.src, tc.dir)
		if d.f != nil {
			t.Errorf("OpenFolder(%T, %s) opened a handle; want the generic path", tc.src, tc.dir)
		}
		got, gerr := readAllFile(d.Open("METADATA"))
		want, werr := readAllFile(tc.src.Open(tc.dir + "/METADATA"))
		if got != want || (gerr == nil) != (werr == nil) {
			t.Errorf("%T %s: Folder gave %q, %v; Open gave %q, %v", tc.src, tc.dir, got, gerr, want, werr)
		}
		d.Close()
	}
}

// On the host the folder is a descriptor of its own, closed by Close.
func TestFolderOnHost(t *testing.T) {
	root, _ := folderTree(t)
	src, err := Host(Env{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "site", "pkg-1.0.dist-info")
	d := OpenFolder(src, dir)
	if d.f == nil {
		t.Fatal("no folder handle on the host")
	}
	got, err := readAllFile(d.Open("RECORD"))
	if err != nil || got != "pkg/__init__.py,,\n" {
		t.Errorf("RECORD = %q, %v", got, err)
	}
	withDeadline(t, 5*time.Second, "opening a FIFO on the host", func() {
		if _, err := d.Open("FIFO"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("FIFO: %v, want ErrNotRegular", err)
		}
	})
	fd := d.f.(*dirFolder).fd
	d.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); !errors.Is(err, syscall.EBADF) {
		t.Errorf("the folder's descriptor %d is still open after Close", fd)
	}
}
