package imagesource

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// layerBlob is one layer and the ways its bytes can be reached.
type layerBlob struct {
	index  int // 0 is the bottom layer
	digest string
	layer  v1.Layer
	ctx    context.Context
	stats  *counters

	// raw is set when the blob is an uncompressed tar that can be read in
	// place by byte range (registry Range requests, an OCI layout's blob
	// file): entries are then found by seeking past file bodies, and a file
	// is read at its offset without touching what comes before it.
	raw    bool
	rawLen int64
	openAt func(off, n int64) (io.ReadCloser, error)
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

// detectRaw decides whether the blob can be read in place: it is when its
// first bytes are no compression's magic number.
func (b *layerBlob) detectRaw(openAt func(off, n int64) (io.ReadCloser, error)) {
	size, err := b.layer.Size()
	if err != nil || size < 512 {
		return
	}
	rc, err := openAt(0, 4)
	if err != nil {
		return
	}
	defer rc.Close()
	var magic [4]byte
	n, _ := io.ReadFull(rc, magic[:])
	b.stats.ranged.Add(int64(n))
	b.stats.rangeReads.Add(1)
	if n < 4 || bytes.HasPrefix(magic[:], []byte{0x1f, 0x8b}) || bytes.Equal(magic[:], []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		return
	}
	b.raw, b.rawLen, b.openAt = true, size, openAt
}

// stream returns the layer's uncompressed tar from its start. For raw
// blobs it is an io.ReadSeeker, so archive/tar skips file bodies by seeking.
func (b *layerBlob) stream() (io.ReadCloser, error) {
	b.stats.passes.Add(1)
	if b.raw {
		return &seekStream{b: b, size: b.rawLen}, nil
	}
	rc, err := b.layer.Uncompressed()
	if err != nil {
		return nil, err
	}
	return &countedReader{rc: rc, n: &b.stats.stream}, nil
}

// entryReader streams the layer again up to its tar entry number ordinal and
// returns a reader of that entry's body: the cost of reading a file from a
// compressed layer is decompressing everything before it.
func (b *layerBlob) entryReader(ordinal int) (io.Reader, io.Closer, error) {
	rc, err := b.stream()
	if err != nil {
		return nil, nil, err
	}
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
