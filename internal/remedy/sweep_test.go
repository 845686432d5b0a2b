package remedy

import (
	"slices"
	"strings"
	"testing"
)

// TestExportHomePipLinks: pointing builds at an nvcc from NVIDIA's pip wheels also
// makes the links those wheels lack (lib64, libcudart.so), as the pip route does;
// a toolkit folder gets the exports only. cli's TestNetworkDoctorPipNVCCFixBuilds
// builds a real extension with exactly these commands.
func TestExportHomePipLinks(t *testing.T) {
	pip := ExportHome("/opt/venv/lib/python3.12/site-packages/nvidia/cu13", "13.0.88")
	if !slices.ContainsFunc(pip.Commands, func(c string) bool { return strings.Contains(c, "libcudart.so.13") }) ||
		!slices.ContainsFunc(pip.Commands, func(c string) bool { return strings.Contains(c, "lib64") }) {
		t.Errorf("pip nvcc: %q lacks the lib64 and libcudart.so links", pip.Commands)
	}
	for _, home := range []string{"/usr/local/cuda-13.0", "/opt/conda/envs/x", "/opt/venv/lib/python3.12/site-packages/nvidia/cu13x"} {
		if r := ExportHome(home, "13.0.88"); len(r.Commands) != 2 {
			t.Errorf("%s: %q, want the two exports only", home, r.Commands)
		}
	}
	if r := ExportHome("/opt/venv/lib/python3.12/site-packages/nvidia/cu13", ""); len(r.Commands) != 2 {
		t.Errorf("unknown version: %q, want the two exports only", r.Commands)
	}
}

// TestTorchInstallOnlyPublishedBuilds: a torch release is pinned only with
// an index download.pytorch.org has it on (kb torch_release_cuda, from
// pytorch's RELEASE.md): torch 2.4.0 on cu130 does not exist, so the step
// installs the newest torch for cu130 and says why; a release the table
// does not list stays pinned.
func TestTorchInstallOnlyPublishedBuilds(t *testing.T) {
	c := Context{Python: Of("/v/bin/python3", FromMachine), HasPip: true}
	for _, tc := range []struct {
		version, cuda, spec string
	}{
		{"2.4.0", "12.1", "torch==2.4.0"},
		{"2.4.0", "12.4", "torch==2.4.0"},
		{"2.4.0", "13.0", "torch"},
		{"2.4.0+cpu", "12.8", "torch"},
		{"2.11.0", "12.8", "torch==2.11.0"},
		{"2.11.0", "11.8", "torch"},
		{"2.12.0", "12.8", "torch"},
		{"2.1.2", "12.1", "torch==2.1.2"},
		{"2.1.2", "12.8", "torch"},
		{"1.9.0", "11.1", "torch==1.9.0"}, // not in the table: as asked
		{"", "12.8", "torch"},
	} {
		r := TorchInstall(c, tc.version, tc.cuda, true)
		want := "/v/bin/python3 -m pip install --force-reinstall " + tc.spec + " --index-url https://download.pytorch.org/whl/cu" + strings.ReplaceAll(tc.cuda, ".", "")
		if len(r.Commands) != 1 || r.Commands[0] != want {
			t.Errorf("%s on %s: %q, want %q", tc.version, tc.cuda, r.Commands, want)
		}
		if tc.spec == "torch" && tc.version != "" && !strings.Contains(r.Title, "has no CUDA "+tc.cuda+" build") {
			t.Errorf("%s on %s: title %q does not say why the pin went", tc.version, tc.cuda, r.Title)
		}
	}
}

