package source

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
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

	// Each kind of lookup has its own lock, and opened files are spread
	// over fileShards by name: with one lock for all of it, the metadata
	// readers and the collectors running beside them spent about 7% of
	// their CPU taking it in turns (BenchmarkDoctorSeed's profile;
	// docs/speed.md, "The last third-party inits and the cache's lock").
	resolve, link memoMap[string]
	stat, lstat   memoMap[fs.FileInfo]
	dir           memoMap[[]fs.DirEntry]
	files         [fileShards]fileShard
	// smallBytes and smallFiles are the content held by the shards' small
	// maps and its count, checked against maxCachedBytes and
	// maxCachedFiles.
	smallBytes, smallFiles atomic.Int64
	read                   atomic.Int64 // bytes read from the source, all views
}

// memoMap is one kind of lookup's results, by name.
type memoMap[T any] struct {
	mu sync.Mutex
	m  map[string]result[T]
}

// fileShard holds the files whose names hash to it.
type fileShard struct {
	mu    sync.Mutex
	small map[string]*smallFile
	// opened holds the distinct names opened, each with a lock that the
	// view opening it from the source holds, so that views opening one
	// file at once reach the source once.
	opened map[string]*sync.Mutex
}

const fileShards = 16

var shardSeed = maphash.MakeSeed()

func (c *Cache) shard(name string) *fileShard {
	return &c.files[maphash.String(shardSeed, name)%fileShards]
}

type result[T any] struct {
	v   T
	err error
}

// smallFile is what has been read of a small regular file so far: its
// first bytes, in order. Readers that stop early (METADATA up to its blank
// line) leave the rest unread; a later reader that wants more extends the
// prefix from the source, so no byte is read from the source twice.
type smallFile struct {
	name string
	fi   fs.FileInfo

	mu   sync.Mutex
	data []byte // the prefix read so far
	full bool   // data is the whole file (EOF seen)
}

const (
	// SmallFileBytes is the largest file kept whole in the cache: text
	// files collectors read entirely (METADATA headers, RECORD, version.py,
	// os-release, ld.so.conf) are nearly all below it; binaries (shared
	// objects, fatbins, by name) are read in place, a header at a time,
	// whatever their size.
	SmallFileBytes = 64 << 10
	// maxCachedBytes and maxCachedFiles bound the content cache; past
	// them a file is read from the source each time it is opened. Each
	// entry costs a few hundred bytes besides its content, and in a
	// 5,000-distribution environment the 25,000 dist-info files are each
	// read once: caching all of them cost 50 MB of peak RSS for nothing.
	maxCachedBytes = 16 << 20
	maxCachedFiles = 4096
)

// NewCache returns an empty per-run cache in front of src.
func NewCache(src Source) *Cache {
	c := &Cache{src: src}
	c.resolve.m, c.link.m = map[string]result[string]{}, map[string]result[string]{}
	c.stat.m, c.lstat.m = map[string]result[fs.FileInfo]{}, map[string]result[fs.FileInfo]{}
	c.dir.m = map[string]result[[]fs.DirEntry]{}
	for i := range c.files {
		c.files[i].small, c.files[i].opened = map[string]*smallFile{}, map[string]*sync.Mutex{}
	}
	return c
}

// ReadStats is what one view asked of its source (defined in facts, which
// stores it in a collector's timings).
type ReadStats = facts.ReadStats

