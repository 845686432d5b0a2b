// Package facts holds what fastpath observed about a machine, nothing judged.
//
// Facts are plain data, serialised as JSON under the schema "fastpath.v1":
// fields may be added, never renamed or removed. A Facts file saved on one
// machine (`fastpath facts > f.json`) can be diagnosed on another
// (`fastpath doctor --facts f.json`), which is how fleets and tests work.
package facts

// Schema is the version tag of every JSON document fastpath writes.
const Schema = "fastpath.v1"

// Facts is everything collected from one Source.
type Facts struct {
	Schema    string     `json:"schema"`
	Tool      string     `json:"tool"` // fastpath's own version
	Source    SourceInfo `json:"source"`
	OS        OS         `json:"os"`
	Env       []EnvVar   `json:"env"`
	Python    Python     `json:"python"`
	Torch     *Torch     `json:"torch"` // nil: no torch in the selected environment
	CUDA      CUDA       `json:"cuda"`
	Toolchain Toolchain  `json:"toolchain"`
	GPU       GPU        `json:"gpu"`
	// Extensions are the selected environment's native modules that hold
	// CUDA code or link torch, with what their ELF headers say.
	Extensions []Extension `json:"extensions"`
	// Warnings are problems met while collecting (an unreadable folder, a
	// malformed METADATA): reported, never fatal.
	Warnings []string `json:"warnings"`
	// Live is what the selected interpreter itself answered when the probe
	// ran it (`doctor --live`); nil when it was not run.
	Live *LiveFacts `json:"live,omitempty"`
	// Timings is where collection's time went, collector by collector,
	// with the files and bytes each read (`--timings`); nil otherwise, so
	// that facts of one machine compare equal run after run.
	Timings *Timings `json:"timings,omitempty"`
}

// Timings is the cost of one collection.
type Timings struct {
	// TotalMS is the wall time of the whole collection; collectors run
	// side by side, so their times add up to more.
	TotalMS    float64           `json:"total_ms"`
	Collectors []CollectorTiming `json:"collectors"`
	// Files and Bytes are the distinct reads of the run: what the source
	// (a disk, NFS, an image layer) was actually asked for.
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
}

// CollectorTiming is one collector's wall time and what it read.
type CollectorTiming struct {
	Name    string  `json:"name"`
	StartMS float64 `json:"start_ms"` // from the start of collection
	MS      float64 `json:"ms"`
	ReadStats
}

// OS describes the operating system of the source.
type OS struct {
	ID         string `json:"id,omitempty"`         // os-release ID: ubuntu, debian, rhel, ...
	VersionID  string `json:"version_id,omitempty"` // os-release VERSION_ID: 24.04
	IDLike     string `json:"id_like,omitempty"`    // os-release ID_LIKE: "rhel centos fedora" on Rocky
	PrettyName string `json:"pretty_name,omitempty"`
	Arch       string `json:"arch,omitempty"`  // x86_64, aarch64 (from the source's binaries where it can be read)
	Glibc      string `json:"glibc,omitempty"` // 2.39; "" for musl or unknown
	Libc       string `json:"libc,omitempty"`  // path of the libc read
	Kernel     string `json:"kernel,omitempty"`
	CPUs       int    `json:"cpus,omitempty"`
	MemTotal   int64  `json:"mem_total_bytes,omitempty"`
	MemAvail   int64  `json:"mem_available_bytes,omitempty"`
}

// EnvVar is one environment variable that matters to CUDA/Python builds.
// Secrets are never stored: Redacted is set and Value is "<redacted>".
type EnvVar struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Redacted bool   `json:"redacted,omitempty"`
}

// Python describes the interpreters found and the selected one in detail.
type Python struct {
	// Selected is the environment `python3` on PATH (or --python) runs in;
	// nil when none was found.
	Selected *PythonEnv `json:"selected"`
	// How Selected was chosen, step by step (PATH lookup, pyenv shim, venv).
	Resolution []string `json:"resolution,omitempty"`
	// Others are environments found in the usual places; their
	// Distributions are not listed (only counted).
	Others []PythonEnv `json:"others"`
	// Pip is `pip` on PATH, and which environment it installs into.
	Pip *Pip `json:"pip"`
}

