package imagesource

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"github.com/fastpath-dev/fastpath/internal/zstd"
)

// layerBlob is one layer and the ways its bytes can be reached.
type layerBlob struct {
	index     int    // 0 is the bottom layer
	digest    string // the blob's digest as the manifest names it
	mediaType string
	ctx       context.Context
	stats     *counters

	// open returns the blob from its start, as stored (maybe compressed).
	open func() (io.ReadCloser, error)
	// openAt, where set, reads a byte range of the blob in place (a file
	// in an OCI layout or a docker-save archive, a registry's Range GET).
	openAt func(off, n int64) (io.ReadCloser, error)
	size   int64 // blob size; -1 when unknown

	// raw is set when the blob is an uncompressed tar reachable by openAt:
	// entries are then found by seeking past file bodies, and a file is
	// read at its offset without touching what comes before it.
	raw bool
}

func (b *layerBlob) String() string {
	return fmt.Sprintf("layer %d (%s)", b.index+1, shortDigest(b.digest))
}

func shortDigest(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// detectRaw decides whether the blob can be read in place: it can when it
// is reachable by range and its first bytes are no compression's magic.
func (b *layerBlob) detectRaw() {
	if b.openAt == nil || b.size < 512 {
		return
	}
	rc, err := b.openAt(0, 4)
	if err != nil {
		return
	}
	defer rc.Close()
	var magic [4]byte
	n, _ := io.ReadFull(rc, magic[:])
	b.stats.ranged.Add(int64(n))
	b.stats.rangeReads.Add(1)
	if n < 4 || bytes.HasPrefix(magic[:], gzipMagic) || bytes.Equal(magic[:], zstdMagic) {
		return
	}
	b.raw = true
}

// maxZstdWindow caps the window a zstd layer may ask the decoder for
// (real layers use 8 MB or less); a hostile frame header cannot make the
// decoder allocate more.
const maxZstdWindow = 64 << 20

// stream returns the layer's uncompressed tar from its start: one pass
// over it. For raw blobs it is an io.ReadSeeker, so archive/tar skips file
// bodies by seeking. The compression is told by the blob's first bytes,
// not by its media type (docker-save archives name none).
func (b *layerBlob) stream() (io.ReadCloser, error) {
	b.stats.passes.Add(1)
	if b.raw {
		return &seekStream{b: b, size: b.size}, nil
	}
	rc, err := b.open()
	if err != nil {
		return nil, err
	}
	in := &atomic.Int64{} // this pass's compressed bytes, for the expansion cap
	counted := &countedReader{rc: &countedReader{rc: rc, n: in}, n: &b.stats.compressed}
	br := bufio.NewReaderSize(counted, 1<<20)
	magic, _ := br.Peek(4)
	var out io.Reader
	closeFn := rc.Close
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			rc.Close()
			return nil, fmt.Errorf("gzip: %w", err)
		}
		out = zr
	case bytes.Equal(magic, zstdMagic):
		// Our own decoder (internal/zstd), not klauspost's: linking
		// that one costs every fastpath command 0.35 ms at start-up.
		zr, err := zstd.NewReader(br, maxZstdWindow)
		if err != nil {
			rc.Close()
			return nil, err
		}
		out = zr
		closeFn = func() error { zr.Close(); return rc.Close() }
	default:
		out = br
	}
	if out != io.Reader(br) { // compressed: gzip or zstd
		out = &expansionCap{r: out, in: in}
	}
	return &countedReader{rc: readCloser{out, closeFn}, n: &b.stats.stream}, nil
}

// A compressed layer may expand to at most maxExpansion times the
// compressed bytes read so far, once it has produced minExpansionCheck
// bytes: deflate cannot pass about 1032 to 1, so no gzip layer is refused,
// but a zstd frame of RLE blocks expands 32,768 to 1 (a 32 MB blob would be
// a terabyte of zeros for the one pass to skip through, half an hour of
// CPU). The work of a pass is thus at most maxExpansion times the bytes
// transferred. The tar reader reports the error as the layer's break: the
// entries read before it stay, with a warning.
const (
	maxExpansion      = 2048
	minExpansionCheck = 256 << 20
)

var errExpansion = fmt.Errorf("the layer expands to more than %d times its compressed size (a decompression bomb); the rest is not read", maxExpansion)

type expansionCap struct {
	r   io.Reader
	in  *atomic.Int64
	out int64
}

