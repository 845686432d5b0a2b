package imagesource_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"

	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/imagesource"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// writeLayout writes images into a new OCI layout folder, each under the
// ref.name annotation given ("" for none).
func writeLayout(t testing.TB, imgs map[string]v1.Image) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "oci")
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	for tag, img := range imgs {
		var opts []layout.Option
		if tag != "" {
			opts = append(opts, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag}))
		}
		if err := lp.AppendImage(img, opts...); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// F8: a gzip layer holding torch's libtorch_cuda.so with 300 MB of code
// before its fatbin is read in one pass: the torch collector's fatbin
// headers, the extension scan's dynamic section and everything else come
// from what that pass kept, and no layer is streamed twice.
func TestF8OnePassPerLayer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 300 MB gzip layer")
	}
	flat, _ := bigSeed(t, true)
	want := rootFacts(t, flat, fixture.SeedEnv)
	dir := writeLayout(t, map[string]v1.Image{"v1": bigImage(t, flat, false)})
	src := open(t, dir, imagesource.Options{})
	sameDiagnosis(t, want, src)
	st := src.Stats()
	t.Logf("stats: %+v", st)
	if st.LayerPasses != 2 || st.Rereads != 0 {
		t.Errorf("%d layer passes (%d re-reads) for 2 layers: a read missed what the pass kept", st.LayerPasses, st.Rereads)
	}
	if st.KeptBytes > 64<<20 {
		t.Errorf("kept %d bytes: more than the headers and small files", st.KeptBytes)
	}
}

// Issue 19: uv hard-links installed files to its cache, and a later layer
// deletes the cache. Overlayfs and `umoci unpack` keep the installed files
// (a link is a name of the same inode); so does the image source.
func TestUVHardLinkOutlivesDeletedTarget(t *testing.T) {
	site := fixture.Venv{Prefix: fixture.SeedVenv, Version: fixture.SeedPython}.SitePackages()
	cache := "root/.cache/uv/archive-v0/abc123"
	meta := "Metadata-Version: 2.1\nName: fla-core\nVersion: 0.6.0\n"
	l1 := layer(t, false, func(tw *tar.Writer) {
		addDir(t, tw, cache+"/fla_core-0.6.0.dist-info")
		addFile(t, tw, cache+"/fla_core-0.6.0.dist-info/METADATA", meta)
		addFile(t, tw, cache+"/fla/__init__.py", "__version__ = '0.6.0'\n")
		addDir(t, tw, strings.TrimPrefix(site, "/")+"/fla_core-0.6.0.dist-info")
		hardLinkTB(t, tw, strings.TrimPrefix(site, "/")+"/fla_core-0.6.0.dist-info/METADATA", cache+"/fla_core-0.6.0.dist-info/METADATA")
		// Across folders: the package file links into another tree.
		hardLinkTB(t, tw, strings.TrimPrefix(site, "/")+"/fla/__init__.py", cache+"/fla/__init__.py")
	})
	l2 := layer(t, false, func(tw *tar.Writer) { addWhiteout(t, tw, "/root/.cache") })
	dir := writeLayout(t, map[string]v1.Image{"": image(t, "linux/amd64", nil, l1, l2)})
	src := open(t, dir, imagesource.Options{})
	if w := src.Warnings(); len(w) > 0 {
		t.Errorf("warnings: %q", w)
	}
	if source.Exists(src, "/root/.cache/uv") {
		t.Error("the deleted cache is visible")
	}
	b, err := source.ReadFile(src, site+"/fla_core-0.6.0.dist-info/METADATA", 1<<20)
	if err != nil || string(b) != meta {
		t.Errorf("METADATA: %q, %v; want the linked content", b, err)
	}
	if st := src.Stats(); st.Rereads != 0 {
		t.Errorf("%d re-reads: the declared body behind the link was not kept in the pass", st.Rereads)
	}
	// A file no collector declared is still served, by streaming again.
	b, err = source.ReadFile(src, site+"/fla/__init__.py", 1<<20)
	if err != nil || string(b) != "__version__ = '0.6.0'\n" {
		t.Errorf("__init__.py: %q, %v; want the linked content", b, err)
	}
}

