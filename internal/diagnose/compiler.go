package diagnose

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// checkCompilerPresence: no nvcc at all (no-cuda-compiler), or nvcc present
// where torch's extension builder will not look (cuda-compiler-not-discoverable).
func checkCompilerPresence(c *judgement) []finding.Finding {
	cu := c.f.CUDA
	if len(cu.Compilers) == 0 {
		fd := finding.Finding{
			ID:       finding.NoCUDACompiler,
			Severity: c.buildSeverity(),
			Title:    "No CUDA compiler (nvcc) anywhere",
			Detail: "No nvcc was found in any place a build could use it, so no CUDA extension can be built here: " +
				"kernel packages without a prebuilt wheel for this exact torch (causal-conv1d, mamba-ssm, flash-attn) fail to install. " +
				"causal-conv1d's setup.py then stops with \"NameError: name 'bare_metal_version' is not defined\".",
		}
		if h := cu.TorchHome; h != nil {
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("torch's CUDA_HOME would be %s (from %s), which has no bin/nvcc", h.Path, h.Via))
		} else {
			fd.Evidence = append(fd.Evidence, "torch's CUDA_HOME resolves to nothing: CUDA_HOME and CUDA_PATH unset, no nvcc on PATH, no /usr/local/cuda")
		}
		// The line above decides it; the places searched back it up.
		fd.Decisive = []int{0}
		fd.Evidence = append(fd.Evidence, searched(cu.Searched)...)
		for _, inc := range cu.Incomplete {
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("%s %s at %s has %s but no %s: it cannot compile CUDA C++",
				inc.Dist, inc.Version, inc.Home, strings.Join(inc.Has, ", "), strings.Join(inc.Missing, ", ")))
		}
		if c.torch != nil {
			fd.Evidence = append(fd.Evidence, torchEvidence(c.torch))
		}
		if c.torchCUDA != "" {
			if pc, ok := c.cuda.PipCompilerFor(c.torchMajor); ok && !pc.HasNVCC {
				fd.Detail += fmt.Sprintf(" Note: the pip wheel %s==%s.* does not help: it ships ptxas and libnvvm but no nvcc.",
					pc.Packages[0], c.torchCUDA)
			}
		}
		fd.Fixes = c.compilerFixes()
		return []finding.Finding{fd}
	}
	home := cu.TorchHome
	if home != nil && home.NVCC != "" {
		return nil
	}
	if home != nil && (home.Via == "CUDA_HOME" || home.Via == "CUDA_PATH") {
		return nil // cuda-home-invalid says it, with the variable to fix
	}
	best := c.bestCompiler()
	fd := finding.Finding{
		ID:       finding.CUDACompilerNotDiscoverable,
		Severity: c.buildSeverity(),
		Title:    fmt.Sprintf("nvcc %s exists but extension builds will not find it", orUnknown(best.Version)),
		Detail: "torch's extension builder looks for nvcc through CUDA_HOME, then CUDA_PATH, then nvcc on PATH, then /usr/local/cuda; " +
			"the compiler(s) found here are in none of those places, so builds fail as if there were no compiler.",
	}
	if home != nil {
		fd.Evidence = append(fd.Evidence, fmt.Sprintf("torch's CUDA_HOME would be %s (from %s), which has no bin/nvcc", home.Path, home.Via))
	} else {
		fd.Evidence = append(fd.Evidence, "torch's CUDA_HOME resolves to nothing: CUDA_HOME and CUDA_PATH unset, no nvcc on PATH, no /usr/local/cuda")
	}
	for _, n := range cu.Compilers {
		fd.Evidence = append(fd.Evidence, nvccEvidence(n))
	}
	// Pointing builds at a compiler of another CUDA major than torch's only
	// trades this finding for nvcc-torch-cuda-mismatch: install a matching one.
	if _, major, _, ok := kb.MajorMinor(best.Version); c.torchCUDA != "" && (!ok || major != c.torchMajor) {
		fd.Evidence = append(fd.Evidence, fmt.Sprintf("none of them is CUDA %d.x like torch (%s): torch refuses to build with another major", c.torchMajor, c.torchCUDA))
		fd.Fixes = c.compilerFixes()
		return []finding.Finding{fd}
	}
	fd.Fixes = []finding.Fix{exportHomeFix(best)}
	return []finding.Finding{fd}
}

