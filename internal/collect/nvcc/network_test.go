package nvcc

import (
	"context"
	"github.com/fastpath-dev/fastpath/internal/testenv"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// TestNetworkPipCompilers installs the real NVIDIA compiler wheels into a
// real venv and collects from the live host: the CUDA 12 wheel has no nvcc
// (an incomplete compiler), the CUDA 13 wheels have one that runs, and
// torch finds it only once CUDA_HOME names it.
func TestNetworkPipCompilers(t *testing.T) {
	python := testenv.Python3(t)
	cu12 := []string{"nvidia-cuda-nvcc-cu12==12.8.*"}
	cu13 := []string{"nvidia-cuda-nvcc==13.0.*", "nvidia-nvvm==13.0.*", "nvidia-cuda-crt==13.0.*", "nvidia-cuda-runtime==13.0.*"}
	wheels := testenv.Wheels(t, append(cu12, cu13...)...)

	venv := filepath.Join(t.TempDir(), "venv")
	testenv.Run(t, nil, python, "-m", "venv", venv)
	vpy := filepath.Join(venv, "bin", "python")
	args := append([]string{"-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index",
		"--find-links", wheels}, append(cu12, cu13...)...)
	testenv.Run(t, nil, vpy, args...)
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages of %s: %v", venv, sites)
	}
	site := sites[0]
	py := facts.Python{Selected: &facts.PythonEnv{Kind: "venv", Interpreter: filepath.Join(venv, "bin", "python3"), Prefix: venv, SitePath: []string{site}}}
	cu13Home := filepath.Join(site, "nvidia", "cu13")
	cu13NVCC := filepath.Join(cu13Home, "bin", "nvcc")

	collect := func(extra map[string]string) (facts.CUDA, []string) {
		env := source.Env{"PATH": filepath.Join(venv, "bin") + ":/usr/bin:/bin", "HOME": t.TempDir()}
		for k, v := range extra {
			env[k] = v
		}
		src, err := source.Host(env)
		if err != nil {
			t.Fatal(err)
		}
		return Collect(context.Background(), src, py, nil, 30*time.Second)
	}
	inVenv := func(c facts.CUDA) []facts.NVCC {
		var out []facts.NVCC
		for _, n := range c.Compilers {
			if strings.HasPrefix(n.Path, venv+"/") {
				out = append(out, n)
			}
		}
		return out
	}

	got, warns := collect(nil)
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	var inc *facts.IncompleteCompiler
	for i := range got.Incomplete {
		if got.Incomplete[i].Home == filepath.Join(site, "nvidia", "cuda_nvcc") {
			inc = &got.Incomplete[i]
		}
	}
	if inc == nil || inc.Dist != "nvidia-cuda-nvcc-cu12" || !strings.HasPrefix(inc.Version, "12.8.") ||
		len(inc.Missing) == 0 || inc.Missing[0] != "bin/nvcc" {
		t.Errorf("the CUDA 12 wheel is not reported as an incomplete compiler: %+v", got.Incomplete)
	}
	cs := inVenv(got)
	if len(cs) != 1 {
		t.Fatalf("compilers in the venv = %+v, want the CUDA 13 nvcc only\nsearched:\n%s", cs, strings.Join(got.Searched, "\n"))
	}
	n := cs[0]
	if n.Path != cu13NVCC || n.Home != cu13Home || n.Dist != "nvidia-cuda-nvcc" || len(n.Via) != 1 || n.Via[0] != "pip" {
		t.Errorf("compiler = %+v", n)
	}
	// The real nvcc was run: its own answer, not the wheel's version.
	if !strings.HasPrefix(n.Version, "13.0.") || n.VersionFrom != "nvcc --version" {
		t.Errorf("version = %q from %q, want 13.0.x from nvcc --version", n.Version, n.VersionFrom)
	}
	if n.CUDARuntimeH != filepath.Join(cu13Home, "include", "cuda_runtime.h") {
		t.Errorf("cuda_runtime.h = %q", n.CUDARuntimeH)
	}
	if got.TorchHome != nil && got.TorchHome.Path == cu13Home {
		t.Errorf("torch home = %+v: a pip nvcc off PATH is not discoverable", got.TorchHome)
	}

	got, _ = collect(map[string]string{"CUDA_HOME": cu13Home})
	want := facts.CUDAHome{Path: cu13Home, Via: "CUDA_HOME", NVCC: cu13NVCC}
	if got.TorchHome == nil || *got.TorchHome != want {
		t.Errorf("with CUDA_HOME: torch home = %+v, want %+v", got.TorchHome, want)
	}
	if cs := inVenv(got); len(cs) != 1 || strings.Join(cs[0].Via, ",") != "CUDA_HOME,pip" {
		t.Errorf("with CUDA_HOME: compilers = %+v, want one found via CUDA_HOME and pip", cs)
	}

	// CUDA_HOME at the CUDA 12 wheel's folder: torch takes it, and it has no nvcc.
	cu12Home := filepath.Join(site, "nvidia", "cuda_nvcc")
	got, _ = collect(map[string]string{"CUDA_HOME": cu12Home})
	if got.TorchHome == nil || got.TorchHome.Path != cu12Home || got.TorchHome.NVCC != "" {
		t.Errorf("CUDA_HOME at the cu12 wheel: torch home = %+v, want %s without nvcc", got.TorchHome, cu12Home)
	}
}