func hardLinkTB(t testing.TB, tw *tar.Writer, name, target string) {
	t.Helper()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeLink, Name: name, Linkname: target, Mode: 0o644, ModTime: epoch}); err != nil {
		t.Fatal(err)
	}
}

// A symlink chain whose links live in different layers resolves as the
// merged tree says, and a link replaced by a later layer takes the new
// target.
func TestSymlinkChainAcrossLayers(t *testing.T) {
	l1 := layer(t, false, func(tw *tar.Writer) {
		addDir(t, tw, "opt/cuda-12.8/bin")
		addFile(t, tw, "opt/cuda-12.8/bin/nvcc", "12.8")
		addDir(t, tw, "opt/cuda-13.0/bin")
		addFile(t, tw, "opt/cuda-13.0/bin/nvcc", "13.0")
		addLink(t, tw, "opt/cuda-cur", "cuda-12.8")
	})
	l2 := layer(t, true, func(tw *tar.Writer) {
		addDir(t, tw, "usr/local")
		addLink(t, tw, "usr/local/cuda", "/opt/cuda")
	})
	l3 := layer(t, false, func(tw *tar.Writer) {
		addLink(t, tw, "opt/cuda", "cuda-cur")
		addLink(t, tw, "opt/cuda-cur", "./cuda-13.0")
	})
	src := open(t, writeLayout(t, map[string]v1.Image{"": image(t, "linux/amd64", nil, l1, l2, l3)}), imagesource.Options{})
	b, err := source.ReadFile(src, "/usr/local/cuda/bin/nvcc", 64)
	if err != nil || string(b) != "13.0" {
		t.Errorf("/usr/local/cuda/bin/nvcc = %q, %v; want 13.0 through three links in three layers", b, err)
	}
	if r, err := src.Resolve("/usr/local/cuda/bin"); err != nil || r != "/opt/cuda-13.0/bin" {
		t.Errorf("Resolve = %q, %v", r, err)
	}
}

// Selection: LAYOUT:TAG, LAYOUT@sha256:…, an error naming the tags when a
// layout holds several and none is named, and real digests.
func TestLayoutTagDigestSelection(t *testing.T) {
	mk := func(version string) v1.Image {
		return image(t, "linux/amd64", nil, layer(t, false, func(tw *tar.Writer) {
			addDir(t, tw, "etc")
			addFile(t, tw, "etc/os-release", "ID=ubuntu\nVERSION_ID=\""+version+"\"\n")
		}))
	}
	a, b := mk("22.04"), mk("24.04")
	dir := writeLayout(t, map[string]v1.Image{"jammy": a, "noble": b})
	osr := func(src *imagesource.Source) string {
		t.Helper()
		bs, err := source.ReadFile(src, "/etc/os-release", 1024)
		if err != nil {
			t.Fatal(err)
		}
		return string(bs)
	}
	if got := osr(open(t, dir+":noble", imagesource.Options{})); !strings.Contains(got, "24.04") {
		t.Errorf(":noble read %q", got)
	}
	md, _ := a.Digest()
	cd, _ := a.ConfigName()
	src := open(t, dir+"@"+md.String(), imagesource.Options{})
	if got := osr(src); !strings.Contains(got, "22.04") {
		t.Errorf("@digest read %q", got)
	}
	if info := src.Info(); info.Digest != md.String() || info.ImageID != cd.String() {
		t.Errorf("Info digests = %q / %q, want manifest %s, config %s", info.Digest, info.ImageID, md, cd)
	}
	_, err := imagesource.Open(context.Background(), dir, imagesource.Options{})
	if err == nil || !strings.Contains(err.Error(), "jammy") || !strings.Contains(err.Error(), "noble") {
		t.Errorf("a layout of two tags opened without one named: %v", err)
	}
	if _, err := imagesource.Open(context.Background(), dir+":focal", imagesource.Options{}); err == nil || !strings.Contains(err.Error(), `no image tagged "focal"`) {
		t.Errorf(":focal: %v", err)
	}
}

