package fatbin

import (
	"encoding/binary"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// hostileSpan is a large reader whose every container header claims the
// smallest legal container, each holding one smallest legal entry, forever:
// the prefetch must stop at its caps, quickly, without reading past the end.
type hostileSpan struct {
	size  int64
	reads atomic.Int64
}

func (h *hostileSpan) ReadAt(p []byte, off int64) (int, error) {
	h.reads.Add(1)
	if off < 0 || off >= h.size {
		return 0, io.EOF
	}
	clear(p)
	// Container every 16+64 bytes: header then one 64-byte entry.
	const unit = containerHeaderSize + entryHeaderMin
	for i := range p {
		o := off + int64(i)
		rel := o % unit
		switch {
		case rel == 0 && len(p)-i >= containerHeaderSize:
			binary.LittleEndian.PutUint32(p[i:], Magic)
			binary.LittleEndian.PutUint16(p[i+6:], containerHeaderSize)
			binary.LittleEndian.PutUint64(p[i+8:], entryHeaderMin)
		case rel == containerHeaderSize && len(p)-i >= 12:
			binary.LittleEndian.PutUint32(p[i+4:], entryHeaderMin)
		}
	}
	n := min(int64(len(p)), h.size-off)
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

func TestPrefetchStopsAtItsCaps(t *testing.T) {
	h := &hostileSpan{size: 1 << 40}
	done := make(chan struct{})
	go func() { prefetch(h, 0, h.size, nil); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("prefetch did not stop")
	}
	if n := h.reads.Load(); n > 3*MaxContainers {
		t.Errorf("%d reads", n)
	}
	// Below the threshold nothing is read.
	small := &hostileSpan{size: prefetchMin - 1}
	prefetch(small, 0, small.size, nil)
	if small.reads.Load() != 0 {
		t.Error("a small section was prefetched")
	}
}
