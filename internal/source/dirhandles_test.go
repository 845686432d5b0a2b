package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fast paths (kept folder handles, Resolve from a cached folder, one
// lstat of the final component) must give exactly what the plain reads
// give: every answer of a warm source is compared with that of a fresh
// RootPlain source.
func TestWarmSourceAgreesWithCold(t *testing.T) {
	_, warm := tree(t)
	dir := warm.Info().Root
	names := []string{
		"/", "/usr", "/usr/local/cuda/bin/nvcc", "/usr/local/cuda", "/usr/local/cuda/bin", "/usr/bin/up",
		"/lib64/libc.so.6", "/lib64", "/lib64/", "/lib64/.", "/lib64/..", "/usr//lib64/libc.so.6", "/usr/lib64/./libc.so.6",
		"/usr/local/cuda/../cuda-12.8/bin", "/../../..", "/dangling", "/escape", "/loop/a", "/loop/a/x",
		"/etc/passwd", "/etc/passwd/x", "/nowhere", "/nowhere/x", "/etc/alternatives/cuda/bin/nvcc",
	}
	// describe asks everything of name, each question of the source
	// get returns: the same warm one, or a fresh one each time.
	describe := func(get func() Source, name string) string {
		var b strings.Builder
		p, err := get().Resolve(name)
		fmt.Fprintf(&b, "resolve %q %v\n", p, err)
		fi, err := get().Stat(name)
		fmt.Fprintf(&b, "stat %v %v\n", modeOf(fi), errText(err, dir))
		fi, err = get().Lstat(name)
		fmt.Fprintf(&b, "lstat %v %v\n", modeOf(fi), errText(err, dir))
		l, err := get().ReadLink(name)
		fmt.Fprintf(&b, "readlink %q %v\n", l, errText(err, dir))
		data, err := ReadFile(get(), name, 1<<10)
		fmt.Fprintf(&b, "read %q %v\n", data, errText(err, dir))
		ents, err := get().ReadDir(name)
		for _, e := range ents {
			fmt.Fprintf(&b, "  %s %v\n", e.Name(), e.Type())
		}
		fmt.Fprintf(&b, "readdir %v\n", errText(err, dir))
		return b.String()
	}
	fresh := func() Source {
		src, err := RootPlain(dir, warm.Env())
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	for round := range 3 { // the second and third rounds run on warm caches
		for _, name := range names {
			got := describe(func() Source { return warm }, name)
			if want := describe(fresh, name); got != want {
				t.Errorf("round %d, %s: warm source says\n%s\ncold source says\n%s", round, name, got, want)
			}
		}
	}
}

func modeOf(fi fs.FileInfo) string {
	if fi == nil {
		return "-"
	}
	return fi.Mode().String()
}

func errText(err error, root string) string {
	if err == nil {
		return "<nil>"
	}
	return strings.ReplaceAll(err.Error(), root, "ROOT")
}

// F7 with kept handles: a folder whose handle is open is swapped for a link
// to the host. Reads must keep to the folder that was there, or fail; never
// reach the host. Once the handle is dropped (more than maxDirHandles other
// folders used), the next open meets the link and is refused.
func TestF7KeptHandleAfterSwap(t *testing.T) {
	dir, host := t.TempDir(), t.TempDir()
	const canary = "HOSTCANARY91c2"
	for _, n := range []string{"f", canary} {
		if err := os.WriteFile(filepath.Join(host, n), []byte(canary), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	site := filepath.Join(dir, "usr/lib/site")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "f"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 * maxDirHandles {
		if err := os.MkdirAll(filepath.Join(dir, "other", fmt.Sprint(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(src, "/usr/lib/site/f", 64); err != nil || string(b) != "inside" {
		t.Fatalf("before the swap: %q, %v", b, err)
	}
	if err := os.Rename(site, site+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, site); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if b, err := ReadFile(src, "/usr/lib/site/f", 64); err == nil && strings.Contains(string(b), canary) {
			t.Errorf("%s: read the host's file through the swapped folder", when)
		}
		if _, err := src.Lstat("/usr/lib/site/" + canary); err == nil {
			t.Errorf("%s: lstat found the host's file through the swapped folder", when)
		}
		ents, _ := src.ReadDir("/usr/lib/site")
		for _, e := range ents {
			if e.Name() == canary {
				t.Errorf("%s: listed the host's folder", when)
			}
		}
	}
	check("with the folder's handle kept")
	// Drop the kept handles by using more folders than are kept.
	for i := range 2 * maxDirHandles {
		if _, err := src.Stat(fmt.Sprintf("/other/%d/x", i)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat in /other/%d: %v", i, err)
		}
	}
	check("after the handle was dropped")
	// A fresh source resolves the link inside the root: /usr/lib/site is
	// then HOST inside the root, which does not exist.
	fresh, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(fresh, "/usr/lib/site/f", 64); err == nil {
		t.Errorf("fresh source: read %q through a link out of the root", b)
	}
}

// F5 with kept handles: a FIFO swapped in where a folder was, before its
// handle is opened, must fail at once, not block in open.
func TestF5FIFOSwappedForFolder(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "usr/lib/site")
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	// Resolve caches /usr/lib/site as a folder prefix (and keeps a handle
	// on it, dropped here, as the LRU would).
	if _, err := src.Resolve("/usr/lib/site/f"); err != nil {
		t.Fatal(err)
	}
	src.(*dirSource).dirs.closeAll()
	if err := os.Remove(site); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(site, 0o644); err != nil {
		t.Fatal(err)
	}
	withDeadline(t, 3*time.Second, "Open below a FIFO swapped for a folder", func() {
		if f, err := src.Open("/usr/lib/site/f"); err == nil {
			f.Close()
			t.Error("opened a file below a FIFO")
		}
		if _, err := src.Stat("/usr/lib/site/f"); err == nil {
			t.Error("stat'ed a file below a FIFO")
		}
	})
}

// The kept handles are bounded: using many folders leaves at most
// maxDirHandles open, and dropping the source closes them.
func TestDirHandlesBounded(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		p := filepath.Join(dir, "d", fmt.Sprint(i))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	before := openFDs(t)
	for i := range 300 {
		if b, err := ReadFile(src, fmt.Sprintf("/d/%d/f", i), 8); err != nil || string(b) != "x" {
			t.Fatalf("/d/%d/f: %q, %v", i, b, err)
		}
	}
	d := src.(*dirSource).dirs
	d.mu.Lock()
	kept, listed := len(d.m), d.lru.Len()
	d.mu.Unlock()
	if kept > maxDirHandles || kept != listed {
		t.Errorf("%d handles kept (%d listed), want at most %d", kept, listed, maxDirHandles)
	}
	if n := openFDs(t) - before; n > maxDirHandles+2 {
		t.Errorf("%d more descriptors open after reading 300 folders, want at most %d", n, maxDirHandles+2)
	}
	d.closeAll()
	if n := openFDs(t) - before; n > 2 {
		t.Errorf("%d more descriptors open after closeAll", n)
	}
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// A folder found absent is remembered for the run (the source is taken as
// unchanging, as the Cache takes it): asking again makes no call, so a
// folder made meanwhile is not seen by this source, and is by a new one.
// The memory is bounded: a hostile root's absent names cannot grow it.
func TestAbsentFoldersRemembered(t *testing.T) {
	dir := t.TempDir()
	src, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Stat("/opt/venv/bin/python3"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat of a path under an absent folder: %v, want ErrNotExist", err)
	}
	d := src.(*dirSource).dirs
	if _, ok := d.absent["/opt"]; !ok {
		t.Fatalf("absent folders remembered: %v, want /opt among them", d.absent)
	}
	if err := os.MkdirAll(filepath.Join(dir, "opt", "venv", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opt", "venv", "bin", "python3"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Stat("/opt/venv/bin/python3"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the same source, after the folder was made: %v; want it still absent (no call made)", err)
	}
	fresh, err := Root(dir, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Stat("/opt/venv/bin/python3"); err != nil {
		t.Errorf("a new source: %v, want the file found", err)
	}
	for i := range maxAbsentFolders + 1000 {
		src.Stat(fmt.Sprintf("/absent%d/x", i))
	}
	if n := len(d.absent); n > maxAbsentFolders {
		t.Errorf("%d absent folders remembered, want at most %d", n, maxAbsentFolders)
	}
}
