package kb

import (
	"sync"

	"github.com/fastpath-dev/fastpath/internal/pep440"
)

// BuildsData is data/builds.json: how each kernel package builds from
// source, read from that version's own build files (its sdist on PyPI or
// its repository at a tag), and what its builds were measured to cost.
type BuildsData struct {
	Source string `json:"source"`
	// GiBPerJob is fastpath's rule of thumb for one nvcc compile job of
	// these kernels where no package figure is known.
	GiBPerJob       float64                 `json:"gib_per_job"`
	GiBPerJobSource string                  `json:"gib_per_job_source"`
	Packages        map[string]BuildProfile `json:"packages"`
	// RunTime is how torch builds an extension while the program runs
	// (torch.utils.cpp_extension.load, DeepSpeed's ops): where the build
	// folder is, and how DeepSpeed builds its ops ahead of time instead.
	RunTime RunTimeBuilds `json:"run_time"`
	// WheelOnly are the packages PyPI has no sdist of (pip install
	// --no-binary NAME cannot rebuild them), and what works instead.
	// SetuptoolsVendors: from setuptools From, `import setuptools` puts its
	// _vendor folder on sys.path, so a setup.py that imports one of
	// Modules after setuptools finds setuptools' own copy.
	SetuptoolsVendors struct {
		From    string   `json:"from"`
		Modules []string `json:"modules"`
		Source  string   `json:"source"`
	} `json:"setuptools_vendors"`
	WheelOnly struct {
		Source   string                      `json:"source"`
		Checked  string                      `json:"checked"`
		Packages map[string]WheelOnlyPackage `json:"packages"`
	} `json:"wheel_only"`
	// PythonHeaders are the Pythons whose headers each distro's own
	// archive packages (pythonX.Y-dev).
	PythonHeaders struct {
		Source string `json:"source"`
		// Deb maps "ubuntu 24.04" (os-release ID and VERSION_ID) to the
		// major.minor of every pythonX.Y-dev in that release's archive.
		Deb map[string][]string `json:"deb"`
		// Rpm maps a RHEL major ("rhel 9") to each Python major.minor's
		// headers package in its repositories ("3.11": "python3.11-devel");
		// RpmSource says where the names were read.
		RpmSource string                       `json:"rpm_source"`
		Rpm       map[string]map[string]string `json:"rpm"`
	} `json:"python_headers"`
	// HostCompilers are the g++-N majors each distro's own archive
	// packages, keyed like PythonHeaders.
	HostCompilers struct {
		Source string           `json:"source"`
		Deb    map[string][]int `json:"deb"`
		// Rpm maps a RHEL major to the GCC Toolset majors its AppStream
		// has (gcc-toolset-N, under /opt/rh/gcc-toolset-N/root/usr/bin);
		// RpmSystem to its system gcc's major.
		RpmSource string           `json:"rpm_source"`
		Rpm       map[string][]int `json:"rpm"`
		RpmSystem map[string]int   `json:"rpm_system"`
	} `json:"host_compilers"`
}

// RunTimeBuilds are the facts of torch's run-time (JIT) extension builds.
type RunTimeBuilds struct {
	Source string `json:"source"`
	// RootEnv is the variable that moves the extensions root; DefaultRoot
	// is the root without it, under which Subfolder names the folder of
	// one Python and CUDA.
	RootEnv     string `json:"root_env"`
	DefaultRoot string `json:"default_root"`
	Subfolder   string `json:"subfolder"`
	// OldDefaultRoot is the root of torch 1.x releases before the
	// per-user cache folder (the C++ extension tutorial's /tmp one).
	OldDefaultRoot string       `json:"old_default_root"`
	DeepSpeed      DeepSpeedOps `json:"deepspeed"`
}

// DeepSpeedOps: DeepSpeed builds its ops at run time unless its install
// built them (AllOpsEnv=1, or one op's variable in Ops, keyed by the op's
// NAME as torch's build prints it).
type DeepSpeedOps struct {
	Version   string            `json:"version"`
	Source    string            `json:"source"`
	AllOpsEnv string            `json:"all_ops_env"`
	Report    string            `json:"report"`
	Ops       map[string]string `json:"ops"`
	// Sources maps an op's source, relative to deepspeed/ops/
	// (csrc/adam/multi_tensor_adam.cu), to the one op that compiles it.
	SourcesNote string            `json:"sources_note"`
	Sources     map[string]string `json:"sources"`
}