func (e *expansionCap) Read(p []byte) (int, error) {
	if e.out > minExpansionCheck && e.out > maxExpansion*max(e.in.Load(), 1) {
		return 0, errExpansion
	}
	n, err := e.r.Read(p)
	e.out += int64(n)
	return n, err
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// entryReader streams the layer again up to its tar entry number ordinal and
// returns a reader of that entry's body: the fallback for a read of a part
// of a file the one pass did not keep, costing everything before it.
func (b *layerBlob) entryReader(ordinal int) (io.Reader, io.Closer, error) {
	rc, err := b.stream()
	if err != nil {
		return nil, nil, err
	}
	b.stats.rereads.Add(1)
	tr := tar.NewReader(rc)
	for i := 0; i <= ordinal; i++ {
		if _, err := tr.Next(); err != nil {
			rc.Close()
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, nil, fmt.Errorf("%s: re-reading entry %d: %w", b, ordinal, err)
		}
	}
	return tr, rc, nil
}

// seekStream reads a span of a raw blob sequentially through ranged reads,
// and seeks by opening a new range. Ranges start at 1 MiB and double while
// reading stays sequential (to 16 MiB), so little is fetched that is not
// consumed even when a read stops early.
type seekStream struct {
	b    *layerBlob
	base int64 // offset of the span in the blob
	size int64 // length of the span
	pos  int64 // next byte to deliver, relative to base

	body    io.ReadCloser
	bodyPos int64 // position of body's next byte, relative to base
	bodyEnd int64 // end of the range body serves
	chunk   int64
}

const (
	minChunk = 1 << 20
	maxChunk = 16 << 20
	// maxGap is how far ahead a read may be served by reading through the
	// open range rather than opening a new one.
	maxGap = 64 << 10
)

func (s *seekStream) Read(p []byte) (int, error) {
	if s.pos >= s.size {
		return 0, io.EOF
	}
	if s.body != nil && (s.pos < s.bodyPos || s.pos > s.bodyPos+maxGap || s.pos >= s.bodyEnd) {
		sequential := s.pos == s.bodyEnd
		s.closeBody()
		if !sequential {
			s.chunk = 0
		}
	}
	if s.body == nil {
		if s.chunk == 0 {
			s.chunk = minChunk
		} else if s.chunk < maxChunk {
			s.chunk *= 2
		}
		n := min(s.chunk, s.size-s.pos)
		rc, err := s.b.openAt(s.base+s.pos, n)
		if err != nil {
			return 0, err
		}
		s.b.stats.rangeReads.Add(1)
		s.body, s.bodyPos, s.bodyEnd = rc, s.pos, s.pos+n
	}
	if gap := s.pos - s.bodyPos; gap > 0 {
		k, err := io.CopyN(io.Discard, s.body, gap)
		s.b.stats.ranged.Add(k)
		s.bodyPos += k
		if err != nil {
			s.closeBody()
			return 0, unexpected(err)
		}
	}
	if rest := s.bodyEnd - s.bodyPos; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := s.body.Read(p)
	s.b.stats.ranged.Add(int64(n))
	s.pos += int64(n)
	s.bodyPos += int64(n)
	if err == io.EOF {
		if s.bodyPos < s.bodyEnd {
			s.closeBody()
			return n, io.ErrUnexpectedEOF
		}
		err = nil
	}
	return n, err
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Seek only moves the position: the next Read opens what it needs.
func (s *seekStream) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += s.pos
	case io.SeekEnd:
		off += s.size
	default:
		return 0, errors.New("seek: bad whence")
	}
	if off < 0 {
		return 0, errors.New("seek: negative position")
	}
	s.pos = off
	return off, nil
}

func (s *seekStream) closeBody() {
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
}

func (s *seekStream) Close() error {
	s.closeBody()
	return nil
}

// rangeGet fetches bytes [off, off+n) of a registry blob. A registry that
// ignores Range answers 200 with the whole blob: the prefix is skipped then.
func rangeGet(ctx context.Context, client *http.Client, url string, off, n int64) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusPartialContent:
		return resp.Body, nil
	case http.StatusOK:
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			resp.Body.Close()
			return nil, unexpected(err)
		}
		return struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, n), resp.Body}, nil
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
}

// countingTransport counts the response body bytes the registry sends.
type countingTransport struct {
	base http.RoundTripper
	n    *atomic.Int64
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &countedReader{rc: resp.Body, n: t.n}
	}
	return resp, err
}

type countedReader struct {
	rc io.ReadCloser
	n  *atomic.Int64
}

func (c *countedReader) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countedReader) Close() error { return c.rc.Close() }
