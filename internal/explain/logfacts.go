package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// LogFact is one fact a log states about the environment it was written
// in, and the line that states it.
type LogFact struct {
	Value string `json:"value"`
	Line  int    `json:"line"`
}

// LogFacts are the facts a log states about its own environment: what the
// user's machine was, which may not be the machine explain runs on. Fixes
// are made from these first; this machine's facts are used only when they
// belong to the same environment (see SameEnvironment).
//
// Fields are nil when the log does not say. Each is read by the "facts"
// signatures of kb/data/signatures.json; the first statement in the log
// wins, except Platform and BuildSystem, where the more specific wins (WSL
// over Linux, scikit-build over CMake over setuptools).
type LogFacts struct {
	Torch     *LogFact `json:"torch,omitempty"`      // 2.11.0+cu130
	TorchCUDA *LogFact `json:"torch_cuda,omitempty"` // 13.0, from the +cu130 tag or torch's own words
	NVCC      *LogFact `json:"nvcc,omitempty"`       // 12.3: the CUDA compiler's release
	GPU       *LogFact `json:"gpu,omitempty"`        // NVIDIA GeForce RTX 5090
	// Capability is the GPU's compute capability (12.0).
	Capability *LogFact `json:"capability,omitempty"`
	Driver     *LogFact `json:"driver,omitempty"`      // 560.35.03
	DriverCUDA *LogFact `json:"driver_cuda,omitempty"` // 12.6: the newest CUDA the driver runs
	GCC        *LogFact `json:"gcc,omitempty"`
	Python     *LogFact `json:"python,omitempty"` // 3.10
	OS         *LogFact `json:"os,omitempty"`     // as collect_env words it
	// Platform is linux, wsl, windows or macos.
	Platform *LogFact `json:"platform,omitempty"`
	// BuildSystem is setuptools, cmake, scikit-build, meson, torch-jit
	// (torch building an extension while the program runs:
	// torch.utils.cpp_extension.load, DeepSpeed's ops), or triton-jit
	// (Triton compiling its C launcher while the program runs), or
	// flashinfer-jit (FlashInfer compiling its kernels into
	// ~/.cache/flashinfer while the program runs), none of them pip.
	BuildSystem *LogFact `json:"build_system,omitempty"`
	// NativeModule is the first extension module a native stack names
	// (flash_attn_2_cuda from "flash_attn_2_cuda.cp312-win_amd64.pyd!PyInit_..."
	// or "(0x7f... in .../flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so)").
	NativeModule *LogFact `json:"native_module,omitempty"`
	// Installer is "uv" when uv ran the install (its commands, its
	// "Using Python 3.12.3 environment at:", its build folders
	// ~/.cache/uv/builds-v0): fixes then install with uv pip.
	Installer *LogFact `json:"installer,omitempty"`
	// JITOp is the extension a run-time build builds, as torch names it
	// (fused_adam).
	JITOp *LogFact `json:"jit_op,omitempty"`
	// JITDir is the run-time build's folder, where torch wrote build.ninja.
	JITDir *LogFact `json:"jit_build_dir,omitempty"`
	// JITRoot is torch's extensions root (TORCH_EXTENSIONS_DIR or
	// ~/.cache/torch_extensions/py310_cu121).
	JITRoot *LogFact `json:"jit_root,omitempty"`
	// JITBuilder is "deepspeed" when DeepSpeed's op builder ran the build.
	JITBuilder *LogFact `json:"jit_builder,omitempty"`
	// JITSource is a source file the run-time build compiled: its folder
	// is the build folder when a caller copied its sources there
	// (stylegan3's custom ops).
	JITSource *LogFact `json:"jit_source,omitempty"`
	// MemTotal is the host's memory as the log prints it ("376G").
	MemTotal *LogFact `json:"mem_total,omitempty"`
	CPUs     *LogFact `json:"cpus,omitempty"`
	// GPUMemTotal and GPUMemUsed are the GPU's memory as torch or
	// nvidia-smi print it.
	GPUMemTotal *LogFact `json:"gpu_mem_total,omitempty"`
	GPUMemUsed  *LogFact `json:"gpu_mem_used,omitempty"`
	// Notebook is "jupyter" when the program ran in a Jupyter kernel (its
	// tracebacks' "Cell In[3], line 1", ipykernel_launcher): pip commands
	// are then the %pip magic, which installs into the kernel's Python.
	Notebook *LogFact `json:"notebook,omitempty"`
	// Jetson is "jetson" when the log comes from an NVIDIA Jetson (Tegra,
	// JetPack, L4T): its torch is NVIDIA's JetPack build, which has code
	// for the board's GPU, and no x86 or PyPI CUDA wheel runs there.
	Jetson *LogFact `json:"jetson,omitempty"`
	// ImageBuild is "docker build" when the log shows a container image
	// being built (docker build's command or its RUN steps): no GPU and no
	// driver library is mounted while a step runs.
	ImageBuild *LogFact `json:"image_build,omitempty"`
	// Container is "a container" when the log says it ran in a container
	// (docker run, "the docker image"): its driver libraries may be the
	// image's own rather than the host's.
	Container *LogFact `json:"container,omitempty"`
	// NVMLLibrary is the NVML library's version nvidia-smi printed
	// after "Driver/library version mismatch" (565.57).
	NVMLLibrary *LogFact `json:"nvml_library,omitempty"`
	// KernelModule is the loaded nvidia kernel module's version (NVRM's
	// log line, /proc/driver/nvidia/version) or that of the open kernel
	// module source tree the log builds.
	KernelModule *LogFact `json:"kernel_module,omitempty"`
	// ModuleApart is the driver release whose installer ran with
	// --no-kernel-modules: its libraries, with a module from elsewhere.
	ModuleApart *LogFact `json:"module_apart,omitempty"`
	// ExtDist is the one compiled-extension distribution the log names
	// in an environment listing ("sgl_kernel: 0.2.7", pip list) or an
	// import line ("from sgl_kernel import common_ops"); nil when it
	// names none or two (ExtDists counts them).
	ExtDist  *LogFact `json:"ext_dist,omitempty"`
	ExtDists int      `json:"-"`
}

