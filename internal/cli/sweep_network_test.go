package cli

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// torchaoWheel is torchao 0.18.0's Linux wheel on PyPI
// (https://pypi.org/project/torchao/0.18.0/#files): _C_cutlass_90a.abi3.so holds
// sm_90a SASS only, _C_mxfp8 sm_100 SASS and compute_120 PTX; torchao loads both on
// every GPU and launches their kernels only on the GPUs they were built for.
const (
	torchaoWheelFile   = "torchao-0.18.0-cp310-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl"
	torchaoWheelSHA256 = "6540b148e40ba81cbd4de86392225a076a1591146e9cebb099b3b234ba9feebe"
)

// TestNetworkDoctorTorchaoDispatchesByGPU installs the real torchao wheel into a
// venv under a root (a rootfs as a container has it, no torch needed) and runs doctor
// for four GPUs: its arch-specific modules are never an error (before the
// loading.json rows, 8.0, 9.0, 10.0 and 12.0 each had a false
// "torchao 0.18.0 has no code for GPU" error); the sm_90a module is a note
// where it does not run.
func TestNetworkDoctorTorchaoDispatchesByGPU(t *testing.T) {
	whl := testenv.Sdist(t, "torchao", torchaoWheelFile, torchaoWheelSHA256)
	root := t.TempDir()
	venv := filepath.Join(root, "root", "venv")
	unzipAll(t, whl, filepath.Join(venv, "lib", "python3.12", "site-packages"))
	writeFile(t, filepath.Join(venv, "pyvenv.cfg"), "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n")
	writeFile(t, filepath.Join(root, "usr", "bin", "python3.12"), "#!/bin/sh\nexit 1\n")
	if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/bin/python3.12", filepath.Join(venv, "bin", "python3")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gpu  string
		note bool // the sm_90a module is reported as a note
	}{{"8.0", true}, {"9.0", false}, {"10.0", true}, {"12.0", true}} {
		t.Run(tc.gpu, func(t *testing.T) {
			doc := runJSON(t, "doctor", "--root", root, "--env", "VIRTUAL_ENV=/root/venv", "--env", "PATH=/root/venv/bin:/usr/bin:/bin", "--gpu", tc.gpu)
			note := false
			seen := false
			for _, f := range doc["findings"].([]any) {
				f := f.(map[string]any)
				title, _ := f["title"].(string)
				if f["id"] != "extension-arch-unsupported" || !strings.HasPrefix(title, "torchao ") {
					continue
				}
				seen = true
				if f["severity"] != "info" {
					t.Errorf("%s: %s", f["severity"], title)
				}
				if ev, _ := f["evidence"].([]any); len(ev) > 0 && strings.Contains(ev[0].(string), "_C_cutlass_90a") {
					note = true
				}
			}
			if note != tc.note {
				t.Errorf("note on _C_cutlass_90a: %v, want %v (any torchao finding: %v)", note, tc.note, seen)
			}
			// The collector did read both modules: the facts hold them.
			exts := 0
			for _, e := range doc["facts"].(map[string]any)["extensions"].([]any) {
				if e.(map[string]any)["dist"] == "torchao" && len(e.(map[string]any)["sass"].([]any)) > 0 {
					exts++
				}
			}
			if exts != 2 {
				t.Errorf("facts hold %d torchao modules with SASS, want 2", exts)
			}
		})
	}
}

func unzipAll(t *testing.T, whl, to string) {
	t.Helper()
	zr, err := zip.OpenReader(whl)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.Contains(f.Name, "..") {
			continue
		}
		p := filepath.Join(to, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(w, rc)
		rc.Close()
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}
