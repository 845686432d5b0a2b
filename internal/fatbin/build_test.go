package fatbin

// Test builders: synthetic ELF files and fatbin sections made of real header bytes
// (from the reference readings) with payloads left as zeros. Large images are never
// allocated: sparseReader synthesises the zeros, sparse files leave them as holes.

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// seg is bytes placed at an offset of a sparse image.
type seg struct {
	off int64
	b   []byte
}

// sparseReader is an io.ReaderAt of size bytes: zeros, except where segs say otherwise.
type sparseReader struct {
	size int64
	segs []seg // sorted by off, not overlapping
}

func newSparse(size int64, segs []seg) *sparseReader {
	s := append([]seg(nil), segs...)
	sort.Slice(s, func(i, j int) bool { return s[i].off < s[j].off })
	return &sparseReader{size: size, segs: s}
}

func (r *sparseReader) Size() int64 { return r.size }

func (r *sparseReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, os.ErrInvalid
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if r.size-off < n {
		n = r.size - off
	}
	clear(p[:n])
	end := off + n
	// First segment that could overlap: the last one starting at or before off.
	i := sort.Search(len(r.segs), func(i int) bool { return r.segs[i].off > off })
	if i > 0 {
		i--
	}
	for ; i < len(r.segs) && r.segs[i].off < end; i++ {
		s := r.segs[i]
		lo, hi := max(s.off, off), min(s.off+int64(len(s.b)), end)
		if lo < hi {
			copy(p[lo-off:hi-off], s.b[lo-s.off:hi-s.off])
		}
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// writeSparseFile writes r's segments into a new file of r.size bytes, leaving holes.
func writeSparseFile(t testing.TB, path string, r *sparseReader) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range r.segs {
		if _, err := f.WriteAt(s.b, s.off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(r.size); err != nil {
		t.Fatal(err)
	}
}

// elfSection is a section of a synthetic ELF: name, file offset and size.
type elfSection struct {
	name      string
	off, size int64
}

const (
	emX8664 = 62
	emCUDA  = 190
	etExec  = 2
	etDyn   = 3
	etRel   = 1
)

// elfHeaders builds the segments of a little-endian ELF64 file with the given sections
// (contents supplied separately): the ELF header at 0, .shstrtab right after it, and
// the section header table after the last section. It returns the segments and the
// file size.
func elfHeaders(etype, machine uint16, flags uint32, secs []elfSection) ([]seg, int64) {
	le := binary.LittleEndian
	strtab := []byte{0}
	nameOff := make([]uint32, len(secs))
	for i, s := range secs {
		nameOff[i] = uint32(len(strtab))
		strtab = append(append(strtab, s.name...), 0)
	}
	shstrNameOff := uint32(len(strtab))
	strtab = append(append(strtab, ".shstrtab"...), 0)
	strOff := int64(64)
	end := strOff + int64(len(strtab))
	for _, s := range secs {
		end = max(end, s.off+s.size)
	}
	shoff := (end + 7) &^ 7
	nsec := len(secs) + 2 // null, sections..., .shstrtab
	sh := make([]byte, 64*nsec)
	put := func(i int, name, typ uint32, off, size int64) {
		b := sh[64*i:]
		le.PutUint32(b[0:], name)
		le.PutUint32(b[4:], typ)
		le.PutUint64(b[24:], uint64(off))
		le.PutUint64(b[32:], uint64(size))
		le.PutUint64(b[48:], 8)
	}
	for i, s := range secs {
		put(i+1, nameOff[i], 1 /* SHT_PROGBITS */, s.off, s.size)
	}
	put(nsec-1, shstrNameOff, 3 /* SHT_STRTAB */, strOff, int64(len(strtab)))

	h := make([]byte, 64)
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = 2, 1, 1 // ELFCLASS64, little-endian, EV_CURRENT
	le.PutUint16(h[16:], etype)
	le.PutUint16(h[18:], machine)
	le.PutUint32(h[20:], 1)
	le.PutUint64(h[40:], uint64(shoff))
	le.PutUint32(h[48:], flags)
	le.PutUint16(h[52:], 64) // e_ehsize
	le.PutUint16(h[58:], 64) // e_shentsize
	le.PutUint16(h[60:], uint16(nsec))
	le.PutUint16(h[62:], uint16(nsec-1))
	return []seg{{0, h}, {strOff, strtab}, {shoff, sh}}, shoff + int64(len(sh))
}

// refEntry is one row of the reference fatbin-entry-headers JSON.
type refEntry struct {
	File        string `json:"file"`
	Section     string `json:"section"`
	Fatbin      int    `json:"fatbin"`
	FatbinOff   int64  `json:"fatbin_off"`
	FatbinHdr   string `json:"fatbin_hdr"`
	Entry       int    `json:"entry"`
	Hdr         string `json:"hdr"`
	PayloadHead string `json:"payload_head"`
}

func loadRef(t testing.TB, name string) []refEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "torch-2.11-cu130", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(name) == ".gz" {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var all []refEntry
	if err := json.NewDecoder(r).Decode(&all); err != nil {
		t.Fatal(err)
	}
	var out []refEntry
	for _, e := range all {
		if e.Hdr != "" { // leave out the .nvFatBinSegment rows
			out = append(out, e)
		}
	}
	return out
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// placedEntry is where a reference entry was put in a synthetic section.
type placedEntry struct {
	ref refEntry
	off int64 // within the section
}

// sectionSegments lays out the containers and entries of one file's reference rows at
// their recorded offsets within a section at file offset base: container headers at
// fatbin_off, each entry right after the previous one's header and padded payload,
// each payload starting with its recorded first bytes. It returns the segments, where
// each entry went, and the section size (the end of the last container).
func sectionSegments(t testing.TB, rows []refEntry, base int64) ([]seg, []placedEntry, int64) {
	t.Helper()
	var segs []seg
	var placed []placedEntry
	var end int64
	var next int64
	lastFatbin := -1
	for _, e := range rows {
		if e.Fatbin != lastFatbin {
			h := unhex(t, e.FatbinHdr)
			segs = append(segs, seg{base + e.FatbinOff, h})
			next = e.FatbinOff + int64(binary.LittleEndian.Uint16(h[6:]))
			end = max(end, next+int64(binary.LittleEndian.Uint64(h[8:])))
			lastFatbin = e.Fatbin
		}
		h := unhex(t, e.Hdr)
		segs = append(segs, seg{base + next, h})
		hs := int64(binary.LittleEndian.Uint32(h[4:]))
		if e.PayloadHead != "" {
			segs = append(segs, seg{base + next + hs, unhex(t, e.PayloadHead)})
		}
		placed = append(placed, placedEntry{e, base + next})
		next += hs + int64(binary.LittleEndian.Uint64(h[8:]))
	}
	return segs, placed, end
}

// refELF builds a synthetic ELF holding the reference rows of one file in section
// secName at file offset secOff.
func refELF(t testing.TB, rows []refEntry, etype uint16, secName string, secOff int64) (*sparseReader, []placedEntry) {
	t.Helper()
	segs, placed, size := sectionSegments(t, rows, secOff)
	hdr, fileSize := elfHeaders(etype, emX8664, 0, []elfSection{{secName, secOff, size}})
	return newSparse(fileSize, append(segs, hdr...)), placed
}

func rowsOf(rows []refEntry, file string) []refEntry {
	var out []refEntry
	for _, r := range rows {
		if r.File == file {
			out = append(out, r)
		}
	}
	return out
}
