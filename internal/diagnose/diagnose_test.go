package diagnose

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// healthy returns the facts of the reference H200 machine (internal/fatbin/testdata/torch-2.11-cu130/READINGS.md:
// torch 2.11.0+cu130 in /opt/torch/.venv, nvcc 13.0.88 at
// /usr/local/cuda-13.0 reached through CUDA_HOME=/usr/local/cuda, driver
// 580.159.04, gcc 13.3.0): no finding may fire on it.
func healthy() *facts.Facts {
	venv := &facts.PythonEnv{
		Kind: "venv", Interpreter: "/opt/torch/.venv/bin/python3", Version: "3.12.3",
		Prefix: "/opt/torch/.venv", BasePrefix: "/usr",
		SitePath: []string{"/opt/torch/.venv/lib/python3.12/site-packages"},
		PythonH:  "/usr/include/python3.12/Python.h", NumDists: 197,
	}
	return &facts.Facts{
		Schema: facts.Schema,
		OS:     facts.OS{ID: "ubuntu", VersionID: "24.04", PrettyName: "Ubuntu 24.04.3 LTS", Arch: "x86_64", Glibc: "2.39"},
		Env:    []facts.EnvVar{{Name: "CUDA_HOME", Value: "/usr/local/cuda"}, {Name: "PATH", Value: "/opt/torch/.venv/bin:/usr/local/cuda/bin:/usr/bin"}},
		Python: facts.Python{Selected: venv, Pip: &facts.Pip{Path: "/opt/torch/.venv/bin/pip", Interpreter: "/opt/torch/.venv/bin/python3", Prefix: "/opt/torch/.venv", SameAsPython: true}},
		Torch:  &facts.Torch{Version: "2.11.0+cu130", CUDA: "13.0", BuildFrom: "torch/version.py", Location: "/opt/torch/.venv/lib/python3.12/site-packages/torch"},
		CUDA: facts.CUDA{
			Compilers: []facts.NVCC{{Path: "/usr/local/cuda-13.0/bin/nvcc", Paths: []string{"/usr/local/cuda/bin/nvcc", "/usr/local/cuda-13.0/bin/nvcc"},
				Home: "/usr/local/cuda-13.0", Version: "13.0.88", VersionFrom: "version.json", Via: []string{"CUDA_HOME", "PATH", "/usr/local/cuda"},
				CUDARuntimeH: "/usr/local/cuda-13.0/include/cuda_runtime.h"}},
			Searched:  []string{"$CUDA_HOME/bin/nvcc = /usr/local/cuda/bin/nvcc (found)"},
			TorchHome: &facts.CUDAHome{Path: "/usr/local/cuda", Via: "CUDA_HOME", NVCC: "/usr/local/cuda/bin/nvcc"},
		},
		Toolchain: facts.Toolchain{
			GCC:   &facts.Tool{Path: "/usr/bin/gcc", Version: "13.3.0"},
			GXX:   &facts.Tool{Path: "/usr/bin/g++", Version: "13.3.0"},
			Ninja: &facts.Tool{Path: "/opt/torch/.venv/bin/ninja", Version: "1.13.0"},
		},
		GPU: facts.GPU{
			Driver:  &facts.Driver{Version: "580.159.04", From: "/proc/driver/nvidia/version", CUDA: "13.0"},
			Devices: []facts.Device{{Index: 0, Name: "NVIDIA H200", Capability: "9.0", CapabilityFrom: "nvidia-smi"}},
		},
	}
}

