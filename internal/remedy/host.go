package remedy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// family is the OS's package family: "deb" (apt) for Debian and Ubuntu,
// "rpm" (dnf) for the RHEL family, Fedora and Amazon Linux, by os-release
// ID or, for a rebuild fastpath does not name, by its ID_LIKE ("rhel
// centos fedora"); "" where neither tells.
func family(c Context) string {
	id, _, _ := strings.Cut(c.Distro.Value, " ")
	switch id {
	case "ubuntu", "debian":
		return "deb"
	case "rhel", "rocky", "almalinux", "centos", "ol", "fedora", "amzn":
		return "rpm"
	}
	for _, w := range strings.Fields(c.DistroLike.Value) {
		if w == "rhel" || w == "centos" || w == "fedora" {
			return "rpm"
		}
	}
	return ""
}

// rhelKey is the kb's key for a RHEL-compatible OS ("rhel 9" for Rocky
// 9.3, AlmaLinux 9.5, CentOS Stream 9): RHEL itself, a rebuild fastpath
// names, or one whose ID_LIKE names rhel. Fedora and Amazon Linux number
// their releases otherwise and have none.
func rhelKey(c Context) (string, bool) {
	id, version, _ := strings.Cut(c.Distro.Value, " ")
	switch id {
	case "rhel", "rocky", "almalinux", "centos", "ol":
	case "fedora", "amzn":
		return "", false
	default:
		if !slices.Contains(strings.Fields(c.DistroLike.Value), "rhel") {
			return "", false
		}
	}
	major, _, _ := strings.Cut(version, ".")
	if leadingInt(major) == 0 || fmt.Sprint(leadingInt(major)) != major {
		return "", false
	}
	return "rhel " + major, true
}

// OSPackages installs system packages with the OS's package manager: apt
// on Debian/Ubuntu, dnf on the RHEL family (by os-release ID or ID_LIKE).
// Elsewhere, or where no RHEL name is given, it is manual and says which
// packages to look for: a RHEL host is never told to apt-get.
func OSPackages(c Context, title string, deb, rpm []string) Remedy {
	id := "os-packages/" + strings.Join(deb, "+")
	switch family(c) {
	case "deb":
		return Remedy{ID: id, Title: title,
			Commands: []string{"apt-get update", Command(append([]string{"apt-get", "install", "-y"}, deb...)...)},
			Changes:  []string{"installs " + strings.Join(deb, " ") + " system-wide"},
			Undo:     []string{Command(append([]string{"apt-get", "remove", "-y"}, deb...)...)}}
	case "rpm":
		if rpm != nil {
			return Remedy{ID: id, Title: title,
				Commands: []string{Command(append([]string{"dnf", "install", "-y"}, rpm...)...)},
				Changes:  []string{"installs " + strings.Join(rpm, " ") + " system-wide"},
				Undo:     []string{Command(append([]string{"dnf", "remove", "-y"}, rpm...)...)}}
		}
	}
	what := "Debian/Ubuntu: " + strings.Join(deb, " ")
	if rpm != nil {
		what += "; RHEL family: " + strings.Join(rpm, " ")
	}
	os := c.Distro.Value
	if os == "" {
		os = "unknown OS"
	}
	return Remedy{ID: id, Title: title + " (with your OS's package manager)"}.manual(
		fmt.Sprintf("the package names for %s%s (%s)", os, c.Distro.where(), what))
}

