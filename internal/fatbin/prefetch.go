package fatbin

import (
	"encoding/binary"
	"io"
	"sync"
)

// Walking a large .nv_fatbin is a chain of small dependent reads: each
// container header says where the next begins, each entry header where the
// next entry is. libtorch_cuda.so (torch 2.11) holds 444 containers and
// 2,789 entries spread over 298 MB, so on a cold page cache the walk waits
// for some 3,200 random disk reads one after another (481 ms measured on
// the H200, most of `doctor`'s cold time).
//
// prefetch runs the same chain of header reads ahead of the walk with
// the containers' entry chains in parallel, so the disk serves them many at
// a time; the walk that follows finds them in the page cache. It only
// reads (bytes it drops), never decides anything, and stops at the first
// header that does not look right: walk does the checking and the
// reporting.

// prefetchMin is the smallest section worth it: below it the whole walk
// is a few reads.
const prefetchMin = 32 << 20

// prefetchWorkers is how many entry chains are read at once: enough to
// keep an NVMe queue busy.
const prefetchWorkers = 32

func prefetch(r io.ReaderAt, base, size int64) {
	if size < prefetchMin {
		return
	}
	end := base + size
	type span struct{ start, end int64 }
	jobs := make(chan span, prefetchWorkers)
	var wg sync.WaitGroup
	for range prefetchWorkers {
		wg.Go(func() {
			var eh [entryHeaderMin]byte
			for s := range jobs {
				for p, n := s.start, 0; p+entryHeaderMin <= s.end && n < MaxEntries; n++ {
					if readFull(r, eh[:], p) != nil {
						break
					}
					hs, ps := int64(binary.LittleEndian.Uint32(eh[4:])), binary.LittleEndian.Uint64(eh[8:])
					if hs < entryHeaderMin || hs > entryHeaderMax || ps > uint64(s.end-p-hs) {
						break
					}
					p += hs + int64(ps)
				}
			}
		})
	}
	var ch [containerHeaderSize]byte
	for pos, n := base, 0; pos+containerHeaderSize <= end && n < MaxContainers; n++ {
		if readFull(r, ch[:], pos) != nil {
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
		jobs <- span{pos + hs, pos + hs + int64(sz)}
		pos += hs + int64(sz)
	}
	close(jobs)
	wg.Wait()
}
