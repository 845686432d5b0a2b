package sitedist

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

func TestFind(t *testing.T) {
	const site = "/venv/lib/python3.12/site-packages"
	tr := fixture.New(t.TempDir())
	tr.Dist(site, fixture.Dist{Name: "nvidia-cuda-nvcc-cu12", Version: "12.8.93"})
	tr.Dist(site, fixture.Dist{Name: "nvidia-cuda-nvcc", Version: "13.0.88"})
	// A folder name that disagrees with METADATA: METADATA wins.
	tr.File(site+"/Ninja-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: ninja\nVersion: 1.13.0\n\nName: not-a-header\n")
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(tr.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ask, name, version string }{
		{"nvidia_cuda_nvcc_cu12", "nvidia-cuda-nvcc-cu12", "12.8.93"},
		{"NVIDIA.cuda-nvcc", "nvidia-cuda-nvcc", "13.0.88"},
		{"ninja", "ninja", "1.13.0"},
		{"cmake", "", ""},
	} {
		d, ok, err := Find(src, site, tc.ask)
		if err != nil || ok != (tc.name != "") || d.Name != tc.name || d.Version != tc.version {
			t.Errorf("Find(%q) = %+v, %v, %v; want %s %s", tc.ask, d, ok, err, tc.name, tc.version)
		}
	}
	if _, _, err := Find(src, "/missing", "x"); err == nil {
		t.Error("Find in a missing folder: no error")
	}
}

// TestNormalizeIsTheRegexp: Normalize is the regexp form it replaced,
// strings.ToLower(regexp `[-_.]+` -> "-"), on random names over the
// characters that matter (separators, capitals, non-ASCII).
func TestNormalizeIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`[-_.]+`)
	r := rand.New(rand.NewPCG(503, 1))
	chars := []string{"-", "_", ".", "a", "Z", "0", "É", "ß", "İ", "\xff"}
	cases := []string{"", "torch", "Flash_Attn", "a--b", "-a-", "..", "nvidia-cuda-nvcc-cu12"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(9) {
			b.WriteString(chars[r.IntN(len(chars))])
		}
		cases = append(cases, b.String())
	}
	for _, n := range cases {
		if got, want := Normalize(n), strings.ToLower(re.ReplaceAllString(n, "-")); got != want {
			t.Errorf("Normalize(%q) = %q, the regexp form says %q", n, got, want)
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	re := regexp.MustCompile(`[-_.]+`)
	names := []string{"torch", "nvidia-cuda-nvcc-cu12", "Flash_Attn", "causal-conv1d", "zope.interface"}
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, n := range names {
				_ = Normalize(n)
			}
		}
	})
	b.Run("regexp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, n := range names {
				_ = strings.ToLower(re.ReplaceAllString(n, "-"))
			}
		}
	})
}

// normalizedIs(name, want) is Normalize(name) == want, on the names of
// TestNormalizeIsTheRegexp's kind and on near misses of their normal form.
func checkNormalizedIs(t *testing.T, name string) {
	want := Normalize(name)
	if !normalizedIs(name, want) {
		t.Errorf("normalizedIs(%q, %q) = false", name, want)
	}
	for _, other := range []string{want + "x", strings.TrimSuffix(want, "-"), "-" + want, strings.ToUpper(want), want + "-"} {
		if other != want && normalizedIs(name, other) {
			t.Errorf("normalizedIs(%q, %q) = true", name, other)
		}
	}
}

func TestNormalizedIs(t *testing.T) {
	for _, n := range []string{"", "-", "__", "torch", "Flash_Attn", "flash-attn", "zope.interface", "a-_.-b", "A..B__C--D",
		"nvidia-cuda-nvcc-cu12", "NVIDIA.cuda-nvcc", "-lead", "trail_", "ÄÖ_ü", "İstanbul", "\u212Aelvin", "x\xffy", "a-\xc3"} {
		checkNormalizedIs(t, n)
	}
}

func FuzzNormalizedIs(f *testing.F) {
	for _, s := range []string{"Flash_Attn", "a-_.-b", "ÄÖ_ü", "\u212A", "x\xff-_y"} {
		f.Add(s)
	}
	f.Fuzz(checkNormalizedIs)
}
