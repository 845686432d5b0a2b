package zstd

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	kzstd "github.com/klauspost/compress/zstd"
)

// decodeAll decodes comp with a maxWindow cap, reading through small and
// odd-sized Read calls half of the time so that block boundaries and
// buffer refills fall everywhere.
func decodeAll(t testing.TB, comp []byte, maxWindow int) ([]byte, error) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(comp), maxWindow)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return io.ReadAll(r)
}

func mustEqual(t testing.TB, name string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	n := 0
	for n < len(got) && n < len(want) && got[n] == want[n] {
		n++
	}
	t.Fatalf("%s: decoded %d bytes, want %d; first difference at byte %d", name, len(got), len(want), n)
}

// testInputs are the originals of the round trips: real files of this
// repository and this machine, the empty input, highly repetitive input and
// random (incompressible) input.
func testInputs(t testing.TB) map[string][]byte {
	in := map[string][]byte{
		"empty": {},
		"one":   {'x'},
	}
	for name, path := range map[string]string{
		"go.sum":    "../../go.sum",
		"reader.go": "reader.go",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		in[name] = b
	}
	// A real shared library and real text: machine code and prose.
	for name, path := range map[string]string{
		"libc":      "/usr/lib/x86_64-linux-gnu/libc.so.6",
		"copyright": "/usr/share/common-licenses/GPL-3",
	} {
		if b, err := os.ReadFile(path); err == nil {
			in[name] = b
		}
	}
	in["repetitive"] = bytes.Repeat([]byte("fastpath zstd "), 300_000)
	zeros := make([]byte, 3<<20)
	zeros[1<<20] = 1 // RLE blocks, then a change, then RLE again
	in["zeros"] = zeros
	rnd := make([]byte, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range rnd {
		rnd[i] = byte(rng.Uint32())
	}
	in["random"] = rnd
	// Half random, half text: raw literals next to compressed ones.
	mixed := append(append([]byte{}, rnd[:200_000]...), in["go.sum"]...)
	in["mixed"] = append(mixed, rnd[:300_000]...)
	return in
}

// TestRoundTripCLI decodes what the reference zstd CLI writes, at the
// levels and with the options that container tools use.
func TestRoundTripCLI(t *testing.T) {
	zstdCLI(t)
	dir := t.TempDir()
	opts := [][]string{
		{"-1"}, {"-3"}, {"-9"}, {"-19"},
		{"--ultra", "-22", "--zstd=wlog=21"},
		{"--long=26", "-3"},
		{"-3", "--no-check"}, {"-3", "--check"},
		{"-3", "--no-content-size"}, {"-19", "--content-size"},
		{"-3", "--zstd=wlog=10"}, // 1 KiB window: the smallest there is
		{"-5", "--zstd=wlog=17,strategy=1"},
		{"-12", "--zstd=strategy=5"},
		{"--fast=5"},
	}
	inputs := testInputs(t)
	if testing.Short() {
		opts = opts[:4]
	}
	for name, orig := range inputs {
		src := filepath.Join(dir, name)
		if err := os.WriteFile(src, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, o := range opts {
			args := append([]string{"-q", "-c"}, o...)
			cmd := exec.Command("zstd", append(args, src)...)
			comp, err := cmd.Output()
			if err != nil {
				t.Fatalf("zstd %v %s: %v", o, name, err)
			}
			got, err := decodeAll(t, comp, 64<<20)
			if err != nil {
				t.Fatalf("zstd %v %s: %v", o, name, err)
			}
			mustEqual(t, "zstd "+strings.Join(o, " ")+" "+name, got, orig)
		}
		// Streamed from stdin: no content size, window from the level.
		cmd := exec.Command("zstd", "-q", "-c", "-3")
		cmd.Stdin = bytes.NewReader(orig)
		comp, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeAll(t, comp, 64<<20)
		if err != nil {
			t.Fatalf("zstd -3 < %s: %v", name, err)
		}
		mustEqual(t, "zstd -3 < "+name, got, orig)
	}
}

// TestRoundTripCorpusCLI decodes the 64 MB benchmark corpus compressed by
// the CLI at -3 and -19 (windows of 2 and 8 MiB, so the history moves).
func TestRoundTripCorpusCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MB corpus: skipped under -short")
	}
	orig, err := os.ReadFile(benchCorpus(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []int{3, 19} {
		comp, _ := cliCompressed(t, level)
		got, err := decodeAll(t, comp, 64<<20)
		if err != nil {
			t.Fatalf("-%d: %v", level, err)
		}
		mustEqual(t, "corpus", got, orig)
	}
}

// TestRoundTripKlauspost decodes what klauspost's encoder writes at all its
// levels and with several window sizes, with and without checksums, single
// segment frames and frames for empty input.
func TestRoundTripKlauspost(t *testing.T) {
	levels := []kzstd.EncoderLevel{kzstd.SpeedFastest, kzstd.SpeedDefault, kzstd.SpeedBetterCompression, kzstd.SpeedBestCompression}
	type variant struct {
		name string
		opts []kzstd.EOption
	}
	variants := []variant{
		{"default", nil},
		{"window-1k", []kzstd.EOption{kzstd.WithWindowSize(1 << 10)}},
		{"window-64k", []kzstd.EOption{kzstd.WithWindowSize(64 << 10)}},
		{"window-8m", []kzstd.EOption{kzstd.WithWindowSize(8 << 20)}},
		{"no-crc", []kzstd.EOption{kzstd.WithEncoderCRC(false)}},
		{"single-segment", []kzstd.EOption{kzstd.WithSingleSegment(true)}},
		{"zero-frames", []kzstd.EOption{kzstd.WithZeroFrames(true)}},
		{"all-literal-entropy", []kzstd.EOption{kzstd.WithAllLitEntropyCompression(true)}},
		{"no-entropy", []kzstd.EOption{kzstd.WithNoEntropyCompression(true)}},
	}
	inputs := testInputs(t)
	for _, lvl := range levels {
		for _, v := range variants {
			if testing.Short() && v.name != "default" {
				continue
			}
			enc, err := kzstd.NewWriter(nil, append([]kzstd.EOption{kzstd.WithEncoderLevel(lvl), kzstd.WithEncoderConcurrency(1)}, v.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			for name, orig := range inputs {
				// EncodeAll writes one frame; the streaming writer
				// writes blocks as they fill (no content size).
				var stream bytes.Buffer
				enc.Reset(&stream)
				enc.Write(orig)
				enc.Close()
				for how, comp := range map[string][]byte{"all": enc.EncodeAll(orig, nil), "stream": stream.Bytes()} {
					got, err := decodeAll(t, comp, 64<<20)
					if err != nil {
						t.Fatalf("%s %s %s %s: %v", lvl, v.name, name, how, err)
					}
					mustEqual(t, lvl.String()+" "+v.name+" "+name+" "+how, got, orig)
				}
			}
		}
	}
}

// TestConcatenatedAndSkippable decodes frames back to back, with skippable
// frames (any of the 16 magic numbers, empty or not) between them.
func TestConcatenatedAndSkippable(t *testing.T) {
	enc, _ := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1))
	inputs := testInputs(t)
	var comp, want []byte
	skippable := func(nibble byte, n int) []byte {
		b := []byte{0x50 | nibble, 0x2A, 0x4D, 0x18, byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
		return append(b, bytes.Repeat([]byte{0xFD}, n)...)
	}
	comp = append(comp, skippable(0, 0)...)
	for _, name := range []string{"go.sum", "empty", "repetitive", "random", "reader.go"} {
		comp = enc.EncodeAll(inputs[name], comp)
		want = append(want, inputs[name]...)
		comp = append(comp, skippable(byte(len(comp)&15), len(name)*1000)...)
	}
	// A skippable frame larger than the input buffer.
	comp = append(comp, skippable(15, 700_000)...)
	comp = enc.EncodeAll(inputs["go.sum"], comp)
	want = append(want, inputs["go.sum"]...)
	got, err := decodeAll(t, comp, 8<<20)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "concatenated", got, want)

	// Only skippable frames: no bytes, no error.
	got, err = decodeAll(t, skippable(3, 10), 8<<20)
	if err != nil || len(got) != 0 {
		t.Fatalf("skippable only: %d bytes, %v", len(got), err)
	}
}

// TestSmallReads reads through 1- to 7-byte buffers and through WriteTo.
func TestSmallReads(t *testing.T) {
	orig := testInputs(t)["go.sum"]
	enc, _ := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithWindowSize(4<<10))
	comp := enc.EncodeAll(orig, nil)
	r, _ := NewReader(bytes.NewReader(comp), 1<<20)
	var got []byte
	buf := make([]byte, 7)
	for i := 0; ; i++ {
		n, err := r.Read(buf[:1+i%7])
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	mustEqual(t, "small reads", got, orig)

	r, _ = NewReader(iotestOneByte{bytes.NewReader(comp)}, 1<<20)
	var w bytes.Buffer
	if _, err := r.WriteTo(&w); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "WriteTo from a one-byte reader", w.Bytes(), orig)
}

// iotestOneByte returns one byte per Read, as a slow network might.
type iotestOneByte struct{ r io.Reader }

func (o iotestOneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// TestXXH64 checks the hash against the specification's value for the
// empty input and against checksums the zstd CLI wrote (TestRoundTripCLI
// verifies many more).
func TestXXH64(t *testing.T) {
	var h xxh64
	h.reset()
	if got := h.sum(); got != 0xEF46DB3751D8E999 {
		t.Fatalf("XXH64(\"\") = %#x", got)
	}
	// Written in pieces of every size, the hash must not change.
	data := testInputs(t)["reader.go"]
	h.reset()
	h.write(data)
	whole := h.sum()
	for step := 1; step < 70; step += 3 {
		h.reset()
		for p := data; len(p) > 0; {
			n := min(step, len(p))
			h.write(p[:n])
			p = p[n:]
		}
		if got := h.sum(); got != whole {
			t.Fatalf("written %d bytes at a time: %#x, want %#x", step, got, whole)
		}
	}
}

// TestReadAfterClose: a Reader closed with output not yet read fails
// its next Read instead of reading freed buffers.
func TestReadAfterClose(t *testing.T) {
	enc, _ := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1))
	r, _ := NewReader(bytes.NewReader(enc.EncodeAll(testInputs(t)["go.sum"], nil)), 1<<20)
	if n, err := r.Read(make([]byte, 10)); n != 10 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	r.Close()
	if n, err := r.Read(make([]byte, 10)); n != 0 || !errors.Is(err, ErrClosed) {
		t.Fatalf("read after Close: %d, %v", n, err)
	}
}
