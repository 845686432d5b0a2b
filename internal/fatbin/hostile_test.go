package fatbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// containerHdr is a fatbin container header with the given entries size.
func containerHdr(size uint64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint32(b, Magic)
	binary.LittleEndian.PutUint16(b[4:], 1)
	binary.LittleEndian.PutUint16(b[6:], 16)
	binary.LittleEndian.PutUint64(b[8:], size)
	return b
}

// entryHdr is a 64-byte entry header: kind, SM, flags and padded payload size.
func entryHdr(kind uint16, sm uint32, flags, payload uint64) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint16(b, kind)
	binary.LittleEndian.PutUint16(b[2:], 0x0101)
	binary.LittleEndian.PutUint32(b[4:], 64)
	binary.LittleEndian.PutUint64(b[8:], payload)
	binary.LittleEndian.PutUint32(b[24:], 0x10008)
	binary.LittleEndian.PutUint32(b[28:], sm)
	binary.LittleEndian.PutUint64(b[40:], 0x11|flags)
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// oneFatbin is a valid container: sm_90 SASS with an 8-byte payload.
func oneFatbin() []byte {
	return cat(containerHdr(72), entryHdr(2, 90, 0, 8), make([]byte, 8))
}

func withU64(b []byte, off int, v uint64) []byte {
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint64(c[off:], v)
	return c
}

func withU32(b []byte, off int, v uint32) []byte {
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint32(c[off:], v)
	return c
}

func TestWalkHostile(t *testing.T) {
	ok := oneFatbin()
	tests := []struct {
		name       string
		data       []byte
		containers int // when no error
		wantErr    bool
	}{
		{"empty", nil, 0, false},
		{"one", ok, 1, false},
		{"two", cat(ok, ok), 2, false},
		{"zero padding between", cat(ok, make([]byte, 8), ok), 2, false},
		{"trailing zeros", cat(ok, make([]byte, 40)), 1, false},
		{"trailing short zeros", cat(ok, make([]byte, 4)), 1, false},
		{"empty container", containerHdr(0), 1, false},
		{"too much padding", cat(ok, make([]byte, maxPadding+8), ok), 0, true},
		{"trailing junk", cat(ok, []byte{1, 2, 3}), 0, true},
		{"not a fatbin", []byte("this is not a fatbin at all, not at all"), 0, true},
		{"truncated container header", ok[:10], 0, true},
		{"truncated entry header", ok[:16+40], 0, true},
		{"truncated payload", ok[:len(ok)-1], 0, true},
		{"container size 2^62", withU64(ok, 8, 1<<62), 0, true},
		{"container size 2^64-1", withU64(ok, 8, ^uint64(0)), 0, true},
		{"container header size 0", withU32(ok, 4, 0x00000001), 0, true},
		{"container header size huge", withU32(ok, 4, 0xffff0001), 0, true},
		{"entry payload 2^62", withU64(ok, 16+8, 1<<62), 0, true},
		{"entry payload wraps to the same entry", withU64(ok, 16+8, ^uint64(63)), 0, true},
		{"entry header size 0", withU32(ok, 16+4, 0), 0, true},
		{"entry header size 2^31", withU32(ok, 16+4, 1<<31), 0, true},
		{"entry shorter than its container", withU64(ok, 8, 72+8), 0, true},
		{"entry longer than its container", withU64(ok, 8, 64), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Walk(bytes.NewReader(tt.data), int64(len(tt.data)))
			if tt.wantErr {
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v, want *FormatError", err)
				}
				if fe.Off < 0 || fe.Off > int64(len(tt.data)) {
					t.Errorf("error offset %d outside the input", fe.Off)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Containers) != tt.containers {
				t.Errorf("%d containers, want %d", len(f.Containers), tt.containers)
			}
			checkInvariants(t, f, int64(len(tt.data)))
		})
	}
	if _, err := Walk(bytes.NewReader(ok), -1); err == nil {
		t.Error("negative size accepted")
	}
	// A size larger than the reader: the walk stops at the first short read.
	if _, err := Walk(bytes.NewReader(ok), 1<<40); err == nil {
		t.Error("size past the end accepted")
	}
}