// PythonEnv is one Python environment (an interpreter with its sys.path).
type PythonEnv struct {
	// Kind: venv, conda, pyenv, system, uv (a venv made by uv).
	Kind string `json:"kind"`
	// Interpreter is the path as a user would name it (…/bin/python3);
	// Executable the real binary it resolves to.
	Interpreter string `json:"interpreter"`
	Executable  string `json:"executable,omitempty"`
	Version     string `json:"version,omitempty"` // 3.12.3, or 3.12 when only the minor is known
	Prefix      string `json:"prefix"`            // sys.prefix
	BasePrefix  string `json:"base_prefix,omitempty"`
	// IncludeSystemSitePackages is pyvenv.cfg's setting (venvs only).
	IncludeSystemSitePackages bool `json:"include_system_site_packages,omitempty"`
	// SitePath is the part of sys.path where distributions are found, in
	// sys.path order (PYTHONPATH, user site, site-packages, .pth additions).
	SitePath []string `json:"site_path"`
	// PythonH is the Python.h for this version, "" when missing.
	PythonH string `json:"python_h"`
	// PythonHSearched lists the places looked at for Python.h.
	PythonHSearched []string `json:"python_h_searched,omitempty"`
	// Installer of the environment itself where it can be told (uv writes
	// "uv = X" into pyvenv.cfg).
	CreatedBy     string         `json:"created_by,omitempty"`
	Distributions []Distribution `json:"distributions,omitempty"`
	NumDists      int            `json:"num_distributions"`
}

// Distribution is one installed Python distribution (dist-info or egg-info).
type Distribution struct {
	Name      string `json:"name"`    // as METADATA spells it (pip's raw_name)
	Version   string `json:"version"` // as METADATA spells it
	Installer string `json:"installer,omitempty"`
	// Location is the sys.path entry it was found in.
	Location    string `json:"location"`
	MetadataDir string `json:"metadata_dir"` // the .dist-info / .egg-info path
	Format      string `json:"format"`       // dist-info, egg-info
	// Tags are the WHEEL file's Tag lines (cp312-cp312-linux_x86_64).
	Tags []string `json:"tags,omitempty"`
	// Editable is set for editable installs, with the project's folder.
	Editable         bool   `json:"editable,omitempty"`
	EditableLocation string `json:"editable_project_location,omitempty"`
	// Requires are the Requires-Dist lines, verbatim.
	Requires []string `json:"requires,omitempty"`
	// Files counts RECORD's entries; Extensions lists the native modules and
	// shared libraries among them (paths relative to Location).
	Files      int      `json:"files,omitempty"`
	Extensions []string `json:"extensions,omitempty"`
	// Shadowed is set when an earlier sys.path entry holds the same name:
	// Python imports the other one.
	Shadowed bool `json:"shadowed,omitempty"`
}

// Pip is the `pip` command on PATH.
type Pip struct {
	Path string `json:"path"`
	// Interpreter is what its shebang (or pyenv shim) runs.
	Interpreter string `json:"interpreter,omitempty"`
	// Prefix is the environment it installs into ("" when unknown).
	Prefix string `json:"prefix,omitempty"`
	// SameAsPython is whether that is the selected Python's environment.
	SameAsPython bool `json:"same_as_python"`
	// PathPythonPrefix is the environment of `python3` on PATH (which --python may
	// differ from); SameAsPathPython whether pip installs into it. pip-python-mismatch
	// is about these two, the pair a user types.
	PathPythonPrefix string `json:"path_python_prefix,omitempty"`
	SameAsPathPython bool   `json:"same_as_path_python,omitempty"`
}

// Torch describes the torch installed in the selected environment.
type Torch struct {
	Version string `json:"version"`        // 2.11.0+cu128
	CUDA    string `json:"cuda,omitempty"` // 12.8; "" for CPU or ROCm builds
	HIP     string `json:"hip,omitempty"`
	// BuildFrom says where CUDA/HIP were read ("torch/version.py", or the
	// wheel's +cu128 tag); "" means the build is unknown (not a CPU build).
	BuildFrom string `json:"build_from,omitempty"`
	GitVer    string `json:"git_version,omitempty"`
	Location  string `json:"location"` // …/site-packages/torch
	Lib       string `json:"lib,omitempty"`
	CMake     string `json:"cmake_prefix,omitempty"` // …/torch/share/cmake
	BundledNV string `json:"bundled_nvcc,omitempty"` // torch/bin/nvcc (never seen in wheels)
	// CXX11ABI is torch's C++ ABI where it was read; nil when unknown.
	CXX11ABI *bool `json:"cxx11_abi,omitempty"`
	// CXX11ABIFrom says where CXX11ABI was read (a file and what it holds).
	CXX11ABIFrom string `json:"cxx11_abi_from,omitempty"`
	// Archs are torch's compiled GPU targets where read (sm_90, ...): the
	// SASS present in every fatbin container of its CUDA libraries, which is
	// what torch.cuda.get_arch_list() reports; PTX the PTX targets there.
	Archs []string `json:"archs,omitempty"`
	PTX   []string `json:"ptx,omitempty"`
	// ArchLibs are the libraries read for Archs (torch/lib/libtorch_cuda.so ...).
	ArchLibs []string `json:"arch_libs,omitempty"`
	// MissingLibraries are shared libraries that `import torch` loads (the DT_NEEDED
	// closure of torch/_C and libtorch_global_deps.so) and that resolve nowhere the
	// dynamic linker or torch's _preload_cuda_deps would look. LibrariesChecked counts
	// the libraries whose DT_NEEDED were read.
	MissingLibraries []MissingLibrary `json:"missing_libraries,omitempty"`
	LibrariesChecked int              `json:"libraries_checked,omitempty"`
}

