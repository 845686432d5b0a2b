package source

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listedTree is a root whose folder /d holds one of each kind of entry a
// listing can name; a device only where mknod is allowed (root).
func listedTree(t *testing.T) (dir string, hasDevice bool) {
	t.Helper()
	dir = t.TempDir()
	d := filepath.Join(dir, "d")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(d, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(d, "file"), []byte("inside"), 0o644))
	must(os.WriteFile(filepath.Join(d, "sub", "x"), []byte("x"), 0o644))
	must(syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644))
	must(os.Symlink("file", filepath.Join(d, "link")))
	must(os.Symlink("fifo", filepath.Join(d, "linkfifo")))
	must(os.Symlink("/d/sub", filepath.Join(d, "linkdir")))
	// A socket: bound, then its listener closed (the name stays).
	if l, err := net.Listen("unix", filepath.Join(d, "sock")); err == nil {
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
	}
	hasDevice = unix.Mknod(filepath.Join(d, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) == nil
	return dir, hasDevice
}

// unknownTypes is a getdents that hides every entry's type (DT_UNKNOWN),
// as some filesystems give it.
func unknownTypes(fd int, buf []byte) (int, error) {
	n, err := unix.Getdents(fd, buf)
	for b := buf[:max(n, 0)]; len(b) >= 19; {
		reclen := int(b[16]) | int(b[17])<<8
		if reclen < 19 || reclen > len(b) {
			break
		}
		b[18] = unix.DT_UNKNOWN
		b = b[reclen:]
	}
	return n, err
}

// Every kind of entry, answered from a listing (with the types getdents
// gives, and with DT_UNKNOWN ones lstat'ed while listing), gives what a
// fresh RootPlain source gives, which lstats every name: a regular file
// and a link to one are read, a FIFO, a socket, a device and a link to a
// FIFO are refused (at once, never opened), an absent name is ENOENT.
func TestListingAgreesWithPlain(t *testing.T) {
	dir, hasDevice := listedTree(t)
	names := []string{"file", "fifo", "link", "linkfifo", "linkdir", "linkdir/x", "sub", "sub/x", "sock", "absent", "absent/x", "file/x"}
	if hasDevice {
		names = append(names, "null")
	}
	describe := func(src Source, name string) string {
		var b strings.Builder
		withDeadline(t, 3*time.Second, "reads of /d/"+name, func() {
			p := "/d/" + name
			data, err := ReadFile(src, p, 1<<10)
			b.WriteString("read " + string(data) + " " + errText(err, dir) + "\n")
			fi, err := src.Stat(p)
			b.WriteString("stat " + modeOf(fi) + " " + errText(err, dir) + "\n")
			fi, err = src.Lstat(p)
			b.WriteString("lstat " + modeOf(fi) + " " + errText(err, dir) + "\n")
			r, err := src.Resolve(p)
			b.WriteString("resolve " + r + " " + errText(err, dir) + "\n")
			ents, err := src.ReadDir(p)
			for _, e := range ents {
				b.WriteString("  " + e.Name() + " " + e.Type().String() + "\n")
			}
			b.WriteString("readdir " + errText(err, dir) + "\n")
		})
		return b.String()
	}
	for _, c := range []struct {
		name     string
		getdents func(int, []byte) (int, error)
	}{{"dtype", unix.Getdents}, {"DT_UNKNOWN", unknownTypes}} {
		t.Run(c.name, func(t *testing.T) {
			src, err := Root(dir, Env{})
			if err != nil {
				t.Fatal(err)
			}
			src.(*dirSource).getdents = c.getdents
			ents, err := src.ReadDir("/d")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				want, err := os.Lstat(filepath.Join(dir, "d", e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if e.Type() != want.Mode().Type() {
					t.Errorf("listed %s as %v, lstat says %v", e.Name(), e.Type(), want.Mode().Type())
				}
				if fi, err := e.Info(); err != nil || fi.Mode() != want.Mode() {
					t.Errorf("Info of %s: %v %v, want %v", e.Name(), fi, err, want.Mode())
				}
			}
			if _, listed := src.(*dirSource).listed.lookup("/d/file"); !listed {
				t.Fatal("/d was listed but its listing is not kept")
			}
			plain, err := RootPlain(dir, Env{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if got, want := describe(src, n), describe(plain, n); got != want {
					t.Errorf("/d/%s: from the listing\n%s\nplain\n%s", n, got, want)
				}
			}
			for _, n := range []string{"fifo", "linkfifo", "sock", "null"} {
				if n == "null" && !hasDevice {
					continue
				}
				if _, err := src.Open("/d/" + n); !errors.Is(err, ErrNotRegular) {
					t.Errorf("Open(/d/%s) = %v, want ErrNotRegular", n, err)
				}
			}
		})
	}
}

// The listing is what answers: a name listed as a FIFO is refused even
// once a file took its place, and a name absent from it is ENOENT even once
// created (a run reads one consistent snapshot; the Cache keeps every
// answer anyway). Neither costs a lookup.
func TestListingAnswersWithoutLookups(t *testing.T) {
	dir, _ := listedTree(t)
	src, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ReadDir("/d"); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, "d")
	if err := os.Remove(filepath.Join(d, "fifo")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "fifo"), []byte("now a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "absent"), []byte("now here"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Open("/d/fifo"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open of a name listed as a FIFO: %v, want ErrNotRegular from the listing", err)
	}
	for _, op := range []func(string) error{
		func(p string) error { _, err := src.Open(p); return err },
		func(p string) error { _, err := src.Stat(p); return err },
		func(p string) error { _, err := src.Lstat(p); return err },
	} {
		if err := op("/d/absent"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a name absent from the listing: %v, want ENOENT from the listing", err)
		}
	}
}