// seedFacts are the facts of the seed container (fixture.Seed): a cu128
// torch, no nvcc anywhere, Blackwell GPUs given with --gpu.
func seedFacts() *facts.Facts {
	f := healthy()
	f.OS.PrettyName = "Ubuntu 24.04.3 LTS"
	f.Python.Selected.Interpreter = "/root/venv/bin/python3"
	f.Python.Selected.Prefix = "/root/venv"
	f.Python.Selected.SitePath = []string{"/root/venv/lib/python3.12/site-packages"}
	f.Python.Pip = &facts.Pip{Path: "/root/venv/bin/pip", Prefix: "/root/venv", SameAsPython: true}
	f.Torch = &facts.Torch{Version: "2.11.0+cu128", CUDA: "12.8", BuildFrom: "torch/version.py", Location: "/root/venv/lib/python3.12/site-packages/torch"}
	f.CUDA = facts.CUDA{Searched: []string{"PATH: /root/venv/bin/nvcc (absent)", "/usr/local/cuda/bin/nvcc (absent)"}}
	f.GPU = facts.GPU{Overridden: true, Devices: []facts.Device{{Index: 0, Capability: "12.0", CapabilityFrom: "--gpu"}}}
	return f
}

func ids(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.ID)+":"+string(f.Severity))
	}
	return out
}

func find(fs []finding.Finding, id finding.ID) *finding.Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

// expectFinding checks that id fires in got with severity sev, or, when sev
// is "", that it does not fire; it returns the finding when it fired.
func expectFinding(t *testing.T, got []finding.Finding, id finding.ID, sev finding.Severity) *finding.Finding {
	t.Helper()
	fd := find(got, id)
	if sev == "" {
		if fd != nil {
			t.Fatalf("%s fired: %s", id, fd.Title)
		}
		return nil
	}
	if fd == nil {
		t.Fatalf("%s did not fire; got %v", id, ids(got))
	}
	if fd.Severity != sev {
		t.Errorf("severity %s, want %s", fd.Severity, sev)
	}
	return fd
}

func TestHealthyMachineHasNoFindings(t *testing.T) {
	if got := Run(healthy()); len(got) != 0 {
		t.Fatalf("healthy H200 facts gave findings: %v", ids(got))
	}
}