// TestNarrowedBuildInUVEnvironment: a uv environment without pip has no
// `python -m pip download` or `pip wheel`: the narrowed build installs pip
// into it (with uv) before it uses them.
func TestNarrowedBuildInUVEnvironment(t *testing.T) {
	for _, hasPip := range []bool{false, true} {
		c := Context{Python: Of("/v/bin/python3", FromMachine), PythonKind: Of("uv", FromMachine), HasPip: hasPip,
			TorchCUDA: Of("12.8", FromMachine), GPUs: []Fact[string]{Of("12.0", FromMachine)}, Platform: Of(Linux, FromMachine)}
		rs := BuildFromSource(c, "causal-conv1d", "causal-conv1d", "12.8")
		if len(rs) < 2 || !strings.HasPrefix(rs[0].ID, "build-narrowed/") {
			t.Fatalf("no narrowed build: %+v", rs)
		}
		cmds := rs[0].Commands
		first := slices.IndexFunc(cmds, func(s string) bool { return strings.Contains(s, " -m pip ") })
		installsPip := slices.Index(cmds, "uv pip install --python /v/bin/python3 pip")
		if !hasPip && (installsPip < 0 || installsPip > first) {
			t.Errorf("uv without pip: %q uses -m pip before installing it", cmds)
		}
		if hasPip && installsPip >= 0 {
			t.Errorf("uv with pip: %q installs pip again", cmds)
		}
	}
}

// TestCondaCompilerNamesTheEnvironment: the conda route installs into the
// diagnosed conda environment by its prefix (-p), not into whichever is
// active; only without a known interpreter does it fall back to $CONDA_PREFIX.
func TestCondaCompilerNamesTheEnvironment(t *testing.T) {
	c := Context{Python: Of("/opt/conda/envs/work/bin/python3.12", FromMachine), PythonKind: Of("conda", FromMachine),
		TorchCUDA: Of("12.8", FromMachine), Platform: Of(Linux, FromMachine)}
	r := condaCompiler(c, "12.8")
	if len(r.Commands) != 2 || !strings.HasPrefix(r.Commands[0], "conda install -y -p /opt/conda/envs/work -c ") ||
		r.Commands[1] != "export CUDA_HOME=/opt/conda/envs/work" || !strings.HasPrefix(r.Undo[0], "conda remove -y -p /opt/conda/envs/work ") {
		t.Errorf("conda env by prefix: %q undo %q", r.Commands, r.Undo)
	}
	c.Python = Fact[string]{}
	if r := condaCompiler(c, "12.8"); len(r.Commands) != 2 || strings.Contains(r.Commands[0], " -p ") || r.Commands[1] != `export CUDA_HOME="$CONDA_PREFIX"` {
		t.Errorf("no interpreter known: %q", r.Commands)
	}
}

// TestReleaseForTorch: a package whose wheels pin one torch is pinned to
// the release built for that torch where the KB knows it (kb torch_pins,
// read from the wheels' METADATA), else left to pip held to that torch.
func TestReleaseForTorch(t *testing.T) {
	c := Context{Python: Of("/v/bin/python3", FromMachine), HasPip: true}
	for _, tc := range []struct{ dist, torch, want string }{
		{"xformers", "2.3.0+cu121", "/v/bin/python3 -m pip install xformers==0.0.26.post1 torch==2.3.0"},
		{"xformers", "1.13.1", "/v/bin/python3 -m pip install xformers==0.0.16 torch==1.13.1"},
		{"vllm", "2.5.1", "/v/bin/python3 -m pip install vllm==0.7.3 torch==2.5.1"},
		{"xformers", "2.12.0", "/v/bin/python3 -m pip install --upgrade xformers torch==2.12.0"},
	} {
		r, _ := ReleaseForTorch(c, tc.dist, tc.torch)
		if len(r.Commands) != 1 || r.Commands[0] != tc.want {
			t.Errorf("%s for torch %s: %q, want %q", tc.dist, tc.torch, r.Commands, tc.want)
		}
	}
}