// A file listed as regular and swapped afterwards, before it is opened,
// is still refused: for a link to the host, O_NOFOLLOW fails the open
// (ELOOP) so the host file is never read; for a FIFO, the non-blocking open
// returns and the open file's fstat refuses it; for a device, likewise.
func TestListedFileSwappedBeforeOpen(t *testing.T) {
	dir, host := t.TempDir(), t.TempDir()
	const canary = "HOSTCANARY3b9e"
	if err := os.WriteFile(filepath.Join(host, "secret"), []byte(canary), 0o644); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, "d")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"tolink", "tofifo", "todevice"} {
		if err := os.WriteFile(filepath.Join(d, n), []byte("inside"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ReadDir("/d"); err != nil {
		t.Fatal(err)
	}
	swap := func(n string, make func(string) error) bool {
		t.Helper()
		p := filepath.Join(d, n)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := make(p); err != nil {
			if errors.Is(err, unix.EPERM) {
				return false
			}
			t.Fatal(err)
		}
		return true
	}
	swap("tolink", func(p string) error { return os.Symlink(filepath.Join(host, "secret"), p) })
	swap("tofifo", func(p string) error { return syscall.Mkfifo(p, 0o644) })
	device := swap("todevice", func(p string) error {
		return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
	})
	withDeadline(t, 3*time.Second, "opens of swapped files", func() {
		b, err := ReadFile(src, "/d/tolink", 1<<10)
		if strings.Contains(string(b), canary) {
			t.Fatal("read the host's file through a link swapped in after the listing")
		}
		if !errors.Is(err, syscall.ELOOP) {
			t.Errorf("Open of a file swapped for a link: %v, want ELOOP", err)
		}
		if _, err := src.Open("/d/tofifo"); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open of a file swapped for a FIFO: %v, want ErrNotRegular", err)
		}
		if device {
			if _, err := src.Open("/d/todevice"); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Open of a file swapped for a device: %v, want ErrNotRegular", err)
			}
		}
	})
}