// checkInvariants holds for every successful walk: entries lie inside the input,
// in order, and containers cover their entries.
func checkInvariants(t testing.TB, f *File, size int64) {
	t.Helper()
	var prev int64 = -1
	for i, e := range f.Entries {
		end := e.Offset + int64(e.HeaderSize) + int64(e.PayloadSize)
		if e.Offset <= prev || e.Offset < 0 || end > size || end < e.Offset || e.PayloadSize > uint64(size) {
			t.Fatalf("entry %d [%d, %d) outside [0, %d) or out of order", i, e.Offset, end, size)
		}
		prev = e.Offset
		c := f.Containers[e.Container]
		if i < c.First || i >= c.First+c.N {
			t.Fatalf("entry %d not within its container %d", i, e.Container)
		}
	}
	n := 0
	for _, c := range f.Containers {
		if c.First != n {
			t.Fatalf("container entries not contiguous")
		}
		n += c.N
	}
	if n != len(f.Entries) {
		t.Fatalf("containers hold %d of %d entries", n, len(f.Entries))
	}
}

// repeatReader repeats unit forever (up to size): a huge input that costs no memory.
type repeatReader struct {
	head []byte
	unit []byte
	size int64
}

func (r *repeatReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) && off+int64(n) < r.size {
		o := off + int64(n)
		if o < int64(len(r.head)) {
			p[n] = r.head[o]
		} else {
			p[n] = r.unit[(o-int64(len(r.head)))%int64(len(r.unit))]
		}
		n++
	}
	if n < len(p) {
		return n, os.ErrClosed // any error: short read
	}
	return n, nil
}

func TestCaps(t *testing.T) {
	// Empty containers, 16 bytes each, far more than MaxContainers.
	r := &repeatReader{unit: containerHdr(0), size: 16 * (MaxContainers + 10)}
	f, err := Walk(r, r.size)
	var fe *FormatError
	if !errors.As(err, &fe) || len(f.Containers) != MaxContainers {
		t.Errorf("containers: err %v, %d read", err, len(f.Containers))
	}
	// One huge container of empty 64-byte entries.
	n := int64(MaxEntries + 10)
	r = &repeatReader{head: containerHdr(uint64(64 * n)), unit: entryHdr(2, 90, 0, 0), size: 16 + 64*n}
	f, err = Walk(r, r.size)
	if !errors.As(err, &fe) || len(f.Entries) != MaxEntries {
		t.Errorf("entries: err %v, %d read", err, len(f.Entries))
	}
}