// PythonHeaders installs the headers (Python.h) of Python mm ("3.6") with
// the OS's package manager, where the distro's own archive packages that
// Python (kb builds.json python_headers): python3.6-dev exists in Ubuntu
// 18.04 and nowhere newer, so on Ubuntu 24.04 apt-get install
// python3.6-dev only fails. Elsewhere the fix is manual: the headers come
// from where that Python came from.
func PythonHeaders(c Context, mm string) Remedy {
	title := "Install the headers for Python " + mm
	deb, rpm := []string{"python" + mm + "-dev"}, []string{"python" + mm + "-devel"}
	if family(c) == "rpm" {
		return rpmPythonHeaders(c, mm, title)
	}
	// python3-dev is the headers of the distro's own python3, in every
	// release.
	if mm == "3" || family(c) != "deb" {
		return OSPackages(c, title, deb, rpm)
	}
	have, known := kb.Builds().PythonHeaders.Deb[c.Distro.Value]
	for _, v := range have {
		if v == mm {
			return OSPackages(c, title, deb, rpm)
		}
	}
	var pkgs []string
	for _, v := range have {
		pkgs = append(pkgs, "python"+v+"-dev")
	}
	archive := "the archive of " + c.Distro.Value + c.Distro.where() + " has no python" + mm + "-dev"
	if known {
		archive += " (it has " + strings.Join(pkgs, ", ") + ")"
	} else {
		archive = "fastpath does not know which pythonX.Y-dev packages " + c.Distro.Value + c.Distro.where() + "'s archive has"
	}
	r := Remedy{ID: "python/headers-" + mm, Title: title + " from where that Python came from: " + archive,
		Preconditions: []Check{{Check: "python" + mm + "-dev in the OS's archive", OK: false, Unknown: !known, Detail: archive}},
		Reason:        "apt installs headers only for the Pythons the distro itself ships"}
	fill := "the headers of the Python " + mm + " the build uses, from its own source: the deadsnakes PPA (Ubuntu) has python" + mm +
		"-dev next to its python" + mm + "; pyenv and python.org builds install Python.h with the interpreter (reinstall that Python " +
		"if it is missing); conda: conda install python=" + mm + " in that environment"
	if known {
		fill += "; or make the environment again with a Python the OS ships, whose headers apt installs (" + strings.Join(pkgs, ", ") + ")"
	}
	return r.manual(fill)
}

// rpmPythonHeaders: the RHEL family names a Python's headers by its own
// scheme (kb builds.json python_headers.rpm): python3.11-devel on RHEL 9,
// python38-devel on RHEL 8, python3-devel for the OS's own python3.
func rpmPythonHeaders(c Context, mm, title string) Remedy {
	deb := []string{"python" + mm + "-dev"}
	if mm == "3" {
		return OSPackages(c, title, deb, []string{"python3-devel"})
	}
	key, ok := rhelKey(c)
	have, known := kb.Builds().PythonHeaders.Rpm[key]
	if ok && known {
		if pkg, has := have[mm]; has {
			return OSPackages(c, title, deb, []string{pkg})
		}
	}
	var pkgs []string
	for v, pkg := range have {
		pkgs = append(pkgs, pkg+" (Python "+v+")")
	}
	sort.Strings(pkgs)
	archive := "fastpath does not know which Python " + mm + " headers package " + c.Distro.Value + c.Distro.where() + "'s repositories have"
	if ok && known {
		archive = "the repositories of " + c.Distro.Value + c.Distro.where() + " have no Python " + mm + " (they have " + strings.Join(pkgs, ", ") + ")"
	}
	r := Remedy{ID: "python/headers-" + mm, Title: title + " from where that Python came from: " + archive,
		Preconditions: []Check{{Check: "Python " + mm + "'s headers in the OS's repositories", OK: false, Unknown: !(ok && known), Detail: archive}},
		Reason:        "dnf installs headers only for the Pythons the distro itself ships"}
	fill := "the headers of the Python " + mm + " the build uses, from its own source: pyenv and python.org builds install Python.h with the interpreter " +
		"(reinstall that Python if it is missing); conda: conda install python=" + mm + " in that environment; python3-devel is the headers of the OS's own python3 only"
	if ok && known {
		fill += "; or make the environment again with a Python the OS ships, whose headers dnf installs (" + strings.Join(pkgs, ", ") + ")"
	}
	return r.manual(fill)
}