// MissingLibrary is one DT_NEEDED name found nowhere.
type MissingLibrary struct {
	Name     string   `json:"name"`      // libcublasLt.so.13
	NeededBy []string `json:"needed_by"` // the libraries that need it (paths)
	Searched []string `json:"searched"`  // the folders looked in, in order
}

// CUDA describes every nvcc found and what torch's extension builder picks.
type CUDA struct {
	Compilers []NVCC `json:"compilers"`
	// Searched lists every place looked at for nvcc, found or not.
	Searched []string `json:"searched"`
	// TorchHome is the CUDA home torch.utils.cpp_extension would use.
	TorchHome *CUDAHome `json:"torch_home"`
	// Incomplete are folders holding parts of a CUDA compiler but no
	// bin/nvcc (the nvidia-cuda-nvcc-cu12 wheels ship ptxas and libnvvm
	// only): they look like a compiler and cannot build anything.
	Incomplete []IncompleteCompiler `json:"incomplete,omitempty"`
}

// IncompleteCompiler is a compiler folder without a usable nvcc.
type IncompleteCompiler struct {
	Home    string `json:"home"`
	Dist    string `json:"dist,omitempty"`    // pip distribution that installed it
	Version string `json:"version,omitempty"` // that distribution's version
	// Has and Missing are the compiler's parts present and absent, relative
	// to Home (bin/ptxas, nvvm/lib64/libnvvm.so; bin/nvcc).
	Has     []string `json:"has"`
	Missing []string `json:"missing"`
}

// NVCC is one CUDA compiler found on the source.
type NVCC struct {
	Path string `json:"path"` // …/bin/nvcc as found
	// Paths are every path it was found under, unresolved (/usr/local/cuda/bin/nvcc
	// and /usr/local/cuda-12.8/bin/nvcc are one compiler).
	Paths []string `json:"paths,omitempty"`
	// Home is the toolkit folder (the parent of bin/).
	Home    string `json:"home"`
	Version string `json:"version,omitempty"` // 12.8.93 or 12.8
	// VersionFrom says where the version was read (version.json,
	// version.txt, nvcc --version, dist-info).
	VersionFrom string `json:"version_from,omitempty"`
	// Via are the ways it was found: PATH, CUDA_HOME, CUDA_PATH,
	// /usr/local/cuda, toolkit, conda, pip, torch.
	Via []string `json:"via"`
	// Pip distribution that installed it, for pip layouts.
	Dist string `json:"dist,omitempty"`
	// CUDARuntimeH is cuda_runtime.h for this toolkit, "" when missing.
	CUDARuntimeH string `json:"cuda_runtime_h"`
}

// CUDAHome is what torch's cpp_extension.CUDA_HOME resolves to.
type CUDAHome struct {
	Path string `json:"path"`
	// Via: CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda.
	Via string `json:"via"`
	// NVCC is Path/bin/nvcc when it exists, "" otherwise.
	NVCC string `json:"nvcc"`
}

// Toolchain is the host compilers and build tools.
type Toolchain struct {
	GCC         *Tool    `json:"gcc"`
	GXX         *Tool    `json:"gxx"`
	CUDAHostCXX *Tool    `json:"cudahostcxx,omitempty"`
	Ninja       *Tool    `json:"ninja"`
	CMake       *Tool    `json:"cmake"`
	GCCSearched []string `json:"gcc_searched,omitempty"`
}

// Tool is one program found, and how.
type Tool struct {
	Path        string `json:"path"`
	Version     string `json:"version,omitempty"`
	VersionFrom string `json:"version_from,omitempty"`
	Via         string `json:"via,omitempty"` // PATH, pip, env, lib/gcc
}

