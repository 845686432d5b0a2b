package remedy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// OSPackages installs system packages with the OS's package manager: apt
// on Debian/Ubuntu, dnf on the RHEL family. Elsewhere it is manual and says
// which packages to look for.
func OSPackages(c Context, title string, deb, rpm []string) Remedy {
	id := "os-packages/" + strings.Join(deb, "+")
	distro, _, _ := strings.Cut(c.Distro.Value, " ")
	switch distro {
	case "ubuntu", "debian":
		return Remedy{ID: id, Title: title,
			Commands: []string{"apt-get update", Command(append([]string{"apt-get", "install", "-y"}, deb...)...)},
			Changes:  []string{"installs " + strings.Join(deb, " ") + " system-wide"},
			Undo:     []string{Command(append([]string{"apt-get", "remove", "-y"}, deb...)...)}}
	case "rhel", "rocky", "almalinux", "centos", "fedora", "amzn":
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
	family, _, _ := strings.Cut(c.Distro.Value, " ")
	// python3-dev is the headers of the distro's own python3, in every
	// release.
	if mm == "3" || family != "ubuntu" && family != "debian" {
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
	r := OSPackages(c, fmt.Sprintf("Install g++-%d and make CUDA builds use it, leaving the system compiler alone", gcc),
		[]string{fmt.Sprintf("g++-%d", gcc)}, nil)
	if missing, ok := gxxMissing(c, gcc); ok {
		r = missing
	}
	r.ID = "host-compiler/gcc-" + fmt.Sprint(gcc)
	r.HostGCC = gcc
	var exports []string
	var how string
	switch c.BuildSystem.Value {
	case BuildSetuptools:
		exports = []string{Export("CC", cc), Export("CXX", gxx)}
		how = "torch's extension builder passes -ccbin $CC to nvcc and compiles C++ with $CXX"
	case BuildCMake:
		exports = []string{Export("CUDAHOSTCXX", gxx)}
		how = "CMake takes nvcc's host compiler from CUDAHOSTCXX (clear the build folder first: it is read once)"
	default:
		exports = []string{Export("CC", cc), Export("CXX", gxx), Export("NVCC_CCBIN", gxx), Export("CUDAHOSTCXX", gxx)}
		how = "torch extension builds take -ccbin from CC, nvcc alone reads NVCC_CCBIN, CMake reads CUDAHOSTCXX: all are set since the build system is not known"
	}
	if r.Manual {
		r.FillIn += "; then " + strings.Join(exports, "; ")
	} else {
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
	switch {
	case p.HonoursArchList && p.ArchEnv != "" && p.ArchEnv != "TORCH_CUDA_ARCH_LIST":
		// Its own variable picks the targets: the stock build's variables
		// in front of the rebuild of the installed version.
		stock := rs[len(rs)-1].Commands[0]
		if i := strings.Index(stock, Quote(c.Interpreter())+" -m pip"); i > 0 {
			return []string{stock[:i] + rebuild}
		}
	case !p.HonoursArchList:
		// Its setup.py hard-codes the targets: its own sdist narrowed to
		// the GPUs here (or its stock build). It is installed already: pip
		// must replace it, not call it satisfied, and not reuse a cached
		// wheel.
		install := Command(c.Interpreter(), "-m", "pip", "install") + " "
		var out []string
		for _, cmd := range rs[0].Commands {
			out = append(out, strings.Replace(cmd, install, install+"--force-reinstall --no-deps --no-cache-dir ", 1))
		}
		return out
	}
	return []string{ArchList(archList), rebuild}
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