// rpmHostCompiler: g++ gcc on the RHEL family is GCC Toolset's (kb
// builds.json host_compilers.rpm: gcc-toolset-N-gcc-c++, under
// /opt/rh/gcc-toolset-N/root/usr/bin), or the system gcc-c++ where that is
// gcc; ok is false where the OS has neither (the remedy is then manual and
// names no path).
func rpmHostCompiler(c Context, gcc int) (r Remedy, cc, gxx string, ok bool) {
	hc := kb.Builds().HostCompilers
	key, isRHEL := rhelKey(c)
	toolsets, known := hc.Rpm[key]
	switch {
	case isRHEL && hc.RpmSystem[key] == gcc:
		return OSPackages(c, fmt.Sprintf("Install g++ %d (%s's system gcc-c++) and make CUDA builds use it", gcc, c.Distro.Value), nil, []string{"gcc-c++"}), "/usr/bin/gcc", "/usr/bin/g++", true
	case isRHEL && known && slices.Contains(toolsets, gcc):
		bin := fmt.Sprintf("/opt/rh/gcc-toolset-%d/root/usr/bin/", gcc)
		return OSPackages(c, fmt.Sprintf("Install GCC Toolset %d's g++ and make CUDA builds use it, leaving the system compiler alone", gcc), nil,
			[]string{fmt.Sprintf("gcc-toolset-%d-gcc-c++", gcc)}), bin + "gcc", bin + "g++", true
	}
	has := "fastpath does not know which GCC Toolsets " + c.Distro.Value + c.Distro.where() + " has"
	if isRHEL && known {
		has = fmt.Sprintf("the repositories of %s%s have no gcc-toolset-%d (they have gcc-toolset-%d to %d)", c.Distro.Value, c.Distro.where(), gcc, slices.Min(toolsets), slices.Max(toolsets))
	}
	r = Remedy{Title: fmt.Sprintf("Build with g++ %d: %s", gcc, has),
		Preconditions: []Check{{Check: fmt.Sprintf("g++ %d in the OS's repositories", gcc), OK: false, Unknown: !(isRHEL && known), Detail: has}},
		Reason:        "dnf installs only the compilers the distro itself ships"}
	return r.manual(fmt.Sprintf("a g++ %d from elsewhere (a module on a cluster, conda-forge's gxx_linux-64=%d, or a container of an OS that packages it), or a newer CUDA whose nvcc accepts the g++ here", gcc, gcc)), "", "", false
}

// HostCompiler makes CUDA builds use g++ gcc (a major, e.g. 13) instead of
// a host compiler too new for nvcc, without touching the system compiler.
// What works depends on the build system, read from the builders' sources:
//   - torch.utils.cpp_extension (setuptools builds of torch extensions)
//     passes `-ccbin $CC` to nvcc when CC is set, and compiles .cpp files
//     with $CXX (torch 2.11.0 cpp_extension.py, unix_cuda_flags and
//     _write_ninja_file_and_compile_objects): set CC and CXX. It never reads
//     CUDAHOSTCXX.
//   - CMake reads CUDAHOSTCXX (CMAKE_CUDA_HOST_COMPILER) when it first
//     configures CUDA.
//   - nvcc itself reads NVCC_CCBIN when no -ccbin is given.
//
// For an unknown build system all three are set.
func HostCompiler(c Context, gcc int, nvcc string) Remedy {
	gxx := fmt.Sprintf("/usr/bin/g++-%d", gcc)
	cc := fmt.Sprintf("/usr/bin/gcc-%d", gcc)
	pathsKnown := true
	var r Remedy
	if family(c) == "rpm" {
		r, cc, gxx, pathsKnown = rpmHostCompiler(c, gcc)
	} else {
		r = OSPackages(c, fmt.Sprintf("Install g++-%d and make CUDA builds use it, leaving the system compiler alone", gcc),
			[]string{fmt.Sprintf("g++-%d", gcc)}, nil)
		if missing, ok := gxxMissing(c, gcc); ok {
			r = missing
		}
	}
	r.ID = "host-compiler/gcc-" + fmt.Sprint(gcc)
	r.HostGCC = gcc
	var exports []string
	var how string
	switch c.BuildSystem.Value {
	case BuildSetuptools:
		exports = []string{ExportPath("CC", cc), ExportPath("CXX", gxx)}
		how = "torch's extension builder passes -ccbin $CC to nvcc and compiles C++ with $CXX"
	case BuildCMake:
		exports = []string{ExportPath("CUDAHOSTCXX", gxx)}
		how = "CMake takes nvcc's host compiler from CUDAHOSTCXX (clear the build folder first: it is read once)"
	default:
		exports = []string{ExportPath("CC", cc), ExportPath("CXX", gxx), ExportPath("NVCC_CCBIN", gxx), ExportPath("CUDAHOSTCXX", gxx)}
		how = "torch extension builds take -ccbin from CC, nvcc alone reads NVCC_CCBIN, CMake reads CUDAHOSTCXX: all are set since the build system is not known"
	}
	switch {
	case !pathsKnown:
		r.FillIn += "; then point the build at that g++ (" + how + ")"
	case r.Manual:
		r.FillIn += "; then " + strings.Join(exports, "; ")
	default:
		r.Commands = append(r.Commands, exports...)
	}
	r.Preconditions = append(r.Preconditions, Check{Check: "how the build picks nvcc's host compiler", OK: true, Detail: how})
	r.Changes = append(r.Changes, "the compiler variables for this shell")
	r.Undo = append(r.Undo, "unset CC CXX NVCC_CCBIN CUDAHOSTCXX")
	if nvcc != "" {
		r.Reason = fmt.Sprintf("nvcc %s accepts gcc %d at most", nvcc, gcc)
	}
	return r
}

