package source

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRawFileInfoAsOS: what a raw descriptor's stat says (name, size, mode
// bits of every type, modification time) is what os.Lstat says.
func TestRawFileInfoAsOS(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "file"), []byte("hello, world"), 0o640))
	must(os.WriteFile(filepath.Join(dir, "setuid"), nil, 0o755))
	must(os.Chmod(filepath.Join(dir, "setuid"), 0o755|fs.ModeSetuid|fs.ModeSetgid))
	must(os.Mkdir(filepath.Join(dir, "sticky"), 0o755))
	must(os.Chmod(filepath.Join(dir, "sticky"), 0o1777|fs.ModeSticky))
	must(os.Symlink("file", filepath.Join(dir, "link")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	d, err := newDirHandles(dir)
	must(err)
	defer unix.Close(d.top)
	for _, name := range []string{"file", "setuid", "sticky", "link", "fifo", "."} {
		want, err := os.Lstat(filepath.Join(dir, name))
		must(err)
		got, err := lstatAt(d.top, name)
		must(err)
		if got.Name() != filepath.Base(name) || got.Size() != want.Size() || got.Mode() != want.Mode() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
			t.Errorf("%s: got %s %d %v %v, want %s %d %v %v", name, got.Name(), got.Size(), got.Mode(), got.ModTime(),
				want.Name(), want.Size(), want.Mode(), want.ModTime())
		}
	}
	if _, err := lstatAt(d.top, "absent"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lstat of an absent name: %v, want not exist", err)
	}
	if _, err := openFileAt(d.top, "link", unix.O_RDONLY); !errors.Is(err, unix.ELOOP) {
		t.Errorf("open of a link: %v, want ELOOP (never followed)", err)
	}
	if _, err := openDirAt(d.top, "fifo"); !errors.Is(err, unix.ENOTDIR) {
		t.Errorf("open of a FIFO as a folder: %v, want ENOTDIR", err)
	}
}

// TestRawFileReads: Read and ReadAt behave as os.File's (short only at the
// end, io.EOF there), and a second Close is refused instead of closing a
// descriptor that may have been reused.
func TestRawFileReads(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(filepath.Join(dir, "f"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newRawFile(fd, "", "/f")
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := f.Stat(); fi.Size() != 10 || !fi.Mode().IsRegular() {
		t.Errorf("stat: %d %v", fi.Size(), fi.Mode())
	}
	b := make([]byte, 4)
	if n, err := f.ReadAt(b, 8); n != 2 || err != io.EOF || string(b[:n]) != "89" {
		t.Errorf("ReadAt at 8: %d %v %q", n, err, b[:n])
	}
	if n, err := f.ReadAt(b, 2); n != 4 || err != nil || string(b) != "2345" {
		t.Errorf("ReadAt at 2: %d %v %q", n, err, b)
	}
	all, err := io.ReadAll(f)
	if err != nil || string(all) != "0123456789" {
		t.Errorf("ReadAll: %q %v", all, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second Close: %v, want ErrClosed", err)
	}
	if _, err := f.Read(b); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Read after Close: %v, want ErrClosed", err)
	}
}
