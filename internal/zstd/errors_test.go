package zstd

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"runtime"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

// frameHeader builds a frame header: descriptor fhd, then the window
// descriptor (when not single segment), dictionary id and content size
// fields as given.
func frameHeader(fhd byte, rest ...byte) []byte {
	return append([]byte{0x28, 0xB5, 0x2F, 0xFD, fhd}, rest...)
}

func blockHeader(typ, size int, last bool) []byte {
	h := size<<3 | typ<<1
	if last {
		h |= 1
	}
	return []byte{byte(h), byte(h >> 8), byte(h >> 16)}
}

// rawBlock is a block header and its raw content.
func rawBlock(last bool, content []byte) []byte {
	return append(blockHeader(0, len(content), last), content...)
}

func wantKind(t *testing.T, name string, err, kind error) *Error {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: error %v, want %v", name, err, kind)
	}
	var ze *Error
	if !errors.As(err, &ze) {
		t.Fatalf("%s: error %T is not a *zstd.Error", name, err)
	}
	return ze
}

func TestWindowAboveCap(t *testing.T) {
	enc, _ := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithWindowSize(8<<20))
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB: a window of 8 MiB
	var stream bytes.Buffer
	enc.Reset(&stream)
	enc.Write(data)
	enc.Close()
	// A first frame that fits, then one that does not: the error names the
	// second frame's offset.
	small := enc.EncodeAll([]byte("hello"), nil)
	comp := append(append([]byte{}, small...), stream.Bytes()...)
	_, err := decodeAll(t, comp, 1<<20)
	ze := wantKind(t, "8 MiB window, 1 MiB cap", err, ErrWindowTooLarge)
	if ze.Offset != int64(len(small)) {
		t.Fatalf("offset %d, want %d (the second frame)", ze.Offset, len(small))
	}
	// The same input under a cap that fits decodes.
	got, err := decodeAll(t, comp, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "8 MiB window, 8 MiB cap", got, append([]byte("hello"), data...))

	// A single-segment frame's window is its content size.
	hdr := frameHeader(0xE0, 0, 0, 0, 0x10, 0, 0, 0, 0) // 8-byte size: 256 MiB
	_, err = decodeAll(t, append(hdr, rawBlock(true, nil)...), 64<<20)
	wantKind(t, "single segment, 256 MiB", err, ErrWindowTooLarge)
}

func TestDictionaryRefused(t *testing.T) {
	for _, hdr := range [][]byte{
		frameHeader(0x01, 0x00, 7),                   // 1-byte id
		frameHeader(0x02, 0x00, 1, 2),                // 2-byte id
		frameHeader(0x23, 0x01, 0x02, 0x03, 0x04, 4), // single segment: 4-byte id, 1-byte size
	} {
		comp := append(hdr, rawBlock(true, []byte("abcd"))...)
		_, err := decodeAll(t, comp, 1<<20)
		ze := wantKind(t, "dictionary", err, ErrDictionary)
		if ze.Offset != 0 {
			t.Fatalf("offset %d", ze.Offset)
		}
	}
	// A dictionary id field of zero means none.
	got, err := decodeAll(t, append(frameHeader(0x01, 0x00, 0), rawBlock(true, []byte("abcd"))...), 1<<20)
	if err != nil || string(got) != "abcd" {
		t.Fatalf("dictionary id 0: %q %v", got, err)
	}
}

func TestBadChecksum(t *testing.T) {
	enc, _ := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithEncoderCRC(true))
	comp := enc.EncodeAll(testInputs(t)["go.sum"], nil)
	if _, err := decodeAll(t, comp, 1<<20); err != nil {
		t.Fatal(err)
	}
	comp[len(comp)-1] ^= 0x40
	_, err := decodeAll(t, comp, 1<<20)
	wantKind(t, "flipped checksum", err, ErrChecksum)
}