// OwnPip is the habit that ends pip-python-mismatch: the package is the
// user's to name, so the remedy is manual and has no command (fix --apply
// once ran `python -m pip install PACKAGE`, installing whatever the index
// calls "package").
func OwnPip(c Context) Remedy {
	pip := c.Pip()
	return Remedy{ID: "pip/own-interpreter",
		Title: "Always install with the interpreter's own pip: " + pip + " NAME, never a bare pip install NAME"}.manual(
		"the package you were installing, after " + pip)
}

// ArchList is the export that makes torch's extension builder compile for
// list ("9.0", "12.0+PTX"); it has no effect on packages that pass their own
// -gencode flags (see BuildFromSource).
func ArchList(list string) string { return Export("TORCH_CUDA_ARCH_LIST", Quote(list)) }

// LibraryPath puts dir first on the dynamic loader's path for this shell.
func LibraryPath(dir string) string {
	return Export("LD_LIBRARY_PATH", Quote(dir)+"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
}

// Unset is the line that clears a variable for this shell.
func Unset(name string) string { return "unset " + name }

// CondaPython reinstalls a conda environment's python (which ships its
// headers).
func CondaPython(mm string) Remedy {
	return Remedy{ID: "python/conda-headers", Title: "Reinstall the environment's python (conda's python ships its headers)",
		Commands: []string{Command("conda", "install", "-y", "--force-reinstall", "python="+mm)},
		Changes:  []string{"the conda environment's python " + mm}}
}

// CondaMKLPin pins MKL to 2024.0 in a conda environment: conda's torch
// builds link MKL dynamically and need its iJIT_NotifyEvent (Intel's ITT
// API), which MKL 2024.1 dropped ("undefined symbol: iJIT_NotifyEvent" from
// libtorch_cpu.so: pytorch/pytorch#123097; open-mmlab/mmpretrain#1900 and
// yoraish/mmd#3 fixed it so). pip's torch wheels link MKL statically.
func CondaMKLPin() Remedy {
	return Remedy{ID: "torch/conda-mkl", Title: "Pin MKL to 2024.0, the last release with iJIT_NotifyEvent, in this conda environment",
		Commands: []string{Command("conda", "install", "-y", "mkl=2024.0")},
		Changes:  []string{"the conda environment's mkl (2024.0)"},
		Reason:   "conda's torch links MKL dynamically; MKL 2024.1 dropped iJIT_NotifyEvent"}
}

// CondaTorchCUDA replaces a CPU build of conda's pytorch with a CUDA build
// in the same conda environment, with conda (pip's torch over conda's
// would leave two torches' files mixed). conda-forge names its builds
// cpu_* and cuda*, so "pytorch=*=cuda*" asks for a CUDA one (a conda-forge
// maintainer in conda-forge/pytorch-cpu-feedstock#164); the pytorch
// channel's cpuonly package pins its CPU builds and must go first
// (pytorch/pytorch#32369).
func CondaTorchCUDA() Remedy {
	var c Context
	return c.condaTorchCUDA()
}

// condaTorchCUDA is CondaTorchCUDA for the selected conda environment, by
// its prefix where it is known.
func (c *Context) condaTorchCUDA() Remedy {
	target := []string{}
	if p := c.condaPrefix(); p != "" {
		target = []string{"-p", p}
	}
	return Remedy{ID: "torch/conda-cuda", Title: "Replace conda's CPU build of pytorch with a CUDA build, with conda in this environment (remove the cpuonly package first if it is installed; conda-forge's CUDA builds are pytorch=*=cuda*)",
		Commands: []string{Command(append(append([]string{"conda", "install", "-y"}, target...), "-c", "conda-forge", "pytorch=*=cuda*")...)},
		Changes:  []string{"the conda environment's pytorch (a CUDA build)"}}
}

// GPUProcesses lists what holds GPU memory (read-only).
func GPUProcesses() Remedy {
	return Remedy{ID: "gpu/processes", Title: "See what runs, and stop what should not",
		Commands: []string{"nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"}}
}

// Rebuild builds an installed kernel package again for the GPUs here: where
// its build ignores TORCH_CUDA_ARCH_LIST (its profile says so), the build
// narrowed to these GPUs or its stock build; otherwise TORCH_CUDA_ARCH_LIST
// set to archList, then rebuild (a pip command from Pip).
func Rebuild(c Context, dist, archList, rebuild string) []string {
	p, ok := kb.Builds().Packages[canonicalDist(dist)]
	if !ok {
		return []string{ArchList(archList), rebuild}
	}
	// The nvcc builds use, else one of torch's CUDA (the only kind torch
	// builds with).
	nvcc := c.NVCC.Value
	if nvcc == "" {
		nvcc, _ = CompilerCUDA(c)
	}
	rs := BuildFromSource(c, canonicalDist(dist), canonicalDist(dist), nvcc)
	imports := buildImports(c, p) // what its setup.py imports, first
	switch {
	case p.HonoursArchList && p.ArchEnv != "" && p.ArchEnv != "TORCH_CUDA_ARCH_LIST":
		// Its own variable picks the targets: the stock build's variables
		// in front of the rebuild of the installed version.
		cmds := rs[len(rs)-1].Commands
		stock := cmds[len(cmds)-1]
		if i := strings.Index(stock, Quote(c.Interpreter())+" -m pip"); i > 0 {
			return append(imports, stock[:i]+rebuild)
		}
	case !p.HonoursArchList:
		// Its setup.py hard-codes the targets: its own sdist narrowed to
		// the GPUs here (or its stock build). It is installed already: pip
		// must replace it, not call it satisfied, and not reuse a cached
		// wheel.
		install := Command(c.Interpreter(), "-m", "pip", "install") + " "
		var out []string
		for _, cmd := range rs[0].Commands {
			if !slices.Contains(imports, cmd) {
				cmd = strings.Replace(cmd, install, install+"--force-reinstall --no-deps --no-cache-dir ", 1)
			}
			out = append(out, cmd)
		}
		return out
	}
	return append(imports, ArchList(archList), rebuild)
}

// canonicalDist is a distribution name as the profiles key it
// (causal_conv1d -> causal-conv1d).
func canonicalDist(n string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(n))
}