// TestFiresAndDoesNotFire holds, for every finding id, a change to the
// healthy facts that makes it fire (with its severity) and a near miss that
// must not.
func TestFiresAndDoesNotFire(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(f *facts.Facts)
		id     finding.ID
		sev    finding.Severity // "" means: must not fire
	}{
		{"no nvcc anywhere", func(f *facts.Facts) { f.CUDA = facts.CUDA{Searched: []string{"x"}} }, finding.NoCUDACompiler, finding.Error},
		{"no nvcc, CPU torch: only a warning", func(f *facts.Facts) {
			f.CUDA = facts.CUDA{}
			f.Torch.CUDA, f.Torch.Version = "", "2.11.0+cpu"
			f.GPU.Devices = nil
		}, finding.NoCUDACompiler, finding.Warning},
		{"nvcc present", func(f *facts.Facts) {}, finding.NoCUDACompiler, ""},

		{"nvcc only off every searched path", func(f *facts.Facts) {
			f.CUDA.Compilers[0] = facts.NVCC{Path: "/opt/x/nvidia/cu13/bin/nvcc", Home: "/opt/x/nvidia/cu13", Version: "13.0.88", Via: []string{"pip"}}
			f.CUDA.TorchHome = nil
		}, finding.CUDACompilerNotDiscoverable, finding.Error},
		{"/usr/local/cuda without nvcc, nvcc elsewhere", func(f *facts.Facts) {
			f.CUDA.Compilers[0] = facts.NVCC{Path: "/opt/x/nvidia/cu13/bin/nvcc", Home: "/opt/x/nvidia/cu13", Version: "13.0.88", Via: []string{"pip"}}
			f.CUDA.TorchHome = &facts.CUDAHome{Path: "/usr/local/cuda", Via: "/usr/local/cuda"}
		}, finding.CUDACompilerNotDiscoverable, finding.Error},
		{"discoverable", func(f *facts.Facts) {}, finding.CUDACompilerNotDiscoverable, ""},
		{"only a 12.8 toolkit off the search path for a cu130 torch", func(f *facts.Facts) {
			f.CUDA.Compilers[0] = facts.NVCC{Path: "/usr/local/cuda-12.8/bin/nvcc", Home: "/usr/local/cuda-12.8", Version: "12.8.93", Via: []string{"toolkit"}}
			f.CUDA.TorchHome = nil
		}, finding.CUDACompilerNotDiscoverable, finding.Error},

		{"CUDA_HOME without bin/nvcc", func(f *facts.Facts) {
			f.CUDA.TorchHome = &facts.CUDAHome{Path: "/opt/cuda-gone", Via: "CUDA_HOME"}
		}, finding.CUDAHomeInvalid, finding.Error},
		{"CUDA_PATH without bin/nvcc", func(f *facts.Facts) {
			f.CUDA.TorchHome = &facts.CUDAHome{Path: "/opt/cuda-gone", Via: "CUDA_PATH"}
		}, finding.CUDAHomeInvalid, finding.Error},
		{"CUDA_HOME valid", func(f *facts.Facts) {}, finding.CUDAHomeInvalid, ""},
		{"/usr/local/cuda picked implicitly is not CUDA_HOME's fault", func(f *facts.Facts) {
			f.CUDA.TorchHome = &facts.CUDAHome{Path: "/usr/local/cuda", Via: "/usr/local/cuda"}
		}, finding.CUDAHomeInvalid, ""},

		{"nvcc 12.8 for torch cu130", func(f *facts.Facts) { f.CUDA.Compilers[0].Version = "12.8.93" }, finding.NVCCTorchCUDAMismatch, finding.Error},
		{"nvcc 13.1 for torch cu130", func(f *facts.Facts) { f.CUDA.Compilers[0].Version = "13.1.80" }, finding.NVCCTorchCUDAMismatch, finding.Warning},
		{"nvcc 13.0.48 for torch cu130", func(f *facts.Facts) { f.CUDA.Compilers[0].Version = "13.0.48" }, finding.NVCCTorchCUDAMismatch, ""},

		{"nvcc 12.4 for an sm_120 GPU", func(f *facts.Facts) {
			f.Torch.CUDA, f.Torch.Version = "12.4", "2.6.0+cu124"
			f.CUDA.Compilers[0].Version = "12.4.131"
			f.Toolchain.GXX.Version = "13.2.0"
			f.GPU.Devices[0].Capability = "12.0"
		}, finding.NVCCCannotTargetGPU, finding.Error},
		{"nvcc 13.0 for a V100 (sm_70 dropped in 13.0)", func(f *facts.Facts) { f.GPU.Devices[0].Capability = "7.0" }, finding.NVCCCannotTargetGPU, finding.Error},
		{"TORCH_CUDA_ARCH_LIST asks nvcc 13.0 for 7.0", func(f *facts.Facts) {
			f.Env = append(f.Env, facts.EnvVar{Name: "TORCH_CUDA_ARCH_LIST", Value: "7.0;9.0a"})
		}, finding.NVCCCannotTargetGPU, finding.Error},
		{"TORCH_CUDA_ARCH_LIST 9.0a+PTX is fine for nvcc 13.0", func(f *facts.Facts) {
			f.Env = append(f.Env, facts.EnvVar{Name: "TORCH_CUDA_ARCH_LIST", Value: "9.0a+PTX"})
		}, finding.NVCCCannotTargetGPU, ""},
		{"nvcc 13.0 for sm_120", func(f *facts.Facts) { f.GPU.Devices[0].Capability = "12.0" }, finding.NVCCCannotTargetGPU, ""},

		{"no g++", func(f *facts.Facts) { f.Toolchain.GXX = nil }, finding.HostCompilerUnsupported, finding.Error},
		{"g++ 16 for nvcc 13.0", func(f *facts.Facts) { f.Toolchain.GXX.Version = "16.1.0" }, finding.HostCompilerUnsupported, finding.Error},
		{"g++ 14 for nvcc 12.4", func(f *facts.Facts) {
			f.Torch.CUDA, f.Torch.Version = "12.4", "2.5.1+cu124"
			f.CUDA.Compilers[0].Version = "12.4.131"
			f.Toolchain.GXX.Version = "14.2.0"
		}, finding.HostCompilerUnsupported, finding.Error},
		// CUDAHOSTCXX is read by CMake only: pip builds of torch
		// extensions still use g++ 16 (torch passes -ccbin $CC, nvcc reads
		// NVCC_CCBIN), so it still fires.
		{"g++ 16 but CUDAHOSTCXX g++-15", func(f *facts.Facts) {
			f.Toolchain.GXX.Version = "16.1.0"
			f.Toolchain.CUDAHostCXX = &facts.Tool{Path: "/usr/bin/g++-15", Version: "15.2.0"}
		}, finding.HostCompilerUnsupported, finding.Error},
		{"g++ 15 for nvcc 13.0", func(f *facts.Facts) { f.Toolchain.GXX.Version = "15.2.0" }, finding.HostCompilerUnsupported, ""},

		{"no Python.h", func(f *facts.Facts) { f.Python.Selected.PythonH = "" }, finding.MissingPythonHeaders, finding.Error},
		{"Python.h present", func(f *facts.Facts) {}, finding.MissingPythonHeaders, ""},

		{"no ninja", func(f *facts.Facts) { f.Toolchain.Ninja = nil }, finding.MissingNinja, finding.Warning},
		{"ninja present", func(f *facts.Facts) {}, finding.MissingNinja, ""},

		{"no torch", func(f *facts.Facts) { f.Torch = nil }, finding.TorchMissing, finding.Error},
		{"no python at all", func(f *facts.Facts) { f.Python.Selected = nil; f.Torch = nil }, finding.TorchMissing, finding.Error},
		{"torch present", func(f *facts.Facts) {}, finding.TorchMissing, ""},

		{"CPU torch with GPUs", func(f *facts.Facts) { f.Torch.CUDA, f.Torch.Version = "", "2.11.0+cpu" }, finding.TorchCPUOnly, finding.Error},
		{"CPU torch, no GPUs", func(f *facts.Facts) {
			f.Torch.CUDA, f.Torch.Version = "", "2.11.0+cpu"
			f.GPU.Devices = nil
		}, finding.TorchCPUOnly, ""},
		{"unreadable build is not CPU-only", func(f *facts.Facts) { f.Torch.CUDA, f.Torch.BuildFrom = "", "" }, finding.TorchCPUOnly, ""},
		{"ROCm torch is not CPU-only", func(f *facts.Facts) { f.Torch.CUDA, f.Torch.HIP = "", "6.4" }, finding.TorchCPUOnly, ""},

		{"driver 570 for cu130", func(f *facts.Facts) { f.GPU.Driver.Version = "570.172.08" }, finding.DriverTooOld, finding.Error},
		{"driver 535 for cu128: minor-version compatibility", func(f *facts.Facts) {
			f.Torch.CUDA, f.Torch.Version = "12.8", "2.11.0+cu128"
			f.CUDA.Compilers[0].Version = "12.8.93"
			f.GPU.Driver.Version = "535.247.01"
		}, finding.DriverTooOld, finding.Warning},
		{"driver 580.65.06 for cu130", func(f *facts.Facts) { f.GPU.Driver.Version = "580.65.06" }, finding.DriverTooOld, ""},

		{"GPU held by a process", func(f *facts.Facts) {
			f.GPU.Processes = []facts.GPUProcess{{PID: 4242, Name: "python3", UsedMiB: 80000}}
		}, finding.GPUBusy, finding.Warning},
		{"GPU idle", func(f *facts.Facts) {}, finding.GPUBusy, ""},

		{"pip on PATH is another env's", func(f *facts.Facts) {
			f.Python.Pip = &facts.Pip{Path: "/usr/local/bin/pip", Interpreter: "/usr/bin/python3", Prefix: "/usr", SameAsPython: false}
		}, finding.PipPythonMismatch, finding.Warning},
		{"pip is python3's", func(f *facts.Facts) {}, finding.PipPythonMismatch, ""},
		{"no pip on PATH", func(f *facts.Facts) { f.Python.Pip = nil }, finding.PipPythonMismatch, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := healthy()
			tc.mutate(f)
			fd := expectFinding(t, Run(f), tc.id, tc.sev)
			if fd == nil {
				return
			}
			if fd.Title == "" || fd.Detail == "" || len(fd.Evidence) == 0 {
				t.Errorf("finding lacks title, detail or evidence: %+v", fd)
			}
		})
	}
}