// A docker-save archive of several images: ARCHIVE:TAG picks one; its
// image ID is the config digest; the layers are taken in manifest.json's
// order even when the archive stores them in another.
func TestDockerArchiveTagAndLayerOrder(t *testing.T) {
	lower := layer(t, true, func(tw *tar.Writer) {
		addDir(t, tw, "etc")
		addFile(t, tw, "etc/os-release", "VERSION_ID=\"22.04\"\n")
	})
	upper := layer(t, true, func(tw *tar.Writer) {
		addDir(t, tw, "etc")
		addFile(t, tw, "etc/os-release", "VERSION_ID=\"24.04\"\n")
	})
	img := image(t, "linux/amd64", nil, lower, upper)
	other := image(t, "linux/amd64", nil, lower)
	dir := t.TempDir()
	archive := filepath.Join(dir, "two.tar")
	t1, _ := name.NewTag("train/seed:v1")
	t2, _ := name.NewTag("train/base:v0")
	if err := tarball.MultiRefWriteToFile(archive, map[name.Reference]v1.Image{t1: img, t2: other}); err != nil {
		t.Fatal(err)
	}
	reversed := reverseMembers(t, archive)
	for _, p := range []string{archive, reversed} {
		src := open(t, p+":train/seed:v1", imagesource.Options{})
		b, err := source.ReadFile(src, "/etc/os-release", 64)
		if err != nil || !strings.Contains(string(b), "24.04") {
			t.Errorf("%s: os-release %q, %v: the upper layer must win", filepath.Base(p), b, err)
		}
		cd, _ := img.ConfigName()
		if info := src.Info(); info.ImageID != cd.String() || info.Digest != "" {
			t.Errorf("%s: Info = %+v; want image ID %s and no manifest digest (the archive has none)", filepath.Base(p), info, cd)
		}
	}
	if src := open(t, archive+":v0", imagesource.Options{}); !strings.HasPrefix(src.Info().ImageID, "sha256:") {
		t.Errorf(":v0 Info = %+v", src.Info())
	}
	if _, err := imagesource.Open(context.Background(), archive, imagesource.Options{}); err == nil || !strings.Contains(err.Error(), "ARCHIVE:TAG") {
		t.Errorf("two images, none named: %v", err)
	}
}

// reverseMembers rewrites a tar archive with its members in reverse order.
func reverseMembers(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type member struct {
		h    *tar.Header
		body []byte
	}
	var ms []member
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		b := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, b); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, member{h, b})
	}
	out := p + ".reversed.tar"
	g, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(g)
	for i := len(ms) - 1; i >= 0; i-- {
		tw.WriteHeader(ms[i].h)
		tw.Write(ms[i].body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	g.Close()
	return out
}

// Platform matching as containerd does it: a variant is optional, so an
// arm64 manifest without one (as buildah writes it) serves linux/arm64/v8.
func TestPlatformVariantOptional(t *testing.T) {
	base := image(t, "linux/amd64", nil, layer(t, false, func(tw *tar.Writer) { addFile(t, tw, "x", "x") }))
	cf, _ := base.ConfigFile()
	cf = cf.DeepCopy()
	cf.Architecture = "arm64"
	arm, err := mutate.ConfigFile(base, cf)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: base, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}},
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
	)
	dir := filepath.Join(t.TempDir(), "oci")
	if _, err := layout.Write(dir, idx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"linux/arm64", "linux/arm64/v8", "linux/aarch64"} {
		src, err := imagesource.Open(context.Background(), dir, imagesource.Options{Platform: p})
		if err != nil {
			t.Errorf("--platform %s: %v", p, err)
			continue
		}
		if got := src.Info().Platform; got != "linux/arm64" {
			t.Errorf("--platform %s picked %s", p, got)
		}
	}
	if _, err := imagesource.Open(context.Background(), dir, imagesource.Options{Platform: "linux/arm64/v7"}); err == nil {
		t.Error("linux/arm64/v7 matched an arm64 (v8) image")
	}
	if src := open(t, dir, imagesource.Options{}); src.Info().Platform != "linux/amd64" {
		t.Errorf("default platform picked %s", src.Info().Platform)
	}
}

