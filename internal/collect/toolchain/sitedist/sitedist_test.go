package sitedist

import (
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

// pep503 is PEP 503's normalisation as the PEP writes it: a regular
// expression, then lower case. Normalize and normalizedIs must agree with it.
var pep503 = regexp.MustCompile(`[-_.]+`)

func checkNormalize(t *testing.T, name string) {
	want := strings.ToLower(pep503.ReplaceAllString(name, "-"))
	if got := Normalize(name); got != want {
		t.Errorf("Normalize(%q) = %q, want %q", name, got, want)
	}
	if !normalizedIs(name, want) {
		t.Errorf("normalizedIs(%q, %q) = false", name, want)
	}
	for _, other := range []string{want + "x", strings.TrimSuffix(want, "-"), "-" + want, strings.ToUpper(want)} {
		if other != want && normalizedIs(name, other) {
			t.Errorf("normalizedIs(%q, %q) = true", name, other)
		}
	}
}

func TestNormalize(t *testing.T) {
	for _, n := range []string{"", "-", "__", "torch", "Flash_Attn", "flash-attn", "zope.interface", "a-_.-b", "A..B__C--D",
		"nvidia-cuda-nvcc-cu12", "NVIDIA.cuda-nvcc", "-lead", "trail_", "ÄÖ_ü", "İstanbul", "\u212Aelvin", "x\xffy", "a-\xc3"} {
		checkNormalize(t, n)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"Flash_Attn", "a-_.-b", "ÄÖ_ü", "\u212A", "x\xff-_y"} {
		f.Add(s)
	}
	f.Fuzz(checkNormalize)
}
