package imagesource_test

import (
	"archive/tar"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/imagesource"
)

const bigSize = 300 << 20

// bigSeed is the seed tree with one 300 MB file added at p (zeros: a hole
// on disk, 300 MB in the layer). With torchLib, p is torch's
// libtorch_cuda.so: 300 MB of code before the .nv_fatbin section the torch
// collector reads (its headers only). Otherwise p is a file no collector opens.
func bigSeed(t testing.TB, torchLib bool) (flat, p string) {
	t.Helper()
	flat = t.TempDir()
	if err := fixture.Seed(flat); err != nil {
		t.Fatal(err)
	}
	site := fixture.Venv{Prefix: fixture.SeedVenv, Version: fixture.SeedPython}.SitePackages()
	if !torchLib {
		p = "/opt/weights/blob.bin"
		h := filepath.Join(flat, p)
		if err := os.MkdirAll(filepath.Dir(h), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(h, bigSize); err != nil {
			t.Fatal(err)
		}
		return flat, p
	}
	p = path.Join(site, "torch/lib/libtorch_cuda.so")
	cs, err := fixture.TorchFatbinContainers(3, "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
	if err != nil {
		t.Fatal(err)
	}
	fat, err := fixture.SparseFatbinSection(cs)
	if err != nil {
		t.Fatal(err)
	}
	ft := fixture.New(flat)
	ft.SparseELF(p, []fixture.ELFSection{{Name: ".text", Size: bigSize}, fat})
	if err := ft.Err(); err != nil {
		t.Fatal(err)
	}
	return flat, p
}

// bigImage puts the OS in a gzip layer and the venv (and /opt) in a layer
// that is raw or gzip-compressed.
func bigImage(t testing.TB, flat string, raw bool) v1.Image {
	t.Helper()
	payload := func(p string) bool { return under(fixture.SeedVenv)(p) || under("/opt")(p) }
	l1 := layer(t, false, func(tw *tar.Writer) { tarDir(t, tw, flat, not(payload)) })
	l2 := layer(t, raw, func(tw *tar.Writer) { tarDir(t, tw, flat, payload) })
	return image(t, "linux/amd64", fixture.SeedEnv, l1, l2)
}

// An uncompressed layer holding a 300 MB file no collector needs is
// diagnosed by reading its headers and the needed files in place: the file
// body is skipped by ranged reads, never fetched.
func TestLargeIrrelevantFileNotFetched(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 300 MB layers")
	}
	flat, big := bigSeed(t, false)
	want := rootFacts(t, flat, fixture.SeedEnv)
	rs := newRegistry(t)
	ref := push(t, rs, "big/irrelevant:v1", bigImage(t, flat, true))
	before := rs.sent.Load()
	src := open(t, ref, imagesource.Options{})
	sameDiagnosis(t, want, src)
	sent := rs.sent.Load() - before
	st := src.Stats()
	t.Logf("300 MB irrelevant file, raw layer: %d bytes sent by the registry (%d counted by the source), %d ranged reads, %d layer passes",
		sent, st.NetworkBytes, st.RangeReads, st.LayerPasses)
	const bound = 8 << 20 // the seed's own files are ~1 MB; ranges are at most 16 MiB but start at 1 MiB
	if sent > bound {
		t.Errorf("the registry sent %d bytes, want at most %d: the big file was fetched", sent, bound)
	}
	if fi, err := src.Stat(big); err != nil || fi.Size() != bigSize {
		t.Errorf("Stat(%s) = %v, %v", big, fi, err)
	}
}

// BenchmarkLargeLayer measures what diagnosing the seed with one 300 MB
// file costs: bytes the registry sends and time, for a raw or a gzip layer,
// with the big file irrelevant or torch's libtorch_cuda.so (whose fatbin
// headers the torch collector reads after 300 MB of code).
//
//	go test ./internal/imagesource -run '^$' -bench LargeLayer -benchtime 1x
func BenchmarkLargeLayer(b *testing.B) {
	for _, torchLib := range []bool{false, true} {
		flat, _ := bigSeed(b, torchLib)
		for _, raw := range []bool{true, false} {
			name := fmt.Sprintf("torchlib=%v/raw=%v", torchLib, raw)
			b.Run(name, func(b *testing.B) {
				rs := newRegistry(b)
				ref := push(b, rs, "big/bench:v1", bigImage(b, flat, raw))
				var sent int64
				var st imagesource.Stats
				start := time.Now()
				for b.Loop() {
					before := rs.sent.Load()
					src := open(b, ref, imagesource.Options{})
					f := collectFacts(b, src)
					if torchLib && (f.Torch == nil || len(f.Torch.Archs) == 0) {
						b.Fatalf("torch archs not read: %+v", f.Torch)
					}
					sent = rs.sent.Load() - before
					st = src.Stats()
				}
				per := time.Since(start) / time.Duration(b.N)
				b.ReportMetric(float64(sent)/(1<<20), "MiB-sent/op")
				b.Logf("%s: %.1f MiB sent by the registry, %.1f MiB streamed, %.1f MiB read in place, %d layer passes, %d ranged reads, %v per diagnosis",
					name, float64(sent)/(1<<20), float64(st.StreamBytes)/(1<<20), float64(st.RangeBytes)/(1<<20), st.LayerPasses, st.RangeReads, per.Round(time.Millisecond))
			})
		}
	}
}
