package imagesource_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// tarDir writes the files of a fixture tree at host directory root whose
// in-image path keep accepts, the way `docker build` snapshots a layer.
func tarDir(t testing.TB, tw *tar.Writer, root string, keep func(p string) bool) {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(root, func(h string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, h)
		if rel == "." {
			return nil
		}
		p := "/" + filepath.ToSlash(rel)
		if keep(p) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		h := filepath.Join(root, filepath.FromSlash(p))
		fi, err := os.Lstat(h)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p, "/")
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(h)
			addLink(t, tw, name, target)
		case fi.IsDir():
			addDir(t, tw, name)
		default:
			f, err := os.Open(h)
			if err != nil {
				t.Fatal(err)
			}
			hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: fi.Size(), ModTime: epoch, Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(tw, f); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
}

func under(dir string) func(string) bool {
	return func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
}

func not(f func(string) bool) func(string) bool { return func(p string) bool { return !f(p) } }

func all(string) bool { return true }

func addDir(t testing.TB, tw *tar.Writer, name string) {
	t.Helper()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: epoch}); err != nil {
		t.Fatal(err)
	}
}

func addFile(t testing.TB, tw *tar.Writer, name, body string) {
	t.Helper()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: epoch}); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(tw, body); err != nil {
		t.Fatal(err)
	}
}

func addLink(t testing.TB, tw *tar.Writer, name, target string) {
	t.Helper()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777, ModTime: epoch}); err != nil {
		t.Fatal(err)
	}
}

// addWhiteout deletes p (an in-image path) from the layers below.
func addWhiteout(t testing.TB, tw *tar.Writer, p string) {
	t.Helper()
	addFile(t, tw, strings.TrimPrefix(path.Join(path.Dir(p), ".wh."+path.Base(p)), "/"), "")
}

// addOpaque hides everything the layers below hold in dir.
func addOpaque(t testing.TB, tw *tar.Writer, dir string) {
	t.Helper()
	addFile(t, tw, strings.TrimPrefix(dir, "/")+"/.wh..wh..opq", "")
}

// layer builds a layer; raw ones stay uncompressed tar blobs (what
// `docker save` and some builders write), the others are gzip-compressed.
func layer(t testing.TB, raw bool, fill func(tw *tar.Writer)) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	fill(tw)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return blobLayer(t, raw, buf.Bytes())
}

func blobLayer(t testing.TB, raw bool, b []byte) v1.Layer {
	t.Helper()
	if raw {
		return static.NewLayer(b, types.OCIUncompressedLayer)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func image(t testing.TB, plat string, env []string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	p, err := v1.ParsePlatform(plat)
	if err != nil {
		t.Fatal(err)
	}
	cf.OS, cf.Architecture = p.OS, p.Architecture
	cf.Config.Env = env
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// registryServer is go-containerregistry's registry on loopback, counting
// the bytes it sends.
type registryServer struct {
	host string
	sent atomic.Int64
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

func newRegistry(t testing.TB) *registryServer {
	t.Helper()
	rs := &registryServer{}
	h := registry.New(registry.Logger(discardLogger()))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(countingWriter{w, &rs.sent}, r)
	}))
	t.Cleanup(srv.Close)
	rs.host = strings.TrimPrefix(srv.URL, "http://")
	return rs
}

// seedLayers builds the seed container as a three-layer image, the way a
// Dockerfile would have grown it, and the same tree flattened:
//
//	layer 1 (gzip): the OS, Python, gcc; plus a CUDA 12.4 toolkit in
//	  /usr/local and an older os-release (Ubuntu 22.04), both replaced later
//	layer 2 (raw tar): the venv, plus causal-conv1d 1.5.0
//	layer 3 (gzip): whiteouts deleting causal-conv1d, /usr/local made
//	  opaque (the toolkit disappears), the 24.04 os-release
func seedLayers(t testing.TB) (flat string, lower, top []v1.Layer) {
	t.Helper()
	flat = t.TempDir()
	if err := fixture.Seed(flat); err != nil {
		t.Fatal(err)
	}
	extra := t.TempDir()
	ft := fixture.New(extra)
	ft.Toolkit("/usr/local/cuda-12.4", "12.4.131").Symlink("/usr/local/cuda", "cuda-12.4")
	ft.OSRelease("ubuntu", "22.04", "Ubuntu 22.04.5 LTS")
	site := fixture.Venv{Prefix: fixture.SeedVenv, Version: fixture.SeedPython}.SitePackages()
	distInfo := ft.Dist(site, fixture.Dist{Name: "causal-conv1d", Version: "1.5.0", Files: []string{"causal_conv1d/__init__.py"}})
	if err := ft.Err(); err != nil {
		t.Fatal(err)
	}
	venv := under(fixture.SeedVenv)
	l1 := layer(t, false, func(tw *tar.Writer) {
		tarDir(t, tw, flat, func(p string) bool { return !venv(p) && p != "/etc/os-release" })
		tarDir(t, tw, extra, func(p string) bool { return !venv(p) && !under("/root")(p) })
	})
	l2 := layer(t, true, func(tw *tar.Writer) {
		tarDir(t, tw, flat, venv)
		tarDir(t, tw, extra, venv)
	})
	l3 := layer(t, false, func(tw *tar.Writer) {
		addWhiteout(t, tw, path.Join(site, path.Base(distInfo)))
		addWhiteout(t, tw, path.Join(site, "causal_conv1d"))
		addDir(t, tw, "usr/local")
		addOpaque(t, tw, "/usr/local")
		tarDir(t, tw, flat, func(p string) bool { return strings.HasPrefix(p, "/usr/local/") || p == "/etc/os-release" })
	})
	return flat, []v1.Layer{l1, l2}, []v1.Layer{l3}
}

func collectFacts(t testing.TB, src source.Source) *facts.Facts {
	t.Helper()
	return collect.Collect(context.Background(), src, collect.Options{GPUs: fixture.SeedGPUs, ToolVersion: "test"})
}

func rootFacts(t testing.TB, dir string, env []string) *facts.Facts {
	t.Helper()
	e, err := source.ParseEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(dir, e)
	if err != nil {
		t.Fatal(err)
	}
	return collectFacts(t, src)
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