// BuildProfile is one package version's build.
type BuildProfile struct {
	Version string `json:"version"`
	// Sdist is the file the profile was read from (on PyPI unless SdistURL
	// names another place), SdistSHA256 its digest; "" where the package
	// publishes no sdist.
	Sdist       string `json:"sdist,omitempty"`
	SdistSHA256 string `json:"sdist_sha256,omitempty"`
	SdistURL    string `json:"sdist_url,omitempty"`
	Source      string `json:"source"`
	// BuildSystem: "setuptools" (setup.py with torch.utils.cpp_extension),
	// "cmake", or "none" (pure Python/Triton).
	BuildSystem string `json:"build_system"`
	// BuildImports are the distributions its setup.py imports at the top
	// besides torch, in the order it imports them (packaging.version,
	// setuptools, wheel.bdist_wheel): with --no-build-isolation they must
	// be in the environment, or the build stops at "No module named
	// 'wheel'" (read in the sdist's setup.py; TestNetworkFixCommandsResolve
	// re-reads them).
	BuildImports []string `json:"build_imports,omitempty"`
	// ArchFile is the build file that lists the targets.
	ArchFile string `json:"arch_file,omitempty"`
	// HonoursArchList: TORCH_CUDA_ARCH_LIST (or the package's ArchEnv)
	// decides the targets. torch ignores TORCH_CUDA_ARCH_LIST as soon as a
	// package passes its own -gencode/arch flags (cpp_extension.py
	// _get_cuda_arch_flags returns nothing when a cflag contains "arch").
	HonoursArchList bool   `json:"honours_arch_list"`
	ArchEnv         string `json:"arch_env,omitempty"`
	// ArchEnvFormat is how ArchEnv spells the targets: "" sm numbers
	// ("80;90", flash-attn), "capability" compute capabilities ("8.0;9.0",
	// natten, which multiplies each by ten).
	ArchEnvFormat string `json:"arch_env_format,omitempty"`
	// NoGPUNeeds is what the build needs set to compile CUDA code where no
	// GPU is visible at build time (a container build, a login node), and
	// NoGPUOtherwise what it does without it.
	NoGPUNeeds     string `json:"no_gpu_needs,omitempty"`
	NoGPUOtherwise string `json:"no_gpu_otherwise,omitempty"`
	ArchNote       string `json:"arch_note,omitempty"`
	// Targets are the SASS targets built per nvcc version range.
	Targets []BuildTargets `json:"targets,omitempty"`
	// Narrowable: the targets are literal -gencode pairs in ArchFile that
	// fastpath's narrowing step can cut down to the GPUs present.
	Narrowable bool `json:"narrowable,omitempty"`
	// Parallel are the variables that set build parallelism.
	Parallel []string `json:"parallel,omitempty"`
	// NVCCThreads is the nvcc --threads value the build passes (targets
	// compiled at once per file); NVCCThreadsEnv the variable that sets it.
	NVCCThreads    int    `json:"nvcc_threads,omitempty"`
	NVCCThreadsEnv string `json:"nvcc_threads_env,omitempty"`
	// CUDASources is how many .cu files one build compiles: more jobs than
	// that do not help.
	CUDASources int `json:"cuda_sources,omitempty"`
	// HostCompiler is how the build picks nvcc's host compiler.
	HostCompiler string `json:"host_compiler,omitempty"`
	// ForceBuildEnv makes setup.py build instead of downloading its
	// prebuilt wheel; WheelScheme says where those wheels come from.
	ForceBuildEnv string `json:"force_build_env,omitempty"`
	// ForceBuildValue is the value ForceBuildEnv must have ("" TRUE).
	ForceBuildValue string `json:"force_build_value,omitempty"`
	WheelScheme     string `json:"wheel_scheme,omitempty"`
	// GiBPerJob is the package's own memory guidance per job (0: the
	// rule of thumb), with its source.
	GiBPerJob       float64            `json:"gib_per_job,omitempty"`
	GiBPerJobSource string             `json:"gib_per_job_source,omitempty"`
	DiskGiB         int                `json:"disk_gib,omitempty"`
	Measured        []BuildMeasurement `json:"measured,omitempty"`
	// Older are earlier releases whose build files differ from this one's
	// in the targets they compile, newest first; ForVersion picks one.
	Older []OlderBuild `json:"older,omitempty"`
}

// OlderBuild is a run of earlier releases, from From (the oldest whose
// sdist was read) up to, not including, Below (the first release with the
// next build), that build Targets instead of the newer profile's. Sdist
// (with SdistSHA256) is the newest of them, read for the targets.
type OlderBuild struct {
	From        string         `json:"from"`
	Below       string         `json:"below"`
	Version     string         `json:"version"`
	Sdist       string         `json:"sdist"`
	SdistSHA256 string         `json:"sdist_sha256"`
	Source      string         `json:"source"`
	Targets     []BuildTargets `json:"targets"`
	// Same are older sdists of the run read to build the same targets.
	Same []SdistRef `json:"same,omitempty"`
}

