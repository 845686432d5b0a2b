package remedy

import (
	"regexp"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// TestPlatforms: macOS gets no CUDA build at all, Windows NVIDIA's
// installer and MSVC (by hand), WSL NVIDIA's WSL-Ubuntu repository.
func TestPlatforms(t *testing.T) {
	c := h200()
	c.Platform = Of(Darwin, FromLog)
	rs := CompilerRoutes(c)
	if len(rs) != 1 || rs[0].Title != "CUDA extensions do not build on macOS" || rs[0].Viable() || len(rs[0].Commands) != 0 {
		t.Errorf("macOS: %+v", rs)
	}
	c.Platform = Of(Windows, FromLog)
	rs = CompilerRoutes(c)
	if len(rs) != 1 || !strings.Contains(rs[0].Title, "Windows") || !strings.Contains(rs[0].Title, "MSVC") || !rs[0].Manual || !strings.Contains(rs[0].FillIn, "Visual Studio") {
		t.Errorf("Windows: %+v", rs)
	}
	c = h200()
	c.WSL = Of(true, FromMachine)
	for _, r := range CompilerRoutes(c) {
		if r.ID == "compiler/apt" && !strings.Contains(strings.Join(r.Commands, "\n"), "/repos/wsl-ubuntu/x86_64/cuda-keyring") {
			t.Errorf("WSL apt route: %v", r.Commands)
		}
	}
}

// TestHostCompilerPerBuildSystem: what each build system really reads.
func TestHostCompilerPerBuildSystem(t *testing.T) {
	c := h200()
	for _, tc := range []struct {
		bs        string
		want, not []string
	}{
		{BuildSetuptools, []string{"export CC=/usr/bin/gcc-12", "export CXX=/usr/bin/g++-12"}, []string{"CUDAHOSTCXX"}},
		{BuildCMake, []string{"export CUDAHOSTCXX=/usr/bin/g++-12"}, []string{"export CC=", "NVCC_CCBIN"}},
		{BuildUnknown, []string{"export CC=/usr/bin/gcc-12", "export NVCC_CCBIN=/usr/bin/g++-12", "export CUDAHOSTCXX=/usr/bin/g++-12"}, nil},
	} {
		c.BuildSystem = Of(tc.bs, FromLog)
		r := HostCompiler(c, 12, "12.6")
		cmds := strings.Join(r.Commands, "\n")
		if !strings.Contains(cmds, "apt-get install -y g++-12") {
			t.Errorf("%q: %s", tc.bs, cmds)
		}
		for _, w := range tc.want {
			if !strings.Contains(cmds, w) {
				t.Errorf("%q lacks %q:\n%s", tc.bs, w, cmds)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(cmds, n) {
				t.Errorf("%q has %q:\n%s", tc.bs, n, cmds)
			}
		}
	}
}

// TestParallelismPerBuildSystem: MAX_JOBS for setuptools builds, and
// CMAKE_BUILD_PARALLEL_LEVEL (never MAX_JOBS) for CMake ones; memory named
// with its origin.
func TestParallelismPerBuildSystem(t *testing.T) {
	c := h200()
	c.MemTotal = Of(int64(24)<<30, FromLog)
	r := StockBuild(c, "causal-conv1d", "13.0")
	build := r.Commands[len(r.Commands)-1]
	if !strings.HasPrefix(build, "MAX_JOBS=4 CAUSAL_CONV1D_FORCE_BUILD=TRUE ") || !strings.Contains(r.Preconditions[0].Detail, "24.0 GiB total memory (log)") {
		t.Errorf("setuptools: %s / %s", build, r.Preconditions[0].Detail)
	}
	if strings.Contains(build, "TORCH_CUDA_ARCH_LIST") {
		t.Errorf("causal-conv1d ignores TORCH_CUDA_ARCH_LIST: %s", build)
	}
	if got := parallelEnv(cmakeProfile()); got != "CMAKE_BUILD_PARALLEL_LEVEL" {
		t.Errorf("CMake: %s", got)
	}
}

// TestWithPipArgs: doctor's pip commands take the user's index options;
// --no-index drops the fix's --index-url.
func TestWithPipArgs(t *testing.T) {
	c := h200()
	bare := c.Pip("torch==2.11.0", "--index-url", "https://download.pytorch.org/whl/cu130")
	c.PipArgs = []string{"--no-index", "--find-links", "/w"}
	if got := c.WithPipArgs(bare); got != "/opt/torch/.venv/bin/python3 -m pip install --no-index --find-links /w torch==2.11.0" {
		t.Errorf("got %s", got)
	}
	if got := c.WithPipArgs("apt-get update"); got != "apt-get update" {
		t.Errorf("non-pip command changed: %s", got)
	}
}

// placeholder matches the words a command must never contain: an
// uppercase stand-in, a /path/to/, an <angle> slot.
var placeholder = regexp.MustCompile(`\b(PACKAGE|NAME|VERSION|PATH_TO)\b|/path/to/|<[a-z_]+>|X\.Y`)

// TestNoPlaceholders: no remedy of any builder, on any platform, with
// facts known or not, has a placeholder in a command; unknown values make
// the remedy manual.
func TestNoPlaceholders(t *testing.T) {
	contexts := []Context{h200(), {}, {Platform: Of(Darwin, FromLog)}, {Platform: Of(Windows, FromLog)}}
	for _, c := range contexts {
		var all []Remedy
		all = append(all, CompilerRoutes(c)...)
		all = append(all, BuildFromSource(c, "causal-conv1d", "causal-conv1d", "13.0")...)
		all = append(all, BuildFromSource(c, "flash-attn", "flash-attn", "12.8")...)
		all = append(all, HostCompiler(c, 13, "12.8"), OSPackages(c, "x", []string{"build-essential"}, nil), OwnPip(c),
			TorchInstall(c, "", TorchWheelCUDA(c), false), CondaPython("3.12"), GPUProcesses())
		for _, r := range all {
			for _, cmd := range r.Commands {
				if placeholder.MatchString(cmd) {
					t.Errorf("%s: placeholder in %q", r.ID, cmd)
				}
			}
			if r.Manual && len(r.Commands) == 0 && r.FillIn == "" && r.ID != "compiler/image" {
				t.Errorf("%s: manual without saying what to fill in", r.ID)
			}
		}
	}
	if r := OwnPip(h200()); len(r.Commands) != 0 || !r.Manual || r.Viable() {
		t.Errorf("the pip habit must be manual: %+v", r)
	}
}

// TestPairs: with no torch, the compiler is the CUDA of the torch the plan
// installs (never cu130 torch with a 12.8 compiler).
func TestPairs(t *testing.T) {
	c := h200()
	c.TorchCUDA, c.TorchVersion = Fact[string]{}, Fact[string]{}
	torch := TorchInstall(c, "", TorchWheelCUDA(c), false)
	mm, from := CompilerCUDA(c)
	if mm != torch.TorchCUDA || from != FromDefault {
		t.Errorf("compiler %s (%s) vs torch %s", mm, from, torch.TorchCUDA)
	}
	for _, r := range CompilerRoutes(c) {
		if r.CUDA != "" && r.CUDA != torch.TorchCUDA {
			t.Errorf("%s installs CUDA %s, torch would be %s", r.ID, r.CUDA, torch.TorchCUDA)
		}
	}
}

func cmakeProfile() kb.BuildProfile { return kb.BuildProfile{BuildSystem: BuildCMake} }

// TestUnknownCUDAMinorInventsNothing: for a CUDA minor the KB lists no full
// release of (13.9 here), no route names a "13.9.0" conda label or image
// tag; the routes that need one become manual and say it is unknown.
func TestUnknownCUDAMinorInventsNothing(t *testing.T) {
	const mm = "13.9"
	if _, ok := kb.CUDA().ToolkitFull(mm); ok {
		t.Fatalf("the KB now lists CUDA %s: pick another unknown minor", mm)
	}
	for _, withTorch := range []bool{true, false} {
		c := h200()
		c.TorchCUDA, c.TorchVersion = Of(mm, FromMachine), Of("2.99.0+cu139", FromMachine)
		if !withTorch {
			c.TorchVersion = Fact[string]{}
		}
		var sawConda, sawImage bool
		for _, r := range CompilerRoutes(c) {
			all := r.Title + "\n" + r.FillIn + "\n" + strings.Join(r.Commands, "\n")
			if strings.Contains(all, mm+".0") {
				t.Errorf("%s (torch known %v) invents %s.0: %s", r.ID, withTorch, mm, all)
			}
			switch r.ID {
			case "compiler/conda":
				sawConda = true
				if !r.Manual || len(r.Commands) != 0 || !strings.Contains(checksText(r), "unknown") {
					t.Errorf("conda route for an unknown minor must be manual and say unknown: %+v", r)
				}
			case "compiler/image":
				sawImage = true
				if withTorch && !strings.Contains(all, "pytorch/pytorch:2.99.0-cuda13.9") {
					t.Errorf("image route with torch known should name torch's image: %s", all)
				}
				if !withTorch && (len(r.Commands) != 0 || !strings.Contains(checksText(r), "unknown")) {
					t.Errorf("image route without torch must name no tag and say unknown: %+v", r)
				}
			}
		}
		if !sawConda || !sawImage {
			t.Errorf("routes: conda %v, image %v", sawConda, sawImage)
		}
	}
	// A known minor keeps its real release.
	for _, r := range CompilerRoutes(h200()) {
		if r.ID == "compiler/image" && !strings.Contains(r.Title, "nvidia/cuda:13.0.2-devel") {
			t.Errorf("known minor: %s", r.Title)
		}
	}
}

func checksText(r Remedy) string {
	var b strings.Builder
	for _, c := range r.Preconditions {
		b.WriteString(c.Check + ": " + c.Detail + "\n")
	}
	return b.String()
}

// TestAptRepoCarriesTheRelease: NVIDIA's apt repository of an OS carries
// only the CUDA releases that support that OS (debian12 starts at 12.3,
// ubuntu2404 at 12.5; ubuntu2004 stops at 12.9, CUDA 13.0 dropped Ubuntu
// 20.04): a CUDA 11.1 compiler from debian12 or a CUDA 13.0 one from
// ubuntu2004 does not exist, so the apt route must be manual and say which
// routes are left, never run apt-get install cuda-nvcc-11-1.
func TestAptRepoCarriesTheRelease(t *testing.T) {
	for _, tc := range []struct {
		distro, cuda string
		exists       bool
	}{
		{"debian 12", "11.1", false},
		{"debian 12", "12.2", false},
		{"ubuntu 20.04", "13.0", false},
		{"ubuntu 20.04", "12.9", true},
		{"debian 12", "12.3", true},
		{"ubuntu 24.04", "11.8", false},
		{"ubuntu 24.04", "12.4", false},
		{"ubuntu 22.04", "11.1", false},
		{"debian 12", "12.8", true},
		{"ubuntu 24.04", "12.8", true},
		{"ubuntu 22.04", "11.8", true},
		{"ubuntu 20.04", "11.1", true},
	} {
		c := h200()
		c.Distro = Of(tc.distro, FromMachine)
		c.TorchCUDA = Of(tc.cuda, FromMachine)
		var apt *Remedy
		for _, r := range CompilerRoutes(c) {
			if r.ID == "compiler/apt" {
				apt = &r
			}
		}
		if apt == nil {
			t.Fatalf("%s CUDA %s: no apt route", tc.distro, tc.cuda)
		}
		pkg := "cuda-nvcc-" + strings.ReplaceAll(tc.cuda, ".", "-")
		all := strings.Join(apt.Commands, "\n")
		if tc.exists {
			if apt.Manual || !strings.Contains(all, pkg) {
				t.Errorf("%s CUDA %s: the repository has it, want %s: %+v", tc.distro, tc.cuda, pkg, apt)
			}
			continue
		}
		if !apt.Manual || len(apt.Commands) != 0 || apt.Viable() || strings.Contains(apt.FillIn, pkg) || !strings.Contains(apt.FillIn, "runfile") {
			t.Errorf("%s CUDA %s: the repository lacks it, want a manual route naming the runfile: %+v", tc.distro, tc.cuda, apt)
		}
	}
}

// TestTorchImageTagExists: pytorch/pytorch's devel images are tagged
// -cudnn9- from torch 2.4.0 only; older releases were tagged with cudnn8
// or cudnn7 and not for every CUDA (1.9.0-cuda11.1-cudnn8-devel), so no
// 1.9.0-cuda11.1-cudnn9-devel is ever pulled.
func TestTorchImageTagExists(t *testing.T) {
	for _, tc := range []struct {
		torch, cuda, tag string
	}{
		{"1.9.0+cu111", "11.1", ""},
		{"2.3.1+cu121", "12.1", "nvidia/cuda:12.1.1-devel-ubuntu22.04"},
		{"2.4.0+cu121", "12.1", "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-devel"},
		{"2.11.0+cu130", "13.0", "pytorch/pytorch:2.11.0-cuda13.0-cudnn9-devel"},
	} {
		c := h200()
		c.TorchVersion, c.TorchCUDA = Of(tc.torch, FromLog), Of(tc.cuda, FromLog)
		for _, r := range CompilerRoutes(c) {
			if r.ID != "compiler/image" {
				continue
			}
			all := r.Title + "\n" + r.FillIn + "\n" + strings.Join(r.Commands, "\n")
			if tc.tag == "" {
				if strings.Contains(all, "cudnn9") || strings.Contains(all, "docker pull pytorch/pytorch") || !strings.Contains(r.FillIn, "Docker Hub") {
					t.Errorf("torch %s: no -cudnn9- tag exists: %+v", tc.torch, r)
				}
			} else if !strings.Contains(strings.Join(r.Commands, "\n"), "docker pull "+tc.tag) || strings.HasPrefix(tc.torch, "2.3") && strings.Contains(all, "cudnn9") {
				t.Errorf("torch %s: want %s: %+v", tc.torch, tc.tag, r)
			}
		}
	}
}

// TestRHELFamilyNeverApt: a RHEL-family host (os-release ID rhel, rocky,
// almalinux, centos, or an ID_LIKE naming rhel) installs with dnf and the
// names its AppStream has: python3.11-devel on RHEL 9, python38-devel on
// RHEL 8 (no dot), python3-devel for the OS's own python3, the
// gcc-toolset-N compiler under /opt/rh; never apt-get, never pythonX.Y-dev,
// never a /usr/bin/g++-N that RHEL does not have.
func TestRHELFamilyNeverApt(t *testing.T) {
	for _, tc := range []struct {
		distro, like, mm string
		want             string // "" manual
	}{
		{"rhel 9.4", "fedora", "3.11", "dnf install -y python3.11-devel"},
		{"rocky 9.3", "rhel centos fedora", "3.12", "dnf install -y python3.12-devel"},
		{"almalinux 9.5", "rhel centos fedora", "3.9", "dnf install -y python3-devel"},
		{"rhel 8.10", "fedora", "3.8", "dnf install -y python38-devel"},
		{"rhel 8.10", "fedora", "3.11", "dnf install -y python3.11-devel"},
		{"centos 9", "rhel fedora", "3", "dnf install -y python3-devel"},
		{"ol 9.4", "fedora", "3.11", "dnf install -y python3.11-devel"},
		{"rhel 9.4", "fedora", "3.8", ""},
		{"fedora 40", "", "3", "dnf install -y python3-devel"},
		{"fedora 40", "", "3.10", ""},
		{"amzn 2023", "fedora", "3.11", ""},
	} {
		c := h200()
		c.Distro, c.DistroLike = Of(tc.distro, FromMachine), Of(tc.like, FromMachine)
		r := PythonHeaders(c, tc.mm)
		all := strings.Join(r.Commands, "\n") + "\n" + r.Title + "\n" + r.FillIn
		if strings.Contains(all, "apt-get") || strings.Contains(all, "-dev ") || strings.HasSuffix(strings.Join(r.Commands, " "), "-dev") {
			t.Errorf("%s Python %s: apt on a RHEL-family host: %+v", tc.distro, tc.mm, r)
		}
		if tc.want == "" {
			if !r.Manual || len(r.Commands) != 0 || strings.Contains(all, "pythonX") {
				t.Errorf("%s Python %s: its archive has no such package, want manual: %+v", tc.distro, tc.mm, r)
			}
			continue
		}
		if r.Manual || strings.Join(r.Commands, "\n") != tc.want {
			t.Errorf("%s Python %s: got %q, want %q", tc.distro, tc.mm, r.Commands, tc.want)
		}
	}
	// g++: gcc-toolset-N on RHEL 8/9, its own path; never apt-get g++-N.
	c := h200()
	c.Distro, c.DistroLike = Of("rocky 9.3", FromMachine), Of("rhel centos fedora", FromMachine)
	c.BuildSystem = Of(BuildSetuptools, FromLog)
	r := HostCompiler(c, 13, "12.6")
	cmds := strings.Join(r.Commands, "\n")
	for _, w := range []string{"dnf install -y gcc-toolset-13-gcc-c++", "export CXX=/opt/rh/gcc-toolset-13/root/usr/bin/g++", "export CC=/opt/rh/gcc-toolset-13/root/usr/bin/gcc"} {
		if !strings.Contains(cmds, w) {
			t.Errorf("rocky 9.3 g++ 13: lacks %q:\n%s", w, cmds)
		}
	}
	if strings.Contains(cmds+r.FillIn, "apt-get") || strings.Contains(cmds, "/usr/bin/g++-13") {
		t.Errorf("rocky 9.3 g++ 13: %+v", r)
	}
	// A toolset RHEL 9 does not ship (gcc-toolset-9 is RHEL 8's): manual.
	r = HostCompiler(c, 9, "11.8")
	if !r.Manual || len(r.Commands) != 0 || strings.Contains(r.FillIn, "apt-get") || strings.Contains(r.FillIn, "/usr/bin/g++-9") {
		t.Errorf("rocky 9.3 g++ 9: want manual: %+v", r)
	}
	// ID_LIKE alone makes the family: an unknown rebuild that says rhel.
	c.Distro, c.DistroLike = Of("someel 9.2", FromMachine), Of("rhel fedora", FromMachine)
	if r := OSPackages(c, "x", []string{"build-essential"}, []string{"gcc-c++"}); strings.Join(r.Commands, "\n") != "dnf install -y gcc-c++" {
		t.Errorf("ID_LIKE rhel: %+v", r)
	}
}

// TestWheelOnlyRebuild: a package PyPI has no sdist of (torchao: wheels
// only since 0.1) is never "rebuilt" with pip install --no-binary (no
// matching distribution) nor reinstalled from PyPI (the same wheel): for a
// CUDA mismatch, its own index's wheel for torch's CUDA; for a GPU its
// wheel lacks, a build from its repository with TORCH_CUDA_ARCH_LIST; for
// the others (bitsandbytes, apex, whose PyPI name is another project)
// their own way by hand.
func TestWheelOnlyRebuild(t *testing.T) {
	c := h200()
	c.TorchCUDA = Of("12.8", FromMachine)
	r, ok := WheelOnlyRebuild(c, "torchao", "0.18.0", "")
	all := strings.Join(r.Commands, "\n")
	if !ok || r.Manual || !strings.Contains(all, "torchao==0.18.0 --index-url https://download.pytorch.org/whl/cu128") || strings.Contains(all, "--no-binary") {
		t.Errorf("torchao CUDA mismatch: %+v", r)
	}
	r, ok = WheelOnlyRebuild(c, "torchao", "0.18.0", "9.0")
	all = strings.Join(r.Commands, "\n")
	for _, w := range []string{"TORCH_CUDA_ARCH_LIST=9.0", "USE_CUDA=1", "--no-build-isolation", "git+https://github.com/pytorch/ao.git@v0.18.0"} {
		if !ok || !strings.Contains(all, w) {
			t.Errorf("torchao arch: lacks %q: %+v", w, r)
		}
	}
	if strings.Contains(all, "--no-binary") {
		t.Errorf("torchao arch: %s", all)
	}
	c.TorchCUDA = Of("", FromMachine)
	if r, _ := WheelOnlyRebuild(c, "torchao", "", ""); !r.Manual || len(r.Commands) != 0 {
		t.Errorf("torchao, torch's CUDA unknown: want manual: %+v", r)
	}
	for _, dist := range []string{"bitsandbytes", "apex", "sgl_kernel", "triton"} {
		r, ok := WheelOnlyRebuild(c, dist, "1.0", "9.0")
		if !ok || !r.Manual || len(r.Commands) != 0 || r.FillIn == "" || strings.Contains(r.FillIn, "pip install apex") {
			t.Errorf("%s: want manual with its own way: %+v", dist, r)
		}
	}
	for _, dist := range []string{"flash-attn", "flash_attn", "deepspeed", "xformers"} {
		if _, ok := WheelOnlyRebuild(c, dist, "1.0", "9.0"); ok {
			t.Errorf("%s has an sdist: not wheel-only", dist)
		}
	}
}
