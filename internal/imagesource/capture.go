package imagesource

import (
	"bytes"
	"encoding/binary"
	"io"
	"sort"
	"sync/atomic"
)

// What the one pass keeps of a needed file (see source.Need). Small files
// are kept whole; a larger ELF file only in the ranges its readers ask for:
// the first 64 KiB (ELF header, program headers, notes), the segment the
// program headers say holds the dynamic section, the first loadable segment
// (where linkers put .dynsym, .dynstr and the symbol versions, before any
// code), the section header table with the 1 MiB before it (.shstrtab),
// and the headers of every fatbin container and entry met on the way,
// found by their magic number and walked as the bytes pass. A read outside
// what was kept still works: it streams the layer again (Stats.Rereads).
const (
	wholeMax    = 8 << 20  // needed non-ELF files up to this size are kept whole (torch's RECORD is 1.3 MB)
	elfWholeMax = 4 << 20  // needed ELF files up to this size are kept whole (libc is 2 MB)
	elfHead     = 64 << 10 // kept from the start of every needed ELF file
	elfTail     = 1 << 20  // kept before the section header table
	maxFirstSeg = 96 << 20 // the first loadable segment is kept up to this size
	maxSegment  = 1 << 20  // PT_DYNAMIC, PT_NOTE, PT_INTERP are kept up to this size
	maxShTable  = 8 << 20  // the section header table is kept up to this size
	chunkSize   = 1 << 20  // bytes read from a layer at a time while scanning a body
	maxFatKept  = 16 << 20 // fatbin header bytes kept per file
)

// span is a kept byte range of a file body.
type span struct {
	off  int64
	data []byte
}

// spans are a body's kept ranges, sorted and disjoint.
type spans []span

// readAt copies [off, off+len(p)) when one span holds all of it.
func (s spans) readAt(p []byte, off int64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].off+int64(len(s[i].data)) > off })
	if i == len(s) || s[i].off > off {
		return false
	}
	end := s[i].off + int64(len(s[i].data))
	if off+int64(len(p)) > end {
		return false
	}
	copy(p, s[i].data[off-s[i].off:])
	return true
}

func (s spans) bytes() int64 {
	var n int64
	for _, x := range s {
		n += int64(len(x.data))
	}
	return n
}

// keeper collects kept bytes in stream order, merging adjacent ranges.
type keeper struct {
	out    spans
	budget *budget
	full   bool
}

func (k *keeper) keep(off int64, b []byte) {
	if len(b) == 0 || k.full {
		return
	}
	if !k.budget.take(int64(len(b))) {
		k.full = true
		return
	}
	if n := len(k.out); n > 0 {
		last := &k.out[n-1]
		end := last.off + int64(len(last.data))
		if off < end { // overlap with what is kept already: keep only the new tail
			if off+int64(len(b)) <= end {
				k.budget.give(int64(len(b)))
				return
			}
			k.budget.give(end - off)
			b = b[end-off:]
			off = end
		}
		if off == end {
			last.data = append(last.data, b...)
			return
		}
	}
	k.out = append(k.out, span{off: off, data: append([]byte(nil), b...)})
}

// interval is a byte range [lo, hi) of a body.
type interval struct{ lo, hi int64 }

// captureBody reads a needed body of size bytes from r (positioned at its
// start) and returns what to keep. It reads no further than it must: a
// file kept whole or not ELF stops being read once its kept part is in.
func captureBody(r io.Reader, size int64, elf bool, bud *budget) spans {
	k := &keeper{budget: bud}
	if !elf {
		if size <= wholeMax {
			readKeep(r, k, 0, size)
		}
		return k.out
	}
	if size <= elfWholeMax {
		readKeep(r, k, 0, size)
		return k.out
	}
	head := make([]byte, elfHead)
	n, _ := io.ReadFull(r, head)
	head = head[:n]
	k.keep(0, head)
	if n < 64 || !bytes.HasPrefix(head, []byte("\x7fELF")) {
		return k.out
	}
	wants := elfWants(head, size)
	fs := &fatScan{k: k}
	buf := make([]byte, chunkSize)
	for pos := int64(n); pos < size && !k.full; {
		m, err := io.ReadFull(r, buf[:min(int64(len(buf)), size-pos)])
		if m == 0 {
			break
		}
		chunk := buf[:m]
		// Kept ranges and fatbin headers, in stream order: the scanner
		// keeps its own bytes through k, and k merges overlaps.
		fs.scan(chunk, pos, wants)
		pos += int64(m)
		if err != nil {
			break
		}
	}
	return k.out
}

