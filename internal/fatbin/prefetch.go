package fatbin

import (
	"encoding/binary"
	"io"
	"sync"
	"sync/atomic"
)

// Walking a large .nv_fatbin is a chain of small dependent reads: each
// container header says where the next begins, each entry header where the
// next entry is. libtorch_cuda.so (torch 2.11) holds 444 containers and
// 2,789 entries spread over 298 MB, so on a cold page cache the walk waits
// for some 3,200 random disk reads one after another (481 ms measured on
// the H200, most of `doctor`'s cold time).
//
// prefetch reads the same headers ahead of the walk, many at a time, so the
// disk serves them in parallel, and keeps the bytes it read: the walk that
// follows takes them from memory instead of asking the file again. Where the
// library's .nvFatBinSegment names where every container starts (see
// segmentStarts), all the containers' chains are read at once; otherwise the
// container chain is followed in order and only the entry chains run in
// parallel. It only reads, never decides anything, and stops at the first
// header that does not look right: walk does the checking and the reporting.

// prefetchMin is the smallest section worth it: below it the whole walk
// is a few reads.
const prefetchMin = 32 << 20

// prefetchWorkers is how many chains are read at once: enough to keep an
// NVMe queue busy.
const prefetchWorkers = 32

// maxCachedHeaders caps how many headers prefetch keeps for the walk (about
// 100 bytes each; libtorch_cuda.so has 3,233, cuBLASLt some 6,000). Past it
// the walk reads from the file, as without a prefetch.
const maxCachedHeaders = 1 << 16

// headerCache is the header bytes prefetch read, by file offset: 16-byte
// container headers and 64-byte entry headers, exactly as the walk asks
// for them.
type headerCache map[int64][]byte

// cachedReader serves reads that prefetch already made from memory.
type cachedReader struct {
	r   io.ReaderAt
	hdr headerCache
}

func (c cachedReader) ReadAt(p []byte, off int64) (int, error) {
	if b, ok := c.hdr[off]; ok && len(b) >= len(p) {
		return copy(p, b), nil
	}
	return c.r.ReadAt(p, off)
}

// prefetch reads the headers of the section [base, base+size) of r and
// returns them. starts, when not empty, are where containers begin (from
// .nvFatBinSegment, within the section); else the container chain is
// followed from base.
func prefetch(r io.ReaderAt, base, size int64, starts []int64) headerCache {
	if size < prefetchMin {
		return nil
	}
	end := base + size
	// A job is a container to read: its header at start (when readHeader),
	// then its entries from start+16 ... to end.
	type job struct {
		start, end int64
		readHeader bool
	}
	type read struct {
		off int64
		b   []byte
	}
	jobs := make(chan job, prefetchWorkers)
	got := make([][]read, prefetchWorkers+1)
	// kept bounds the headers held across workers (hostile input can make
	// hundreds of thousands of tiny ones).
	var kept atomic.Int64
	keep := func(list []read, off int64, b []byte) []read {
		if kept.Add(1) > maxCachedHeaders {
			return list
		}
		return append(list, read{off, b})
	}
	var wg sync.WaitGroup
	for w := range prefetchWorkers {
		wg.Go(func() {
			var mine []read
			for s := range jobs {
				p, cend := s.start, s.end
				if s.readHeader {
					ch := make([]byte, containerHeaderSize)
					if readFull(r, ch, p) != nil || binary.LittleEndian.Uint32(ch[0:]) != Magic {
						continue
					}
					hs, sz := int64(binary.LittleEndian.Uint16(ch[6:])), binary.LittleEndian.Uint64(ch[8:])
					if hs < containerHeaderSize || hs > end-p || sz > uint64(end-p-hs) {
						continue
					}
					mine = keep(mine, p, ch)
					p, cend = p+hs, p+hs+int64(sz)
				}
				for n := 0; p+entryHeaderMin <= cend && n < MaxEntries; n++ {
					eh := make([]byte, entryHeaderMin)
					if readFull(r, eh, p) != nil {
						break
					}
					hs, ps := int64(binary.LittleEndian.Uint32(eh[4:])), binary.LittleEndian.Uint64(eh[8:])
					if hs < entryHeaderMin || hs > entryHeaderMax || ps > uint64(cend-p-hs) {
						break
					}
					mine = keep(mine, p, eh)
					p += hs + int64(ps)
				}
			}
			got[w] = mine
		})
	}
	if len(starts) > 0 {
		for i, s := range starts {
			if i >= MaxContainers {
				break
			}
			jobs <- job{start: s, end: end, readHeader: true}
		}
	} else {
		var chain []read
		for pos, n := base, 0; pos+containerHeaderSize <= end && n < MaxContainers; n++ {
			ch := make([]byte, containerHeaderSize)
			if readFull(r, ch, pos) != nil {
				break
			}
			if binary.LittleEndian.Uint32(ch[0:]) != Magic {
				// Zero padding between containers, as walk skips it; anything
				// else is walk's to report.
				next, err := skipZeros(r, pos, end)
				if err != nil || next == pos {
					break
				}
				pos = next
				continue
			}
			hs, sz := int64(binary.LittleEndian.Uint16(ch[6:])), binary.LittleEndian.Uint64(ch[8:])
			if hs < containerHeaderSize || hs > end-pos || sz > uint64(end-pos-hs) {
				break
			}
			chain = keep(chain, pos, ch)
			jobs <- job{start: pos + hs, end: pos + hs + int64(sz)}
			pos += hs + int64(sz)
		}
		got[prefetchWorkers] = chain
	}
	close(jobs)
	wg.Wait()
	cache := make(headerCache, min(kept.Load(), maxCachedHeaders))
	for _, reads := range got {
		for _, rd := range reads {
			cache[rd.off] = rd.b
		}
	}
	return cache
}