// The seed: cu128 torch, no nvcc: the fixes name NVIDIA's apt packages for
// Ubuntu 24.04 with the CUDA_HOME to export and a devel image, never a bare
// `pip`, and say why the cu12 pip wheel is no fix.
func TestSeedNoCompilerFixes(t *testing.T) {
	got := Run(seedFacts())
	fd := find(got, finding.NoCUDACompiler)
	if fd == nil || fd.Severity != finding.Error {
		t.Fatalf("want no-cuda-compiler error, got %v", ids(got))
	}
	all := fixText(fd)
	for _, want := range []string{
		"cuda-keyring_1.1-1_all.deb", "repos/ubuntu2404/x86_64",
		"apt-get install -y --no-install-recommends cuda-nvcc-12-8 cuda-cudart-dev-12-8",
		"export CUDA_HOME=/usr/local/cuda-12.8",
		"pytorch/pytorch:2.11.0-cuda12.8-cudnn9-devel", "nvidia/cuda:12.8.1-devel-ubuntu24.04",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("fixes lack %q:\n%s", want, all)
		}
	}
	if !strings.Contains(fd.Detail, "nvidia-cuda-nvcc-cu12==12.8.* does not help") {
		t.Errorf("detail should say the cu12 pip wheel has no nvcc: %s", fd.Detail)
	}
	if strings.Contains(all, "pip install nvidia-cuda-nvcc-cu12") {
		t.Errorf("recommends the cu12 wheel that has no nvcc:\n%s", all)
	}
	if !slices.Contains(fd.Evidence, "searched: PATH: /root/venv/bin/nvcc (absent)") {
		t.Errorf("evidence lacks the searched places: %v", fd.Evidence)
	}
}

