package imagesource_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fastpath-dev/fastpath/internal/imagesource"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// zstdRLEBomb is a zstd frame holding a tar: os-release, then a file of
// total zero bytes written as RLE blocks of 128 KiB each (4 bytes per
// block, 32,768 to 1), with no end: the tar reader skips the body by
// reading it through the decoder.
func zstdRLEBomb(t *testing.T, total int64) []byte {
	t.Helper()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	addFile(t, tw, "etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n")
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "big", Size: total, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	tw.Flush()
	var b bytes.Buffer
	// Magic; no content size, no checksum; a 128 KiB window.
	b.Write([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3})
	block := func(typ, size int, last bool) {
		v := uint32(size<<3 | typ<<1)
		if last {
			v |= 1
		}
		var x [4]byte
		binary.LittleEndian.PutUint32(x[:], v)
		b.Write(x[:3])
	}
	block(0, tb.Len(), false) // raw block: the headers
	b.Write(tb.Bytes())
	n := total / (128 << 10)
	for i := int64(0); i < n; i++ {
		block(1, 128<<10, i == n-1) // RLE block: one byte, 128 KiB of it
		b.WriteByte(0)
	}
	return b.Bytes()
}

// F13: a zstd layer of 128 KiB holding a 4 GiB file of zeros (a terabyte
// takes 32 MB) is a decompression bomb. The pass stops once the layer has
// expanded 2048 times its compressed bytes (after 256 MiB), with a
// warning, and what came before stays readable. Before the cap the whole
// 4 GiB went through the decoder (a terabyte would take half an hour).
func TestF13ZstdBombStopsAtExpansionCap(t *testing.T) {
	bomb := zstdRLEBomb(t, 4<<30)
	img := image(t, "linux/amd64", nil, static.NewLayer(bomb, types.OCILayer))
	dir := writeLayout(t, map[string]v1.Image{"noble": img})
	src, err := imagesource.Open(context.Background(), dir+":noble", imagesource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := source.ReadFile(src, "/etc/os-release", 1024); err != nil || !strings.Contains(string(got), "24.04") {
		t.Errorf("os-release before the bomb: %q, %v", got, err)
	}
	st := src.Stats()
	t.Logf("compressed %d bytes, decompressed %d bytes, warnings %q", st.CompressedBytes, st.StreamBytes, src.Warnings())
	if st.StreamBytes > 300<<20 {
		t.Errorf("the bomb expanded to %d MiB; want the pass stopped near 256 MiB", st.StreamBytes>>20)
	}
	if w := strings.Join(src.Warnings(), "\n"); !strings.Contains(w, "decompression bomb") {
		t.Errorf("no warning about the bomb: %q", w)
	}
}

// A gzip layer of zeros expands as far as deflate can (about 1030 to 1)
// and is read whole: the cap is above any gzip stream's ratio.
func TestF13GzipAtDeflateLimitNotRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 320 MiB")
	}
	var tb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&tb, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "zeros", Size: 320 << 20, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for i := 0; i < 320; i++ {
		tw.Write(zero)
	}
	addFile(t, tw, "etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n")
	tw.Close()
	zw.Close()
	img := image(t, "linux/amd64", nil, static.NewLayer(tb.Bytes(), types.OCILayer))
	dir := writeLayout(t, map[string]v1.Image{"noble": img})
	src, err := imagesource.Open(context.Background(), dir+":noble", imagesource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gzip: %d bytes for 320 MiB", tb.Len())
	if got, err := source.ReadFile(src, "/etc/os-release", 1024); err != nil || !strings.Contains(string(got), "24.04") {
		t.Errorf("os-release after 320 MiB of gzip zeros: %q, %v; warnings %q", got, err, src.Warnings())
	}
}