// GPU describes the driver and the devices.
type GPU struct {
	Driver *Driver `json:"driver"`
	// Devices as detected, or as given with --gpu (Overridden).
	Devices    []Device     `json:"devices"`
	Overridden bool         `json:"overridden,omitempty"`
	Processes  []GPUProcess `json:"processes,omitempty"`
	// Sources lists what was read: /proc/driver/nvidia, /sys/bus/pci,
	// nvidia-smi.
	Sources []string `json:"sources,omitempty"`
}

// Driver is the NVIDIA kernel driver.
type Driver struct {
	Version string `json:"version"` // 580.159.04
	From    string `json:"from"`
	// CUDA is the newest CUDA the driver supports (nvidia-smi's "CUDA
	// Version"): not the toolkit's, not torch's. It is a judgement of
	// Version against the knowledge base, not an observation: collectors
	// leave it empty and diagnose.Complete fills it, so a facts file saved
	// under an older KB is judged by today's.
	CUDA string `json:"cuda,omitempty"`
}

// CapabilityFrom values for a capability read from the knowledge base's GPU
// table rather than observed.
const (
	CapabilityFromPCITable  = "pci-table"
	CapabilityFromNameTable = "name-table"
)

// Device is one GPU.
type Device struct {
	Index int    `json:"index"`
	Name  string `json:"name,omitempty"`
	UUID  string `json:"uuid,omitempty"`
	BusID string `json:"bus_id,omitempty"`
	// PCIDevice is the PCI device id, 0x2335.
	PCIDevice string `json:"pci_device,omitempty"`
	// Capability is the compute capability, 9.0; CapabilityFrom says how it
	// was learnt: nvidia-smi and --gpu are observations; pci-table and
	// name-table are judgements against the knowledge base's GPU table,
	// which diagnose.Complete makes (and remakes on saved facts).
	Capability     string `json:"capability,omitempty"`
	CapabilityFrom string `json:"capability_from,omitempty"`
	MemoryTotalMiB int64  `json:"memory_total_mib,omitempty"`
	MemoryUsedMiB  int64  `json:"memory_used_mib,omitempty"`
}

// GPUProcess is a process holding GPU memory.
type GPUProcess struct {
	PID     int    `json:"pid"`
	Name    string `json:"name"`
	GPUUUID string `json:"gpu_uuid,omitempty"`
	UsedMiB int64  `json:"used_mib"`
}

// Extension is one native module (.so) of an installed distribution that
// holds CUDA code or links torch. Only ELF headers, dynamic sections and
// fatbin headers are read.
type Extension struct {
	Dist    string `json:"dist"`    // distribution name as METADATA spells it
	Version string `json:"version"` // its version (+cu12torch2.6cxx11abiTRUE says what it was built for)
	Path    string `json:"path"`    // absolute path in the source
	// Needed are the DT_NEEDED entries (libc10.so, libcudart.so.12).
	Needed []string `json:"needed,omitempty"`
	// LinksTorch: it needs libc10/libtorch*, so torch's symbols must resolve it.
	LinksTorch bool `json:"links_torch,omitempty"`
	// SASS and PTX are the CUDA targets present (sorted, unique; arch-specific
	// keep their a, family their f), Containers the fatbins holding them, and
	// CommonSASS the SASS targets present in every container.
	SASS       []string `json:"sass,omitempty"`
	PTX        []string `json:"ptx,omitempty"`
	Containers int      `json:"containers,omitempty"`
	CommonSASS []string `json:"common_sass,omitempty"`
	// TargetSets are the distinct sets of targets (SASS and PTX, sorted as
	// SASS and PTX are) that its containers hold, each set once: code runs
	// on a GPU only when every container has something for it.
	TargetSets [][]string `json:"target_sets,omitempty"`
	// KernelLessSets are those of TargetSets whose every container is known to
	// define no kernel (no symbol of its cubins is marked ENTRY): nothing is ever
	// launched from them, so lacking code for a GPU there fails nothing. Compressed
	// cubins are read decompressed; a set that cannot be told (PTX only, a cubin
	// that does not parse or decompress) is not listed.
	KernelLessSets [][]string `json:"kernel_less_sets,omitempty"`
	// PTXISA is the newest PTX ISA version among its PTX entries, read from the
	// entry headers ("9.0" for nvcc 13.0's PTX); "" when it has no PTX. A driver
	// JIT-compiles PTX only of ISAs it knows.
	PTXISA string `json:"ptx_isa,omitempty"`
	// MissingSymbols are undefined dynamic symbols that no library it needs
	// from torch defines (demangled, the first few); MissingCount counts all.
	MissingSymbols []string `json:"missing_symbols,omitempty"`
	MissingCount   int      `json:"missing_count,omitempty"`
	// CUDARuntime is the libcudart.so.N it needs, CUDARuntimeFound where it
	// was found ("" when nowhere: torch's nvidia wheels, the system, CUDA_HOME).
	CUDARuntime      string `json:"cuda_runtime,omitempty"`
	CUDARuntimeFound string `json:"cuda_runtime_found,omitempty"`
	// Error is why the file could not be read.
	Error string `json:"error,omitempty"`
}