// A cu130 torch without nvcc gets NVIDIA's CUDA 13 pip wheels first, through
// the environment's own interpreter, with CUDA_HOME at nvidia/cu13.
func TestCU13PipCompilerFix(t *testing.T) {
	f := healthy()
	f.CUDA = facts.CUDA{}
	fd := find(Run(f), finding.NoCUDACompiler)
	if fd == nil {
		t.Fatal("no-cuda-compiler did not fire")
	}
	first := fd.Fixes[0]
	want := []string{
		"/opt/torch/.venv/bin/python3 -m pip install 'nvidia-cuda-nvcc==13.0.*' 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-crt==13.0.*' 'nvidia-nvvm==13.0.*' 'nvidia-cuda-cccl==13.0.*'",
		"export CUDA_HOME=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13",
		`export PATH="$CUDA_HOME/bin:$PATH"`,
		`ln -sfn lib "$CUDA_HOME/lib64"`,
		`ln -sf libcudart.so.13 "$CUDA_HOME/lib/libcudart.so"`,
	}
	if !slices.Equal(first.Commands, want) {
		t.Errorf("first fix commands:\n%q\nwant\n%q", first.Commands, want)
	}
	// uv environments usually have no pip of their own: uv's pip then.
	f.Python.Selected.Kind = "uv"
	fd = find(Run(f), finding.NoCUDACompiler)
	if !strings.HasPrefix(fd.Fixes[0].Commands[0], "uv pip install --python /opt/torch/.venv/bin/python3 ") {
		t.Errorf("uv env: %q", fd.Fixes[0].Commands[0])
	}
	// One that has pip (the H200's) keeps its own pip.
	f.Python.Selected.Distributions = []facts.Distribution{{Name: "pip", Version: "24.0"}}
	fd = find(Run(f), finding.NoCUDACompiler)
	if !strings.HasPrefix(fd.Fixes[0].Commands[0], "/opt/torch/.venv/bin/python3 -m pip install ") {
		t.Errorf("uv env with pip: %q", fd.Fixes[0].Commands[0])
	}
}

