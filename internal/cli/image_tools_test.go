package cli

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// The image kinds TestToolsImagesMatchUnpackedRoot builds, each at least
// 300 MB, and the tag each has in the one OCI layout that holds them.
var toolImageKinds = []string{"gzip", "zstd", "uncompressed", "docker-archive", "whiteouts", "uv-hardlinks"}

// bigLibSize is the incompressible code in front of libtorch_cuda.so's
// fatbin: the image is at least this big, and every layer pass pays it.
const bigLibSize = 300 << 20

// TestToolsImagesMatchUnpackedRoot builds real images with the standard
// tools' formats (OCI layouts written here, a docker-archive by skopeo),
// unpacks each with umoci, and checks that `facts` and `doctor` on the
// image (--image) print the same JSON as on the unpacked tree (--root),
// but for the source block. The zstd, uncompressed and docker-archive
// images hold the same layer tars (the same diff IDs) as the gzip one, and
// are compared with its unpacked tree: umoci 0.4 cannot unpack zstd, and
// each unpack costs CI time.
//
// FASTPATH_IMAGE_KEEP=DIR keeps the images and unpacked trees in DIR for
// scripts/bench-image.sh.
func TestToolsImagesMatchUnpackedRoot(t *testing.T) {
	if testing.Short() {
		// Builds 300 MB images and unpacks them with umoci: minutes on a
		// loaded 2-core machine. The full run (CI's second step) keeps it.
		t.Skip("builds and unpacks 300 MB images: not under -short")
	}
	for _, tool := range []string{"umoci", "skopeo"} {
		if _, err := exec.LookPath(tool); err != nil {
			if testing.Short() {
				t.Skipf("%s not installed (.ci/run installs it)", tool)
			}
			t.Fatalf("%s not installed (apt-get install umoci skopeo)", tool)
		}
	}
	work := os.Getenv("FASTPATH_IMAGE_KEEP")
	if work == "" {
		work = t.TempDir()
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tree := filepath.Join(work, "tree")
	os.RemoveAll(tree)
	buildRealisticTree(t, tree)
	oci := filepath.Join(work, "oci")
	os.RemoveAll(oci)
	buildToolImages(t, tree, oci)
	archive := filepath.Join(work, "image-docker-archive.tar")
	os.Remove(archive)
	run(t, "skopeo", "copy", "--quiet", "oci:"+oci+":gzip", "docker-archive:"+archive+":fastpath/test:gzip")
	t.Logf("images built in %v", time.Since(start).Round(time.Millisecond))

	unpacked := map[string]string{}
	for _, tag := range []string{"gzip", "whiteouts", "uv-hardlinks"} {
		bundle := filepath.Join(work, "unpacked-"+tag)
		os.RemoveAll(bundle)
		t0 := time.Now()
		run(t, "umoci", "unpack", "--rootless", "--image", oci+":"+tag, bundle)
		t.Logf("umoci unpack %s: %v", tag, time.Since(t0).Round(time.Millisecond))
		unpacked[tag] = filepath.Join(bundle, "rootfs")
	}
	// The same layer tars as gzip's (the same diff IDs): the same tree.
	unpacked["zstd"] = unpacked["gzip"]
	unpacked["uncompressed"] = unpacked["gzip"]
	unpacked["docker-archive"] = unpacked["gzip"]

	var envFlags []string
	for _, e := range fixture.SeedEnv {
		envFlags = append(envFlags, "--env", e)
	}
	identical, total := 0, 0
	for _, kind := range toolImageKinds {
		ref := oci + ":" + kind
		if kind == "docker-archive" {
			ref = archive
		}
		for _, cmd := range []string{"facts", "doctor"} {
			total++
			t0 := time.Now()
			img := runJSON(t, cmd, "--gpu", "12.0", "--image", ref)
			ti := time.Since(t0)
			t0 = time.Now()
			root := runJSON(t, append([]string{cmd, "--gpu", "12.0", "--root", unpacked[kind]}, envFlags...)...)
			tr := time.Since(t0)
			if diff := cmp.Diff(withoutSource(root), withoutSource(img)); diff != "" {
				t.Errorf("%s %s: --image differs from --root on the unpacked tree (-root +image):\n%s", cmd, kind, diff)
				continue
			}
			identical++
			t.Logf("%-7s %-15s identical (--image %v, --root %v)", cmd, kind, ti.Round(time.Millisecond), tr.Round(time.Millisecond))
		}
	}
	fmt.Printf("image kinds against umoci unpack: %d of %d identical\n", identical, total)
	if identical != total {
		t.Errorf("%d of %d identical", identical, total)
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// runJSON runs fastpath CMD ARGS in process (doctor with --json; facts
// prints JSON only) and decodes its output.
func runJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	var out, errb bytes.Buffer
	if args[0] == "doctor" {
		args = append(args, "--json")
	}
	code := Main(args, strings.NewReader(""), &out, &errb)
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("fastpath %v: exit %d\n%s", args, code, errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("fastpath %v: %v\n%s", args, err, out.String())
	}
	return doc
}

// withoutSource drops where the facts were read from (kind, root, image,
// digests), at the top of `facts` and inside doctor's facts.
func withoutSource(doc map[string]any) map[string]any {
	delete(doc, "source")
	if f, ok := doc["facts"].(map[string]any); ok {
		delete(f, "source")
	}
	return doc
}

// buildRealisticTree is the seed container (a venv with torch and its
// dist-info, Ubuntu's os-release, Python headers, gcc) with this machine's
// real libc where it has one, and torch's libtorch_cuda.so grown to 300 MB
// of incompressible code in front of its fatbin.
func buildRealisticTree(t *testing.T, root string) {
	t.Helper()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	for _, libc := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"} {
		if b, err := os.ReadFile(libc); err == nil {
			if err := os.WriteFile(filepath.Join(root, "usr/lib/x86_64-linux-gnu/libc.so.6"), b, 0o755); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	site := fixture.Venv{Prefix: fixture.SeedVenv, Version: fixture.SeedPython}.SitePackages()
	lib := path.Join(site, "torch/lib/libtorch_cuda.so")
	cs, err := fixture.TorchFatbinContainers(3, "sm_80", "sm_90", "sm_100", "sm_120")
	if err != nil {
		t.Fatal(err)
	}
	fat, err := fixture.SparseFatbinSection(cs)
	if err != nil {
		t.Fatal(err)
	}
	ft := fixture.New(root)
	ft.SparseELF(lib, []fixture.ELFSection{{Name: ".text", Size: bigLibSize}, fat})
	if err := ft.Err(); err != nil {
		t.Fatal(err)
	}
	h := filepath.Join(root, lib)
	ef, err := elf.Open(h)
	if err != nil {
		t.Fatal(err)
	}
	text := ef.Section(".text")
	ef.Close()
	// Fill .text with real machine code: this machine's shared libraries
	// and programs, one after another (pseudo-random bytes where there are
	// too few), so compressors work as hard as on a real torch library.
	f, err := os.OpenFile(h, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fill := realCode()
	if _, err := io.Copy(io.NewOffsetWriter(f, int64(text.Offset)), io.LimitReader(fill, int64(text.Size))); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// layerFile is one layer blob written into the layout.
type layerFile struct {
	mediaType, digest, diffID string
	size                      int64
}

type compression int

const (
	compressNone compression = iota
	compressGzip
	compressZstd
)

// writeLayer writes the tar that fill produces into blobs/sha256 of the
// layout, compressed as asked, and returns its descriptor facts.
func writeLayer(t *testing.T, oci string, c compression, fill func(tw *tar.Writer)) layerFile {
	t.Helper()
	tmp, err := os.CreateTemp(filepath.Join(oci, "blobs", "sha256"), "layer-")
	if err != nil {
		t.Fatal(err)
	}
	blobHash := sha256.New()
	counter := &countWriter{}
	var sink io.Writer = io.MultiWriter(tmp, blobHash, counter)
	var zc io.WriteCloser
	mt := "application/vnd.oci.image.layer.v1.tar"
	switch c {
	case compressGzip:
		zc, _ = gzip.NewWriterLevel(sink, gzip.DefaultCompression)
		mt += "+gzip"
	case compressZstd:
		zc, _ = zstd.NewWriter(sink, zstd.WithEncoderLevel(zstd.SpeedFastest))
		mt += "+zstd"
	}
	diff := sha256.New()
	var tarOut io.Writer = sink
	if zc != nil {
		tarOut = zc
	}
	tw := tar.NewWriter(io.MultiWriter(tarOut, diff))
	fill(tw)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zc != nil {
		if err := zc.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	d := hexSum(blobHash)
	if err := os.Rename(tmp.Name(), filepath.Join(oci, "blobs", "sha256", d)); err != nil {
		t.Fatal(err)
	}
	return layerFile{mediaType: mt, digest: "sha256:" + d, diffID: "sha256:" + hexSum(diff), size: counter.n}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

func writeBlob(t *testing.T, oci string, b []byte) string {
	t.Helper()
	sum := sha256.Sum256(b)
	d := hex.EncodeToString(sum[:])
	if err := os.WriteFile(filepath.Join(oci, "blobs", "sha256", d), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return "sha256:" + d
}

// treeEntry is one path of a host tree, as a tar writer needs it.
type treeEntry struct {
	p  string // in-image path, no leading slash
	fi fs.FileInfo
	h  string // host path
}

func listTree(t *testing.T, root string, keep func(p string) bool) []treeEntry {
	t.Helper()
	var out []treeEntry
	err := filepath.WalkDir(root, func(h string, d fs.DirEntry, err error) error {
		if err != nil || h == root {
			return err
		}
		rel, _ := filepath.Rel(root, h)
		p := filepath.ToSlash(rel)
		if !keep("/" + p) {
			return nil
		}
		fi, err := os.Lstat(h)
		if err != nil {
			return err
		}
		out = append(out, treeEntry{p: p, fi: fi, h: h})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].p < out[j].p })
	return out
}

// writeEntry writes e under the name p (e.p unless renamed).
func writeEntry(t *testing.T, tw *tar.Writer, e treeEntry, p string) {
	t.Helper()
	hdr := &tar.Header{Name: p, Mode: int64(e.fi.Mode().Perm()), ModTime: time.Unix(1735689600, 0), Format: tar.FormatPAX}
	switch {
	case e.fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(e.h)
		hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
	case e.fi.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, p+"/"
	default:
		hdr.Typeflag, hdr.Size = tar.TypeReg, e.fi.Size()
	}
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.Typeflag == tar.TypeReg {
		f, err := os.Open(e.h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

func writeFileEntry(t *testing.T, tw *tar.Writer, name, body string) {
	t.Helper()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(1735689600, 0)}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(tw, body)
}

// buildToolImages writes the image kinds into one OCI layout, each under
// its tag:
//
//	gzip, zstd, uncompressed: the OS layer and the venv layer
//	whiteouts: gzip, plus a layer that deletes ninja and a distribution,
//	  makes /usr/local opaque and adds a file there
//	uv-hardlinks: the OS layer; a layer where uv's cache holds every file
//	  of site-packages and the venv hard-links to it; a layer that deletes
//	  the cache (rm -rf /root/.cache)
func buildToolImages(t *testing.T, tree, oci string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(oci, "blobs", "sha256"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(oci, "oci-layout"), []byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644)
	inVenv := func(p string) bool { return p == fixture.SeedVenv || strings.HasPrefix(p, fixture.SeedVenv+"/") }
	// The venv's parents belong to the OS layer.
	osLayer := func(tw *tar.Writer) {
		for _, e := range listTree(t, tree, func(p string) bool { return !inVenv(p) }) {
			writeEntry(t, tw, e, e.p)
		}
	}
	venvLayer := func(tw *tar.Writer) {
		for _, e := range listTree(t, tree, inVenv) {
			writeEntry(t, tw, e, e.p)
		}
	}
	layers := map[string][]layerFile{}
	for _, c := range []struct {
		tag string
		c   compression
	}{{"gzip", compressGzip}, {"zstd", compressZstd}, {"uncompressed", compressNone}} {
		layers[c.tag] = []layerFile{writeLayer(t, oci, c.c, osLayer), writeLayer(t, oci, c.c, venvLayer)}
	}
	site := fixture.Venv{Prefix: fixture.SeedVenv, Version: fixture.SeedPython}.SitePackages()
	dists, _ := filepath.Glob(filepath.Join(tree, site, "*.dist-info"))
	sort.Strings(dists)
	var victim string
	for _, d := range dists {
		if !strings.Contains(filepath.Base(d), "torch") {
			victim = path.Join(site, filepath.Base(d))
			break
		}
	}
	layers["whiteouts"] = append(append([]layerFile{}, layers["gzip"]...), writeLayer(t, oci, compressGzip, func(tw *tar.Writer) {
		writeFileEntry(t, tw, strings.TrimPrefix(path.Join(fixture.SeedVenv, "bin", ".wh.ninja"), "/"), "")
		if victim != "" {
			writeFileEntry(t, tw, strings.TrimPrefix(path.Join(path.Dir(victim), ".wh."+path.Base(victim)), "/"), "")
		}
		tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "usr/local/", Mode: 0o755, ModTime: time.Unix(1735689600, 0)})
		writeFileEntry(t, tw, "usr/local/.wh..wh..opq", "")
		writeFileEntry(t, tw, "usr/local/README", "after the opaque marker\n")
	}))
	const cache = "root/.cache/uv/archive-v0/0123456789abcdef"
	uvLayer := func(tw *tar.Writer) {
		for _, dir := range []string{"root/.cache", "root/.cache/uv", "root/.cache/uv/archive-v0", cache} {
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755, ModTime: time.Unix(1735689600, 0)})
		}
		sitePrefix := strings.TrimPrefix(site, "/") + "/"
		siteFiles := listTree(t, tree, func(p string) bool { return strings.HasPrefix(p, site+"/") })
		for _, e := range siteFiles {
			writeEntry(t, tw, e, cache+"/"+strings.TrimPrefix(e.p, sitePrefix))
		}
		for _, e := range listTree(t, tree, inVenv) {
			if !strings.HasPrefix(e.p, sitePrefix) || !e.fi.Mode().IsRegular() {
				writeEntry(t, tw, e, e.p)
				continue
			}
			hdr := &tar.Header{Typeflag: tar.TypeLink, Name: e.p, Linkname: cache + "/" + strings.TrimPrefix(e.p, sitePrefix), Mode: int64(e.fi.Mode().Perm()), ModTime: time.Unix(1735689600, 0), Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				t.Fatal(err)
			}
		}
	}
	layers["uv-hardlinks"] = []layerFile{layers["gzip"][0], writeLayer(t, oci, compressGzip, uvLayer), writeLayer(t, oci, compressGzip, func(tw *tar.Writer) {
		writeFileEntry(t, tw, "root/.wh..cache", "")
	})}

	type desc struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Size        int64             `json:"size"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	var index []desc
	for _, tag := range []string{"gzip", "zstd", "uncompressed", "whiteouts", "uv-hardlinks"} {
		var diffIDs []string
		var lds []desc
		for _, l := range layers[tag] {
			diffIDs = append(diffIDs, l.diffID)
			lds = append(lds, desc{MediaType: l.mediaType, Digest: l.digest, Size: l.size})
		}
		cfg, _ := json.Marshal(map[string]any{
			"architecture": "amd64", "os": "linux",
			"config": map[string]any{"Env": fixture.SeedEnv},
			"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
		})
		cd := writeBlob(t, oci, cfg)
		man, _ := json.Marshal(map[string]any{
			"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
			"config": desc{MediaType: "application/vnd.oci.image.config.v1+json", Digest: cd, Size: int64(len(cfg))},
			"layers": lds,
		})
		md := writeBlob(t, oci, man)
		index = append(index, desc{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: md, Size: int64(len(man)),
			Annotations: map[string]string{"org.opencontainers.image.ref.name": tag}})
	}
	b, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": index})
	if err := os.WriteFile(filepath.Join(oci, "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// realCode streams the ELF files under /usr/lib and /usr/bin in name
// order, one open at a time, then pseudo-random bytes.
func realCode() io.Reader {
	var files []string
	for _, pat := range []string{"/usr/lib/x86_64-linux-gnu/*.so*", "/usr/lib/aarch64-linux-gnu/*.so*", "/usr/bin/*"} {
		ms, _ := filepath.Glob(pat)
		files = append(files, ms...)
	}
	return &codeReader{files: files, tail: rand.NewChaCha8([32]byte{1})}
}

type codeReader struct {
	files []string
	cur   *os.File
	tail  io.Reader
}

func (r *codeReader) Read(p []byte) (int, error) {
	for {
		if r.cur != nil {
			n, err := r.cur.Read(p)
			if n > 0 {
				return n, nil
			}
			r.cur.Close()
			r.cur = nil
			if err != nil && err != io.EOF {
				continue
			}
		}
		if len(r.files) == 0 {
			return r.tail.Read(p)
		}
		name := r.files[0]
		r.files = r.files[1:]
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		var magic [4]byte
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() < 64<<10 {
			f.Close()
			continue
		}
		if _, err := f.ReadAt(magic[:], 0); err != nil || string(magic[:]) != "\x7fELF" {
			f.Close()
			continue
		}
		r.cur = f
	}
}