// A folder listed, then swapped for a link to the host before its handle
// is opened, is refused (ELOOP): its files are never read from the host.
func TestListedFolderSwappedForLink(t *testing.T) {
	dir, host := t.TempDir(), t.TempDir()
	const canary = "HOSTCANARY5d21"
	if err := os.WriteFile(filepath.Join(host, "f"), []byte(canary), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "d", "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "f"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ReadDir("/d"); err != nil { // lists sub as a folder
		t.Fatal(err)
	}
	src.(*dirSource).dirs.closeAll()
	if err := os.Rename(sub, sub+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, sub); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(src, "/d/sub/f", 1<<10); err == nil || strings.Contains(string(b), canary) {
		t.Errorf("read %q, %v through a folder swapped for a link after the listing", b, err)
	}
	if ents, err := src.ReadDir("/d/sub"); err == nil {
		t.Errorf("listed %d entries of a folder swapped for a link to the host", len(ents))
	}
}

// A short read of a regular file at the size fstat gave is its end: no
// second read(2) or pread(2) is made to learn it (strace showed one per
// file). A file that shrank after the fstat is read on to its real end.
func TestShortReadIsEOF(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() *rawFile {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		f, err := newRawFile(fd, "", "/f")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	f := open()
	b := make([]byte, 64)
	if n, err := f.Read(b); n != 10 || err != nil {
		t.Fatalf("Read: %d %v", n, err)
	}
	if !f.eof {
		t.Error("a short Read at the fstat size did not mark the end")
	}
	if n, err := f.Read(b); n != 0 || err == nil {
		t.Errorf("Read after the end: %d %v, want io.EOF", n, err)
	}
	if n, err := f.ReadAt(b, 4); n != 6 || err == nil || string(b[:n]) != "456789" {
		t.Errorf("ReadAt past the end: %d %v %q, want 6 and io.EOF", n, err, b[:n])
	}
	// Shrunk after the fstat: the short read ends before the old size, so
	// reading goes on until read(2) says 0.
	g := open()
	if err := os.Truncate(p, 4); err != nil {
		t.Fatal(err)
	}
	if n, err := g.Read(b); n != 4 || err != nil || g.eof {
		t.Errorf("Read of a shrunk file: %d %v eof=%v", n, err, g.eof)
	}
	if n, err := g.Read(b); n != 0 || err == nil {
		t.Errorf("second Read of a shrunk file: %d %v, want io.EOF", n, err)
	}
	// A /proc file says size 0 and may come back short before its end:
	// no shortcut there, whatever was read.
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := open()
	h.fi.size = 0 // as procfs says
	if n, err := h.Read(b); n != 10 || err != nil || h.eof {
		t.Errorf("short Read of a file sized 0: %d %v eof=%v, want no end taken from the size", n, err, h.eof)
	}
	if n, err := h.ReadAt(b, 0); n != 10 || err == nil {
		t.Errorf("ReadAt of a file sized 0: %d %v, want 10 and io.EOF (from a read of 0)", n, err)
	}
}

// FuzzListFD: whatever getdents returns, listFD neither panics, nor returns
// more than its cap (plus the one entry that says the cap was passed), nor
// a name that is empty, ".", ".." or holds a NUL.
func FuzzListFD(f *testing.F) {
	dir := f.TempDir()
	for _, n := range []string{"METADATA", "RECORD", "a.dist-info"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		f.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := unix.Getdents(fd, buf)
	unix.Close(fd)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(buf[:n])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		served := false
		getdents := func(fd int, b []byte) (int, error) {
			if served {
				return 0, nil
			}
			served = true
			return copy(b, data), nil
		}
		// fd -1: an entry of unknown type is lstat'ed on it and fails.
		ents, _ := listFD(-1, getdents, 8)
		if len(ents) > 9 {
			t.Fatalf("%d entries past a cap of 8", len(ents))
		}
		for _, e := range ents {
			if e.name == "" || e.name == "." || e.name == ".." || strings.IndexByte(e.name, 0) >= 0 {
				t.Fatalf("bad name %q", e.name)
			}
		}
	})
}
