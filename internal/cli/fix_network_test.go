package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// TestNetworkFixApplyCUDA13Compiler: on a venv whose only problem is the
// missing compiler (a CUDA 13 torch stand-in), `fix --apply` installs
// NVIDIA's real CUDA 13 compiler wheels (from the download cache, through
// --no-index --find-links, so the apply itself needs no network), exports
// CUDA_HOME, and doctor afterwards finds that nvcc through it. (CUDA 12's
// nvidia-cuda-nvcc-cu12 holds no nvcc: there the plan names apt instead.)
func TestNetworkFixApplyCUDA13Compiler(t *testing.T) {
	py3 := testenv.Python3(t)
	wheels := testenv.Wheels(t, "nvidia-cuda-nvcc==13.0.*", "nvidia-nvvm==13.0.*", "nvidia-cuda-crt==13.0.*", "nvidia-cuda-runtime==13.0.*", "nvidia-cuda-cccl==13.0.*")
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	testenv.Run(t, nil, py3, "-m", "venv", venv)
	sites, _ := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages: %v", sites)
	}
	host := fixture.New("/")
	host.Torch(sites[0], "2.11.0+cu130", "13.0", "cp3")
	host.Exec(filepath.Join(dir, "bin", "ninja"), "#!/bin/sh\necho 1.13.0\n")
	if err := host.Err(); err != nil {
		t.Fatal(err)
	}
	src := SourceFlags{Python: filepath.Join(venv, "bin", "python3"), GPUs: []string{"9.0"},
		Env: []string{"PATH=" + filepath.Join(venv, "bin") + ":" + filepath.Join(dir, "bin") + ":/usr/local/bin:/usr/bin:/bin",
			"CUDA_HOME=", "CUDA_PATH=", "CONDA_PREFIX=", "PIP_DISABLE_PIP_VERSION_CHECK=1"}}

	var out, errb bytes.Buffer
	o := &FixOptions{Apply: true, Yes: true, Plan: PlanOptions{Source: src, NoIndex: true, FindLinks: []string{wheels}}}
	err := RunFix(context.Background(), o, &IO{Out: &out, Err: &errb})
	if err != nil {
		t.Fatalf("fix --apply: %v\n%s\n%s", err, out.String(), errb.String())
	}
	home := filepath.Join(sites[0], "nvidia", "cu13")
	text := out.String()
	for _, want := range []string{
		"==> no-cuda-compiler: Install NVIDIA's CUDA 13.0 compiler wheels into this environment",
		"--no-index --find-links " + wheels + " 'nvidia-cuda-nvcc==13.0.*'",
		"export CUDA_HOME=" + home,
		"put them in your shell or profile:\n  export CUDA_HOME=" + home + "\n  export PATH=" + home + "/bin:",
		"gone:     no-cuda-compiler",
		"appeared: (none)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}

	// doctor, given the exports fix printed, finds the compiler through
	// CUDA_HOME and runs it for its version.
	var jout bytes.Buffer
	env := append(append([]string{}, src.Env...), "CUDA_HOME="+home, "PATH="+filepath.Join(home, "bin")+":"+strings.TrimPrefix(src.Env[0], "PATH="))
	d := &DoctorOptions{Output: Output{JSON: true}, Source: SourceFlags{Python: src.Python, GPUs: src.GPUs, Env: env}}
	if err := RunDoctor(context.Background(), d, &IO{Out: &jout, Err: &errb}); err != nil {
		t.Fatalf("doctor after: %v\n%s", err, jout.String())
	}
	var doc struct {
		Facts    *facts.Facts      `json:"facts"`
		Findings []finding.Finding `json:"findings"`
	}
	mustUnmarshal(t, jout.Bytes(), &doc)
	h := doc.Facts.CUDA.TorchHome
	if h == nil || h.Path != home || h.Via != "CUDA_HOME" || h.NVCC != filepath.Join(home, "bin", "nvcc") {
		t.Fatalf("torch's CUDA home: %+v", h)
	}
	for _, n := range doc.Facts.CUDA.Compilers {
		if n.Home == home && (!strings.HasPrefix(n.Version, "13.0.") || n.VersionFrom != "nvcc --version") {
			t.Errorf("nvcc: %+v", n)
		}
	}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}