// NVCCHost makes nvcc use an existing g++ (path, its version) for every
// build that does not pass its own -ccbin: NVCC_CCBIN, which nvcc reads
// itself (torch passes -ccbin only when CC is set), and CUDAHOSTCXX for
// CMake.
func NVCCHost(path, version string) Remedy {
	return Remedy{ID: "host-compiler/nvcc-ccbin", Title: fmt.Sprintf("Make nvcc use the g++ %s already here (%s) in every build: NVCC_CCBIN for nvcc and torch extension builds, CUDAHOSTCXX for CMake", version, path),
		Commands: []string{Export("NVCC_CCBIN", Quote(path)), Export("CUDAHOSTCXX", Quote(path))},
		Changes:  []string{"NVCC_CCBIN and CUDAHOSTCXX for this shell"}, Undo: []string{"unset NVCC_CCBIN CUDAHOSTCXX"}}
}

// Ninja installs ninja into the environment that builds: torch's extension
// builder runs it from PATH and, without it, falls back to a slow serial
// build or refuses ("Ninja is required to load C++ extensions").
func Ninja(c Context) Remedy {
	return Remedy{ID: "build/ninja", Title: "Install ninja into the environment that builds (torch's extension builder runs it from PATH)",
		Commands: []string{c.Pip("ninja")},
		Changes:  []string{"the ninja package in " + c.envWords()},
		Undo:     []string{c.PipUninstall("ninja")},
		Installs: []string{"ninja"}}
}