// Issue 11: a registry that accepts connections and never answers gives an
// error within the timeout, and the command's context cancels the wait.
func TestRegistryNeverAnswersTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	ref := ln.Addr().String() + "/silent/image:v1"
	start := time.Now()
	_, err = imagesource.Open(context.Background(), ref, imagesource.Options{Timeout: 500 * time.Millisecond})
	if err == nil {
		t.Fatal("opened an image from a registry that never answers")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v to give up with a 500 ms timeout", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = imagesource.Open(ctx, ref, imagesource.Options{Timeout: time.Hour})
	if err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("a cancelled context did not stop the wait: %v after %v", err, time.Since(start))
	}
}

// Issue 11: a mistyped path fails locally; it never becomes a registry
// reference (Docker Hub, with the keychain's credentials).
func TestMistypedImagePathFailsLocally(t *testing.T) {
	kc := keychainFunc(func(r string) { t.Errorf("the keychain was asked for %s", r) })
	for _, ref := range []string{"./missing.tar", "missing.tar", "missing.tar.gz", "/no/such/layout", "../oci:v1", "~/img.tar", "missing.tar:v1"} {
		_, err := imagesource.Open(context.Background(), ref, imagesource.Options{Keychain: kc, Timeout: time.Second})
		if err == nil || !strings.Contains(err.Error(), "no such file or folder") {
			t.Errorf("--image %s: %v; want a local error", ref, err)
		}
	}
}

// F2: folders implied by entries count against the index's cap, an index
// that references one nested index thousands of times costs one read and
// a short error, and many long names keep memory and warnings bounded.
func TestF2IndexReferencedManyTimes(t *testing.T) {
	img := image(t, "linux/amd64", nil, layer(t, false, func(tw *tar.Writer) { addFile(t, tw, "x", "x") }))
	inner := mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img})
	dir := filepath.Join(t.TempDir(), "oci")
	lp, err := layout.Write(dir, inner)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := inner.Digest()
	mt, _ := inner.MediaType()
	var descs []map[string]any
	for i := 0; i < 3000; i++ {
		descs = append(descs, map[string]any{"mediaType": string(mt), "digest": d.String(), "size": 1,
			"annotations": map[string]string{"org.opencontainers.image.ref.name": fmt.Sprintf("t%d-%s", i, strings.Repeat("x", 10000))}})
	}
	b, _ := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": descs})
	if err := os.WriteFile(filepath.Join(string(lp), "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = imagesource.Open(context.Background(), dir, imagesource.Options{})
	if err == nil {
		t.Fatal("opened a layout listing 3,000 images without a tag")
	}
	if len(err.Error()) > 4096 {
		t.Errorf("error of %d bytes", len(err.Error()))
	}
	src, err := imagesource.Open(context.Background(), dir+":t7-"+strings.Repeat("x", 10000), imagesource.Options{})
	if err != nil && !strings.Contains(err.Error(), "more than") {
		t.Errorf("by tag: %v", err)
	}
	_ = src
}

func TestF2ImpliedFoldersCapped(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2M entries")
	}
	// Each entry implies 64 new folders: the cap must count them.
	l := fastGzipLayer(t, func(tw *tar.Writer) {
		for i := 0; i < 20000; i++ {
			p := fmt.Sprintf("d%d", i)
			for j := 0; j < 63; j++ {
				p += fmt.Sprintf("/%d", j)
			}
			addFile(t, tw, p+"/f", "")
		}
	})
	src := open(t, writeLayout(t, map[string]v1.Image{"": image(t, "linux/amd64", nil, l)}), imagesource.Options{})
	if n := src.Files(); n > 1<<20+64 {
		t.Errorf("%d paths indexed: implied folders escape the cap", n)
	}
	if w := src.Warnings(); len(w) == 0 || !strings.Contains(strings.Join(w, "\n"), "the index stops here") {
		t.Errorf("no cap warning: %q", w)
	}
}

