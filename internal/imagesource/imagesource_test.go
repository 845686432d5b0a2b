package imagesource_test

import (
	"archive/tar"
	"context"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/imagesource"
	"github.com/fastpath-dev/fastpath/internal/source"
)

func push(t testing.TB, rs *registryServer, repo string, img v1.Image) string {
	t.Helper()
	ref := rs.host + "/" + repo
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
	return ref
}

func open(t testing.TB, ref string, o imagesource.Options) *imagesource.Source {
	t.Helper()
	if o.Needs == nil {
		o.Needs = collect.Needs
	}
	src, err := imagesource.Open(context.Background(), ref, o)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

type verdict struct {
	ID       finding.ID
	Severity finding.Severity
}

func verdicts(fs []finding.Finding) []verdict {
	var out []verdict
	for _, f := range fs {
		out = append(out, verdict{f.ID, f.Severity})
	}
	return out
}

// sameDiagnosis checks that the image gives the facts and findings the
// flattened tree gives under --root: everything but where it was read from.
func sameDiagnosis(t *testing.T, want *facts.Facts, src *imagesource.Source) {
	t.Helper()
	if w := src.Warnings(); len(w) > 0 {
		t.Errorf("image warnings: %q", w)
	}
	got := collectFacts(t, src)
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(facts.Facts{}, "Source"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("facts differ from --root's (-root +image):\n%s", diff)
	}
	wf, gf := diagnose.Run(want), diagnose.Run(got)
	if diff := cmp.Diff(verdicts(wf), verdicts(gf)); diff != "" {
		t.Errorf("verdicts differ (-root +image):\n%s", diff)
	}
	if diff := cmp.Diff(wf, gf, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("findings differ (-root +image):\n%s", diff)
	}
	if len(wf) == 0 {
		t.Error("the seed gave no findings: the comparison proves nothing")
	}
}

func TestRegistryImageDiagnosedLikeFlattenedRoot(t *testing.T) {
	flat, lower, top := seedLayers(t)
	want := rootFacts(t, flat, fixture.SeedEnv)
	rs := newRegistry(t)
	ref := push(t, rs, "train/seed:v1", image(t, "linux/amd64", fixture.SeedEnv, append(lower, top...)...))

	src := open(t, ref, imagesource.Options{})
	sameDiagnosis(t, want, src)

	info := src.Info()
	if info.Kind != source.KindImage || info.Image != ref || !strings.HasPrefix(info.Digest, "sha256:") || info.Platform != "linux/amd64" || info.Live {
		t.Errorf("Info = %+v", info)
	}
	if _, err := src.Exec(context.Background(), "/usr/bin/dash"); err != source.ErrNotLive {
		t.Errorf("Exec: %v, want ErrNotLive", err)
	}
	if got := src.Env().Get("VIRTUAL_ENV"); got != fixture.SeedVenv {
		t.Errorf("VIRTUAL_ENV from the config = %q", got)
	}
	st := src.Stats()
	t.Logf("seed image: %d files, %d bytes from the registry, %d layer passes, %d ranged reads", src.Files(), rs.sent.Load(), st.LayerPasses, st.RangeReads)
	if st.RangeReads == 0 {
		t.Error("the raw layer was not read by range")
	}
}

// The lower layers alone hold what the top layer deletes: without the
// whiteouts and the opaque folder honoured, the verdicts would differ.
func TestWhiteoutsAndOpaqueFoldersHide(t *testing.T) {
	_, lower, top := seedLayers(t)
	rs := newRegistry(t)
	site := fixture.Venv{Prefix: fixture.SeedVenv, Version: fixture.SeedPython}.SitePackages()
	hiddenPaths := []string{
		path.Join(site, "causal_conv1d-1.5.0.dist-info/METADATA"),
		path.Join(site, "causal_conv1d/__init__.py"),
		"/usr/local/cuda-12.4/bin/nvcc",
		"/usr/local/cuda/bin/nvcc",
	}
	below := open(t, push(t, rs, "train/lower:v1", image(t, "linux/amd64", fixture.SeedEnv, lower...)), imagesource.Options{})
	full := open(t, push(t, rs, "train/full:v1", image(t, "linux/amd64", fixture.SeedEnv, append(lower, top...)...)), imagesource.Options{})
	for _, p := range hiddenPaths {
		if !source.Exists(below, p) {
			t.Errorf("lower layers: %s missing (the fixture is wrong)", p)
		}
		if source.Exists(full, p) {
			t.Errorf("full image: %s visible through a whiteout or opaque folder", p)
		}
	}
	// What the top layer re-adds under the opaque folder stays.
	if !source.IsDir(full, "/usr/local/bin") {
		t.Error("/usr/local/bin lost")
	}
	osr, err := source.ReadFile(full, "/etc/os-release", 4096)
	if err != nil || !strings.Contains(string(osr), `VERSION_ID="24.04"`) {
		t.Errorf("top layer's os-release not the one read: %q, %v", osr, err)
	}
	// The site-packages listing merges layers 2 and 3 minus the deleted.
	ents, err := full.ReadDir(site)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "causal_conv1d") || strings.HasPrefix(e.Name(), ".wh.") {
			t.Errorf("ReadDir shows %s", e.Name())
		}
	}
	fb, ff := collectFacts(t, below), collectFacts(t, full)
	if diff := cmp.Diff(verdicts(diagnose.Run(fb)), verdicts(diagnose.Run(ff))); diff == "" {
		t.Error("the lower layers give the same verdicts: the whiteouts are not tested")
	}
}

