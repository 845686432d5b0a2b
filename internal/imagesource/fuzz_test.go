package imagesource

import (
	"bytes"
	"io"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// FuzzLayerIndex feeds arbitrary bytes as a layer: indexing (with every
// file declared needed, so the ELF and fatbin capture runs on it) and
// reading every file it yields must never panic nor hold more than the
// caps allow.
func FuzzLayerIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 1024))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &Source{cache: newPageCache(1 << 20), keep: newBudget(1 << 20), max: 1 << 20}
		l := &layerBlob{index: 0, stats: &s.stats, size: int64(len(data)), open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}}
		s.layers = []*layerBlob{l}
		needs := source.CompileNeeds([]source.Need{{Pattern: "**/*", ELF: true}})
		s.idx = buildIndex(s.layers, needs, s.keep, s.warn)
		for p, e := range s.idx.entries {
			if p != e.path || p[0] != '/' {
				t.Fatalf("entry %q at %q", e.path, p)
			}
			if !e.mode.IsRegular() || e.body == nil || e.body.unreadable != "" {
				continue
			}
			fl := &imageFile{src: s, e: e, name: p}
			io.Copy(io.Discard, io.LimitReader(fl, 1<<20))
			fl.Close()
		}
	})
}

// FuzzFatScan feeds arbitrary bytes, in arbitrary chunk sizes, to the
// fatbin scanner: it must never panic, keep bytes out of order, or keep
// more than its cap.
func FuzzFatScan(f *testing.F) {
	f.Add([]byte("\x50\xed\x55\xba\x01\x00\x10\x00\x40\x00\x00\x00\x00\x00\x00\x00"), uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		k := &keeper{budget: newBudget(1 << 30)}
		s := &fatScan{k: k}
		step := int(cut%64)*8 + 8
		for pos := 0; pos < len(data); pos += step {
			s.scan(data[pos:min(pos+step, len(data))], int64(pos), nil)
		}
		var last int64 = -1
		for _, sp := range k.out {
			if sp.off <= last {
				t.Fatalf("spans out of order: %d after %d", sp.off, last)
			}
			if !bytes.Equal(sp.data, data[sp.off:sp.off+int64(len(sp.data))]) {
				t.Fatalf("kept bytes at %d differ from the input", sp.off)
			}
			last = sp.off + int64(len(sp.data)) - 1
		}
	})
}