// TestBuildImportsFirst: causal-conv1d's setup.py imports wheel.bdist_wheel
// and packaging (kb build_imports): a build without isolation installs the
// ones the environment lacks first, all of them where the environment is
// not known (a log's), none where it has them.
func TestBuildImportsFirst(t *testing.T) {
	c := Context{Python: Of("/v/bin/python3", FromMachine), HasPip: true, TorchCUDA: Of("12.8", FromMachine),
		GPUs: []Fact[string]{Of("9.0", FromMachine)}, Platform: Of(Linux, FromMachine)}
	for _, tc := range []struct {
		machine   bool
		installed map[string]string
		want      string
	}{
		{false, nil, "/v/bin/python3 -m pip install packaging setuptools wheel"},
		// setuptools 70 does not vendor wheel onto sys.path; 80 does, and
		// a setuptools installed now is that new.
		{true, map[string]string{"setuptools": "70.3.0", "torch": "2.11.0"}, "/v/bin/python3 -m pip install packaging wheel"},
		{true, map[string]string{"setuptools": "80.9.0", "torch": "2.11.0"}, "/v/bin/python3 -m pip install packaging"},
		{true, map[string]string{"packaging": "25.0"}, "/v/bin/python3 -m pip install setuptools"},
		{true, map[string]string{"setuptools": "80.9.0", "packaging": "25.0"}, ""},
	} {
		c.Machine, c.Installed = tc.machine, tc.installed
		for _, r := range BuildFromSource(c, "causal-conv1d", "causal-conv1d", "12.8") {
			i := slices.IndexFunc(r.Commands, func(s string) bool {
				return strings.Contains(s, "--no-build-isolation") && !strings.Contains(s, " download ")
			})
			first := slices.Index(r.Commands, tc.want)
			if tc.want == "" {
				if slices.ContainsFunc(r.Commands, func(s string) bool {
					return strings.Contains(s, "install packaging") || strings.Contains(s, "install setuptools")
				}) {
					t.Errorf("%s, all installed: %q", r.ID, r.Commands)
				}
				continue
			}
			if first < 0 || first > i {
				t.Errorf("%s with %v: %q lacks %q before the build", r.ID, tc.installed, r.Commands, tc.want)
			}
		}
	}
}

// TestTorchInstallKeepsCondaTorchToConda: a torch conda installed is
// replaced with conda in its environment (-p PREFIX), never with pip over
// it; pip's torch stays for a torch pip installed.
func TestTorchInstallKeepsCondaTorchToConda(t *testing.T) {
	c := Context{Python: Of("/opt/conda/envs/work/bin/python3.12", FromMachine), PythonKind: Of("conda", FromMachine),
		TorchVersion: Of("2.4.0", FromMachine), TorchInstaller: Of("conda", FromMachine), HasPip: true}
	r := TorchInstall(c, "2.4.0", "12.4", true)
	if len(r.Commands) != 1 || r.Commands[0] != "conda install -y -p /opt/conda/envs/work -c conda-forge 'pytorch=*=cuda*'" || !strings.Contains(r.Title, "installed by conda") {
		t.Errorf("conda's torch: %q %s", r.Commands, r.Title)
	}
	c.TorchInstaller = Of("pip", FromMachine)
	if r := TorchInstall(c, "2.4.0", "12.4", true); len(r.Commands) != 1 || !strings.Contains(r.Commands[0], "-m pip install --force-reinstall torch==2.4.0") {
		t.Errorf("pip's torch: %q", r.Commands)
	}
}

// TestDevelImageOnlyForTorchsCUDA: pytorch/pytorch has images of a release
// for its own CUDA builds only; torch 2.4.0 with CUDA 13.0 gets the
// nvidia/cuda image, 2.4.0 with 12.4 its own.
func TestDevelImageOnlyForTorchsCUDA(t *testing.T) {
	c := Context{TorchVersion: Of("2.4.0", FromMachine), Platform: Of(Linux, FromMachine)}
	if r := develImage(c, "13.0"); len(r.Commands) != 1 || strings.Contains(r.Commands[0], "pytorch/pytorch") || !strings.Contains(r.Commands[0], "nvidia/cuda:13.0") {
		t.Errorf("2.4.0 on 13.0: %q", r.Commands)
	}
	if r := develImage(c, "12.4"); len(r.Commands) != 1 || r.Commands[0] != "docker pull pytorch/pytorch:2.4.0-cuda12.4-cudnn9-devel" {
		t.Errorf("2.4.0 on 12.4: %q", r.Commands)
	}
}
