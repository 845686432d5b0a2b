package fatbin

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// realSection is the .nv_fatbin section of a real nvcc 13.0 build (testdata/real,
// src/build.sh) as a standalone fatbin, and what was read from it.
func realSection(t testing.TB, name string) ([]byte, *File) {
	t.Helper()
	f, err := Open(filepath.Join("testdata", "real", "nvcc-13.0", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := os.ReadFile(filepath.Join("testdata", "real", "nvcc-13.0", name))
	if err != nil {
		t.Fatal(err)
	}
	first, last := f.Containers[0], f.Containers[len(f.Containers)-1]
	sec := raw[first.Offset : last.Offset+containerHeaderSize+int64(last.Size)]
	fb, err := Walk(bytes.NewReader(sec), int64(len(sec)))
	if err != nil {
		t.Fatal(err)
	}
	return sec, fb
}

// TestPayloadReal decompresses every compressed entry of nvcc 13.0's builds to its
// declared size: zstd cubins and PTX (-Xfatbin=-compress-all, --compress-mode=size)
// and LZ4 PTX (--compress-mode=speed). Each cubin comes out an ELF file of EM_CUDA,
// each PTX starts its text with a .version line, as cuobjdump -elf / -ptx print them.
func TestPayloadReal(t *testing.T) {
	codecs := map[Compression]int{}
	for _, name := range []string{"compressed.so", "cmode_size.so", "cmode_speed.so"} {
		sec, f := realSection(t, name)
		for i, e := range f.Entries {
			if e.Compression == CompressionNone {
				continue
			}
			codecs[e.Compression]++
			p, err := e.payload(bytes.NewReader(sec))
			if err != nil {
				t.Fatalf("%s entry %d (%v, %v): %v", name, i, e.Target(), e.Compression, err)
			}
			if p.Size() != int64(e.UncompressedSize) {
				t.Errorf("%s entry %d: %d bytes, declared %d", name, i, p.Size(), e.UncompressedSize)
			}
			b, _ := io.ReadAll(p)
			switch e.Kind {
			case cudaarch.SASS:
				if !bytes.HasPrefix(b, []byte("\x7fELF")) || binary.LittleEndian.Uint16(b[18:]) != 190 /* EM_CUDA */ {
					t.Errorf("%s entry %d: not a cubin: % x", name, i, b[:min(20, len(b))])
				}
			case cudaarch.PTX:
				if !strings.Contains(string(b), ".version 9.0\n.target "+e.Target().String()[len("compute_"):]) &&
					!strings.Contains(string(b), ".version 9.0\n.target sm_"+e.Target().String()[len("compute_"):]) {
					t.Errorf("%s entry %d: PTX text %.80q", name, i, b)
				}
			}
		}
	}
	if codecs[CompressionZstd] != 7 || codecs[CompressionLZ4] != 1 {
		t.Errorf("compressed entries read: %v, want 7 zstd and 1 lz4", codecs)
	}
}

// TestPayloadHostile: inconsistent sizes and corrupt streams give an error, never a
// buffer beyond the declared size or a panic.
func TestPayloadHostile(t *testing.T) {
	sec, f := realSection(t, "cmode_size.so")
	good := f.Entries[0]
	if good.Compression != CompressionZstd {
		t.Fatalf("entry 0 is %v", good.Compression)
	}
	speedSec, speed := realSection(t, "cmode_speed.so")
	lz := speed.Entries[2]
	if lz.Compression != CompressionLZ4 {
		t.Fatalf("cmode_speed entry 2 is %v", lz.Compression)
	}
	corrupt := bytes.Clone(sec)
	corrupt[good.Offset+int64(good.HeaderSize)+20] ^= 0xff
	lzCorrupt := bytes.Clone(speedSec)
	// Its first sequence is token 0x13, one literal, offset 1: make the offset reach
	// before the start.
	if at := lz.Offset + int64(lz.HeaderSize); !bytes.HasPrefix(lzCorrupt[at:], []byte{0x13, '\n', 1, 0}) {
		t.Fatalf("cmode_speed entry 2 starts % x", lzCorrupt[at:at+4])
	} else {
		lzCorrupt[at+3] = 0x7f
	}
	tests := []struct {
		name string
		data []byte
		e    Entry
	}{
		{"declared size one short", sec, with(good, func(e *Entry) { e.UncompressedSize-- })},
		{"declared size one long", sec, with(good, func(e *Entry) { e.UncompressedSize++ })},
		{"declared size over the cap", sec, with(good, func(e *Entry) { e.UncompressedSize = maxDecompressed + 1 })},
		{"declared size 2^63", sec, with(good, func(e *Entry) { e.UncompressedSize = 1 << 63 })},
		{"no uncompressed size", sec, with(good, func(e *Entry) { e.UncompressedSize = 0 })},
		{"compressed size past the payload", sec, with(good, func(e *Entry) { e.CompressedSize = e.PayloadSize + 1 })},
		{"compressed size 0", sec, with(good, func(e *Entry) { e.CompressedSize = 0 })},
		{"compressed size over the cap", sec, with(good, func(e *Entry) { e.CompressedSize, e.PayloadSize = maxDecompressed+1, maxDecompressed+1 })},
		{"payload past the input", sec[:good.Offset+int64(good.HeaderSize)+10], good},
		{"zstd truncated", sec, with(good, func(e *Entry) { e.CompressedSize -= 8 })},
		{"zstd corrupt", corrupt, good},
		{"zstd read as lz4", sec, with(good, func(e *Entry) { e.Compression = CompressionLZ4 })},
		{"lz4 read as zstd", speedSec, with(lz, func(e *Entry) { e.Compression = CompressionZstd })},
		{"lz4 one short", speedSec, with(lz, func(e *Entry) { e.UncompressedSize-- })},
		{"lz4 one long", speedSec, with(lz, func(e *Entry) { e.UncompressedSize++ })},
		{"lz4 beyond its largest ratio", speedSec, with(lz, func(e *Entry) { e.UncompressedSize = 256 * (e.CompressedSize + 2) })},
		{"lz4 truncated", speedSec, with(lz, func(e *Entry) { e.CompressedSize -= 3 })},
		{"lz4 offset before the start", lzCorrupt, lz},
		{"offset wraps", sec, with(good, func(e *Entry) { e.Offset = 1<<63 - 8 })},
	}
	for _, tc := range tests {
		if p, err := tc.e.payload(bytes.NewReader(tc.data)); err == nil {
			t.Errorf("%s: read %d bytes, want an error", tc.name, p.Size())
		}
	}
}

func with(e Entry, change func(*Entry)) Entry {
	change(&e)
	return e
}

// TestUnLZ4: the block format's edge cases, each against a hand-encoded block.
func TestUnLZ4(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		want string // "" with ok false: must fail
		ok   bool
	}{
		{"literals only", []byte{0x50, 'h', 'e', 'l', 'l', 'o'}, "hello", true},
		{"overlapping match: a run", []byte{0x15, 'a', 1, 0, 0x00}, "aaaaaaaaaa", true},
		// 15+3 = 18 literals, then the last sequence.
		{"long literal length", append([]byte{0xf0, 3}, []byte("abcdefghijklmnopqr")...), "abcdefghijklmnopqr", true},
		// match length 15+255+1 = 271 (+4).
		{"long match length", []byte{0x1f, 'x', 1, 0, 255, 1, 0x00}, strings.Repeat("x", 276), true},
		{"match before the start", []byte{0x14, 'a', 2, 0}, "", false},
		{"offset 0", []byte{0x14, 'a', 0, 0}, "", false},
		{"literals past the input", []byte{0x50, 'h', 'i'}, "", false},
		{"offset cut", []byte{0x14, 'a', 1}, "", false},
		{"literal length run cut", []byte{0xf0, 255}, "", false},
		{"match length run cut", []byte{0x1f, 'a', 1, 0, 255}, "", false},
		{"empty", nil, "", true},
	}
	for _, tc := range tests {
		// Exactly the size it decodes to; and one byte more or less must fail.
		size := len(tc.want)
		dst := make([]byte, size)
		ok := unlz4(dst, tc.src)
		if ok != tc.ok || (ok && string(dst) != tc.want) {
			t.Errorf("%s: ok %v %q, want %v %q", tc.name, ok, dst, tc.ok, tc.want)
		}
		if !tc.ok {
			continue
		}
		if unlz4(make([]byte, size+1), tc.src) {
			t.Errorf("%s: decoded into one byte more than it holds", tc.name)
		}
		if size > 0 && unlz4(make([]byte, size-1), tc.src) {
			t.Errorf("%s: decoded into one byte less than it holds", tc.name)
		}
	}
}

// FuzzPayload decompresses arbitrary payloads under each codec: no panic, and an
// answer of exactly the declared size or an error. The seeds are the compressed
// entries of nvcc 13.0's builds.
func FuzzPayload(f *testing.F) {
	for _, name := range []string{"compressed.so", "cmode_size.so", "cmode_speed.so"} {
		sec, fb := realSection(f, name)
		for _, e := range fb.Entries {
			if e.Compression != CompressionNone {
				start := e.Offset + int64(e.HeaderSize)
				f.Add(sec[start:start+int64(e.CompressedSize)], uint8(e.Compression), uint32(e.UncompressedSize))
			}
		}
	}
	f.Add([]byte{0x15, 'a', 1, 0, 0x00}, uint8(CompressionLZ4), uint32(10))
	f.Fuzz(func(t *testing.T, data []byte, codec uint8, size uint32) {
		size %= 1 << 20
		e := Entry{Kind: cudaarch.SASS, Compression: Compression(codec % 3), HeaderSize: 0,
			PayloadSize: uint64(len(data)), CompressedSize: uint64(len(data)), UncompressedSize: uint64(size)}
		p, err := e.payload(bytes.NewReader(data))
		if err != nil {
			return
		}
		if e.Compression != CompressionNone && p.Size() != int64(size) {
			t.Fatalf("%d bytes, declared %d", p.Size(), size)
		}
		cubinHasKernel(p) // must not panic
	})
}

// TestDecompressBudget: a file's kernel scan decompresses at most its budget; past
// it, containers with compressed cubins are unknown (counted as holding kernels).
// Five copies of cmode_size.so's kernel-less container (one zstd sm_80 cubin that
// inflates to 1480 bytes) under a budget of three.
func TestDecompressBudget(t *testing.T) {
	sec, f := realSection(t, "cmode_size.so")
	c0 := f.Containers[0]
	one := sec[c0.Offset : c0.Offset+containerHeaderSize+int64(c0.Size)]
	data := bytes.Repeat(one, 5)
	five, err := Walk(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(five.Containers) != 5 || five.Entries[0].UncompressedSize != 1480 {
		t.Fatalf("%d containers, %v", len(five.Containers), err)
	}
	budget := int64(3 * 1480)
	for c := range 5 {
		has, known := five.ContainerKernels(bytes.NewReader(data), c, &budget)
		if has || known != (c < 3) {
			t.Errorf("container %d: has %v known %v with %d bytes left", c, has, known, budget)
		}
	}
	if budget != 0 {
		t.Errorf("budget left %d, want 0", budget)
	}
}
