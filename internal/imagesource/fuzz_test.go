package imagesource

import (
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// FuzzLayerIndex feeds arbitrary bytes as a layer: indexing and reading
// every file it yields must never panic nor hold more than the caps allow.
func FuzzLayerIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 1024))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &Source{cache: newPageCache(1 << 20)}
		l := &layerBlob{index: 0, layer: static.NewLayer(data, types.OCIUncompressedLayer), stats: &s.stats}
		s.layers = []*layerBlob{l}
		s.idx = buildIndex(s.layers, s.cache, s.warn)
		for p, e := range s.idx.entries {
			if p != e.path || p[0] != '/' {
				t.Fatalf("entry %q at %q", e.path, p)
			}
			if !e.mode.IsRegular() || e.unreadable != "" {
				continue
			}
			fl := &imageFile{src: s, e: e, name: p}
			io.Copy(io.Discard, io.LimitReader(fl, 1<<20))
			fl.Close()
		}
	})
}
