package source

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Cache is one run's memory of a Source: every path resolved, stat'ed,
// listed or link read once, and every small regular file read from disk
// once, however many collectors ask. Views of it (View) count what each
// collector asked for and what that cost, for `doctor --timings`.
//
// A run is short and its source is not expected to change under it; a
// file that does change mid-run is seen as it was first read, which is
// what a consistent set of facts needs anyway.
type Cache struct {
	src Source

	mu      sync.Mutex
	resolve map[string]result[string]
	stat    map[string]result[fs.FileInfo]
	lstat   map[string]result[fs.FileInfo]
	link    map[string]result[string]
	dir     map[string]result[[]fs.DirEntry]
	small   map[string]*smallFile
	// smallBytes is the content held by small.
	smallBytes int64
	opened     map[string]bool // distinct names opened
	read       atomic.Int64    // bytes read from the source, all views
}

type result[T any] struct {
	v   T
	err error
}

// smallFile is a small regular file's content, read once under its own
// lock so concurrent first readers wait for one read instead of each
// reading.
type smallFile struct {
	once sync.Once
	data []byte
	fi   fs.FileInfo
	err  error
}

const (
	// SmallFileBytes is the largest file kept whole in the cache: text
	// files collectors read entirely (METADATA headers, RECORD, version.py,
	// os-release, ld.so.conf) are nearly all below it; binaries (shared
	// objects, fatbins) are read in place, a header at a time.
	SmallFileBytes = 64 << 10
	// maxCachedBytes bounds the whole content cache; past it files are
	// read from the source each time.
	maxCachedBytes = 64 << 20
)

// NewCache returns an empty per-run cache in front of src.
func NewCache(src Source) *Cache {
	return &Cache{src: src,
		resolve: map[string]result[string]{}, stat: map[string]result[fs.FileInfo]{}, lstat: map[string]result[fs.FileInfo]{},
		link: map[string]result[string]{}, dir: map[string]result[[]fs.DirEntry]{}, small: map[string]*smallFile{}, opened: map[string]bool{}}
}

// ReadStats is what one view asked of its source.
type ReadStats struct {
	// Opens are files opened; Bytes the bytes read from the source for
	// them (a small file's whole content on its first open, nothing on
	// later ones; a large file's every read in place).
	Opens int64 `json:"files"`
	Bytes int64 `json:"bytes"`
	// Lookups are stat, lstat, readlink, readdir and resolve calls; Cached
	// how many of them, and of the opens, the cache answered without
	// touching the source.
	Lookups int64 `json:"lookups"`
	Cached  int64 `json:"cached"`
	// Execs are programs run (live host only) and their wall time.
	Execs  int64   `json:"execs,omitempty"`
	ExecMS float64 `json:"exec_ms,omitempty"`
}

// Totals are the distinct files opened and the bytes read from the source
// in the run so far, all views together.
func (c *Cache) Totals() (files, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int64(len(c.opened)), c.read.Load()
}

// View is a Source reading through a Cache that counts its own use.
type View struct {
	c *Cache

	opens, bytes, lookups, cached, execs, execNS atomic.Int64
}

// View returns a new counting view of the cache: one per collector.
func (c *Cache) View() *View { return &View{c: c} }

// Stats returns what the view has asked so far.
func (v *View) Stats() ReadStats {
	return ReadStats{Opens: v.opens.Load(), Bytes: v.bytes.Load(), Lookups: v.lookups.Load(), Cached: v.cached.Load(),
		Execs: v.execs.Load(), ExecMS: float64(v.execNS.Load()/1000) / 1000}
}

func (v *View) Info() Info { return v.c.src.Info() }
func (v *View) Env() Env   { return v.c.src.Env() }

// memo returns m[key], computing it with fn once: concurrent first callers
// may both compute (the calls are idempotent lookups), the first stored wins.
func memo[T any](v *View, m map[string]result[T], key string, fn func(string) (T, error)) (T, error) {
	v.lookups.Add(1)
	v.c.mu.Lock()
	r, ok := m[key]
	v.c.mu.Unlock()
	if ok {
		v.cached.Add(1)
		return r.v, r.err
	}
	val, err := fn(key)
	v.c.mu.Lock()
	if r, ok := m[key]; ok {
		v.c.mu.Unlock()
		return r.v, r.err
	}
	m[key] = result[T]{val, err}
	v.c.mu.Unlock()
	return val, err
}

func (v *View) Resolve(name string) (string, error) {
	return memo(v, v.c.resolve, name, v.c.src.Resolve)
}

func (v *View) Stat(name string) (fs.FileInfo, error) { return memo(v, v.c.stat, name, v.c.src.Stat) }

func (v *View) Lstat(name string) (fs.FileInfo, error) {
	return memo(v, v.c.lstat, name, v.c.src.Lstat)
}

func (v *View) ReadLink(name string) (string, error) {
	return memo(v, v.c.link, name, v.c.src.ReadLink)
}

// ReadDir returns a copy of the cached listing: callers may sort or
// filter what they get.
func (v *View) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := memo(v, v.c.dir, name, v.c.src.ReadDir)
	return slices.Clone(ents), err
}

func (v *View) Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	t0 := time.Now()
	out, err := v.c.src.Exec(ctx, name, args...)
	if !errors.Is(err, ErrNotLive) {
		v.execs.Add(1)
		v.execNS.Add(int64(time.Since(t0)))
	}
	return out, err
}

// Open stats first: a small regular file is served from the cache (read
// from the source on its first open only); anything else is opened in
// place and its reads are counted.
func (v *View) Open(name string) (File, error) {
	v.opens.Add(1)
	v.c.mu.Lock()
	v.c.opened[name] = true
	v.c.mu.Unlock()
	if fi, err := v.Stat(name); err == nil && fi.Mode().IsRegular() && fi.Size() <= SmallFileBytes {
		if sf := v.c.smallFile(name, fi.Size()); sf != nil {
			first := false
			sf.once.Do(func() { first = true; sf.data, sf.fi, sf.err = v.readSmall(name) })
			if !first {
				v.cached.Add(1)
			}
			if sf.err != nil {
				return nil, sf.err
			}
			return &memFile{Reader: bytes.NewReader(sf.data), fi: sf.fi}, nil
		}
	}
	f, err := v.c.src.Open(name)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, v: v}, nil
}

// smallFile returns the cache slot of name, or nil when the cache is full.
func (c *Cache) smallFile(name string, size int64) *smallFile {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sf, ok := c.small[name]; ok {
		return sf
	}
	if c.smallBytes+size > maxCachedBytes {
		return nil
	}
	c.smallBytes += size
	sf := &smallFile{}
	c.small[name] = sf
	return sf
}

// readSmall reads a whole small file; a file that grew past the cap since
// its stat is cut at the cap plus one byte, so readers capping at
// SmallFileBytes still see that it is too large.
func (v *View) readSmall(name string) ([]byte, fs.FileInfo, error) {
	f, err := v.c.src.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, SmallFileBytes+1))
	v.addBytes(len(b))
	if err != nil {
		return nil, nil, err
	}
	return b, fi, nil
}

// memFile is a cached small file, read from memory.
type memFile struct {
	*bytes.Reader
	fi fs.FileInfo
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.fi, nil }
func (m *memFile) Close() error               { return nil }

// countedFile is a file read in place, its reads counted.
type countedFile struct {
	File
	v *View
}

func (f *countedFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.v.addBytes(n)
	return n, err
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.v.addBytes(n)
	return n, err
}

func (v *View) addBytes(n int) {
	v.bytes.Add(int64(n))
	v.c.read.Add(int64(n))
}