func TestDockerSaveArchiveAndOCILayout(t *testing.T) {
	flat, lower, top := seedLayers(t)
	want := rootFacts(t, flat, fixture.SeedEnv)
	img := image(t, "linux/amd64", fixture.SeedEnv, append(lower, top...)...)
	dir := t.TempDir()

	archive := filepath.Join(dir, "seed.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("train/seed:v1")
	if err := tarball.Write(tag, img, f); err != nil {
		t.Fatal(err)
	}
	f.Close()

	oci := filepath.Join(dir, "oci")
	lp, err := layout.Write(oci, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(img); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{archive, oci} {
		t.Run(filepath.Base(ref), func(t *testing.T) {
			src := open(t, ref, imagesource.Options{})
			sameDiagnosis(t, want, src)
			if src.Info().Image != ref {
				t.Errorf("Info.Image = %q", src.Info().Image)
			}
		})
	}
}

func TestPlatformFromMultiPlatformIndex(t *testing.T) {
	rs := newRegistry(t)
	var idx v1.ImageIndex = empty.Index
	for _, p := range []struct{ plat, version string }{{"linux/amd64", "24.04"}, {"linux/arm64", "22.04"}} {
		dir := t.TempDir()
		fixture.New(dir).OSRelease("ubuntu", p.version, "Ubuntu "+p.version)
		img := image(t, p.plat, nil, layer(t, false, func(tw *tar.Writer) { tarDir(t, tw, dir, all) }))
		pl, _ := v1.ParsePlatform(p.plat)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: pl}})
	}
	r, _ := name.ParseReference(rs.host + "/multi/os:v1")
	if err := remote.WriteIndex(r, idx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ platform, wantVersion, wantPlatform string }{
		{"", "24.04", "linux/amd64"},
		{"linux/amd64", "24.04", "linux/amd64"},
		{"linux/arm64", "22.04", "linux/arm64"},
	} {
		src := open(t, r.String(), imagesource.Options{Platform: tc.platform})
		b, err := source.ReadFile(src, "/etc/os-release", 4096)
		if err != nil || !strings.Contains(string(b), `VERSION_ID="`+tc.wantVersion+`"`) {
			t.Errorf("--platform %q: os-release %q, %v", tc.platform, b, err)
		}
		if got := src.Info().Platform; got != tc.wantPlatform {
			t.Errorf("--platform %q: Info.Platform %q", tc.platform, got)
		}
		if got := src.Env().Get("PATH"); got != source.DefaultContainerPATH {
			t.Errorf("no PATH in the config: PATH = %q", got)
		}
	}
	_, err := imagesource.Open(context.Background(), r.String(), imagesource.Options{Platform: "linux/s390x"})
	if err == nil || !strings.Contains(err.Error(), "linux/amd64, linux/arm64") {
		t.Errorf("--platform linux/s390x: %v, want an error naming the platforms there", err)
	}
}

func TestEnvOverridesConfig(t *testing.T) {
	rs := newRegistry(t)
	dir := t.TempDir()
	fixture.New(dir).OSRelease("ubuntu", "24.04", "Ubuntu 24.04")
	img := image(t, "linux/amd64", []string{"PATH=/opt/conda/bin:/usr/bin", "CUDA_HOME=/usr/local/cuda"}, layer(t, false, func(tw *tar.Writer) { tarDir(t, tw, dir, all) }))
	src := open(t, push(t, rs, "env/x:v1", img), imagesource.Options{Env: source.Env{"CUDA_HOME": "/opt/cuda"}})
	if got := src.Env(); got.Get("PATH") != "/opt/conda/bin:/usr/bin" || got.Get("CUDA_HOME") != "/opt/cuda" || got.Get("HOME") != "/root" {
		t.Errorf("Env = %v", got)
	}
}
