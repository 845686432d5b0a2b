package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// countingSource counts the opens that reach the underlying source.
type countingSource struct {
	Source
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingSource) Open(name string) (File, error) {
	c.mu.Lock()
	c.opens[name]++
	c.mu.Unlock()
	return c.Source.Open(name)
}

func cacheTree(t *testing.T) (*countingSource, string) {
	t.Helper()
	dir := t.TempDir()
	write := func(p string, b []byte) {
		h := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("site/a-1.0.dist-info/METADATA", []byte("Metadata-Version: 2.1\nName: a\nVersion: 1.0\n\nbody\n"))
	write("site/big.so", bytes.Repeat([]byte{7}, SmallFileBytes+10))
	if err := os.Symlink("a-1.0.dist-info", filepath.Join(dir, "site", "a.link")); err != nil {
		t.Fatal(err)
	}
	src, err := Root(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &countingSource{Source: src, opens: map[string]int{}}, dir
}

// A small file read by many views at once reaches the source once; each
// view counts its own opens, the bytes go to the view that read them.
func TestCacheReadsSmallFilesOnce(t *testing.T) {
	cs, _ := cacheTree(t)
	c := NewCache(cs)
	const meta = "/site/a-1.0.dist-info/METADATA"
	views := make([]*View, 8)
	var wg sync.WaitGroup
	for i := range views {
		views[i] = c.View()
		wg.Go(func() {
			for range 10 {
				b, err := ReadFile(views[i], meta, 1<<20)
				if err != nil || !bytes.HasPrefix(b, []byte("Metadata-Version")) {
					t.Errorf("%q %v", b, err)
				}
			}
		})
	}
	wg.Wait()
	if n := cs.opens[meta]; n != 1 {
		t.Errorf("METADATA opened %d times at the source, want 1", n)
	}
	var opens, bytes, cached int64
	for _, v := range views {
		s := v.Stats()
		opens, bytes, cached = opens+s.Opens, bytes+s.Bytes, cached+s.Cached
	}
	if opens != 80 || cached != 79 || bytes != 49 {
		t.Errorf("opens %d cached %d bytes %d; want 80, 79, 49", opens, cached, bytes)
	}
	if files, b := c.Totals(); files != 1 || b != 49 {
		t.Errorf("totals %d files %d bytes", files, b)
	}
}

// A large file is read in place, every read counted; caps still hold.
func TestCacheLargeFilesInPlace(t *testing.T) {
	cs, _ := cacheTree(t)
	c := NewCache(cs)
	v := c.View()
	for range 2 {
		f, err := v.Open("/site/big.so")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		if _, err := f.ReadAt(buf, 1000); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if s := v.Stats(); s.Opens != 2 || s.Bytes != 200 || cs.opens["/site/big.so"] != 2 {
		t.Errorf("stats %+v, source opens %d", s, cs.opens["/site/big.so"])
	}
	if _, err := ReadFile(v, "/site/big.so", 1000); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the cap: %v", err)
	}
}

// Lookups are answered once, errors included; listings are copies.
func TestCacheLookups(t *testing.T) {
	cs, _ := cacheTree(t)
	v := NewCache(cs).View()
	for range 3 {
		if _, err := v.Stat("/site/missing"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("missing: %v", err)
		}
		if p, err := v.Resolve("/site/a.link/METADATA"); err != nil || p != "/site/a-1.0.dist-info/METADATA" {
			t.Fatalf("resolve %q %v", p, err)
		}
		if l, err := v.ReadLink("/site/a.link"); err != nil || l != "a-1.0.dist-info" {
			t.Fatalf("readlink %q %v", l, err)
		}
		ents, err := v.ReadDir("/site")
		if err != nil || len(ents) != 3 {
			t.Fatalf("readdir %v %v", ents, err)
		}
		ents[0] = nil // a caller scribbling on its copy
	}
	if s := v.Stats(); s.Lookups != 12 || s.Cached != 8 {
		t.Errorf("stats %+v; want 12 lookups, 8 cached", s)
	}
	if _, err := v.Open("/site/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open missing: %v", err)
	}
	f, err := v.Open("/site/a-1.0.dist-info/METADATA")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	if fi, _ := f.Stat(); fi.Size() != int64(len(b)) || fi.Name() != "METADATA" {
		t.Errorf("stat of a cached file: %v %d", fi, len(b))
	}
}

// A reader that stops at METADATA's blank line reads the header block, not
// the long description; a later whole-file reader extends the same prefix,
// so no byte comes from the source twice.
func TestCacheReadsOnlyWhatIsAsked(t *testing.T) {
	dir := t.TempDir()
	head := "Metadata-Version: 2.1\nName: big\nVersion: 1.0\n\n"
	body := bytes.Repeat([]byte("long description\n"), 2000) // 34 KB
	if err := os.WriteFile(filepath.Join(dir, "METADATA"), append([]byte(head), body...), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := Root(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(src)
	v := c.View()
	f, err := v.Open("/METADATA")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, _ := f.Read(buf)
	f.Close()
	if !bytes.HasPrefix(buf[:n], []byte(head)) {
		t.Fatalf("read %q", buf[:n])
	}
	if got := v.Stats().Bytes; got > fillChunk {
		t.Errorf("a 512-byte read fetched %d bytes from the source", got)
	}
	w := c.View()
	b, err := ReadFile(w, "/METADATA", 1<<20)
	if err != nil || len(b) != len(head)+len(body) {
		t.Fatalf("whole file: %d bytes, %v", len(b), err)
	}
	if _, total := c.Totals(); total != int64(len(b)) {
		t.Errorf("the source gave %d bytes for a %d-byte file", total, len(b))
	}
}

// /proc and /sys files report a size of 0 (or 4096) whatever they hold:
// the cache must read them to their end, as os.ReadFile does.
func TestCacheProcFiles(t *testing.T) {
	host, err := Host(nil)
	if err != nil {
		t.Fatal(err)
	}
	v := NewCache(host).View()
	for _, p := range []string{"/proc/version", "/proc/meminfo", "/proc/sys/kernel/osrelease", "/proc/self/status", "/proc/driver/nvidia/version"} {
		want, err := os.ReadFile(p)
		if err != nil {
			continue // not on this machine
		}
		got, err := ReadFile(v, p, 1<<20)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		// /proc/self/status changes between reads; its first line does not.
		if p == "/proc/self/status" {
			got, _, _ = bytes.Cut(got, []byte("\n"))
			want, _, _ = bytes.Cut(want, []byte("\n"))
		}
		if p != "/proc/meminfo" && !bytes.Equal(got, want) || len(got) < 2 {
			t.Errorf("%s: read %q, os.ReadFile %q", p, got, want)
		}
		if p == "/proc/meminfo" && !bytes.HasPrefix(got, []byte("MemTotal:")) {
			t.Errorf("%s: read %q", p, got)
		}
	}
	// A file whose stat says 0 bytes but holds more, on any source.
	zs := &zeroSizeSource{Source: host, content: bytes.Repeat([]byte("proc line\n"), 1000)}
	b, err := ReadFile(NewCache(zs).View(), "/proc/fake", 1<<20)
	if err != nil || !bytes.Equal(b, zs.content) {
		t.Errorf("zero-size file: %d bytes, %v; want %d", len(b), err, len(zs.content))
	}
}

// zeroSizeSource serves one file whose stat reports size 0.
type zeroSizeSource struct {
	Source
	content []byte
}

func (z *zeroSizeSource) Open(name string) (File, error) {
	return &zeroSizeFile{Reader: bytes.NewReader(z.content)}, nil
}

type zeroSizeFile struct{ *bytes.Reader }

func (zeroSizeFile) Close() error               { return nil }
func (zeroSizeFile) Stat() (fs.FileInfo, error) { return zeroInfo{}, nil }

type zeroInfo struct{ fs.FileInfo }

func (zeroInfo) Size() int64       { return 0 }
func (zeroInfo) Mode() fs.FileMode { return 0o444 }
func (zeroInfo) Name() string      { return "fake" }

// The cache's caps hold when many views fill it at once: past
// maxCachedFiles files or maxCachedBytes bytes a file is read from the
// source each time (and read right), and the counts never pass the caps.
// Each cap is tested alone: 4,200 tiny files reach the file cap first;
// 300 files of 60 KB the byte cap.
func TestCacheCapsHeld(t *testing.T) {
	for _, c := range []struct {
		name  string
		files int
		size  int
	}{{"files", maxCachedFiles + 104, 10}, {"bytes", 300, 60 << 10}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			body := bytes.Repeat([]byte{'x'}, c.size)
			for i := range c.files {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), body, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			src, err := Root(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			cache := NewCache(src)
			var wg sync.WaitGroup
			var mu sync.Mutex
			uncached := 0
			for w := range 8 {
				v := cache.View()
				wg.Go(func() {
					for i := w; i < c.files; i += 8 {
						f, err := v.Open(fmt.Sprintf("/%d", i))
						if err != nil {
							t.Error(err)
							return
						}
						if _, ok := f.(*countedFile); ok {
							mu.Lock()
							uncached++
							mu.Unlock()
						}
						b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<20))
						f.Close()
						if err != nil || len(b) != c.size {
							t.Errorf("file %d: %d bytes, %v", i, len(b), err)
						}
					}
				})
			}
			wg.Wait()
			files, held := cache.smallFiles.Load(), cache.smallBytes.Load()
			if files > maxCachedFiles || held > maxCachedBytes {
				t.Errorf("the cache holds %d files, %d bytes: past its caps", files, held)
			}
			if uncached == 0 || int64(uncached)+files != int64(c.files) {
				t.Errorf("%d files kept, %d read in place, of %d: the cap was not reached, or a file went missing", files, uncached, c.files)
			}
			if held != files*int64(c.size) {
				t.Errorf("held %d bytes for %d files of %d", held, files, c.size)
			}
		})
	}
}