func TestSortedBySeverityAndJSONShape(t *testing.T) {
	f := seedFacts()
	f.Toolchain.Ninja = nil
	f.GPU.Processes = []facts.GPUProcess{{PID: 1, Name: "x", UsedMiB: 1}}
	got := Run(f)
	for i := 1; i < len(got); i++ {
		if got[i-1].Severity.Rank() > got[i].Severity.Rank() {
			t.Fatalf("not sorted by severity: %v", ids(got))
		}
	}
	b, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"id", "severity", "title", "detail", "evidence", "fixes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("finding JSON lacks %q: %s", k, b)
		}
	}
}

func fixText(fd *finding.Finding) string {
	var b strings.Builder
	for _, fx := range fd.Fixes {
		b.WriteString(fx.Title + "\n" + strings.Join(fx.Commands, "\n") + "\n")
	}
	return b.String()
}

// nvcc 12.4 for Blackwell: the fixes point at a 12.8 compiler elsewhere on
// the machine first, and the evidence says which releases can target sm_120.
func TestNVCCCannotTargetFixes(t *testing.T) {
	f := healthy()
	f.Torch.CUDA, f.Torch.Version = "12.8", "2.11.0+cu128"
	f.CUDA.Compilers[0].Version = "12.4.131"
	f.CUDA.Compilers = append(f.CUDA.Compilers, facts.NVCC{Path: "/opt/conda/bin/nvcc", Home: "/opt/conda", Version: "12.8.93", Via: []string{"conda"}})
	f.GPU.Devices[0].Capability = "12.0"
	fd := find(Run(f), finding.NVCCCannotTargetGPU)
	if fd == nil {
		t.Fatal("did not fire")
	}
	if !slices.Contains(fd.Evidence, "sm_120: nvcc 12.8 and newer (nvcc --list-gpu-code; CUDA release notes)") {
		t.Errorf("evidence: %q", fd.Evidence)
	}
	if got := fd.Fixes[0].Commands[0]; got != "export CUDA_HOME=/opt/conda" {
		t.Errorf("first fix: %q", got)
	}
	if last := fd.Fixes[len(fd.Fixes)-1].Commands[0]; last != `export TORCH_CUDA_ARCH_LIST=9.0+PTX` {
		t.Errorf("last fix: %q", last)
	}
	f.GPU.Devices[0].Capability = "7.0"
	f.CUDA.Compilers[0].Version = "13.0.88"
	f.Torch.CUDA, f.Torch.Version = "13.0", "2.11.0+cu130"
	fd = find(Run(f), finding.NVCCCannotTargetGPU)
	if fd == nil || !slices.Contains(fd.Evidence, "sm_70: nvcc 11.0 to 12.9 only (later releases dropped it)") {
		t.Errorf("sm_70 on nvcc 13: %+v", fd)
	}
}

// A compiler of another major than torch's is no fix for "not discoverable":
// the fixes install one of torch's major instead of exporting CUDA_HOME to it.
func TestNotDiscoverableWrongMajor(t *testing.T) {
	f := healthy()
	f.CUDA.Compilers[0] = facts.NVCC{Path: "/usr/local/cuda-12.8/bin/nvcc", Home: "/usr/local/cuda-12.8", Version: "12.8.93", Via: []string{"toolkit"}}
	f.CUDA.TorchHome = nil
	fd := find(Run(f), finding.CUDACompilerNotDiscoverable)
	if fd == nil {
		t.Fatal("did not fire")
	}
	all := fixText(fd)
	if strings.Contains(all, "export CUDA_HOME=/usr/local/cuda-12.8") {
		t.Errorf("recommends the CUDA 12.8 compiler for a cu130 torch:\n%s", all)
	}
	if !strings.Contains(all, "nvidia-cuda-nvcc==13.0.*") {
		t.Errorf("fixes lack a CUDA 13.0 compiler:\n%s", all)
	}
}