// platformRank and buildRank: the more specific statement wins.
var (
	platformRank = map[string]int{"linux": 1, "macos": 2, "windows": 2, "wsl": 3}
	buildRank    = map[string]int{"setuptools": 1, "cmake": 2, "meson": 2, "scikit-build": 3, "torch-jit": 4, "triton-jit": 4, "flashinfer-jit": 4}
)

// record stores a fact read on line n; key is a capture name of the facts
// signatures.
func (lf *LogFacts) record(key, value string, n int) (changed bool) {
	value = strings.TrimSpace(value)
	if value == "" || len(value) > 120 {
		return false
	}
	set := func(p **LogFact, v string) {
		if *p == nil {
			*p = &LogFact{Value: v, Line: n}
			changed = true
		}
	}
	switch key {
	case "torch":
		set(&lf.Torch, value)
		if _, local, ok := strings.Cut(value, "+cu"); ok && len(local) >= 3 {
			if mm := cudaOfTag(local); mm != "" {
				set(&lf.TorchCUDA, mm)
			}
		}
	case "torch_cuda":
		set(&lf.TorchCUDA, value)
	case "nvcc":
		set(&lf.NVCC, value)
	case "gpu":
		value = strings.TrimSpace(value)
		if strings.HasPrefix(value, "RTX") && len(value) > 3 && value[3] >= '0' && value[3] <= '9' {
			value = "RTX " + value[3:] // "RTX5090": the product is "RTX 5090"
		}
		set(&lf.GPU, value)
	case "sm":
		if sm, err := strconv.Atoi(value); err == nil && sm >= 10 && sm < 1000 {
			set(&lf.Capability, fmt.Sprintf("%d.%d", sm/10, sm%10))
		}
	case "capability":
		set(&lf.Capability, value)
	case "driver":
		set(&lf.Driver, value)
	case "driver_cuda":
		set(&lf.DriverCUDA, value)
	case "driver_cuda_int":
		if v, err := strconv.Atoi(value); err == nil && v >= 1000 {
			set(&lf.DriverCUDA, fmt.Sprintf("%d.%d", v/1000, v%1000/10))
		}
	case "gcc":
		set(&lf.GCC, value)
	case "python":
		set(&lf.Python, value)
	case "python_tag":
		// A wheel or build tag (cp313, cpython-310, -lpython312): 3 then
		// the minor.
		if len(value) >= 2 && len(value) <= 3 && value[0] == '3' {
			if _, err := strconv.Atoi(value); err == nil {
				set(&lf.Python, "3."+value[1:])
			}
		}
	case "os":
		set(&lf.OS, value)
	case "platform":
		if lf.Platform == nil || platformRank[value] > platformRank[lf.Platform.Value] {
			lf.Platform = &LogFact{Value: value, Line: n}
			changed = true
		}
	case "build_system":
		if lf.BuildSystem == nil || buildRank[value] > buildRank[lf.BuildSystem.Value] {
			lf.BuildSystem = &LogFact{Value: value, Line: n}
			changed = true
		}
	case "native_module", "native_module2":
		set(&lf.NativeModule, value)
	case "installer":
		set(&lf.Installer, value)
	case "notebook":
		set(&lf.Notebook, value)
	case "jetson":
		set(&lf.Jetson, value)
	case "image_build":
		set(&lf.ImageBuild, value)
	case "container":
		set(&lf.Container, value)
	case "nvml_library":
		set(&lf.NVMLLibrary, value)
	case "kernel_module", "kernel_module2", "kernel_module3":
		set(&lf.KernelModule, value)
	case "module_apart":
		set(&lf.ModuleApart, value)
	case "ext_dist", "ext_dist2":
		value = strings.ReplaceAll(value, "_", "-")
		switch {
		case lf.ExtDists == 0:
			lf.ExtDist = &LogFact{Value: value, Line: n}
			lf.ExtDists, changed = 1, true
		case lf.ExtDists == 1 && lf.ExtDist != nil && lf.ExtDist.Value != value:
			// Two distributions named: which one failed is not known.
			lf.ExtDist, lf.ExtDists, changed = nil, 2, true
		}
	case "jit_op":
		set(&lf.JITOp, value)
	case "jit_dir":
		set(&lf.JITDir, value)
	case "jit_root":
		set(&lf.JITRoot, value)
	case "jit_builder":
		set(&lf.JITBuilder, value)
	case "jit_source":
		set(&lf.JITSource, value)
	case "mem_total":
		set(&lf.MemTotal, value)
	case "cpus":
		set(&lf.CPUs, value)
	case "gpu_mem_total", "gpu_mem_total2":
		if !strings.ContainsAny(value, "KMGTB") {
			value += " MiB"
		}
		set(&lf.GPUMemTotal, value)
	case "gpu_mem_used":
		set(&lf.GPUMemUsed, value+" MiB")
	}
	return changed
}

