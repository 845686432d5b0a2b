package fatbin

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// bench300MB writes a sparse ELF file whose .nv_fatbin holds 3000 containers and
// 300 MB of entries: real entry headers of torch 2.11 (cycling through its 543
// containers), payload sizes scaled so the section totals 300 MB, payloads left as
// holes, at path (a temporary file when path is ""). It returns the path and the number
// of entries.
func bench300MB(b testing.TB, path string) (string, int) {
	b.Helper()
	const containers = 3000
	const target = 300 << 20
	rows := loadRef(b, "fatbin-entry-headers.json.gz")
	type refContainer [][]byte
	var refs []refContainer
	var refBytes []int64
	for i, r := range rows {
		if i == 0 || r.Fatbin != rows[i-1].Fatbin || r.File != rows[i-1].File {
			refs = append(refs, nil)
			refBytes = append(refBytes, 0)
		}
		h := unhex(b, r.Hdr)
		refs[len(refs)-1] = append(refs[len(refs)-1], h)
		refBytes[len(refs)-1] += int64(len(h)) + int64(binary.LittleEndian.Uint64(h[8:]))
	}
	var planned int64
	for i := 0; i < containers; i++ {
		planned += refBytes[i%len(refs)]
	}
	scale := float64(target) / float64(planned)

	const secOff = 0x10000
	var segs []seg
	pos := int64(secOff)
	entries := 0
	for i := 0; i < containers; i++ {
		ref := refs[i%len(refs)]
		start := pos
		pos += 16
		for _, h0 := range ref {
			h := append([]byte(nil), h0...)
			payload := uint64(float64(binary.LittleEndian.Uint64(h[8:]))*scale) &^ 7
			binary.LittleEndian.PutUint64(h[8:], payload)
			if c := binary.LittleEndian.Uint32(h[16:]); uint64(c) > payload {
				binary.LittleEndian.PutUint32(h[16:], uint32(payload))
			}
			segs = append(segs, seg{pos, h})
			pos += int64(len(h)) + int64(payload)
			entries++
		}
		segs = append(segs, seg{start, containerHdr(uint64(pos - start - 16))})
	}
	hdr, size := elfHeaders(etDyn, emX8664, 0, []elfSection{{".nv_fatbin", secOff, pos - secOff}})
	if path == "" {
		path = filepath.Join(b.TempDir(), "libbig.so")
	}
	writeSparseFile(b, path, newSparse(size, append(segs, hdr...)))
	if sec := pos - secOff; sec < target*99/100 || sec > target*101/100 {
		b.Fatalf("section is %d bytes, want about %d", sec, target)
	}
	return path, entries
}

// BenchmarkWalk300MB opens the 300 MB-section file and walks all its entry headers.
func BenchmarkWalk300MB(b *testing.B) {
	path, entries := bench300MB(b, "")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(f.Containers) != 3000 || len(f.Entries) != entries {
			b.Fatalf("%d containers, %d entries; want 3000, %d", len(f.Containers), len(f.Entries), entries)
		}
		f.Close()
	}
}

// TestWrite300MB writes the benchmark's 300 MB-section file to $FASTPATH_BENCH_300MB, for
// scripts/bench-inspect.sh to time `fastpath inspect` on; it does nothing otherwise.
func TestWrite300MB(t *testing.T) {
	path := os.Getenv("FASTPATH_BENCH_300MB")
	if path == "" {
		t.Skip("FASTPATH_BENCH_300MB names no file to write")
	}
	if _, n := bench300MB(t, path); n == 0 {
		t.Fatal("no entries written")
	}
}