// checkCUDAHome: CUDA_HOME or CUDA_PATH names a folder without bin/nvcc.
func checkCUDAHome(c *judgement) []finding.Finding {
	home := c.f.CUDA.TorchHome
	if home == nil || home.NVCC != "" || (home.Via != "CUDA_HOME" && home.Via != "CUDA_PATH") {
		return nil
	}
	fd := finding.Finding{
		ID:       finding.CUDAHomeInvalid,
		Severity: c.buildSeverity(),
		Title:    fmt.Sprintf("%s=%s has no bin/nvcc", home.Via, home.Path),
		Detail: fmt.Sprintf("torch's extension builder takes %s as the CUDA toolkit without checking it, so every CUDA build fails "+
			"(\"%s/bin/nvcc: not found\") even where a compiler exists elsewhere.", home.Via, home.Path),
		Evidence: []string{fmt.Sprintf("%s=%s", home.Via, home.Path), fmt.Sprintf("%s/bin/nvcc does not exist", home.Path)},
	}
	if best := c.bestCompiler(); best != nil {
		for _, n := range c.f.CUDA.Compilers {
			fd.Evidence = append(fd.Evidence, nvccEvidence(n))
		}
		fd.Fixes = append(fd.Fixes, exportHomeFix(best))
	} else {
		fd.Evidence = append(fd.Evidence, "no nvcc was found anywhere else either (see no-cuda-compiler)")
		fd.Fixes = append(fd.Fixes, finding.Fix{Title: "Unset it until a toolkit is installed", Commands: []string{remedy.Unset(home.Via)}})
	}
	return []finding.Finding{fd}
}

// checkNVCCVersion: the nvcc builds would use vs torch's CUDA.
func checkNVCCVersion(c *judgement) []finding.Finding {
	home := c.f.CUDA.TorchHome
	if c.torchCUDA == "" || home == nil || home.NVCC == "" {
		return nil
	}
	n := c.compilerAt(home.NVCC)
	if n == nil || n.Version == "" {
		return nil
	}
	mm, major, _, ok := kb.MajorMinor(n.Version)
	if !ok || mm == c.torchCUDA {
		return nil
	}
	fd := finding.Finding{
		ID: finding.NVCCTorchCUDAMismatch,
		Evidence: []string{nvccEvidence(*n), fmt.Sprintf("torch's CUDA_HOME is %s (from %s)", home.Path, home.Via),
			torchEvidence(c.torch)},
	}
	if major != c.torchMajor {
		fd.Severity = finding.Error
		fd.Title = fmt.Sprintf("nvcc is CUDA %s but torch was built with CUDA %s", mm, c.torchCUDA)
		fd.Detail = fmt.Sprintf("torch refuses to build extensions when the majors differ: \"The detected CUDA version (%s) mismatches the version that was used to compile PyTorch (%s)\".", mm, c.torchCUDA)
	} else {
		fd.Severity = finding.Warning
		fd.Title = fmt.Sprintf("nvcc is CUDA %s, torch was built with CUDA %s", mm, c.torchCUDA)
		fd.Detail = "torch builds extensions across minor versions with a warning; the result usually loads, but a matching minor avoids surprises."
	}
	if best := c.bestCompiler(); best != nil && best != n {
		if bmm, _, _, ok := kb.MajorMinor(best.Version); ok && (bmm == c.torchCUDA || fd.Severity == finding.Error && strings.HasPrefix(bmm, fmt.Sprint(c.torchMajor)+".")) {
			fd.Fixes = append(fd.Fixes, exportHomeFix(best))
		}
	}
	fd.Fixes = append(fd.Fixes, c.compilerFixes()...)
	return []finding.Finding{fd}
}