// cudaOfTag reads a wheel's local tag: "130" -> "13.0", "121" -> "12.1",
// "118" -> "11.8".
func cudaOfTag(tag string) string {
	end := 0
	for end < len(tag) && tag[end] >= '0' && tag[end] <= '9' {
		end++
	}
	d := tag[:end]
	if len(d) < 3 || len(d) > 4 {
		return ""
	}
	return d[:len(d)-1] + "." + d[len(d)-1:]
}

// Empty reports whether the log stated no fact at all.
func (lf *LogFacts) Empty() bool {
	return lf == nil || len(lf.list()) == 0
}

type namedFact struct {
	name string
	f    *LogFact
}

func (lf *LogFacts) list() []namedFact {
	if lf == nil {
		return nil
	}
	all := []namedFact{
		{"torch", lf.Torch}, {"torch's CUDA", lf.TorchCUDA}, {"nvcc", lf.NVCC}, {"GPU", lf.GPU},
		{"compute capability", lf.Capability}, {"driver", lf.Driver}, {"driver's CUDA", lf.DriverCUDA},
		{"gcc", lf.GCC}, {"Python", lf.Python}, {"OS", lf.OS}, {"platform", lf.Platform}, {"notebook", lf.Notebook}, {"Jetson", lf.Jetson}, {"container image built by", lf.ImageBuild}, {"run in", lf.Container}, {"NVML library", lf.NVMLLibrary}, {"kernel module", lf.KernelModule}, {"driver libraries installed without their module", lf.ModuleApart}, {"extension named", lf.ExtDist},
		{"build system", lf.BuildSystem}, {"installer", lf.Installer}, {"native stack module", lf.NativeModule}, {"extension built at run time", lf.JITOp}, {"its build folder", lf.JITDir},
		{"extensions root", lf.JITRoot}, {"op builder", lf.JITBuilder}, {"host memory", lf.MemTotal}, {"CPUs", lf.CPUs},
		{"GPU memory", lf.GPUMemTotal}, {"GPU memory used", lf.GPUMemUsed},
	}
	var out []namedFact
	for _, nf := range all {
		if nf.f != nil {
			out = append(out, nf)
		}
	}
	return out
}

