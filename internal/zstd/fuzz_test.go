package zstd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kzstd "github.com/klauspost/compress/zstd"
)

// fuzzWindow and fuzzOutput keep each fuzz input cheap: both decoders get
// the same window cap and are compared on at most fuzzOutput bytes.
const (
	fuzzWindow = 1 << 20
	fuzzOutput = 1 << 20
)

func fuzzSeeds(f *testing.F) {
	inputs := testInputs(f)
	enc, _ := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithWindowSize(64<<10))
	for _, name := range []string{"empty", "one", "reader.go", "go.sum"} {
		orig := inputs[name]
		if len(orig) > 20000 {
			orig = orig[:20000]
		}
		for _, lvl := range []kzstd.EncoderLevel{kzstd.SpeedFastest, kzstd.SpeedBestCompression} {
			e, _ := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithEncoderLevel(lvl), kzstd.WithWindowSize(64<<10))
			f.Add(e.EncodeAll(orig, nil))
		}
	}
	f.Add(enc.EncodeAll(bytes.Repeat([]byte("ab"), 1000), nil))
}

// FuzzDecoder compares this decoder with klauspost's on any input: what one
// decodes, the other must decode to the same bytes, and an input one
// refuses the other must refuse too.
//
// One deliberate difference, where the comparison is skipped: this decoder
// refuses every frame that names a dictionary (layers never use one),
// whatever klauspost does with it.
func FuzzDecoder(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, comp []byte) {
		// A hang crashes the worker, so the fuzzer keeps the input.
		var phase atomic.Value
		phase.Store("ours")
		watchdog := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprint("decoding hangs: ", phase.Load())) })
		defer watchdog.Stop()
		ours, ourErr := decodeLimited(comp)
		phase.Store("klauspost")
		kr, err := kzstd.NewReader(bytes.NewReader(comp), kzstd.WithDecoderMaxWindow(fuzzWindow), kzstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		theirs, theirErr := io.ReadAll(io.LimitReader(kr, fuzzOutput))
		kr.Close()
		if errors.Is(ourErr, ErrDictionary) {
			return
		}
		switch {
		case ourErr == nil && theirErr == nil:
			if !bytes.Equal(ours, theirs) {
				t.Fatalf("both decode, differently: %d bytes here, %d by klauspost", len(ours), len(theirs))
			}
		case ourErr == nil:
			t.Fatalf("ours decodes %d bytes, klauspost fails after %d: %v", len(ours), len(theirs), theirErr)
		case theirErr == nil:
			t.Fatalf("klauspost decodes %d bytes, ours fails after %d: %v", len(theirs), len(ours), ourErr)
		}
	})
}

func decodeLimited(comp []byte) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(comp), fuzzWindow)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, fuzzOutput))
}

// FuzzDecoderValid compresses the fuzz input with klauspost's encoder, at
// a level and window picked by the input, so that the fuzzer reaches deep
// into compressed blocks; the round trip must give the input back.
func FuzzDecoderValid(f *testing.F) {
	f.Add([]byte("hello hello hello hello"), uint8(0))
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 5000), uint8(3))
	f.Add(testInputs(f)["go.sum"][:8000], uint8(6))
	f.Fuzz(func(t *testing.T, data []byte, opts uint8) {
		enc := fuzzEncoder(t, opts&63)
		comp := enc.EncodeAll(data, nil)
		if opts&64 != 0 {
			comp = enc.EncodeAll(data, comp) // two frames
			data = append(data, data...)
		}
		got, err := decodeLimited(comp)
		if err != nil {
			t.Fatalf("%v", err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("decoded %d bytes, want %d", len(got), len(data))
		}
	})
}

// fuzzEncoders holds one klauspost encoder per option set (EncodeAll may be
// called concurrently): making one per input cost most of the fuzzing time.
var fuzzEncoders sync.Map

func fuzzEncoder(t *testing.T, opts uint8) *kzstd.Encoder {
	if e, ok := fuzzEncoders.Load(opts); ok {
		return e.(*kzstd.Encoder)
	}
	levels := []kzstd.EncoderLevel{kzstd.SpeedFastest, kzstd.SpeedDefault, kzstd.SpeedBetterCompression, kzstd.SpeedBestCompression}
	windows := []int{1 << 10, 4 << 10, 64 << 10, 1 << 20}
	enc, err := kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1),
		kzstd.WithEncoderLevel(levels[opts&3]), kzstd.WithWindowSize(windows[(opts>>2)&3]),
		kzstd.WithEncoderCRC(opts&16 != 0), kzstd.WithAllLitEntropyCompression(opts&32 != 0))
	if err != nil {
		t.Fatal(err)
	}
	e, _ := fuzzEncoders.LoadOrStore(opts, enc)
	return e.(*kzstd.Encoder)
}
