package demo_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/demo"
	"github.com/fastpath-dev/fastpath/internal/fixture"
)

var update = flag.Bool("update", false, "regenerate "+demo.ArchiveName+" from internal/fixture's Seed")

// archiveTree is the deterministic tar of the tree below dir: entries in
// lexical order, no times, owners or permissions beyond the executable bit.
func archiveTree(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		h := &tar.Header{Name: "./" + filepath.ToSlash(rel), Mode: 0o644, Format: tar.FormatPAX}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			h.Typeflag, h.Mode = tar.TypeSymlink, 0o777
			if h.Linkname, err = os.Readlink(p); err != nil {
				return err
			}
		case d.IsDir():
			h.Typeflag, h.Mode, h.Name = tar.TypeDir, 0o755, h.Name+"/"
		case d.Type().IsRegular():
			h.Typeflag, h.Size = tar.TypeReg, info.Size()
			if info.Mode()&0o100 != 0 {
				h.Mode = 0o755
			}
		default:
			t.Fatalf("%s: %v is neither a file, a folder nor a symlink", p, d.Type())
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return nil
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fixtureSeed(t *testing.T) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := fixture.Seed(dir); err != nil {
		t.Fatal(err)
	}
	return archiveTree(t, dir)
}

// TestSeedArchiveCurrent: the embedded archive is the fixture's seed tree,
// byte for byte. With -update (go generate ./internal/demo) it rewrites the
// archive instead.
func TestSeedArchiveCurrent(t *testing.T) {
	want := fixtureSeed(t)
	if *update {
		var gz bytes.Buffer
		zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zw.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(demo.ArchiveName, gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d bytes (%d uncompressed)", demo.ArchiveName, gz.Len(), len(want))
		return
	}
	r, err := demo.Archive()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not internal/fixture's Seed (%d bytes, want %d): run go generate ./internal/demo", demo.ArchiveName, len(got), len(want))
	}
}

// TestWriteIsTheFixture: the tree Write makes is the fixture's seed tree.
func TestWriteIsTheFixture(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "seed")
	if err := demo.Write(dir); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(archiveTree(t, dir), fixtureSeed(t)) {
		t.Fatal("the tree Write made differs from fixture.Seed's")
	}
	if _, err := os.Stat(filepath.Join(dir, "root/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so")); err != nil {
		t.Fatal(err)
	}
}

// TestFixtureSeedNames: the fixture's seed names are this package's.
func TestFixtureSeedNames(t *testing.T) {
	if fixture.SeedModel != demo.Model || fixture.SeedVenv != demo.Venv || strings.Join(fixture.SeedEnv, " ") != strings.Join(demo.Env, " ") || len(fixture.SeedGPUs) != len(demo.GPUs) {
		t.Fatal("internal/fixture's seed constants differ from internal/demo's")
	}
}