// Describe lists the facts as "torch 2.11.0+cu130 (line 2)".
func (lf *LogFacts) Describe() []string {
	var out []string
	for _, nf := range lf.list() {
		out = append(out, fmt.Sprintf("%s %s (line %d)", nf.name, nf.f.Value, nf.f.Line))
	}
	return out
}

// SameEnvironment reports whether this machine's facts can be the
// environment the log was written in, and why not when they cannot. A log
// that states nothing is taken to come from this machine (explain is
// usually run where the build failed); a log that states a torch, a CUDA,
// a platform or a GPU this machine does not have comes from elsewhere.
// Python's version is not compared: a log's paths name the Python of
// pip's own or an isolated build environment as often as the user's.
func (lf *LogFacts) SameEnvironment(f *facts.Facts) (bool, string) {
	if f == nil {
		return false, "no facts of this machine were read"
	}
	if lf == nil {
		return true, ""
	}
	if p := lf.Platform; p != nil && (p.Value == "macos" || p.Value == "windows") {
		return false, fmt.Sprintf("the log comes from %s (line %d), this machine runs Linux", platformName(p.Value), p.Line)
	}
	if t := lf.Torch; t != nil && f.Torch == nil {
		return false, fmt.Sprintf("the log's torch is %s (line %d), this machine's environment has no torch", t.Value, t.Line)
	}
	if c := lf.TorchCUDA; c != nil && f.Torch == nil {
		return false, fmt.Sprintf("the log's torch was built for CUDA %s (line %d), this machine's environment has no torch", c.Value, c.Line)
	}
	if t := lf.Torch; t != nil && f.Torch != nil && f.Torch.Version != "" && !sameTorch(t.Value, f.Torch.Version) {
		return false, fmt.Sprintf("the log's torch is %s (line %d), this machine's is %s", t.Value, t.Line, f.Torch.Version)
	}
	if c := lf.TorchCUDA; c != nil && f.Torch != nil && f.Torch.CUDA != "" && !sameMajorMinor(c.Value, f.Torch.CUDA) {
		return false, fmt.Sprintf("the log's torch was built for CUDA %s (line %d), this machine's for CUDA %s", c.Value, c.Line, f.Torch.CUDA)
	}
	if g := lf.GPU; g != nil && len(f.GPU.Devices) > 0 {
		match := false
		for _, d := range f.GPU.Devices {
			if d.Name != "" && (strings.Contains(strings.ToLower(d.Name), strings.ToLower(strings.TrimPrefix(g.Value, "NVIDIA "))) || strings.Contains(strings.ToLower(g.Value), strings.ToLower(strings.TrimPrefix(d.Name, "NVIDIA ")))) {
				match = true
			}
		}
		if !match {
			return false, fmt.Sprintf("the log's GPU is %s (line %d), this machine has %s", g.Value, g.Line, f.GPU.Devices[0].Name)
		}
	}
	return true, ""
}

func platformName(p string) string {
	switch p {
	case "macos":
		return "macOS"
	case "windows":
		return "Windows"
	case "wsl":
		return "WSL"
	}
	return "Linux"
}

// sameTorch compares two torch versions, local tags included when both
// have one ("2.6.0+cu126" and "2.6.0" are the same release).
func sameTorch(a, b string) bool {
	ab, al, _ := strings.Cut(a, "+")
	bb, bl, _ := strings.Cut(b, "+")
	if ab != bb {
		return false
	}
	return al == "" || bl == "" || al == bl
}

func sameMajorMinor(a, b string) bool {
	am, _, _, ok1 := kb.MajorMinor(a)
	bm, _, _, ok2 := kb.MajorMinor(b)
	return ok1 && ok2 && am == bm
}