func TestEntryFields(t *testing.T) {
	h := entryHdr(1, 120, FlagFamily|FlagLZ4, 8)
	binary.LittleEndian.PutUint32(h[24:], 0x90000)
	binary.LittleEndian.PutUint32(h[16:], 7)
	binary.LittleEndian.PutUint64(h[56:], 814)
	data := cat(containerHdr(72), h, make([]byte, 8))
	f, err := Walk(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	e := f.Entries[0]
	want := Entry{Kind: cudaarch.PTX, RawKind: 1, SM: 120, Variant: cudaarch.VariantFamily, PTXVersion: cudaarch.Version{Major: 9, Minor: 0},
		Compression: CompressionLZ4, Flags: 0x11 | FlagFamily | FlagLZ4, HeaderSize: 64, PayloadSize: 8, CompressedSize: 7, UncompressedSize: 814, Offset: 16}
	if e != want {
		t.Errorf("entry = %+v\nwant %+v", e, want)
	}
	if e.Target().String() != "compute_120f" {
		t.Errorf("target %v", e.Target())
	}
	// An unknown kind walks but lists nowhere.
	data = cat(containerHdr(72), entryHdr(4, 90, 0, 8), make([]byte, 8))
	f, err = Walk(bytes.NewReader(data), int64(len(data)))
	if err != nil || f.Entries[0].Kind != 0 || f.Entries[0].RawKind != 4 {
		t.Fatalf("unknown kind: %v %+v", err, f.Entries)
	}
	var b bytes.Buffer
	ListELF(&b, f, "x")
	ListPTX(&b, f, "x")
	if s, p := f.Targets(); b.Len() != 0 || s != nil || p != nil {
		t.Errorf("unknown kind listed: %q %v %v", b.String(), s, p)
	}
}

func TestNewFileKinds(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fb := cat(oneFatbin(), oneFatbin())

	// Standalone fatbin file.
	f, err := Open(write("k.fatbin", fb))
	if err != nil || f.Kind != KindFatbin || len(f.Containers) != 2 {
		t.Fatalf("fatbin: %v %+v", err, f)
	}
	f.Close()
	// Same through a reader without Size(): the size is probed.
	f, err = NewFile(onlyReaderAt{bytes.NewReader(fb)})
	if err != nil || len(f.Containers) != 2 {
		t.Fatalf("fatbin via ReaderAt: %v", err)
	}

	// Bare cubins: the SM is in e_flags.
	for flags, sm := range map[uint32]int{0x5a055a: 90, 0x4b054b: 75, 0x6006402: 100, 0x6007902: 121} {
		segs, size := elfHeaders(etExec, emCUDA, flags, nil)
		f, err := NewFile(newSparse(size, segs))
		if err != nil || f.Kind != KindCubin || len(f.Entries) != 1 || f.Entries[0].SM != sm || f.Entries[0].Kind != cudaarch.SASS {
			t.Errorf("cubin e_flags %#x: %v %+v", flags, err, f)
		}
	}
	segs, size := elfHeaders(etExec, emCUDA, 0, nil)
	if _, err := NewFile(newSparse(size, segs)); err == nil {
		t.Error("cubin without SM accepted")
	}

	// Host ELF without fatbin sections: no entries, no error.
	segs, size = elfHeaders(etDyn, emX8664, 0, []elfSection{{".text", 0x1000, 0x100}})
	f, err = NewFile(newSparse(size, segs))
	if err != nil || f.Kind != KindHostELF || len(f.Entries) != 0 || len(f.Sections) != 0 {
		t.Errorf("plain ELF: %v %+v", err, f)
	}

	// Fatbin section whose offset is past the end of the file.
	segs, size = elfHeaders(etDyn, emX8664, 0, []elfSection{{".nv_fatbin", 0x1000, 0x100}})
	binary.LittleEndian.PutUint64(segs[2].b[64+24:], 1<<40) // section 1's sh_offset
	var fe *FormatError
	if _, err := NewFile(newSparse(size, segs)); !errors.As(err, &fe) {
		t.Errorf("section past the end: %v", err)
	}
	// Fatbin section of 2^62 bytes.
	segs, size = elfHeaders(etDyn, emX8664, 0, []elfSection{{".nv_fatbin", 0x1000, 1 << 62}})
	if _, err := NewFile(newSparse(size, append(segs, seg{0x1000, fb}))); !errors.As(err, &fe) {
		t.Errorf("2^62 section: %v", err)
	}

	// Not ELF, not a fatbin.
	for _, b := range [][]byte{nil, []byte("#!/bin/sh\necho hi\n"), []byte("\x7fEL"), {0x50, 0xed, 0x55}} {
		if _, err := NewFile(bytes.NewReader(b)); !errors.Is(err, ErrNotCUDA) {
			t.Errorf("%q: err %v, want ErrNotCUDA", b, err)
		}
	}
	// ELF magic, broken header.
	if _, err := NewFile(bytes.NewReader([]byte("\x7fELF\x02\x01\x01garbage-garbage-garbage-garbage-garbage-garbage-garbage-garbage"))); !errors.As(err, &fe) {
		t.Errorf("broken ELF: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

type onlyReaderAt struct{ r *bytes.Reader }

func (o onlyReaderAt) ReadAt(p []byte, off int64) (int, error) { return o.r.ReadAt(p, off) }

func TestCubinSM(t *testing.T) {
	// e_flags as cuobjdump --dump-elf shows them for cubins of each architecture.
	for flags, want := range map[uint32]int{
		0x460546: 70, 0x4b054b: 75, 0x500550: 80, 0x560556: 86, 0x590559: 89, 0x5a055a: 90,
		0x6006402: 100, 0x6006702: 103, 0x6006e02: 110, 0x6007802: 120, 0x6007902: 121, 0: 0, 0x0105: 0,
	} {
		if got := CubinSM(flags); got != want {
			t.Errorf("CubinSM(%#x) = %d, want %d", flags, got, want)
		}
	}
}