// gxxMissing is the manual step for a g++-gcc that the distro's archive
// does not package (kb builds.json host_compilers: g++-5, for CUDA 8's
// nvcc, is in Ubuntu 18.04 and no newer release), naming the releases
// that have it; ok is false where the archive has it or is not known.
func gxxMissing(c Context, gcc int) (Remedy, bool) {
	table := kb.Builds().HostCompilers.Deb
	have, known := table[c.Distro.Value]
	if !known || slices.Contains(have, gcc) {
		return Remedy{}, false
	}
	var where []string
	for distro, majors := range table {
		if slices.Contains(majors, gcc) {
			where = append(where, distro)
		}
	}
	sort.Strings(where)
	os := "an OS release older than those fastpath knows"
	if len(where) > 0 {
		os = strings.Join(where, ", ")
	}
	has := fmt.Sprintf("g++-%d", slices.Min(have))
	if slices.Max(have) != slices.Min(have) {
		has += fmt.Sprintf(" to g++-%d", slices.Max(have))
	}
	r := Remedy{Title: fmt.Sprintf("Build with g++ %d: the archive of %s%s has no g++-%d (it has %s)",
		gcc, c.Distro.Value, c.Distro.where(), gcc, has),
		Preconditions: []Check{{Check: fmt.Sprintf("g++-%d in the OS's archive", gcc), OK: false,
			Detail: fmt.Sprintf("%s packages %s", c.Distro.Value, has)}},
		Reason: "apt installs only the compilers the distro itself ships"}
	return r.manual(fmt.Sprintf("build in a container of an OS whose archive has g++-%d (%s), or use a newer CUDA whose nvcc accepts the g++ here", gcc, os)), true
}

// ReleaseForTorch installs the release of dist (a package each wheel of
// which pins one torch release: kb pins_torch) built for torch release
// torch, together with that torch. Where the KB's torch_pins know the
// release it is pinned (xformers==0.0.26.post1 torch==2.3.0): left to pip,
// the resolver walks back from the newest release one wheel at a time, and
// on a Python the matching release has no wheel for it builds an sdist.
// Otherwise pip, held to torch==torch, picks it (--upgrade).
func ReleaseForTorch(c Context, dist, torch string) (r Remedy, pinned string) {
	base, _, _ := strings.Cut(torch, "+")
	r = Remedy{ID: "pinned-torch/" + dist, Installs: []string{dist, "torch"}, Changes: []string{dist + " and torch in " + c.envWords()}}
	if v, ok := kb.ReleaseForTorch(dist, base); ok {
		r.Commands = []string{c.Pip(dist+"=="+v, "torch=="+base)}
		return r, v
	}
	r.Commands = []string{c.Pip("--upgrade", dist, "torch=="+base)}
	return r, ""
}