// readKeep reads n bytes at off from r into k.
func readKeep(r io.Reader, k *keeper, off, n int64) {
	b := make([]byte, n)
	m, _ := io.ReadFull(r, b)
	k.keep(off, b[:m])
}

// elfWants reads the ranges to keep from the ELF and program headers in
// head. Every size and offset is clipped to the file and capped.
func elfWants(head []byte, size int64) []interval {
	var bo binary.ByteOrder = binary.LittleEndian
	if head[5] == 2 {
		bo = binary.BigEndian
	}
	is64 := head[4] == 2
	var phoff, shoff int64
	var phentsize, phnum, shentsize, shnum int
	if is64 {
		phoff, shoff = int64(bo.Uint64(head[32:])), int64(bo.Uint64(head[40:]))
		phentsize, phnum = int(bo.Uint16(head[54:])), int(bo.Uint16(head[56:]))
		shentsize, shnum = int(bo.Uint16(head[58:])), int(bo.Uint16(head[60:]))
	} else {
		phoff, shoff = int64(bo.Uint32(head[28:])), int64(bo.Uint32(head[32:]))
		phentsize, phnum = int(bo.Uint16(head[42:])), int(bo.Uint16(head[44:]))
		shentsize, shnum = int(bo.Uint16(head[46:])), int(bo.Uint16(head[48:]))
	}
	var wants []interval
	add := func(lo, n, max int64) {
		if lo < 0 || n <= 0 || lo >= size {
			return
		}
		n = min(n, max, size-lo)
		wants = append(wants, interval{lo, lo + n})
	}
	if shoff > 0 && shentsize > 0 {
		table := int64(shentsize) * int64(max(shnum, 1))
		add(max(shoff-elfTail, 0), min(shoff, elfTail)+table, elfTail+maxShTable)
	}
	if phoff > 0 && phentsize >= 32 && phnum > 0 {
		add(phoff, int64(phentsize)*int64(phnum), maxSegment)
		for i := 0; i < min(phnum, 512); i++ {
			o := phoff + int64(i*phentsize)
			if o < 0 || o+int64(phentsize) > int64(len(head)) {
				break
			}
			ph := head[o:]
			var typ uint32
			var off, filesz int64
			if is64 {
				if len(ph) < 56 {
					break
				}
				typ, off, filesz = bo.Uint32(ph[0:]), int64(bo.Uint64(ph[8:])), int64(bo.Uint64(ph[32:]))
			} else {
				typ, off, filesz = bo.Uint32(ph[0:]), int64(bo.Uint32(ph[4:])), int64(bo.Uint32(ph[16:]))
			}
			switch typ {
			case 1: // PT_LOAD: the first one, from offset 0, holds the dynamic tables
				if off == 0 {
					add(0, filesz, maxFirstSeg)
				}
			case 2, 3, 4: // PT_DYNAMIC, PT_INTERP, PT_NOTE
				add(off, filesz, maxSegment)
			}
		}
	}
	sort.Slice(wants, func(i, j int) bool { return wants[i].lo < wants[j].lo })
	return wants
}

// fatbin container and entry layout, as internal/fatbin reads it.
const (
	fatMagic      = 0xBA55ED50
	fatHeaderSize = 16
	fatEntryMin   = 64
	fatEntryMax   = 4096
	fatPadding    = 4096
)

type fatState int

const (
	fatSeek   fatState = iota // looking for a container's magic at an 8-byte boundary
	fatHeader                 // collecting the container header that starts at next
	fatEntry                  // collecting the entry header that starts at next
	fatPad                    // keeping the zero bytes after a container
)

// fatScan walks fatbin containers as their bytes stream by, keeping their
// headers and their entries' headers (as fatbin.walk reads them), and
// skipping payloads. A magic number inside unrelated bytes costs a few
// kept bytes: a header that does not parse sends the scan back to seeking.
type fatScan struct {
	k        *keeper
	state    fatState
	next     int64 // where the header being collected starts; bytes before it are payload
	need     int   // the header's length
	hdr      []byte
	cend     int64 // end of the current container
	padStart int64
	kept     int64
}

