package imagesource

import (
	"errors"
	"io"
	"io/fs"
	"sync"
	"syscall"
)

// pageSize is the unit file bodies are read and cached in: a small file is
// one page, and ELF parsers' scattered small reads (headers, section
// tables, fatbin headers) mostly land in pages already read.
const pageSize = 64 << 10

type pageKey struct {
	file int
	page int64
}

// pageCache holds file pages up to a byte budget, evicting the oldest first.
type pageCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	pages map[pageKey][]byte
	order []pageKey
}

func newPageCache(max int64) *pageCache {
	return &pageCache{max: max, pages: map[pageKey][]byte{}}
}

func (c *pageCache) get(k pageKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.pages[k]
	return b, ok
}

func (c *pageCache) put(k pageKey, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(len(b)) > c.max {
		return
	}
	if old, ok := c.pages[k]; ok {
		c.used -= int64(len(old))
	} else {
		c.order = append(c.order, k)
	}
	c.pages[k] = b
	c.used += int64(len(b))
	for c.used > c.max && len(c.order) > 0 {
		victim := c.order[0]
		c.order = c.order[1:]
		if v, ok := c.pages[victim]; ok {
			c.used -= int64(len(v))
			delete(c.pages, victim)
		}
	}
}

// imageFile is an open file of the image. A read is served from what the
// one pass kept of the body when that holds all of it (the common case for
// every file collectors declared). Otherwise a page is fetched: in a raw
// layer by one ranged read at the page's offset; in a compressed layer
// through one forward stream per open file, opened by streaming the layer
// again up to the entry (counted in Stats.Rereads: a declared need missed).
type imageFile struct {
	src  *Source
	e    *entry
	name string

	mu     sync.Mutex
	off    int64       // Read's position
	r      io.Reader   // body stream at rpos (compressed layers)
	closer io.Closer   // what r holds open
	rpos   int64       // position of r in the body
	raw    *seekStream // body reader (raw layers)
	last   struct {    // the page read last, kept even when the cache is full
		n    int64
		data []byte
	}
}

func (f *imageFile) Stat() (fs.FileInfo, error) { return f.e.info(), nil }

func (f *imageFile) Read(p []byte) (int, error) {
	f.mu.Lock()
	off := f.off
	f.mu.Unlock()
	n, err := f.ReadAt(p, off)
	f.mu.Lock()
	f.off += int64(n)
	f.mu.Unlock()
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (f *imageFile) ReadAt(p []byte, off int64) (int, error) {
	if f.e.mode.IsDir() {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EISDIR}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: errors.New("negative offset")}
	}
	if bd := f.e.body; bd != nil && off < f.e.size {
		want := p
		if rest := f.e.size - off; int64(len(want)) > rest {
			want = want[:rest]
		}
		if bd.kept.readAt(want, off) {
			f.src.stats.keptReads.Add(1)
			if len(want) < len(p) {
				return len(want), io.EOF
			}
			return len(want), nil
		}
	}
	n := 0
	for n < len(p) && off < f.e.size {
		pg := off / pageSize
		data, err := f.page(pg)
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
		}
		k := copy(p[n:], data[off-pg*pageSize:])
		if k == 0 {
			return n, &fs.PathError{Op: "read", Path: f.name, Err: io.ErrUnexpectedEOF}
		}
		n += k
		off += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *imageFile) page(pg int64) ([]byte, error) {
	key := pageKey{f.e.body.id, pg}
	if b, ok := f.src.cache.get(key); ok {
		return b, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last.data != nil && f.last.n == pg {
		return f.last.data, nil
	}
	start := pg * pageSize
	buf := make([]byte, min(pageSize, f.e.size-start))
	if err := f.fill(buf, start); err != nil {
		return nil, err
	}
	f.src.cache.put(key, buf)
	f.last.n, f.last.data = pg, buf
	return buf, nil
}

func (f *imageFile) fill(buf []byte, start int64) error {
	bd := f.e.body
	l := bd.layer
	if l.raw && bd.dataOff >= 0 {
		if f.raw == nil {
			f.raw = &seekStream{b: l, base: bd.dataOff, size: bd.size}
		}
		f.raw.Seek(start, io.SeekStart)
		_, err := io.ReadFull(f.raw, buf)
		return unexpected(err)
	}
	if f.r == nil || f.rpos > start {
		f.closeStream()
		r, c, err := l.entryReader(bd.ordinal)
		if err != nil {
			return err
		}
		f.r, f.closer, f.rpos = r, c, 0
	}
	if gap := start - f.rpos; gap > 0 {
		k, err := io.CopyN(io.Discard, f.r, gap)
		f.rpos += k
		if err != nil {
			f.closeStream()
			return unexpected(err)
		}
	}
	k, err := io.ReadFull(f.r, buf)
	f.rpos += int64(k)
	if err != nil {
		f.closeStream()
		return unexpected(err)
	}
	return nil
}

func (f *imageFile) closeStream() {
	if f.closer != nil {
		f.closer.Close()
	}
	f.r, f.closer = nil, nil
}

func (f *imageFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closeStream()
	if f.raw != nil {
		f.raw.Close()
	}
	return nil
}