// checkHostCompiler: gcc/g++ missing, or newer than the nvcc builds use accepts.
func checkHostCompiler(c *judgement) []finding.Finding {
	tc := c.f.Toolchain
	if tc.GXX == nil || tc.GCC == nil {
		missing := "g++"
		if tc.GCC == nil && tc.GXX == nil {
			missing = "gcc and g++"
		} else if tc.GCC == nil {
			missing = "gcc"
		}
		fd := finding.Finding{
			ID:       finding.HostCompilerUnsupported,
			Severity: c.buildSeverity(),
			Title:    "No host C++ compiler: " + missing + " missing",
			Detail:   "nvcc compiles the host side of every CUDA extension with the system gcc/g++; without it no extension builds.",
			Evidence: append([]string{"no " + missing + " on PATH (" + envValue(c, "PATH") + ")"}, searched(tc.GCCSearched)...),
		}
		fd.Fixes = c.osInstallFix("Install the host compilers", []string{"build-essential"}, []string{"gcc-c++"})
		return []finding.Finding{fd}
	}
	home := c.f.CUDA.TorchHome
	if home == nil || home.NVCC == "" {
		return nil
	}
	n := c.compilerAt(home.NVCC)
	if n == nil {
		return nil
	}
	max, ok := c.cuda.GCCMaxFor(n.Version)
	if !ok {
		return nil
	}
	// pip builds of torch extensions compile the host side with the g++
	// nvcc finds (or $CC, passed as -ccbin, or NVCC_CCBIN); CUDAHOSTCXX is
	// read only by CMake, so it does not rescue them.
	host := tc.GXX
	major := leadingInt(host.Version)
	if major == 0 || major <= max {
		return nil
	}
	mm, _, _, _ := kb.MajorMinor(n.Version)
	fd := finding.Finding{
		ID:       finding.HostCompilerUnsupported,
		Severity: c.buildSeverity(),
		Title:    fmt.Sprintf("g++ %d is newer than nvcc %s accepts (gcc %d at most)", major, mm, max),
		Detail: fmt.Sprintf("nvcc stops with \"#error -- unsupported GNU version! gcc versions later than %d are not supported!\". "+
			"Point the build at an older g++ rather than downgrading the system compiler: torch extension builds pass -ccbin $CC to nvcc, "+
			"nvcc alone reads NVCC_CCBIN, and only CMake builds read CUDAHOSTCXX.", max),
		Evidence: []string{fmt.Sprintf("%s is version %s", host.Path, host.Version), nvccEvidence(*n),
			fmt.Sprintf("nvcc %s accepts gcc up to %d (crt/host_config.h)", mm, max)},
	}
	fd.Fixes = []finding.Fix{toFix(remedy.HostCompiler(c.remedy(), max, mm))}
	if hc := tc.CUDAHostCXX; hc != nil {
		fd.Evidence = append(fd.Evidence, fmt.Sprintf("CUDAHOSTCXX=%s (g++ %s) is set, but only CMake builds read it: pip builds of torch extensions do not", hc.Path, orUnknown(hc.Version)))
		if hm := leadingInt(hc.Version); hm > 0 && hm <= max {
			fd.Fixes = append([]finding.Fix{toFix(remedy.NVCCHost(hc.Path, hc.Version))}, fd.Fixes...)
		}
	}
	return []finding.Finding{fd}
}

// compilerFixes are the ways to get an nvcc matching torch's CUDA, best
// first (remedy.CompilerRoutes): those whose preconditions hold here, each
// with its commands; where none holds, the platform's manual way.
func (c *judgement) compilerFixes() []finding.Fix {
	var fixes []finding.Fix
	routes := remedy.CompilerRoutes(c.remedy())
	for _, r := range routes {
		if r.Viable() && (len(r.Commands) > 0 || r.FillIn != "") {
			fixes = append(fixes, toFix(r))
		}
	}
	if len(fixes) == 0 && len(routes) > 0 {
		fixes = append(fixes, toFix(routes[len(routes)-1]))
	}
	return fixes
}

// toFix is a remedy as a finding's fix: a manual remedy has no commands and
// its title says what to fill in.
func toFix(r remedy.Remedy) finding.Fix {
	f := finding.Fix{Title: r.Title, Commands: append([]string{}, r.Commands...)}
	if r.Manual && len(r.Commands) == 0 && r.FillIn != "" {
		f.Title += " (by hand: " + r.FillIn + ")"
	}
	return f
}

// osInstallFix installs system packages with the OS's package manager.
func (c *judgement) osInstallFix(title string, debPkgs, rpmPkgs []string) []finding.Fix {
	return []finding.Fix{toFix(remedy.OSPackages(c.remedy(), title, debPkgs, rpmPkgs))}
}

func exportHomeFix(n *facts.NVCC) finding.Fix {
	return toFix(remedy.ExportHome(n.Home, n.Version))
}

func nvccEvidence(n facts.NVCC) string {
	s := fmt.Sprintf("nvcc %s at %s", orUnknown(n.Version), n.Path)
	var notes []string
	if n.VersionFrom != "" {
		notes = append(notes, "version from "+n.VersionFrom)
	}
	if len(n.Via) > 0 {
		notes = append(notes, "found via "+strings.Join(n.Via, ", "))
	}
	if n.Dist != "" {
		notes = append(notes, "pip package "+n.Dist)
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

func torchEvidence(t *facts.Torch) string {
	cuda := "None (CPU build)"
	if t.CUDA != "" {
		cuda = "'" + t.CUDA + "'"
	}
	return fmt.Sprintf("torch %s at %s (torch/version.py: cuda = %s)", t.Version, t.Location, cuda)
}

func searched(places []string) []string {
	out := make([]string, 0, len(places))
	for _, p := range places {
		out = append(out, finding.SearchedPrefix+p)
	}
	return out
}

func orUnknown(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}

// leadingInt returns the integer a version starts with ("13.3.0" -> 13).
func leadingInt(v string) int {
	end := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(v)
	}
	n, _ := strconv.Atoi(v[:end])
	return n
}