var fatMagicBytes = []byte{0x50, 0xed, 0x55, 0xba}

// scan consumes chunk, which starts at body offset pos, keeping the parts
// inside wants and the fatbin headers found, in stream order.
func (s *fatScan) scan(chunk []byte, pos int64, wants []interval) {
	end := pos + int64(len(chunk))
	var pieces []interval
	for _, w := range wants {
		if lo, hi := max(w.lo, pos), min(w.hi, end); lo < hi {
			pieces = append(pieces, interval{lo, hi})
		}
	}
	pieces = append(pieces, s.walk(chunk, pos)...)
	sort.Slice(pieces, func(i, j int) bool { return pieces[i].lo < pieces[j].lo })
	for _, p := range pieces {
		s.k.keep(p.lo, chunk[p.lo-pos:p.hi-pos])
	}
}

// walk advances the fatbin state machine over chunk and returns the byte
// ranges of it to keep.
func (s *fatScan) walk(chunk []byte, pos int64) []interval {
	var out []interval
	keep := func(lo, hi int64) {
		if hi > lo && s.kept+(hi-lo) <= maxFatKept {
			s.kept += hi - lo
			out = append(out, interval{lo, hi})
		}
	}
	end := pos + int64(len(chunk))
	for p := pos; p < end; {
		if s.state != fatSeek && p < s.next {
			p = min(s.next, end) // a payload streams by
			continue
		}
		switch s.state {
		case fatSeek:
			i := bytes.Index(chunk[p-pos:], fatMagicBytes)
			if i < 0 {
				return out
			}
			at := p + int64(i)
			if at%8 != 0 {
				p = at + 1
				continue
			}
			s.state, s.next, s.need, s.hdr = fatHeader, at, fatHeaderSize, s.hdr[:0]
		case fatHeader, fatEntry:
			take := min(int64(s.need-len(s.hdr)), end-p)
			s.hdr = append(s.hdr, chunk[p-pos:p-pos+take]...)
			keep(p, p+take)
			p += take
			if len(s.hdr) == s.need {
				s.advance()
			}
		case fatPad:
			if p >= s.padStart+fatPadding {
				s.state = fatSeek
				continue
			}
			if chunk[p-pos] != 0 {
				keep(p, min(p+fatHeaderSize, end)) // the walker reads a header here, magic or not
				s.state = fatSeek
				continue
			}
			q := p
			for q < end && q < s.padStart+fatPadding && chunk[q-pos] == 0 {
				q++
			}
			keep(p, q)
			p = q
		}
	}
	return out
}

// advance parses the header just collected and moves to what follows it.
func (s *fatScan) advance() {
	le := binary.LittleEndian
	h := s.hdr
	s.hdr = s.hdr[:0]
	switch s.state {
	case fatHeader:
		hs, size := int64(le.Uint16(h[6:])), le.Uint64(h[8:])
		if hs < fatHeaderSize || size > 1<<40 {
			s.state = fatSeek
			return
		}
		start := s.next + hs
		s.cend = start + int64(size)
		s.state, s.next, s.need = fatEntry, start, fatEntryMin
		if size == 0 {
			s.state, s.padStart, s.next = fatPad, s.cend, s.cend
		}
	case fatEntry:
		ehs, pay := int64(le.Uint32(h[4:])), le.Uint64(h[8:])
		left := s.cend - s.next - ehs
		if ehs < fatEntryMin || ehs > fatEntryMax || left < 0 || pay > uint64(left) {
			s.state = fatSeek
			return
		}
		next := s.next + ehs + int64(pay)
		if next >= s.cend {
			s.state, s.padStart, s.next = fatPad, s.cend, s.cend
			return
		}
		s.next, s.need = next, fatEntryMin
	}
}

// budget is the bytes the one pass may still keep, shared by all files.
type budget struct{ left atomic.Int64 }

func newBudget(n int64) *budget {
	b := &budget{}
	b.left.Store(n)
	return b
}

func (b *budget) take(n int64) bool {
	if b.left.Add(-n) < 0 {
		b.left.Add(n)
		return false
	}
	return true
}

func (b *budget) give(n int64) { b.left.Add(n) }