// TestTruncatedEverywhere cuts a small frame (and one from the CLI with a
// checksum) at every offset: each prefix is an error, never a panic or a
// hang, and never a silent short result.
func TestTruncatedEverywhere(t *testing.T) {
	orig := testInputs(t)["reader.go"][:5000]
	enc, _ := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithEncoderCRC(true))
	frames := [][]byte{enc.EncodeAll(orig, nil)}
	if _, err := exec.LookPath("zstd"); err == nil {
		cmd := exec.Command("zstd", "-q", "-c", "-19", "--check")
		cmd.Stdin = bytes.NewReader(orig)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, out)
	}
	for _, comp := range frames {
		for n := 1; n < len(comp); n++ {
			_, err := decodeAll(t, comp[:n], 1<<20)
			if err == nil {
				t.Fatalf("prefix of %d of %d bytes decoded without error", n, len(comp))
			}
			var ze *Error
			if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &ze) {
				t.Fatalf("prefix %d: untyped error %v", n, err)
			}
		}
	}
}

func TestReservedAndOversizedBlocks(t *testing.T) {
	const window1K = 0x00 // window descriptor: 1 KiB
	cases := []struct {
		name string
		comp []byte
	}{
		{"reserved block type", append(frameHeader(0x00, window1K), 0x07, 0x00, 0x00)},
		{"raw block above the window", append(frameHeader(0x00, window1K), rawBlock(true, make([]byte, 1025))...)},
		{"RLE block above the window", append(frameHeader(0x00, window1K), append(blockHeader(1, 2000, true), 'a')...)},
		{"compressed block above the window", append(frameHeader(0x00, window1K), blockHeader(2, 1025, true)...)},
		// 1 MiB window: blocks are still capped at 128 KiB.
		{"raw block above 128 KiB", append(frameHeader(0x00, 10<<3), rawBlock(true, make([]byte, 128<<10+1))...)},
		{"reserved frame header bit", append(frameHeader(0x08, window1K), rawBlock(true, nil)...)},
		{"content size mismatch", append(frameHeader(0x20, 3), rawBlock(true, []byte("ab"))...)},
		{"not zstd", []byte("hello, world")},
		{"trailing garbage", append(append(frameHeader(0x20, 2), rawBlock(true, []byte("ab"))...), 1, 2, 3, 4, 5)},
	}
	for _, c := range cases {
		got, err := decodeAll(t, c.comp, 1<<20)
		if err == nil {
			t.Fatalf("%s: decoded %d bytes without error", c.name, len(got))
		}
		var ze *Error
		if !errors.As(err, &ze) {
			t.Fatalf("%s: error %v is not a *zstd.Error", c.name, err)
		}
	}
}

// TestMemoryBoundedByWindow decodes a frame that declares a 1 TiB content
// size with a 64 KiB window: what it allocates is about the window (and a
// block and the input buffer), not the content size, while 48 MiB of output
// stream through it.
func TestMemoryBoundedByWindow(t *testing.T) {
	const out = 48 << 20
	// Window descriptor 6<<3: 64 KiB. Content size flag 3: 8 bytes.
	comp := frameHeader(0xC0, 6<<3, 0, 0, 0, 0, 0, 1, 0, 0) // 1 TiB
	block := bytes.Repeat([]byte("abcdefgh"), 64<<10/8)
	for n := 0; n < out; n += len(block) {
		comp = append(comp, rawBlock(false, block)...)
	}
	r, _ := NewReader(bytes.NewReader(comp), 64<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := io.Copy(io.Discard, r)
	runtime.ReadMemStats(&after)
	if n != out || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("copied %d bytes, error %v; want %d and a truncation", n, err, out)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	const bound = 2*64<<10 + maxBlockSize + inBufSize + maxBlockSize + 256<<10
	if alloc > bound {
		t.Fatalf("allocated %d bytes to stream %d bytes through a 64 KiB window (bound %d)", alloc, out, bound)
	}
	t.Logf("allocated %d bytes", alloc)

	// A single-segment frame of 1 TiB is refused before anything is
	// allocated for it.
	r, _ = NewReader(bytes.NewReader(frameHeader(0xE0, 0, 0, 0, 0, 0, 1, 0, 0)), 64<<20)
	runtime.ReadMemStats(&before)
	_, err = r.Read(make([]byte, 10))
	runtime.ReadMemStats(&after)
	wantKind(t, "1 TiB single segment", err, ErrWindowTooLarge)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > inBufSize+64<<10 {
		t.Fatalf("allocated %d bytes to refuse a frame header", alloc)
	}
}