// Totals are the distinct files opened and the bytes read from the source
// in the run so far, all views together.
func (c *Cache) Totals() (files, bytes int64) {
	for i := range c.files {
		sh := &c.files[i]
		sh.mu.Lock()
		files += int64(len(sh.opened))
		sh.mu.Unlock()
	}
	return files, c.read.Load()
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
func memo[T any](v *View, m *memoMap[T], key string, fn func(string) (T, error)) (T, error) {
	v.lookups.Add(1)
	m.mu.Lock()
	r, ok := m.m[key]
	m.mu.Unlock()
	if ok {
		v.cached.Add(1)
		return r.v, r.err
	}
	val, err := fn(key)
	m.mu.Lock()
	if r, ok := m.m[key]; ok {
		m.mu.Unlock()
		return r.v, r.err
	}
	m.m[key] = result[T]{val, err}
	m.mu.Unlock()
	return val, err
}

func (v *View) Resolve(name string) (string, error) {
	return memo(v, &v.c.resolve, name, v.c.src.Resolve)
}

func (v *View) Stat(name string) (fs.FileInfo, error) { return memo(v, &v.c.stat, name, v.c.src.Stat) }

func (v *View) Lstat(name string) (fs.FileInfo, error) {
	return memo(v, &v.c.lstat, name, v.c.src.Lstat)
}

func (v *View) ReadLink(name string) (string, error) {
	return memo(v, &v.c.link, name, v.c.src.ReadLink)
}

// ReadDir returns a copy of the cached listing: callers may sort or
// filter what they get.
func (v *View) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := memo(v, &v.c.dir, name, v.c.src.ReadDir)
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

// Open serves a small regular text file through the cache: bytes read
// once from the source are kept, and later opens (by any view) read them
// from memory. Anything else (a binary, a large file, a folder) is opened
// in place and its reads are counted. The size and type come from the
// opened file's own stat (one fstat), never from a separate lookup.
func (v *View) Open(name string) (File, error) {
	return v.openWith(name, nil, "")
}

// openWith is Open reaching the source through folder, when set, by the
// file's own name in it (base), else by name.
func (v *View) openWith(name string, folder folder, base string) (File, error) {
	v.opens.Add(1)
	c := v.c
	sh := c.shard(name)
	sh.mu.Lock()
	gate := sh.opened[name]
	if gate == nil {
		gate = new(sync.Mutex)
		sh.opened[name] = gate
	}
	sf := sh.small[name]
	sh.mu.Unlock()
	if sf == nil {
		// One view at a time opens a name from the source; the others
		// wait, then find its cache entry (collectors start together and
		// often open the same METADATA or version file at once).
		gate.Lock()
		defer gate.Unlock()
		sh.mu.Lock()
		sf = sh.small[name]
		sh.mu.Unlock()
	}
	if sf != nil {
		v.cached.Add(1)
		return &prefixFile{sf: sf, v: v}, nil
	}
	var f File
	var err error
	if folder != nil {
		f, err = folder.open(base, name)
	} else {
		f, err = c.src.Open(name)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > SmallFileBytes || binaryName(name) {
		if err == nil && binaryName(name) {
			adviseRandom(f) // advise_linux.go
		}
		return &countedFile{File: f, v: v}, nil
	}
	sf = c.slot(name, fi)
	if sf == nil { // the cache is full
		return &countedFile{File: f, v: v}, nil
	}
	pf := &prefixFile{sf: sf, v: v, src: f}
	// Read the first chunk (a whole file of up to fillChunk bytes) while
	// the other views wait, so they need no source handle of their own.
	if _, err := pf.ReadAt(make([]byte, 1), 0); err != nil && err != io.EOF {
		pf.Close()
		return nil, err
	}
	return pf, nil
}

// binaryName reports names of shared objects, archives and CUDA binaries:
// their readers take headers in place (a small C extension is still a
// binary), and keeping thousands of them would cost memory for nothing,
// since each is read by one collector only.
func binaryName(name string) bool {
	base := path.Base(name)
	for _, ext := range []string{".so", ".a", ".o", ".cubin", ".fatbin", ".pyd"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return strings.Contains(base, ".so.")
}

// slot returns the cache entry of name (an existing one when another view
// opened it first), or nil when the cache is full.
func (c *Cache) slot(name string, fi fs.FileInfo) *smallFile {
	sh := c.shard(name)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sf, ok := sh.small[name]; ok {
		return sf
	}
	if c.smallFiles.Add(1) > maxCachedFiles {
		c.smallFiles.Add(-1)
		return nil
	}
	if c.smallBytes.Add(fi.Size()) > maxCachedBytes {
		c.smallBytes.Add(-fi.Size())
		c.smallFiles.Add(-1)
		return nil
	}
	sf := &smallFile{name: name, fi: fi}
	sh.small[name] = sf
	return sf
}

// prefixFile reads a small file through its cache entry: from memory where
// the prefix covers the read, else from the source (its own handle, opened
// when first needed), extending the prefix.
type prefixFile struct {
	sf  *smallFile
	v   *View
	src File // nil until a read needs the source
	pos int64
}

// fillChunk is the least a prefix grows by: one read serves a METADATA
// header block, which is what most readers want.
const fillChunk = 8 << 10

func (p *prefixFile) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	sf := p.sf
	sf.mu.Lock()
	defer sf.mu.Unlock()
	want := off + int64(len(b))
	for int64(len(sf.data)) < want && !sf.full {
		if p.src == nil {
			f, err := p.v.c.src.Open(sf.name)
			if err != nil {
				return 0, err
			}
			p.src = f
		}
		// Grow to what is wanted, at least a chunk, never past the cap
		// (plus one byte, so a file that grew past it still reads as too
		// large to readers capping at SmallFileBytes). The stat's size
		// only shrinks the chunk (a 200-byte METADATA gets a 201-byte
		// buffer, not an 8 KB one); it never ends the file: /proc and
		// /sys files report 0 or 4096 whatever they hold, and only a
		// read that comes back short says where a file ends.
		chunk := int64(fillChunk)
		if size := sf.fi.Size(); size > 0 && size < chunk {
			chunk = size + 1
		}
		limit := int64(SmallFileBytes + 1)
		n := min(max(want, int64(len(sf.data))+chunk), limit) - int64(len(sf.data))
		if n <= 0 {
			sf.full = true
			break
		}
		if sf.data == nil {
			sf.data = make([]byte, 0, n)
		}
		sf.data = slices.Grow(sf.data, int(n))
		buf := sf.data[len(sf.data) : len(sf.data)+int(n)]
		got, err := p.src.ReadAt(buf, int64(len(sf.data)))
		p.v.addBytes(got)
		sf.data = sf.data[:len(sf.data)+got]
		if err == io.EOF || (err == nil && got < len(buf)) {
			sf.full = true
		} else if err != nil {
			return 0, err
		}
	}
	if off >= int64(len(sf.data)) {
		return 0, io.EOF
	}
	n := copy(b, sf.data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (p *prefixFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, err := p.ReadAt(b, p.pos)
	p.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil // the next Read reports it, as an *os.File does
	}
	return n, err
}

func (p *prefixFile) Stat() (fs.FileInfo, error) { return p.sf.fi, nil }

func (p *prefixFile) Close() error {
	if p.src != nil {
		return p.src.Close()
	}
	return nil
}

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

// openFolder opens the source's folder (when the source can) with a view
// of it that serves and keeps small files in the cache, as Open does, by
// their whole path: one read through a Folder is not read again by a
// later Open, nor the other way round.
func (v *View) openFolder(dir string) (folder, error) {
	fo, ok := v.c.src.(folderOpener)
	if !ok {
		return nil, errNoFolder
	}
	f, err := fo.openFolder(dir)
	if err != nil {
		return nil, err
	}
	return &viewFolder{v: v, dir: dir, f: f}, nil
}

type viewFolder struct {
	v   *View
	dir string
	f   folder
}

func (vf *viewFolder) open(name, full string) (File, error) {
	return vf.v.openWith(full, vf.f, name)
}

func (vf *viewFolder) close() { vf.f.close() }