// asFacts turns what the log states into the facts the fix helpers read,
// for a log from another environment (or with no facts of this machine):
// torch's version and CUDA, the GPU's capability, the driver. What the log
// does not state stays unknown, so that a fix that needs it says so.
func (lf *LogFacts) asFacts() *facts.Facts {
	f := &facts.Facts{}
	if lf == nil {
		return f
	}
	if lf.Torch != nil || lf.TorchCUDA != nil {
		t := &facts.Torch{}
		if lf.Torch != nil {
			t.Version = lf.Torch.Value
		}
		if lf.TorchCUDA != nil {
			t.CUDA = lf.TorchCUDA.Value
		}
		f.Torch = t
	}
	if lf.Capability != nil || lf.GPU != nil {
		d := facts.Device{}
		if lf.GPU != nil {
			d.Name = lf.GPU.Value
		}
		if lf.Capability != nil {
			d.Capability = lf.Capability.Value
		}
		f.GPU.Devices = []facts.Device{d}
	}
	if lf.MemTotal != nil {
		f.OS.MemTotal = parseHumanBytes(lf.MemTotal.Value)
	}
	if lf.CPUs != nil {
		if n, err := strconv.Atoi(lf.CPUs.Value); err == nil && n > 0 && n < 1<<16 {
			f.OS.CPUs = n
		}
	}
	if lf.Driver != nil || lf.DriverCUDA != nil {
		d := &facts.Driver{From: "the log"}
		if lf.Driver != nil {
			d.Version = lf.Driver.Value
		}
		if lf.DriverCUDA != nil {
			d.CUDA = lf.DriverCUDA.Value
		}
		f.GPU.Driver = d
	}
	return f
}

// relevant are the facts a finding's reading depends on.
func (lf *LogFacts) relevant(id string) []namedFact {
	want := map[string][]string{
		"no-cuda-compiler":               {"torch", "torch's CUDA", "nvcc", "platform", "build system", "extension built at run time", "its build folder", "installer"},
		"cuda-compiler-not-discoverable": {"torch", "torch's CUDA", "nvcc", "platform", "extension built at run time", "its build folder"},
		"cuda-home-invalid":              {"torch", "torch's CUDA", "nvcc", "platform", "extension built at run time", "its build folder"},
		"nvcc-torch-cuda-mismatch":       {"torch", "torch's CUDA", "nvcc", "platform", "build system", "extension built at run time", "its build folder", "installer"},
		"nvcc-cannot-target-gpu":         {"nvcc", "GPU", "compute capability", "build system", "extension built at run time", "its build folder"},
		"host-compiler-unsupported":      {"gcc", "nvcc", "platform", "build system", "extension built at run time", "its build folder"},
		"missing-python-headers":         {"Python", "platform", "extension built at run time", "its build folder"},
		"missing-ninja":                  {"torch", "platform", "build system", "installer"},
		"build-isolation-hides-torch":    {"torch", "platform", "build system", "installer"},
		"build-out-of-memory":            {"host memory", "CPUs", "build system", "platform"},
		"torch-missing":                  {"Python", "platform"},
		"torch-cpu-only":                 {"torch", "GPU", "platform"},
		"torch-arch-unsupported":         {"torch", "torch's CUDA", "GPU", "compute capability", "driver"},
		"extension-arch-unsupported":     {"torch", "GPU", "compute capability"},
		"driver-too-old":                 {"driver", "driver's CUDA", "torch", "torch's CUDA"},
		"gpu-busy":                       {"GPU", "GPU memory", "GPU memory used", "driver"},
		"extension-abi-mismatch":         {"torch", "torch's CUDA", "Python"},
		"extension-cuda-mismatch":        {"torch", "torch's CUDA", "nvcc"},
		"fast-path-fallback":             {"torch", "GPU"},
		"cuda-driver-not-visible":        {"container image built by", "platform", "Jetson"},
		"driver-library-mismatch":        {"driver", "NVML library", "kernel module", "driver libraries installed without their module", "run in"},
		"cudnn-version-mismatch":         {"torch", "torch's CUDA", "platform"},
	}[id]
	var out []namedFact
	for _, nf := range lf.list() {
		for _, w := range want {
			if nf.name == w {
				out = append(out, nf)
			}
		}
	}
	return out
}

// parseHumanBytes reads free -h's figures: "376G", "31Gi", "512M".
func parseHumanBytes(s string) int64 {
	s = strings.TrimSuffix(strings.TrimSpace(s), "i")
	if s == "" {
		return 0
	}
	mult := map[byte]float64{'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}[s[len(s)-1]]
	if mult == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil || v <= 0 || v*mult > 1<<60 {
		return 0
	}
	return int64(v * mult)
}