func TestF2LongNamesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100,000 entries of 4 KB names")
	}
	l := fastGzipLayer(t, func(tw *tar.Writer) {
		for i := 0; i < 100000; i++ {
			n := fmt.Sprintf("%08d", i) + strings.Repeat("n", 4000)
			if i%2 == 0 {
				n += "/../../" + n // refused: climbs out
			}
			addFile(t, tw, n, "")
		}
	})
	src := open(t, writeLayout(t, map[string]v1.Image{"": image(t, "linux/amd64", nil, l)}), imagesource.Options{})
	if n := src.Files(); n > 64<<20/4000+10 {
		t.Errorf("%d paths of 4 KB indexed: the name cap does not hold", n)
	}
	w := src.Warnings()
	if len(w) > 201 {
		t.Errorf("%d warnings kept", len(w))
	}
	total := 0
	for _, x := range w {
		total += len(x)
	}
	if total > 200*200 {
		t.Errorf("%d bytes of warnings", total)
	}
}

type keychainFunc func(string)

func (k keychainFunc) Resolve(_ context.Context, registry string) (imagesource.Credentials, error) {
	k(registry)
	return imagesource.Credentials{}, errors.New("no credentials in tests")
}

// fastGzipLayer is a gzip layer compressed once, fast: for tests of many
// entries, where go-containerregistry's own layers would compress the
// tar again for every digest asked.
func fastGzipLayer(t testing.TB, fill func(tw *tar.Writer)) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	fill(tw)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return static.NewLayer(buf.Bytes(), types.OCILayer)
}

// F5: a FIFO planted in an OCI layout (as index.json, as the manifest's
// blob, as a layer's blob) is refused as "not a regular file" instead of
// blocking the open forever: the layout folder is untrusted input.
func TestF5LayoutFIFOsRefused(t *testing.T) {
	img := image(t, "linux/amd64", nil, layer(t, false, func(tw *tar.Writer) {
		addDir(t, tw, "etc")
		addFile(t, tw, "etc/os-release", "ID=ubuntu\nVERSION_ID=\"24.04\"\n")
	}))
	md, _ := img.Digest()
	ls, err := img.Layers()
	if err != nil || len(ls) != 1 {
		t.Fatalf("layers: %v", err)
	}
	ld, _ := ls[0].Digest()
	blob := func(d fmt.Stringer) string {
		alg, hexd, _ := strings.Cut(d.String(), ":")
		return filepath.Join("blobs", alg, hexd)
	}
	for _, planted := range []string{"index.json", blob(md), blob(ld)} {
		t.Run(planted, func(t *testing.T) {
			dir := writeLayout(t, map[string]v1.Image{"noble": img})
			p := filepath.Join(dir, planted)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			src, err := imagesource.Open(context.Background(), dir+":noble", imagesource.Options{})
			if err == nil {
				// A layer is opened when the tree is read.
				_, err = source.ReadFile(src, "/etc/os-release", 1024)
			}
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("a FIFO as %s: %v; want \"not a regular file\"", planted, err)
			}
		})
	}
}

