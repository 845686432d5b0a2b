// Package demo holds the seed container that `fastpath demo` diagnoses, as
// an embedded archive (seed.tar.gz), and writes it into a folder.
//
// The archive is generated from the test fixture (internal/fixture's Seed),
// so the demo is the very tree the tests diagnose, run through the real
// pipeline, never a canned report; the fixture itself stays out of the
// binary. TestSeedArchiveCurrent fails when the archive and the fixture
// differ; regenerate it with `go generate ./internal/demo`.
package demo

//go:generate go test -run ^TestSeedArchiveCurrent$ . -args -update

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The seed situation (the one fastpath was founded on): a training container
// on Ubuntu 24.04 with a venv at /root/venv (Python 3.12), torch
// 2.11.0+cu128 from PyPI with its nvidia-*-cu12 wheels, transformers and
// flash-linear-attention installed, causal-conv1d missing, and no nvcc
// anywhere. Its GPUs (eight Blackwell parts of compute capability 12.0) are
// not part of a rootfs: they are passed with --gpu 12.0.
const (
	Venv    = "/root/venv"
	Python  = "3.12.3"
	Torch   = "2.11.0+cu128"
	Model   = "Qwen/Qwen3.5-27B"
	HFCache = "/root/.cache/huggingface/hub"
	// PATH is the container's PATH, passed as --env PATH=... (an image's
	// environment is not in its rootfs).
	PATH = "/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// GPUs are the seed machine's GPUs, as --gpu values.
var GPUs = []string{"12.0", "12.0", "12.0", "12.0", "12.0", "12.0", "12.0", "12.0"}

// Env is the environment of the seed container, as --env values.
var Env = []string{"PATH=" + PATH, "HOME=/root", "VIRTUAL_ENV=" + Venv}

// ArchiveName is the embedded archive's file name in this package's folder.
const ArchiveName = "seed.tar.gz"

//go:embed seed.tar.gz
var seedArchive []byte

// Caps on the embedded archive: it is ours and tested, but a bad
// regeneration must fail here, not fill a disk.
const (
	maxEntries   = 10000
	maxFileBytes = 16 << 20
	maxBytes     = 64 << 20
)

// Write writes the seed container below dir (created if needed), which
// stands for its "/".
func Write(dir string) error {
	tr, err := Archive()
	if err != nil {
		return err
	}
	return extract(tr, dir)
}

// Archive returns the embedded seed archive as an uncompressed tar stream.
func Archive() (io.Reader, error) {
	zr, err := gzip.NewReader(bytes.NewReader(seedArchive))
	if err != nil {
		return nil, fmt.Errorf("demo: %s: %w", ArchiveName, err)
	}
	return zr, nil
}

func extract(r io.Reader, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	links := map[string]bool{} // symlinks written so far: nothing is written through one
	var total int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("demo: %s: %w", ArchiveName, err)
		}
		if n >= maxEntries {
			return fmt.Errorf("demo: %s: more than %d entries", ArchiveName, maxEntries)
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if name == "." {
			continue
		}
		if !strings.HasPrefix(h.Name, "./") || name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) {
			return fmt.Errorf("demo: %s: entry %q is outside the tree", ArchiveName, h.Name)
		}
		for p := path.Dir(name); p != "."; p = path.Dir(p) {
			if links[p] {
				return fmt.Errorf("demo: %s: entry %q lies below the symlink %q", ArchiveName, h.Name, p)
			}
		}
		host := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(host, 0o755)
		case tar.TypeSymlink:
			links[name] = true
			err = os.Symlink(h.Linkname, host)
		case tar.TypeReg:
			if h.Size < 0 || h.Size > maxFileBytes || total+h.Size > maxBytes {
				return fmt.Errorf("demo: %s: entry %q is %d bytes, past the caps", ArchiveName, h.Name, h.Size)
			}
			total += h.Size
			err = writeFile(host, tr, h.Size, os.FileMode(h.Mode)&0o755)
		default:
			return fmt.Errorf("demo: %s: entry %q has type %q", ArchiveName, h.Name, h.Typeflag)
		}
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
}

func writeFile(host string, r io.Reader, size int64, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(host, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode|0o600)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
