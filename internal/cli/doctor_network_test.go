package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/fastpath-dev/fastpath/internal/testenv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// TestNetworkDoctorPipCompilers runs the whole doctor (live host, --python a
// real venv) over NVIDIA's real compiler wheels from PyPI, with a small
// dist-info standing in for torch (torch itself is 900 MB):
//   - torch cu128 + nvidia-cuda-nvcc-cu12==12.8.*: that wheel has no nvcc, so
//     no-cuda-compiler fires and its evidence names the incomplete wheel;
//   - torch cu130 + the CUDA 13 compiler wheels: cuda-compiler-not-discoverable
//     until CUDA_HOME names nvidia/cu13 (the fix doctor itself prints), then no
//     compiler finding, and the facts give nvcc 13.0 from its own --version.
func TestNetworkDoctorPipCompilers(t *testing.T) {
	testenv.Python3(t)
	cu12 := []string{"nvidia-cuda-nvcc-cu12==12.8.*"}
	cu13 := []string{"nvidia-cuda-nvcc==13.0.*", "nvidia-nvvm==13.0.*", "nvidia-cuda-crt==13.0.*", "nvidia-cuda-runtime==13.0.*"}
	wheels := testenv.Wheels(t, append(cu12, cu13...)...)
	// venv makes a venv with reqs installed offline and a torch stand-in.
	venv := func(torchVersion, cuda string, reqs []string) (python, site string) {
		dir := filepath.Join(t.TempDir(), "venv")
		testenv.Run(t, nil, "python3", "-m", "venv", dir)
		py := filepath.Join(dir, "bin", "python3")
		testenv.Run(t, nil, py, append([]string{"-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--find-links", wheels}, reqs...)...)
		sites, _ := filepath.Glob(filepath.Join(dir, "lib", "python3.*", "site-packages"))
		if len(sites) != 1 {
			t.Fatalf("site-packages of %s: %v", dir, sites)
		}
		// The fixture writes below a root; the venv is a real host path.
		fixture.New("/").Torch(sites[0], torchVersion, cuda, "cp3")
		return py, sites[0]
	}
	doctor := func(py string, env ...string) (*facts.Facts, []finding.Finding) {
		var out, errb bytes.Buffer
		o := &DoctorOptions{Output: Output{JSON: true}, Source: SourceFlags{Python: py, GPUs: []string{"9.0"},
			Env: append([]string{"PATH=/usr/bin:/bin", "CUDA_HOME=", "CUDA_PATH=", "CONDA_PREFIX="}, env...)}}
		err := RunDoctor(context.Background(), o, &IO{Out: &out, Err: &errb})
		if _, ok := err.(findingsError); err != nil && !ok {
			t.Fatalf("doctor: %v\n%s", err, errb.String())
		}
		var doc struct {
			Facts    *facts.Facts      `json:"facts"`
			Findings []finding.Finding `json:"findings"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("doctor --json: %v\n%s", err, out.String())
		}
		return doc.Facts, doc.Findings
	}
	byID := func(fs []finding.Finding, id finding.ID) *finding.Finding {
		for i := range fs {
			if fs[i].ID == id {
				return &fs[i]
			}
		}
		return nil
	}

	t.Run("cu12 wheel has no nvcc", func(t *testing.T) {
		py, site := venv("2.11.0+cu128", "12.8", cu12)
		_, fs := doctor(py)
		fd := byID(fs, finding.NoCUDACompiler)
		if fd == nil || fd.Severity != finding.Error {
			t.Fatalf("no-cuda-compiler did not fire as an error: %v", fs)
		}
		want := fmt.Sprintf("nvidia-cuda-nvcc-cu12 12.8.93 at %s/nvidia/cuda_nvcc has", site)
		if !strings.Contains(strings.Join(fd.Evidence, "\n"), want) || !strings.Contains(strings.Join(fd.Evidence, "\n"), "but no bin/nvcc") {
			t.Errorf("evidence lacks %q ... but no bin/nvcc:\n%s", want, strings.Join(fd.Evidence, "\n"))
		}
	})

	t.Run("cu13 wheels: discoverable once CUDA_HOME names them", func(t *testing.T) {
		py, site := venv("2.11.0+cu130", "13.0", cu13)
		home := filepath.Join(site, "nvidia", "cu13")
		f, fs := doctor(py)
		fd := byID(fs, finding.CUDACompilerNotDiscoverable)
		if fd == nil {
			t.Fatalf("cuda-compiler-not-discoverable did not fire: %v", fs)
		}
		if fix := strings.Join(fd.Fixes[0].Commands, "\n"); !strings.Contains(fix, "export CUDA_HOME="+home) {
			t.Errorf("fix does not point CUDA_HOME at %s:\n%s", home, fix)
		}
		if byID(fs, finding.NoCUDACompiler) != nil {
			t.Error("no-cuda-compiler fired although a compiler is installed")
		}
		if len(f.CUDA.Compilers) == 0 || !strings.HasPrefix(f.CUDA.Compilers[0].Version, "13.0.") {
			t.Errorf("compilers: %+v", f.CUDA.Compilers)
		}

		f, fs = doctor(py, "CUDA_HOME="+home)
		for _, id := range []finding.ID{finding.NoCUDACompiler, finding.CUDACompilerNotDiscoverable, finding.CUDAHomeInvalid, finding.NVCCTorchCUDAMismatch, finding.NVCCCannotTargetGPU} {
			if fd := byID(fs, id); fd != nil {
				t.Errorf("%s still fires with CUDA_HOME=%s: %s", id, home, fd.Title)
			}
		}
		h := f.CUDA.TorchHome
		if h == nil || h.Path != home || h.Via != "CUDA_HOME" || h.NVCC != filepath.Join(home, "bin", "nvcc") {
			t.Fatalf("torch's CUDA home: %+v", h)
		}
		var n *facts.NVCC
		for i := range f.CUDA.Compilers {
			if f.CUDA.Compilers[i].Home == home {
				n = &f.CUDA.Compilers[i]
			}
		}
		if n == nil || !strings.HasPrefix(n.Version, "13.0.") || n.VersionFrom != "nvcc --version" {
			t.Errorf("the discovered nvcc: %+v", n)
		}
	})
}