// A layout's index, manifest or config blob whose bytes do not hash to its
// digest (here the manifest's blob is a link to another JSON file in the
// layout; links out of it are refused earlier, TestF12LayoutBlobLinksToHostRefused)
// is refused, not read as the image's manifest.
func TestLayoutBlobMustMatchItsDigest(t *testing.T) {
	img := image(t, "linux/amd64", nil, layer(t, false, func(tw *tar.Writer) {
		addDir(t, tw, "etc")
	}))
	md, _ := img.Digest()
	dir := writeLayout(t, map[string]v1.Image{"noble": img})
	alg, hexd, _ := strings.Cut(md.String(), ":")
	p := filepath.Join(dir, "blobs", alg, hexd)
	outside := filepath.Join(dir, "other.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// The same manifest with one byte more: valid JSON, another digest.
	if err := os.WriteFile(outside, append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../other.json", p); err != nil {
		t.Fatal(err)
	}
	_, err = imagesource.Open(context.Background(), dir+":noble", imagesource.Options{})
	if err == nil || !strings.Contains(err.Error(), "hash to") {
		t.Errorf("a manifest blob that is not its digest: %v; want it refused", err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := imagesource.Open(context.Background(), dir+":noble", imagesource.Options{}); err != nil {
		t.Errorf("the untouched layout: %v", err)
	}
}

// nestedIndexes is three index documents: top names mid 3,000 times, mid
// names leaf 3,000 times, and leaf names nothing. Each nested index is read
// once, but a walk that only cached reads would still take 9 million steps.
func nestedIndexes(t *testing.T) (top, mid, leaf []byte, midDigest, leafDigest string) {
	t.Helper()
	const n = 3000
	const indexType = "application/vnd.oci.image.index.v1+json"
	doc := func(digest string) []byte {
		descs := []map[string]any{}
		for range n {
			if digest != "" {
				descs = append(descs, map[string]any{"mediaType": indexType, "digest": digest, "size": 1})
			}
		}
		if digest == "" {
			descs = nil
		}
		b, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": indexType, "manifests": descs})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sum := func(b []byte) string { h := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(h[:]) }
	leaf = doc("")
	leafDigest = sum(leaf)
	mid = doc(leafDigest)
	midDigest = sum(mid)
	top = doc(midDigest)
	return top, mid, leaf, midDigest, leafDigest
}

// F2, through a layout: an index that names a nested index thousands of
// times, which names another thousands of times, fails with a short error
// at the walk's cap instead of walking for millions of steps.
func TestF2NestedIndexRepeatsCapped(t *testing.T) {
	top, mid, leaf, midDigest, leafDigest := nestedIndexes(t)
	dir := t.TempDir()
	for d, b := range map[string][]byte{midDigest: mid, leafDigest: leaf} {
		p := filepath.Join(dir, "blobs", "sha256", strings.TrimPrefix(d, "sha256:"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), top, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := imagesource.Open(context.Background(), dir, imagesource.Options{})
	if err == nil || !strings.Contains(err.Error(), "more than 4096 entries") {
		t.Fatalf("err = %v; want the walk's cap", err)
	}
}

// F2, through a registry: the same indexes served by a registry cost one
// request per distinct index, and the same short error.
func TestF2RegistryNestedIndexRepeatsCapped(t *testing.T) {
	top, mid, leaf, midDigest, leafDigest := nestedIndexes(t)
	var mu sync.Mutex
	gets := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets[r.URL.Path]++
		mu.Unlock()
		body := map[string][]byte{
			"/v2/hostile/manifests/latest":        top,
			"/v2/hostile/manifests/" + midDigest:  mid,
			"/v2/hostile/manifests/" + leafDigest: leaf,
		}[r.URL.Path]
		if body == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/hostile:latest"
	_, err := imagesource.Open(context.Background(), ref, imagesource.Options{Timeout: 10 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "more than 4096 entries") {
		t.Fatalf("err = %v; want the walk's cap", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for p, n := range gets {
		if n > 1 {
			t.Errorf("%s fetched %d times", p, n)
		}
	}
	if len(gets) > 3 {
		t.Errorf("%d paths fetched: %v", len(gets), gets)
	}
}