// LiveFacts is the embedded Python probe's answer (`doctor --live`): what
// importing torch and the kernel packages actually does in the selected
// environment. It is the JSON the probe prints, joined to the static facts.
type LiveFacts struct {
	Probe int `json:"probe"` // the probe's format version
	// Python is the interpreter that answered.
	Python LivePython `json:"python"`
	Torch  LiveTorch  `json:"torch"`
	// Packages are the import attempts of every kernel package the
	// knowledge base names.
	Packages []LivePackage `json:"packages"`
	// Transformers is the installed transformers (import attempt).
	Transformers LivePackage `json:"transformers"`
	// Models is, per model_type asked, what transformers resolves for each
	// kernel function.
	Models map[string]LiveModel `json:"models,omitempty"`
	// Errors are the probe's own failures (a step that raised); Error is set
	// when the probe could not be run or its output not read.
	Errors []string `json:"errors,omitempty"`
	Error  string   `json:"error,omitempty"`
	// Seconds is the probe's wall time as fastpath measured it.
	Seconds float64 `json:"seconds,omitempty"`
}

// LivePython is sys.version_info and sys.executable.
type LivePython struct {
	Version    string `json:"version"`
	Executable string `json:"executable"`
	Prefix     string `json:"prefix,omitempty"`
}

// LiveTorch is what `import torch` gave.
type LiveTorch struct {
	OK bool `json:"ok"`
	// ImportSeconds is how long `import torch` took.
	ImportSeconds float64 `json:"import_seconds"`
	// Error is the import's exception, "Type: message" verbatim.
	Error         string       `json:"error,omitempty"`
	Version       string       `json:"version,omitempty"`
	File          string       `json:"file,omitempty"`
	CUDA          string       `json:"cuda,omitempty"` // torch.version.cuda; "" for CPU builds
	HIP           string       `json:"hip,omitempty"`
	CUDAAvailable bool         `json:"cuda_available"`
	CUDAError     string       `json:"cuda_error,omitempty"` // why a CUDA query raised
	DeviceCount   int          `json:"device_count"`
	Devices       []LiveDevice `json:"devices,omitempty"`
	// ArchList is torch.cuda.get_arch_list() (sm_90, compute_90 ...).
	ArchList []string `json:"arch_list,omitempty"`
	// CXX11ABI is torch.compiled_with_cxx11_abi(); nil when not asked.
	CXX11ABI *bool `json:"cxx11_abi,omitempty"`
}

// LiveDevice is one device as torch sees it.
type LiveDevice struct {
	Index      int    `json:"index"`
	Name       string `json:"name"`
	Capability string `json:"capability"` // 9.0
	Error      string `json:"error,omitempty"`
}

// LivePackage is one import attempt.
type LivePackage struct {
	Name    string  `json:"name,omitempty"` // the distribution fastpath knows it as
	Import  string  `json:"import"`
	OK      bool    `json:"ok"`
	Seconds float64 `json:"seconds"`
	Version string  `json:"version,omitempty"` // the module's __version__
	File    string  `json:"file,omitempty"`    // the module's __file__
	// ErrorType and Error are the exception, verbatim.
	ErrorType string `json:"error_type,omitempty"`
	Error     string `json:"error,omitempty"`
	// Smoke is the tiny kernel run after the import (kb loading.json), when the
	// knowledge base knows one; SmokeOK its outcome, SmokeError the exception.
	Smoke      string `json:"smoke,omitempty"`
	SmokeOK    bool   `json:"smoke_ok,omitempty"`
	SmokeError string `json:"smoke_error,omitempty"`
}

// LiveModel is transformers' resolution for one model_type.
type LiveModel struct {
	Functions map[string]LiveFunction `json:"functions"`
	Error     string                  `json:"error,omitempty"`
}

// LiveFunction is what one kernel function resolves to.
type LiveFunction struct {
	Resolves string `json:"resolves"` // package or torch
	Module   string `json:"module"`
	Via      string `json:"via"`
}