// SdistRef is one sdist on PyPI and its sha256.
type SdistRef struct {
	Sdist  string `json:"sdist"`
	SHA256 string `json:"sha256"`
}

// ForVersion is the build of release v: the profile itself for "" or a
// release from the newest run; an older run's targets, version and sdist
// for a release in that run; and for a release older than every run read
// (known false) the profile without targets and not narrowable, since
// nobody read that release's build.
func (b BuildProfile) ForVersion(v string) (p BuildProfile, known bool) {
	if v == "" || b.Version == "" {
		return b, true
	}
	floor := b.Version
	for _, o := range b.Older {
		if pep440.Less(v, o.Below) && !pep440.Less(v, o.From) {
			b.Version, b.Sdist, b.SdistSHA256, b.Source, b.Targets = o.Version, o.Sdist, o.SdistSHA256, o.Source, o.Targets
			b.Older, b.Measured = nil, nil
			return b, true
		}
		if pep440.Less(o.From, floor) {
			floor = o.From
		}
	}
	if len(b.Older) == 0 || !pep440.Less(v, floor) {
		return b, true
	}
	b.Targets, b.Narrowable, b.Older, b.Measured = nil, false, nil, nil
	return b, false
}

// OlderFor is the newest older run whose build has an SASS target in
// covers (a GPU's sm, by the caller's rule) for nvcc, for a GPU the
// profile's own targets leave out.
func (b BuildProfile) OlderFor(nvcc string, covers func([]int) bool) (OlderBuild, bool) {
	for _, o := range b.Older {
		if covers((BuildProfile{Targets: o.Targets}).TargetsFor(nvcc)) {
			return o, true
		}
	}
	return OlderBuild{}, false
}

// BuildTargets are the SASS targets (sm numbers) a build compiles with an
// nvcc from NVCCFrom to NVCCTo (inclusive, "" open).
type BuildTargets struct {
	NVCCFrom string `json:"nvcc_from,omitempty"`
	NVCCTo   string `json:"nvcc_to,omitempty"`
	SMs      []int  `json:"sms"`
}

// BuildMeasurement is one timed build.
type BuildMeasurement struct {
	What    string `json:"what"`
	SMs     []int  `json:"sms"`
	NVCC    string `json:"nvcc"`
	Cores   int    `json:"cores"`
	MaxJobs int    `json:"max_jobs"`
	Seconds int    `json:"seconds"`
	// AtLeast: the build was stopped before it finished; Seconds is a
	// lower bound.
	AtLeast bool   `json:"at_least,omitempty"`
	Machine string `json:"machine"`
	Source  string `json:"source"`
}

var (
	buildsOnce sync.Once
	buildsData BuildsData
)

// Builds returns the parsed data/builds.json.
func Builds() *BuildsData {
	buildsOnce.Do(func() {
		buildsData = buildsTable() // generated into tables_gen.go
	})
	return &buildsData
}

// TargetsFor are the SMs the profile builds with nvcc cuda ("13.0"), nil
// when no range covers it.
func (b BuildProfile) TargetsFor(cuda string) []int {
	for _, t := range b.Targets {
		if (t.NVCCFrom == "" || CompareDotted(cuda, t.NVCCFrom) >= 0) && (t.NVCCTo == "" || CompareDotted(cuda, t.NVCCTo) <= 0) {
			return t.SMs
		}
	}
	return nil
}

// WheelOnlyPackage is a package PyPI has only wheels of.
type WheelOnlyPackage struct {
	Latest    string `json:"latest"`
	LastSdist string `json:"last_sdist"` // "" never
	// Index is its own wheel index per CUDA ({Mm}: "128"), where it has one.
	Index string `json:"index,omitempty"`
	// Git, Tag ({version}) and BuildEnv build it from its repository.
	Git      string   `json:"git,omitempty"`
	Tag      string   `json:"tag,omitempty"`
	BuildEnv []string `json:"build_env,omitempty"`
	// OtherProject: PyPI's name belongs to another project.
	OtherProject bool `json:"other_project,omitempty"`
	// OtherSummary is a phrase of the other project's PyPI summary, by
	// which TestWheelOnlyNetwork sees the name is still theirs.
	OtherSummary string `json:"other_summary,omitempty"`
	How          string `json:"how,omitempty"` // the manual way, where no command is known
	Source       string `json:"source"`
}
