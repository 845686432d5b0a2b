package explain

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// Every command a fix gives comes from internal/remedy, fed a Context made
// of the log's facts first (FromLog: the torch the build saw, ...) and the
// machine's where the log says nothing (FromMachine): a log from another
// machine is fixed for that machine's torch and CUDA, not this one's.

// rctx is the remedy Context for this log and environment.
func (e *env) rctx() remedy.Context {
	c := remedy.FromFacts(e.f)
	// Facts made from the log alone are no machine's: what the log does
	// not mention (a g++, a conda environment) is unknown, not absent.
	c.Machine = c.Machine && e.machine
	e.applyLogFacts(&c)
	return c
}

// applyLogFacts overrides the machine's facts with what the log says about
// its own environment (LogFacts, read by logfacts.go): torch and its CUDA,
// the compiler, the GPU, the driver, g++, the platform, the build system,
// memory and CPUs. Each value set here is marked FromLog, so remedies say
// which of their figures came from the user's log.
func (e *env) applyLogFacts(c *remedy.Context) {
	if e.scan != nil && e.scan.TorchVersion != "" {
		setTorch(c, e.scan.TorchVersion)
	}
	lf := e.log
	if lf == nil {
		return
	}
	str := func(f *LogFact) (string, bool) {
		if f == nil || f.Value == "" {
			return "", false
		}
		return f.Value, true
	}
	if v, ok := str(lf.Torch); ok {
		setTorch(c, v)
	}
	if v, ok := str(lf.TorchCUDA); ok {
		c.TorchCUDA = remedy.Of(v, remedy.FromLog)
	}
	if v, ok := str(lf.NVCC); ok {
		c.NVCC = remedy.Of(v, remedy.FromLog)
	}
	if v, ok := str(lf.Capability); ok {
		c.GPUs = []remedy.Fact[string]{remedy.Of(v, remedy.FromLog)}
	}
	if v, ok := str(lf.GPU); ok {
		c.GPUName = remedy.Of(v, remedy.FromLog)
	}
	if v, ok := str(lf.Driver); ok {
		c.Driver = remedy.Of(v, remedy.FromLog)
	}
	if v, ok := str(lf.GCC); ok {
		c.GCC = remedy.Of(v, remedy.FromLog)
	}
	if v, ok := str(lf.Platform); ok {
		switch v {
		case "macos":
			c.Platform, c.WSL = remedy.Of(remedy.Darwin, remedy.FromLog), remedy.Of(false, remedy.FromLog)
		case "windows":
			c.Platform, c.WSL = remedy.Of(remedy.Windows, remedy.FromLog), remedy.Of(false, remedy.FromLog)
		case "wsl":
			c.Platform, c.WSL = remedy.Of(remedy.Linux, remedy.FromLog), remedy.Of(true, remedy.FromLog)
		case "linux":
			c.Platform = remedy.Of(remedy.Linux, remedy.FromLog)
		}
	}
	if v, ok := str(lf.Installer); ok && v == "uv" {
		// uv ran the install: its environment may have no pip at all.
		c.PythonKind, c.HasPip = remedy.Of("uv", remedy.FromLog), false
	}
	if v, ok := str(lf.BuildSystem); ok {
		switch v {
		case "setuptools":
			c.BuildSystem = remedy.Of(remedy.BuildSetuptools, remedy.FromLog)
		case "cmake", "scikit-build":
			c.BuildSystem = remedy.Of(remedy.BuildCMake, remedy.FromLog)
		}
	}
	if v, ok := str(lf.MemTotal); ok {
		if b := parseHumanBytes(v); b > 0 {
			c.MemTotal = remedy.Of(b, remedy.FromLog)
			c.MemAvail = remedy.Fact[int64]{} // the log's machine, not this one's free memory
		}
	}
	if v, ok := str(lf.CPUs); ok {
		if n, err := strconv.Atoi(v); err == nil && n > 0 && n < 1<<16 {
			c.CPUs = remedy.Of(n, remedy.FromLog)
		}
	}
}

// setTorch records the log's torch version and the CUDA its local tag names
// (+cu130: 13.0; +cpu: none).
func setTorch(c *remedy.Context, v string) {
	c.TorchVersion = remedy.Of(v, remedy.FromLog)
	if _, local, ok := strings.Cut(v, "+cu"); ok && len(local) >= 3 {
		if n, err := strconv.Atoi(local); err == nil {
			c.TorchCUDA = remedy.Of(fmt.Sprintf("%d.%d", n/10, n%10), remedy.FromLog)
		}
	} else if strings.Contains(v, "+cpu") {
		c.TorchCUDA = remedy.Fact[string]{}
	}
}

// facts are the environment's facts, never nil: remedy words commands from
// them exactly as it does for doctor.
func (e *env) facts() *facts.Facts {
	if e.f == nil {
		return &facts.Facts{}
	}
	return e.f
}

// python is the interpreter to name in commands: the machine's, as remedy
// words every command.
func (e *env) python() string {
	c := remedy.FromFacts(e.facts())
	return c.Interpreter()
}

// pip is the install command for the selected environment (remedy's).
func (e *env) pip(args ...string) string {
	c := e.rctx()
	return c.Pip(args...)
}

// noIsolation is a build without isolation of dist: first what its setup.py
// imports and the environment lacks (remedy.BuildImports), then cmd.
func (e *env) noIsolation(dist, cmd string) []string {
	return append(remedy.BuildImports(e.rctx(), dist), cmd)
}

func (e *env) dist(name string) *facts.Distribution {
	if e.py == nil {
		return nil
	}
	want := canonicalDist(name)
	for i := range e.py.Distributions {
		if d := &e.py.Distributions[i]; !d.Shadowed && canonicalDist(d.Name) == want {
			return d
		}
	}
	return nil
}

// sitePackages is the selected environment's own site-packages (remedy's).
func (e *env) sitePackages() string { return remedy.FromFacts(e.facts()).SitePackages.Value }

// torchCUDA is torch's CUDA M.m and major: the log's torch first, else the
// machine's ("" when unknown).
func (e *env) torchCUDA() (string, int) {
	c := e.rctx()
	mm, major, _, ok := kb.MajorMinor(c.TorchCUDA.Value)
	if !ok {
		return "", 0
	}
	return mm, major
}

// torchBase is the torch release without its local label: the log's torch
// first, else the installed one, else the newest fastpath knows.
func (e *env) torchBase() string {
	if v := e.scan.TorchVersion; v != "" {
		base, _, _ := strings.Cut(v, "+")
		return base
	}
	if e.f != nil && e.f.Torch != nil {
		base, _, _ := strings.Cut(e.f.Torch.Version, "+")
		return base
	}
	return kb.CUDA().TorchWheels.Release
}

// pkgArg is the package the log names ("" when it names none: then the
// fix is manual and says to fill it in, never a placeholder command).
func pkgArg(caps map[string]string) string {
	if p := caps["pkg"]; p != "" {
		return p
	}
	return caps["dist"]
}

// manual is a fix without commands that says what to do by hand.
func manual(title string) finding.Fix { return finding.Fix{Title: title, Commands: []string{}} }

// retryBuild installs the package again against the installed torch, the
// step that follows any fix of a build prerequisite.
func (e *env) retryBuild(caps map[string]string, env ...string) finding.Fix {
	if e.runTimeBuild() {
		// torch built it while the program ran: no pip step (runtime.go).
		return e.runTimeRetry()
	}
	pkg := pkgArg(caps)
	if pkg == "" && e.log != nil && e.log.BuildSystem != nil && e.log.BuildSystem.Value == "cmake" {
		// A CMake project run by hand (no pip in the log): pip has nothing
		// to rebuild, and CMake keeps the compiler and targets it found.
		return manual("Then configure and build again in a fresh build folder: CMake keeps the CUDA compiler, its host compiler and the architectures it found in CMakeCache.txt, so delete that (or the build folder) first")
	}
	if pkg == "" && !e.pythonBuild() {
		// Nothing in the log says Python, pip or torch built it (a bare
		// nvcc error from make, a CMake project's line without CMake's
		// own): a pip command would be a guess at a build that may be none.
		return manual("Then run the build again (a CMake build: in a fresh build folder, since CMakeCache.txt keeps the compilers it found)")
	}
	if pkg == "" {
		return manual("Then build the package again against the installed torch: " + e.pip("--no-build-isolation") + " followed by its name (the log does not name it)")
	}
	prefix := ""
	if len(env) > 0 {
		prefix = strings.Join(env, " ") + " "
	}
	return finding.Fix{
		Title:    "Then build " + pkg + " against the installed torch (no build isolation, so the build sees it)",
		Commands: e.noIsolation(pkg, prefix+e.pip("--no-build-isolation", pkg)),
	}
}

// pythonBuild: the log shows a Python package build (a torch, a Python,
// a setuptools/scikit-build/meson build, an installer) rather than only a
// compiler's words.
func (e *env) pythonBuild() bool {
	if e.scan.TorchVersion != "" {
		return true
	}
	if e.log == nil {
		return false
	}
	lf := e.log
	if lf.BuildSystem != nil && lf.BuildSystem.Value != "cmake" {
		return true
	}
	return lf.Torch != nil || lf.TorchCUDA != nil || lf.Python != nil || lf.Installer != nil
}

// fix is a remedy as a fix.
func fix(r remedy.Remedy) finding.Fix {
	f := finding.Fix{Title: r.Title, Commands: append([]string{}, r.Commands...)}
	if r.Manual && len(r.Commands) == 0 && r.FillIn != "" {
		f.Title += " (by hand: " + r.FillIn + ")"
	}
	return f
}

func isBuildID(id finding.ID) bool {
	switch id {
	case finding.NoCUDACompiler, finding.CUDACompilerNotDiscoverable, finding.CUDAHomeInvalid,
		finding.NVCCTorchCUDAMismatch, finding.NVCCCannotTargetGPU, finding.HostCompilerUnsupported, finding.MissingPythonHeaders:
		return true
	}
	return false
}

// followUp are the steps after a diagnosis's own fixes.
func (e *env) followUp(id finding.ID, caps map[string]string) []finding.Fix {
	if id == finding.TorchMissing && caps["ds_ops"] != "" {
		// DeepSpeed's setup.py stopped before building anything: with
		// torch there, installing it again is the retry.
		return []finding.Fix{{Title: "Then install deepspeed again, now that torch is in the environment (no build isolation, so its setup.py sees that torch)",
			Commands: e.noIsolation("deepspeed", e.pip("--no-build-isolation", "deepspeed"))}}
	}
	if isBuildID(id) && (caps["pkg"] != "" || e.runTimeBuild()) {
		return []finding.Fix{e.retryBuild(caps)}
	}
	if isBuildID(id) && e.deepSpeedImport(caps) {
		return []finding.Fix{e.deepSpeedImportRetry(caps)}
	}
	return nil
}

// deepSpeedImport: DeepSpeed stopped on its CUDA check outside any
// install and before any op build: importing it (deepspeed/__init__.py
// imports git_version_info, which asks every op builder is_compatible,
// which reads the CUDA version from CUDA_HOME), its launcher, or ds_report.
func (e *env) deepSpeedImport(caps map[string]string) bool {
	return caps["pkg"] == "" && caps["ds_cuda_home"] != "" && !e.runTimeBuild()
}

// deepSpeedImportRetry: nothing is to be rebuilt; once CUDA_HOME is found
// (the fix before exported it in this shell), DeepSpeed's import passes.
// ds_report, when the log ran it, is the command to run again; otherwise
// the import itself checks it before the program is run again.
func (e *env) deepSpeedImportRetry(caps map[string]string) finding.Fix {
	title := "Then run the program again in this shell (with CUDA_HOME set): DeepSpeed reads CUDA_HOME when it is imported, before it builds any op, so there is nothing to reinstall; the import checks it first"
	c := e.rctx()
	cmd := remedy.Command(c.Interpreter(), "-c", "import deepspeed")
	switch {
	case caps["ds_setup"] != "":
		// Its setup.py, with no "Collecting" line to name the install.
		return finding.Fix{Title: "Then install deepspeed again in this shell (with CUDA_HOME set): its setup.py reads the CUDA version before it builds any op",
			Commands: e.noIsolation("deepspeed", e.pip("--no-build-isolation", "deepspeed"))}
	case caps["ds_report"] != "":
		title = "Then run ds_report again in this shell (with CUDA_HOME set): DeepSpeed reads CUDA_HOME when it is imported, before it builds any op, so there is nothing to reinstall"
		cmd = "ds_report"
	case caps["ds_import"] == "":
		// The message alone (older releases' assert, copies such as
		// lightseq's builder): which program ran is not in the log.
		return manual("Then run again, in this shell (with CUDA_HOME set), what failed: the op builder read CUDA_HOME before building anything, so nothing is to be reinstalled")
	}
	return finding.Fix{Title: title, Commands: []string{cmd}}
}

// factsEvidence is what the environment's facts add to a finding.
func (e *env) factsEvidence(id finding.ID, caps map[string]string) []string {
	var ev []string
	if e.scan.TorchVersion != "" && isBuildID(id) {
		ev = append(ev, "the build saw torch "+e.scan.TorchVersion)
	}
	if e.f == nil {
		return ev
	}
	switch id {
	case finding.NoCUDACompiler, finding.CUDACompilerNotDiscoverable, finding.CUDAHomeInvalid, finding.NVCCTorchCUDAMismatch, finding.NVCCCannotTargetGPU:
		if len(e.f.CUDA.Compilers) == 0 {
			ev = append(ev, fmt.Sprintf("this environment: no nvcc in the %d places searched", len(e.f.CUDA.Searched)))
		}
		for _, n := range e.f.CUDA.Compilers {
			ev = append(ev, fmt.Sprintf("this environment: nvcc %s at %s", orUnknown(n.Version), n.Path))
		}
		if h := e.f.CUDA.TorchHome; h != nil {
			ev = append(ev, fmt.Sprintf("this environment: torch's CUDA_HOME is %s (from %s)", h.Path, h.Via))
		}
	case finding.HostCompilerUnsupported:
		if g := e.f.Toolchain.GXX; g != nil {
			ev = append(ev, fmt.Sprintf("this environment: g++ %s at %s", orUnknown(g.Version), g.Path))
		}
	case finding.BuildOutOfMemory:
		if e.f.OS.MemTotal > 0 {
			ev = append(ev, fmt.Sprintf("this environment: %.1f GiB of memory available of %.1f GiB, %d CPUs", gib(e.f.OS.MemAvail), gib(e.f.OS.MemTotal), e.f.OS.CPUs))
		}
	case finding.DriverTooOld:
		if d := e.f.GPU.Driver; d != nil {
			ev = append(ev, fmt.Sprintf("this environment: driver %s (supports CUDA %s at most)", d.Version, orUnknown(d.CUDA)))
		}
	case finding.FastPathFallback:
		for _, p := range strings.Split(caps["fallback_dists"], " ") {
			if d := e.dist(p); p != "" && d != nil {
				ev = append(ev, fmt.Sprintf("this environment has %s %s installed, yet it did not import: `fastpath doctor` checks its binary against torch and the GPU", d.Name, d.Version))
			}
		}
	}
	if e.f.Torch != nil && (id == finding.ExtensionABIMismatch || id == finding.BuildIsolationHidesTorch || id == finding.ExtensionCUDAMismatch) {
		ev = append(ev, fmt.Sprintf("this environment: torch %s at %s", e.f.Torch.Version, e.f.Torch.Location))
	}
	return ev
}

// fixes are built from the log's captures and the facts, for ids the
// diagnosis of the environment did not confirm.
func (e *env) fixes(id finding.ID, caps map[string]string) []finding.Fix {
	switch id {
	case finding.NoCUDACompiler, finding.CUDACompilerNotDiscoverable, finding.CUDAHomeInvalid:
		mm, _ := e.torchCUDA()
		fixes := e.compilerFixes(mm)
		if home := caps["home"]; id == finding.CUDAHomeInvalid && strings.HasPrefix(home, ":") && strings.HasPrefix(strings.TrimLeft(home, ":"), "/") {
			// ":/usr/local/cuda-12.8" is "/usr/local/cuda-12.8" appended
			// with ':' to an empty CUDA_HOME: the folder meant is the rest.
			meant := strings.TrimLeft(home, ":")
			fixes = append([]finding.Fix{{Title: "Set CUDA_HOME to the folder itself, without the ':' (CUDA_HOME names one folder, not a list like PATH): " + meant + ", if it holds bin/nvcc",
				Commands: []string{remedy.ExportPath("CUDA_HOME", meant)}}}, fixes...)
		} else if id == finding.CUDAHomeInvalid && home != "" {
			fixes = append([]finding.Fix{{Title: "Stop pointing builds at " + home + ", which has no nvcc", Commands: []string{remedy.Unset("CUDA_HOME"), remedy.Unset("CUDA_PATH")}}}, fixes...)
		}
		if e.deepSpeedImport(caps) {
			return append(fixes, e.deepSpeedImportRetry(caps))
		}
		return append(fixes, e.retryBuild(caps))
	case finding.NVCCTorchCUDAMismatch:
		mm := caps["torch"]
		if tmm, _ := e.torchCUDA(); tmm != "" {
			mm = tmm
		}
		fixes := e.compilerFixes(mm)
		if alt, ok := e.torchForNVCC(caps["nvcc"], mm); ok {
			fixes = append(fixes, alt)
		}
		return append(fixes, e.retryBuild(caps))
	case finding.NVCCCannotTargetGPU:
		return e.targetFixes(caps)
	case finding.HostCompilerUnsupported:
		if cxx := caps["missing_cxx"]; cxx != "" {
			// torch's check_compiler_ok_for_platform ran `which` on it
			// (databrickslabs/dolly#119): nothing to compare, nothing there.
			return []finding.Fix{manual("Install a C++ compiler (Debian/Ubuntu: apt-get install g++, or build-essential; RHEL family: dnf install gcc-c++), or set CXX to one that is installed: the build looked for " + cxx + " and found none on PATH"), e.retryBuild(caps)}
		}
		if vs := caps["vs"]; vs != "" {
			// Windows: the host compiler is MSVC, which no g++ replaces.
			return []finding.Fix{manual("Build with a Visual Studio this nvcc accepts (" + vs + "): install that release's Build Tools (\"Desktop development with C++\") beside the newer one and build from its \"x64 Native Tools Command Prompt\"; or install a CUDA toolkit new enough to accept the installed Visual Studio, with a torch built for the same CUDA major. nvcc's -allow-unsupported-compiler only skips the check, at the risk of miscompiled code"), e.retryBuild(caps)}
		}
		if min, err := strconv.Atoi(caps["min"]); err == nil && min > 0 {
			return append(e.oldGCCFixes(min), e.retryBuild(caps))
		}
		max, err := strconv.Atoi(caps["max"])
		if err != nil || max <= 0 {
			return []finding.Fix{manual("Install a g++ that both torch's headers and nvcc accept (torch's c10 headers name the oldest, nvcc's crt/host_config.h the newest) and point the build at it: CC/CXX for torch extension builds, CUDAHOSTCXX for CMake"), e.retryBuild(caps)}
		}
		c := e.rctx()
		return []finding.Fix{fix(remedy.HostCompiler(c, max, c.NVCC.Value)), e.retryBuild(caps)}
	case finding.MissingPythonHeaders:
		mm := "3"
		if e.py != nil && e.py.Version != "" {
			if v, _, _, ok := kb.MajorMinor(e.py.Version); ok {
				mm = v
			}
		}
		if e.log != nil && e.log.Python != nil {
			// The Python the build compiled against (its include and
			// site-packages paths) is the one that lacks Python.h.
			if v, _, _, ok := kb.MajorMinor(e.log.Python.Value); ok {
				mm = v
			}
		}
		if e.py != nil && e.py.Kind == "conda" {
			return []finding.Fix{fix(remedy.CondaPython(mm)), e.retryBuild(caps)}
		}
		if c := e.rctx(); c.Platform.Value == remedy.Windows && !c.WSL.Value {
			// No OS package has Python.h on Windows: python.org's installer
			// puts include\ (and libs\, the import libraries) in the
			// interpreter's folder, and the embeddable package, which
			// portable apps (ComfyUI's python_embeded) ship, has neither.
			ver := mm
			if mm == "3" {
				ver = "version (python.exe --version says which)"
			}
			return []finding.Fix{manual("Give this Python its headers: python.org's Windows installer of the same Python " + ver +
				" puts include\\ and libs\\ in its folder; an embedded or portable Python (python_embeded) has neither, so copy both folders from a full install of the same release into the folder that holds its python.exe"), e.retryBuild(caps)}
		}
		return []finding.Fix{fix(remedy.PythonHeaders(e.rctx(), mm)), e.retryBuild(caps)}
	case finding.BuildIsolationHidesTorch:
		cmds := []string{}
		if e.f != nil && e.f.Torch == nil {
			cmds = append(cmds, e.pip("torch"))
		}
		cmds = append(cmds, e.pip("setuptools", "wheel", "packaging", "ninja"))
		if pkgArg(caps) == "" {
			f := manual("Install the build's own requirements into this environment, then build the package with " + e.pip("--no-build-isolation") + " and its name, so it sees the installed torch")
			f.Commands = cmds
			return []finding.Fix{f}
		}
		cmds = append(cmds, e.pip("--no-build-isolation", pkgArg(caps)))
		return []finding.Fix{{
			Title:    "Install the build's own requirements into this environment, then build " + pkgArg(caps) + " with --no-build-isolation so it sees the installed torch",
			Commands: cmds,
		}}
	case finding.BuildOutOfMemory:
		c := e.rctx()
		pkg := pkgArg(caps)
		prof, known := kb.Builds().Packages[pkg]
		jobs, why, _ := remedy.Jobs(c, prof)
		if pkg == "" {
			return []finding.Fix{manual(fmt.Sprintf("Build with at most %d parallel jobs (%s): MAX_JOBS for pip builds of torch extensions, CMAKE_BUILD_PARALLEL_LEVEL for CMake builds; the log does not name the package", jobs, why))}
		}
		r := remedy.StockBuild(c, pkg, c.NVCC.Value)
		r.Title = fmt.Sprintf("Build %s with at most %d parallel jobs (%s)", pkg, jobs, why)
		if !known {
			r.Title += "; its build system is not known to fastpath: MAX_JOBS is for pip builds of torch extensions, CMAKE_BUILD_PARALLEL_LEVEL for CMake"
		}
		return []finding.Fix{fix(r)}
	case finding.DriverTooOld:
		return e.driverFixes(caps)
	case finding.ExtensionABIMismatch:
		dist := caps["dist"]
		if dist == "" {
			dist = pkgArg(caps)
		}
		if strings.HasPrefix(caps["module"], "libtorch") || strings.HasPrefix(caps["module"], "libc10") {
			return []finding.Fix{{Title: "torch's own libraries do not match each other: reinstall torch with the CUDA libraries it pins", Commands: []string{e.pip("--force-reinstall", "torch=="+e.torchBase())}}}
		}
		if dist == "" {
			return []finding.Fix{manual("Rebuild the extension that failed to load against the installed torch: " + e.pip("--no-build-isolation", "--no-cache-dir", "--force-reinstall", "--no-deps") + " and its name")}
		}
		if kb.PinsTorch(dist) {
			// A rebuild from PyPI gets the same wheel back: each wheel is
			// built for one torch and pins it, so either the release
			// built for this torch or the torch this release pins cures
			// it (vllm-project/vllm#5501, xformers' "built for" warning).
			var fixes []finding.Fix
			have := caps["have_torch"]
			if have == "" {
				have = caps["torch_version"]
			}
			if base, _, _ := strings.Cut(have, "+"); base != "" && base[0] >= '0' && base[0] <= '9' {
				r, pinned := remedy.ReleaseForTorch(e.rctx(), dist, base)
				title := "Install the " + dist + " release built for the installed torch " + have + ": each " + dist + " wheel pins one torch release, so pip, held to torch==" + base + ", picks the " + dist + " that matches and keeps this torch"
				if pinned != "" {
					title = "Install " + dist + " " + pinned + ", the release built for the installed torch " + have + " (its wheels require torch==" + base + "), and keep this torch"
				}
				fixes = append(fixes, finding.Fix{Title: title, Commands: r.Commands})
			}
			keep := "Keep this " + dist + " and install the torch release it pins: pip, given " + dist + " again, installs that torch (`pip check` names it); or build " + dist + " from source against this torch"
			if len(fixes) > 0 {
				keep = "Or keep this " + dist + " and install the torch release it pins: pip, given " + dist + " again, installs that torch (`pip check` names it); building " + dist + " from source against this torch is the third way"
			}
			return append(fixes, finding.Fix{Title: keep, Commands: []string{e.pip(dist)}})
		}
		if r, ok := remedy.WheelOnlyRebuild(e.rctx(), dist, "", ""); ok {
			return []finding.Fix{fix(r)}
		}
		title := "Rebuild " + dist + " against the installed torch"
		if e.f != nil && e.f.Torch != nil {
			title += " " + e.f.Torch.Version
		}
		return []finding.Fix{{Title: title, Commands: e.noIsolation(dist, e.pip("--no-build-isolation", "--no-cache-dir", "--force-reinstall", "--no-deps", dist))}}
	case finding.ExtensionCUDAMismatch:
		return e.runtimeFixes(caps)
	case finding.TorchLibrariesMissing:
		if strings.HasPrefix(caps["symbol"], "iJIT_") {
			return []finding.Fix{
				fix(remedy.CondaMKLPin()),
				manual("Or replace conda's torch with pip's wheel of the same release, which links MKL statically: conda remove pytorch, then pip install that torch release from download.pytorch.org"),
			}
		}
		if caps["symbol"] != "" {
			return e.cudaLibraryCopyFixes(caps)
		}
		if caps["lib"] != "" {
			return e.cudaLibraryMissingFixes(caps)
		}
	case finding.CUDADriverNotVisible:
		if caps["arch_probe"] != "" {
			return e.archProbeFixes(caps)
		}
		// libcuda.so.1 ships with the driver, never with the CUDA toolkit:
		// in a container the NVIDIA runtime mounts the host's
		// (pytorch/pytorch#3221, ggml-org/llama.cpp#7822, cvat-ai/cvat#406).
		fixes := []finding.Fix{
			manual("In a container: start it with the NVIDIA Container Toolkit, which mounts the host driver's libcuda.so.1 into it: docker run --gpus all (or --runtime=nvidia; in Docker Compose a GPU device reservation, deploy.resources.reservations.devices with capabilities: [gpu]); `nvidia-smi` inside the container then lists the GPU. Installing CUDA or a driver in the image does not provide it"),
			manual("On a host or WSL: install the NVIDIA driver, or put the folder that holds its libcuda.so.1 on the loader path (WSL: LD_LIBRARY_PATH=/usr/lib/wsl/lib)"),
		}
		if e.log != nil && e.log.ImageBuild != nil {
			// pmh47/dirt#31: a RUN step imported TensorFlow; the
			// maintainers: the daemon's default runtime, or --runtime=nvidia.
			fixes = append(fixes, manual(fmt.Sprintf("If it failed in a RUN step of the image build (line %d): no GPU or driver library is mounted while an image builds, whatever docker run is given. Keep GPU code out of RUN steps (link against the CUDA toolkit's stubs/libcuda.so when a build needs it), or, with the classic builder, make nvidia Docker's default runtime (\"default-runtime\": \"nvidia\" in /etc/docker/daemon.json, then restart Docker)", e.log.ImageBuild.Line)))
		}
		return fixes
	case finding.LibcudaNotLinkable:
		// Triton links its launcher with -lcuda and -L the folders
		// ldconfig -p lists libcuda.so.1 in, or TRITON_LIBCUDA_PATH alone
		// (triton 3.5.0 triton/backends/nvidia/driver.py libcuda_dirs,
		// triton/runtime/build.py _build); ld needs the unversioned
		// libcuda.so there (pytorch/pytorch#94585, #103417: the link;
		// state-spaces/mamba#123: ldconfig, the toolkit's stub at link time).
		link := manual("Give the linker the unversioned libcuda.so next to the driver's 64-bit libcuda.so.1: find its folder with `ldconfig -p | grep libcuda.so.1` (the line tagged x86-64 or AArch64, not a 32-bit \"(libc6)\" one in an i386, lib32 or /lib folder), then in that folder run `sudo ln -s libcuda.so.1 libcuda.so`. In a container the NVIDIA runtime mounts only libcuda.so.1, never libcuda.so: make the link inside the container (or in the image, where it resolves once the runtime mounts the library)")
		// Triton's assertion names the driver's libcuda.so.1; triton 3.x's
		// failed command passes the folders ldconfig lists it in as -L
		// after its own backends/nvidia/lib.
		dir := libcudaDir(caps["located"])
		if dir == "" {
			dir = libcudaDir(ldirsAsFiles(caps["ldirs"]))
		}
		if dir != "" {
			link = finding.Fix{Title: "Create the unversioned libcuda.so next to the driver's libcuda.so.1 that Triton found in " + dir,
				Commands: []string{"sudo ln -s libcuda.so.1 " + dir + "/libcuda.so"}}
		}
		private := manual("Without root: make the link in a folder of your own and point Triton at that folder, which it then passes to the linker instead of ldconfig's: mkdir -p ~/.cache/libcuda-link && ln -sf \"$(ldconfig -p | awk '$1 == \"libcuda.so.1\" && /x86-64|AArch64/ {print $NF; exit}')\" ~/.cache/libcuda-link/libcuda.so && export TRITON_LIBCUDA_PATH=~/.cache/libcuda-link (a TRITON_LIBCUDA_PATH folder that holds only libcuda.so.1 does not satisfy -lcuda)")
		cache := manual("If `ldconfig -p` lists no libcuda.so.1 (a driver folder outside the loader cache, such as Colab's /usr/lib64-nvidia or Singularity's /.singularity.d/libs), add that folder to the cache: `sudo ldconfig` with the folder as its argument (find it with `find / -name libcuda.so.1 2>/dev/null`); if the link still fails, create libcuda.so next to it as the other fix says; with a CUDA toolkit installed, LIBRARY_PATH=/usr/local/cuda/lib64/stubs also satisfies the link (link time only: never put the stubs on LD_LIBRARY_PATH)")
		if caps["ldcache"] != "" || (caps["triton_assert"] != "" && caps["located"] == "") {
			// Triton's own check found no libcuda in the loader cache:
			// the cache first (googlecolab/colabtools#4300,
			// pytorch/pytorch#107960: ldconfig with the driver's folder).
			return []finding.Fix{cache, link, private}
		}
		return []finding.Fix{link, private, cache}
	case finding.DriverLibraryMismatch:
		return e.driverLibraryFixes()
	case finding.CuDNNVersionMismatch:
		// Another cuDNN is found before torch's own
		// (bmaltais/kohya_ss#1096, gladiaio/gladia#928: LD_LIBRARY_PATH;
		// YoungSeng/SRD-VC#16: the conda env's cudnn).
		built, found := caps["cudnn_built"], caps["cudnn_found"]
		first := "Let torch load the cuDNN it was built with"
		if built != "" && found != "" {
			first += " (" + built + ", not " + found + ")"
		}
		var fixes []finding.Fix
		if p := e.log.Platform; p != nil && p.Value == "windows" {
			// Windows has no LD_LIBRARY_PATH: a DLL is found in the
			// loading module's folder, then the folders on PATH, where
			// a CUDA or cuDNN installer's bin folder puts another
			// cudnn64_*.dll (pytorch/vision#7635, pytorch/pytorch#177273:
			// the Windows runners' cuDNN found before torch's).
			fixes = []finding.Fix{manual(fmt.Sprintf("%s (the log is from Windows, line %d): take the folder holding the other cuDNN's DLLs (cudnn64_*.dll: a CUDA or cuDNN install's bin folder, a conda env's Library\\bin) off PATH (echo %%PATH%%, or $env:PATH in PowerShell) and out of torch's DLL folder (site-packages\\torch\\lib, where a copied cudnn*.dll shadows torch's own), then run again", first, p.Line))}
		} else {
			fixes = []finding.Fix{manual(first + ": take the folder holding the other cuDNN off LD_LIBRARY_PATH (echo $LD_LIBRARY_PATH: an old CUDA or cuDNN install, a conda env's lib; sudo -E keeps it), or remove the conda environment's cudnn package (conda list cudnn), then run again")}
		}
		if p := e.log.Platform; p != nil && p.Value == "windows" {
			// torch's Windows wheels carry cuDNN's DLLs in torch\lib:
			// there is no nvidia-cudnn wheel to put back.
			return append(fixes, manual("If no other cuDNN is on PATH: reinstall the installed torch release with pip's --force-reinstall, which puts back the cuDNN DLLs its Windows wheel carries in torch\\lib"))
		}
		if e.scan.TorchVersion != "" || (e.f != nil && e.f.Torch != nil) {
			return append(fixes, finding.Fix{Title: "If no other cuDNN is on the path: reinstall torch with the nvidia-cudnn wheel it pins",
				Commands: []string{e.pip("--force-reinstall", "torch=="+e.torchBase())}})
		}
		return append(fixes, manual("If no other cuDNN is on the path: reinstall the installed torch release with pip's --force-reinstall, which puts back the nvidia-cudnn wheel at the version it pins"))
	case finding.TorchArchUnsupported:
		return e.torchArchFixes(caps)
	case finding.ExtensionArchUnsupported:
		dist := caps["dist"]
		if dist == "" {
			dist = pkgArg(caps)
		}
		cc := e.gpuCapability(caps)
		switch canonicalDist(dist) {
		case "vllm":
			return e.vllmArchFixes(cc)
		case "onnxruntime-gpu":
			// Not a torch extension: nothing of it builds against torch.
			gpu := "this GPU"
			if cc != "" {
				gpu += " (compute capability " + cc + ")"
			}
			return []finding.Fix{manual("Install an onnxruntime-gpu release whose CUDA build has code for " + gpu + " (a compute capability 12.0 GPU, RTX 50, needs one built with CUDA 12.8 or newer, the first nvcc that targets it), or run that model on ONNX Runtime's CPU provider; onnxruntime-gpu is no torch extension, so no torch reinstall or rebuild changes its kernels")}
		case "flashinfer-python":
			// Its kernels come from its wheels, flashinfer-cubin,
			// flashinfer-jit-cache or its own JIT, each with its own
			// architecture list: no one rebuild command is known to cure it.
			gpu := "this GPU"
			if cc != "" {
				gpu += " (compute capability " + cc + ")"
			}
			return []finding.Fix{manual("Install a flashinfer-python release (with flashinfer-cubin or flashinfer-jit-cache, docs.flashinfer.ai/installation.html) " +
				"that supports " + gpu + ", or turn flashinfer off in the program that calls it: its kernel, not torch's, has no code for the GPU")}
		}
		// A package whose kernels need a newer GPU than this one has no
		// build to rebuild or install: flash-attn 2 on a Turing or Volta
		// GPU (komikndr/raylight#68: 2x Quadro RTX 5000) runs nowhere, and
		// the model must use torch's attention instead.
		if min := attnMinCapability(dist); min != "" {
			sdpa := "use an attention that does not need " + dist + " (in transformers: attn_implementation=\"sdpa\", torch's scaled_dot_product_attention)"
			if have, err := cudaarch.ParseCapability(cc); err == nil {
				if need, err := cudaarch.ParseCapability(min); err == nil && have.SM() < need.SM() {
					return []finding.Fix{manual(fmt.Sprintf("No %s build runs on compute capability %s (it needs %s or newer): %s", dist, cc, min, sdpa))}
				}
			} else if cc == "" {
				return []finding.Fix{manual(fmt.Sprintf("If the GPU is older than compute capability %s (Turing, Volta: T4, V100, RTX 20, Quadro RTX), no %s build runs on it: %s. If it is newer (an RTX 50, compute capability 12.0), rebuild %s for it against the installed torch or install a %s release that has code for it (the log does not name the GPU: `fastpath doctor` reads it)", min, dist, sdpa, dist, dist))}
			}
		}
		switch {
		case dist == "" && cc == "":
			return []finding.Fix{manual("Rebuild the package for this GPU against the installed torch (the log names neither the package nor the GPU: `fastpath doctor` does)")}
		case cc == "":
			// The package is known from its own frames or message: name it.
			return []finding.Fix{manual("Rebuild " + dist + " for this GPU against the installed torch, or install a " + dist + " build that has code for it (the log does not name the GPU's compute capability: `fastpath doctor` reads it)")}
		case dist == "":
			return []finding.Fix{manual("Rebuild the package for compute capability " + cc + " against the installed torch (the log does not name the package: `fastpath doctor` finds it)")}
		}
		if r, ok := remedy.WheelOnlyRebuild(e.rctx(), dist, "", cc); ok {
			return []finding.Fix{fix(r)}
		}
		return []finding.Fix{{
			Title:    fmt.Sprintf("Rebuild %s for this GPU (compute capability %s) against the installed torch", dist, cc),
			Commands: remedy.Rebuild(e.rctx(), dist, cc, e.pip("--no-build-isolation", "--no-binary", dist, "--no-cache-dir", "--force-reinstall", "--no-deps", dist)),
		}}
	case finding.FastPathFallback:
		return e.fallbackFixes(caps)
	case finding.TorchMissing:
		c := e.rctx()
		r := remedy.TorchInstall(c, "", remedy.TorchWheelCUDA(c), false)
		r.Title = "Install torch into the environment that runs the program: " + r.Title
		return append([]finding.Fix{fix(r)}, e.followUp(id, caps)...)
	}
	return nil
}

// compilerFixes: an nvcc already on the machine with torch's CUDA M.m, else
// remedy's compiler routes for that release (NVIDIA's pip wheels where they
// hold an nvcc, conda, NVIDIA's apt repository with its keyring, a devel
// image; on macOS and Windows what the platform allows) whose
// preconditions hold.
func (e *env) compilerFixes(mm string) []finding.Fix {
	if e.f != nil {
		for _, n := range e.f.CUDA.Compilers {
			if nmm, _, _, ok := kb.MajorMinor(n.Version); ok && (mm == "" || nmm == mm) {
				r := remedy.ExportHome(n.Home, n.Version)
				r.Title = fmt.Sprintf("Point builds at the nvcc %s already here", n.Version)
				return []finding.Fix{fix(r)}
			}
		}
	}
	c := e.rctx()
	if mm == "" {
		// Double quotes: cmd.exe passes single quotes through as text.
		ask, set := remedy.Quote(c.Interpreter())+" -c 'import torch; print(torch.version.cuda)'", "export CUDA_HOME to its folder"
		if c.Platform.Value == remedy.Windows && !c.WSL.Value {
			ask, set = c.Interpreter()+` -c "import torch; print(torch.version.cuda)"`, "set CUDA_HOME to its folder"
		}
		return []finding.Fix{manual("Install an nvcc of torch's CUDA release (`" + ask + "`), then " + set + "; `fastpath doctor` lists the ways for this machine")}
	}
	if c.TorchCUDA.Value != mm {
		c.TorchCUDA = remedy.Of(mm, remedy.FromLog)
	}
	var fixes []finding.Fix
	routes := remedy.CompilerRoutes(c)
	for _, r := range routes {
		// A step by hand whose preconditions hold or are unknown (a log
		// that names no OS) is shown too: without it a log's only fix
		// would be a devel image (Zyphra/Zonos#194, no container).
		open := r.Manual && r.FillIn != ""
		for _, p := range r.Preconditions {
			open = open && (p.OK || p.Unknown)
		}
		if (r.Viable() && len(r.Commands) > 0) || open {
			fixes = append(fixes, fix(r))
		}
	}
	if len(fixes) == 0 && len(routes) > 0 {
		fixes = append(fixes, fix(routes[len(routes)-1]))
	}
	return fixes
}

// targetFixes: an nvcc new enough for the target the log names.
// droppedTarget reads an nvcc that rejects sm_XY. removed is the CUDA
// release that dropped it ("" when it is older than every target of the
// table, which starts at CUDA 11.0: sm_30), last the newest that still
// targets it. tooNew: the nvcc is past the removal (the log's nvcc says
// so, or the target is older than the table); either: the log does not
// say which nvcc ran and the target was dropped by a release after the
// table's start, so an nvcc too old for it fails the same way (CUDA 7.5
// and sm_61 as well as CUDA 13.0 and sm_61).
func droppedTarget(sm int, nvcc string) (removed, last string, tooNew, either bool) {
	t := cudaarch.Target{Kind: cudaarch.SASS, SM: sm}
	oldest := 0
	for _, r := range cudaarch.TargetReleases() {
		for _, a := range r.Add {
			if oldest == 0 || a.SM < oldest {
				oldest = a.SM
			}
		}
		switch can := cudaarch.CanTarget(r.CUDA, t); {
		case can:
			last, removed = r.CUDA.String(), ""
		case last != "" && removed == "":
			removed = r.CUDA.String()
		}
	}
	v, err := cudaarch.ParseVersion(nvcc)
	known := nvcc != "" && err == nil
	switch {
	case removed != "":
		if !known {
			return removed, last, false, true
		}
		rv, _ := cudaarch.ParseVersion(removed)
		return removed, last, !v.Less(rv), false
	case last == "" && sm > 0 && sm < oldest:
		return "", "", !known || !v.Less(cudaarch.Version{Major: 11}), false
	}
	return "", "", false, false
}

// droppedTargetFixes: take the dropped target out of the build's list, or
// build with an nvcc old enough to still have it.
func (e *env) droppedTargetFixes(caps map[string]string, sm int, last string) []finding.Fix {
	cc := fmt.Sprintf("%d.%d", sm/10, sm%10)
	fixes := []finding.Fix{manual(fmt.Sprintf("Take sm_%d (%s) out of the build's target list: TORCH_CUDA_ARCH_LIST for torch extensions, CMAKE_CUDA_ARCHITECTURES for CMake, or the -gencode flags its setup.py or Makefile sets; only a GPU of compute capability %s needs it", sm, cc, cc))}
	if last != "" {
		fixes = append(fixes, manual(fmt.Sprintf("Or, to run on a GPU of compute capability %s, build with nvcc %s or older, the newest that still targets it", cc, last)))
	}
	if pkgArg(caps) != "" || e.runTimeBuild() {
		fixes = append(fixes, e.retryBuild(caps))
	}
	return fixes
}

func (e *env) targetFixes(caps map[string]string) []finding.Fix {
	sm, _ := strconv.Atoi(caps["sm"])
	removed, last, tooNew, either := droppedTarget(sm, caps["nvcc"])
	if tooNew {
		return e.droppedTargetFixes(caps, sm, last)
	}
	t := cudaarch.Target{Kind: cudaarch.SASS, SM: sm}
	need := ""
	for _, r := range cudaarch.TargetReleases() {
		if cudaarch.CanTarget(r.CUDA, t) {
			need = r.CUDA.String()
			break
		}
	}
	if e.f != nil {
		for _, n := range e.f.CUDA.Compilers {
			if v, err := cudaarch.ParseVersion(n.Version); err == nil && cudaarch.CanTarget(v, t) {
				r := remedy.ExportHome(n.Home, n.Version)
				r.Title = fmt.Sprintf("Point builds at nvcc %s, which can target sm_%d", n.Version, sm)
				return []finding.Fix{fix(r), e.retryBuild(caps)}
			}
		}
	}
	if need == "" {
		return []finding.Fix{{Title: fmt.Sprintf("No CUDA release fastpath knows targets sm_%d: check the target list (TORCH_CUDA_ARCH_LIST)", sm), Commands: []string{}}}
	}
	mm, _ := e.torchCUDA()
	if mm == "" || kb.CompareDotted(mm, need) < 0 {
		mm = need
	}
	if last != "" && kb.CompareDotted(mm, last) > 0 {
		// A later release dropped the target: the newest that has it.
		mm = last
	}
	fixes := []finding.Fix{{Title: fmt.Sprintf("sm_%d needs nvcc %s or newer", sm, need), Commands: []string{}}}
	if either {
		// Too old or too new: the log does not say which nvcc ran.
		fixes[0].Title = fmt.Sprintf("If the nvcc is too old for sm_%d: install nvcc %s, the newest that targets it", sm, last)
		fixes = append(fixes, e.compilerFixes(last)...)
		dropped := e.droppedTargetFixes(map[string]string{}, sm, "")
		dropped[0].Title = "If the nvcc is CUDA " + removed + " or newer: t" + strings.TrimPrefix(dropped[0].Title, "T")
		fixes = append(fixes, dropped...)
		return append(fixes, e.retryBuild(caps))
	}
	fixes = append(fixes, e.compilerFixes(mm)...)
	return append(fixes, e.retryBuild(caps))
}

// driverFixes: a newer driver, or a torch built for the CUDA the driver runs.
func (e *env) driverFixes(caps map[string]string) []finding.Fix {
	if caps["invalid_image"] != "" {
		return e.invalidImageFixes(caps)
	}
	var fixes []finding.Fix
	mm, _ := e.torchCUDA()
	full, _, ok := kb.CUDA().DriverMinimum(mm)
	if mm != "" && ok {
		fixes = append(fixes, finding.Fix{Title: fmt.Sprintf("Upgrade the NVIDIA driver to %s or newer for torch's CUDA %s (on the host, not in the container)", full, mm), Commands: []string{}})
	} else {
		fixes = append(fixes, finding.Fix{Title: "Upgrade the NVIDIA driver (on the host, not in the container)", Commands: []string{}})
	}
	// The other way out when the failing runtime is torch's: a torch built
	// for a CUDA the driver runs. torch's own message (caps "found"), its
	// version or CUDA in the log say the runtime is torch's.
	torchy := mm != "" || caps["found"] != "" || e.scan.TorchVersion != "" || (e.log != nil && e.log.Torch != nil)
	if !torchy {
		return fixes
	}
	if dc := caps["driver_cuda"]; dc != "" && dc[0] >= '0' && dc[0] <= '9' {
		for _, b := range kb.CUDA().TorchWheels.Rows {
			if kb.CompareDotted(b.CUDA, dc) <= 0 {
				r := remedy.TorchInstall(e.rctx(), e.torchBase(), b.CUDA, true)
				if remedy.TorchBuildExists(e.torchBase(), b.CUDA) {
					r.Title = fmt.Sprintf("Or install torch %s built for CUDA %s, which this driver (CUDA %s at most) runs", e.torchBase(), b.CUDA, dc) + e.pythonNote(e.torchBase())
				} else {
					r.Title = fmt.Sprintf("Or, for this driver (CUDA %s at most): %s", dc, r.Title)
				}
				return append(fixes, e.pythonGate(fix(r), e.torchBase()))
			}
		}
	} else if e.log != nil && e.log.Driver != nil {
		// The driver's own version without its CUDA: the newest torch
		// CUDA whose minimum driver it meets (kb cuda.json driver_minimums).
		for _, b := range kb.CUDA().TorchWheels.Rows {
			if need, _, ok := kb.CUDA().DriverMinimum(b.CUDA); ok && kb.CompareDotted(e.log.Driver.Value, need) >= 0 {
				r := remedy.TorchInstall(e.rctx(), e.torchBase(), b.CUDA, true)
				if remedy.TorchBuildExists(e.torchBase(), b.CUDA) {
					r.Title = fmt.Sprintf("Or install torch %s built for CUDA %s, which driver %s runs (it needs %s or newer)", e.torchBase(), b.CUDA, e.log.Driver.Value, need) + e.pythonNote(e.torchBase())
				} else {
					r.Title = fmt.Sprintf("Or, for driver %s (CUDA %s needs %s or newer): %s", e.log.Driver.Value, b.CUDA, need, r.Title)
				}
				return append(fixes, e.pythonGate(fix(r), e.torchBase()))
			}
		}
	}
	return append(fixes, manual("Or install a torch built for an older CUDA, one this driver runs: nvidia-smi's \"CUDA Version\" is the newest it runs, and https://pytorch.org/get-started/previous-versions/ lists the torch builds for each CUDA"))
}

// pythonNote: the newest torch fastpath proposes needs a newer Python than
// the one the log shows (Isaac Sim's bundled 3.7): say so, and name the
// newest torch for that Python, rather than a pip command that finds no
// wheel. "" when the release is not the newest or the Python is unknown.
func (e *env) pythonNote(release string) string {
	tw := kb.CUDA().TorchWheels
	if release != tw.Release || tw.Python.Requires == "" || e.log == nil || e.log.Python == nil {
		return ""
	}
	py, _, _, ok := kb.MajorMinor(e.log.Python.Value)
	if !ok || kb.CompareDotted(py, tw.Python.Requires) >= 0 {
		return ""
	}
	note := fmt.Sprintf(" (torch %s needs Python %s or newer, and this log's Python is %s: install it in an environment with a newer Python", release, tw.Python.Requires, py)
	if newest := tw.Python.Newest[py]; newest != "" {
		note += fmt.Sprintf(", or stay on Python %s with torch %s, its newest release, if that has code for this GPU", py, newest)
	}
	return note + ")"
}

// pythonGate makes a torch install that the log's Python cannot run (see
// pythonNote) a manual step: its command is for the newer environment.
func (e *env) pythonGate(f finding.Fix, release string) finding.Fix {
	if e.pythonNote(release) == "" || len(f.Commands) == 0 {
		return f
	}
	return finding.Fix{Title: f.Title + "; in that environment: " + strings.Join(f.Commands, "; "), Commands: []string{}}
}

// invalidImageFixes: the driver refused a binary's kernel image (code a
// newer toolkit built, or compressed): a newer driver reads it, and so does
// a build of the package made by a toolkit this driver reads. flash-attn
// 2.8.1's wheels compress their device code, which needs driver 550 or
// newer; 2.8.0.post2's do not (Dao-AILab/flash-attention#1749, #1750).
func (e *env) invalidImageFixes(caps map[string]string) []finding.Fix {
	fixes := []finding.Fix{manual("Upgrade the NVIDIA driver (on the host, not in the container): a newer driver loads code from newer CUDA toolkits")}
	dist := caps["dist"]
	if caps["flash_attn_ext"] != "" {
		dist = "flash-attn"
	}
	switch {
	case dist == "flash-attn" && caps["flash_attn_ext"] != "":
		fixes[0].Title = "Upgrade the NVIDIA driver to 550 or newer (on the host, not in the container): flash-attn 2.8.1's wheels compress their GPU code, which older drivers cannot load"
		fixes = append(fixes, finding.Fix{Title: "Or install flash-attn 2.8.0.post2, whose wheels this driver loads",
			Commands: []string{e.pip("--force-reinstall", "--no-deps", "flash-attn==2.8.0.post2")}})
	case dist == "":
		fixes = append(fixes, manual("Or reinstall the package whose kernel failed (the traceback's innermost package) at an earlier release, built by a CUDA toolkit this driver reads"))
	default:
		fixes = append(fixes, manual("Or reinstall "+dist+" at an earlier release, built by a CUDA toolkit this driver reads"))
	}
	return fixes
}

// oldGCCFixes: torch's headers refuse a gcc older than min. A g++ here
// that is new enough is the build's to use (it ran another: a module, a
// conda compiler); else Ubuntu's g++-min (every supported Ubuntu has
// g++-9, the oldest torch's headers name, and every nvcc from 11.8 on
// accepts it, gcc_max >= 11); elsewhere the package names are the OS's.
func (e *env) oldGCCFixes(min int) []finding.Fix {
	if e.f != nil && e.f.Toolchain.GXX != nil {
		g := e.f.Toolchain.GXX
		if major, err := strconv.Atoi(strings.SplitN(g.Version, ".", 2)[0]); err == nil && major >= min {
			gcc := path.Join(path.Dir(g.Path), strings.Replace(path.Base(g.Path), "g++", "gcc", 1))
			return []finding.Fix{{
				Title:    fmt.Sprintf("Point the build at g++ %s (%s), which torch's headers accept: the build ran an older gcc", g.Version, g.Path),
				Commands: []string{remedy.ExportPath("CC", gcc), remedy.ExportPath("CXX", g.Path)},
			}}
		}
	}
	c := e.rctx()
	if strings.HasPrefix(c.Distro.Value, "ubuntu") {
		return []finding.Fix{fix(remedy.HostCompiler(c, min, c.NVCC.Value))}
	}
	return []finding.Fix{manual(fmt.Sprintf("Install g++ %d or newer (your OS's gcc-toolset or g++-N package, a module on a cluster, or conda-forge's gxx) and point the build at it: CC and CXX for torch extension builds, CUDAHOSTCXX for CMake", min))}
}

// oldestRuntimeWheelMajor is the oldest CUDA major NVIDIA ships its
// runtime as a wheel for: nvidia-cuda-runtime-cu11 (11.7.99, 11.8.89) and
// -cu12 on PyPI, nvidia-cuda-runtime 13.x; PyPI has no
// nvidia-cuda-runtime-cu10 (`pip index versions`, 2026-12-01).
const oldestRuntimeWheelMajor = 11

// runtimeFixes: the CUDA runtime a binary needs, or a rebuild for torch's.
func (e *env) runtimeFixes(caps map[string]string) []finding.Fix {
	major, _ := strconv.Atoi(caps["major"])
	var fixes []finding.Fix
	_, tmajor := e.torchCUDA()
	dist := caps["dist"]
	if dist == "" && caps["pkg"] != "" {
		dist = caps["pkg"]
	}
	if tmajor != 0 && major != 0 && tmajor != major && dist != "" {
		fixes = append(fixes, finding.Fix{
			Title:    fmt.Sprintf("Rebuild %s against the installed torch (CUDA %d), not CUDA %d", dist, tmajor, major),
			Commands: e.noIsolation(dist, e.pip("--no-build-isolation", "--no-cache-dir", "--force-reinstall", "--no-deps", dist)),
		})
	}
	if major == 0 {
		return fixes
	}
	if major < oldestRuntimeWheelMajor {
		// No wheel to install: a pip command naming one would fail.
		title := fmt.Sprintf("No NVIDIA wheel ships the CUDA %d runtime (nvidia-cuda-runtime-cu%d is the oldest): install the package's build for the CUDA this machine has, or put the CUDA %d toolkit's libcudart (NVIDIA's toolkit archive) on LD_LIBRARY_PATH", major, oldestRuntimeWheelMajor, major)
		if len(fixes) > 0 {
			title = fmt.Sprintf("Or put the CUDA %d toolkit's libcudart (NVIDIA's toolkit archive) on LD_LIBRARY_PATH: no NVIDIA wheel ships the CUDA %d runtime (nvidia-cuda-runtime-cu%d is the oldest)", major, major, oldestRuntimeWheelMajor)
		}
		return append(fixes, manual(title))
	}
	spec, dir := fmt.Sprintf("nvidia-cuda-runtime-cu%d", major), "nvidia/cuda_runtime/lib"
	if major >= 13 {
		spec, dir = fmt.Sprintf("nvidia-cuda-runtime==%d.*", major), "nvidia/cu13/lib"
	}
	site := e.sitePackages()
	if site == "" {
		site = "$(" + remedy.Quote(e.python()) + " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')"
	}
	title := fmt.Sprintf("Install the CUDA %d runtime and put it on the loader's path", major)
	if len(fixes) > 0 {
		title = "Or install the CUDA " + strconv.Itoa(major) + " runtime and put it on the loader's path"
	}
	ld := remedy.LibraryPath(site + "/" + dir)
	if e.sitePackages() == "" {
		// The folder is asked of the interpreter: the expression stays unquoted.
		ld = remedy.Export("LD_LIBRARY_PATH", site+"/"+dir+"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
	}
	return append(fixes, finding.Fix{Title: title, Commands: []string{e.pip(spec), ld}})
}

// torchArchFixes: a torch build whose wheels carry SASS for the GPU.
func (e *env) torchArchFixes(caps map[string]string) []finding.Fix {
	cc := e.gpuCapability(caps)
	c, err := cudaarch.ParseCapability(cc)
	if err != nil {
		return []finding.Fix{{Title: "Install a torch build that has code for this GPU (`fastpath doctor` names it for the GPUs here)", Commands: []string{}}}
	}
	driver := ""
	if e.f != nil && e.f.GPU.Driver != nil {
		driver = e.f.GPU.Driver.Version
	}
	if driver == "" && e.log != nil && e.log.Driver != nil {
		driver = e.log.Driver.Value // a log that names no torch still names its driver
	}
	// The rows are newest CUDA first. With the driver known, the newest
	// build it runs; unknown, the build whose driver floor is lowest: an
	// RTX 50's driver is 570 or newer, which runs cu128, while cu130 needs
	// 580 (pytorch/pytorch#167244: a 5090 on driver 570.124.06).
	rows := kb.CUDA().TorchWheels.Rows
	pick, pickFloor := -1, ""
	for i, b := range rows {
		var ts []cudaarch.Target
		for _, a := range b.Archs {
			if t, err := cudaarch.ParseTarget(a); err == nil {
				ts = append(ts, t)
			}
		}
		if _, how := cudaarch.Best(ts, c); how != cudaarch.Native && how != cudaarch.Family {
			continue
		}
		_, floor, known := kb.CUDA().DriverMinimum(b.CUDA)
		if driver != "" {
			if known && kb.CompareDotted(driver, floor) < 0 {
				continue
			}
			pick = i
			break
		}
		if pick < 0 || (known && pickFloor != "" && kb.CompareDotted(floor, pickFloor) < 0) {
			pick, pickFloor = i, floor
		}
	}
	if pick >= 0 {
		b := rows[pick]
		r := remedy.TorchInstall(e.rctx(), e.torchBase(), b.CUDA, true)
		if remedy.TorchBuildExists(e.torchBase(), b.CUDA) {
			r.Title = fmt.Sprintf("Install torch %s built for CUDA %s (its wheels carry %s)", e.torchBase(), b.CUDA, strings.Join(b.Archs, " "))
		} else {
			r.Title += fmt.Sprintf(" (its wheels carry %s)", strings.Join(b.Archs, " "))
		}
		if driver == "" && pickFloor != "" {
			r.Title += fmt.Sprintf("; it needs NVIDIA driver %s or newer (the log does not state the driver)", pickFloor)
		}
		r.Title += e.pythonNote(e.torchBase())
		return []finding.Fix{e.pythonGate(fix(r), e.torchBase())}
	}
	return []finding.Fix{{Title: fmt.Sprintf("No torch %s wheel has code for compute capability %s: build torch with TORCH_CUDA_ARCH_LIST=%s", kb.CUDA().TorchWheels.Release, cc, cc), Commands: []string{}}}
}

// vllmMinCapability is the oldest GPU vLLM compiles its kernels for:
// CUDA_SUPPORTED_ARCHS in vLLM's CMakeLists.txt (github.com/vllm-project/vllm)
// starts at 7.0 (at 7.5 when nvcc is CUDA 13 or newer); a TORCH_CUDA_ARCH_LIST
// entry below it is dropped, so no vLLM build has code for such a GPU.
var vllmMinCapability = cudaarch.Capability{Major: 7, Minor: 0}

// vllmDocs is vLLM's own page for building it from source against the torch
// already installed ("Build wheel from source", "Use an existing PyTorch
// installation": use_existing_torch.py, requirements/build.txt, pip install
// --no-build-isolation -e .), docs/getting_started/installation/gpu.cuda.inc.md.
const vllmDocs = "https://docs.vllm.ai/en/latest/getting_started/installation/gpu/#build-wheel-from-source"

// vllmArchFixes: vllm._C, vLLM's compiled ops, has no code for the GPU. pip has
// no vLLM wheel per GPU (the wheels hold the architectures of CMakeLists.txt),
// so the cure is vLLM's own build from source with TORCH_CUDA_ARCH_LIST naming
// the GPU, against the installed torch, as vLLM's documentation gives it; on a
// GPU older than vLLM's oldest target, no build helps.
func (e *env) vllmArchFixes(cc string) []finding.Fix {
	c, err := cudaarch.ParseCapability(cc)
	if err == nil && c.SM() < vllmMinCapability.SM() {
		return []finding.Fix{manual(fmt.Sprintf("No vLLM build has code for compute capability %s: vLLM compiles its kernels (vllm._C) for 7.0 and newer only "+
			"(CUDA_SUPPORTED_ARCHS in its CMakeLists.txt; 7.5 and newer with CUDA 13), so rebuilding it cannot help: run vLLM on a GPU of compute capability 7.0 or newer", cc))}
	}
	clone := "git clone https://github.com/vllm-project/vllm.git"
	if d := e.dist("vllm"); d != nil && d.Version != "" {
		base, _, _ := strings.Cut(d.Version, "+")
		clone = "git clone --branch v" + base + " --depth 1 https://github.com/vllm-project/vllm.git"
	}
	rc := e.rctx()
	py := remedy.Quote(rc.Interpreter())
	if err != nil {
		return []finding.Fix{manual("Build vLLM from source for this GPU against the installed torch, with TORCH_CUDA_ARCH_LIST set to its compute capability, " +
			"as vLLM's documentation says (" + vllmDocs + ": use an existing PyTorch installation): vllm._C, its compiled ops, has no code for the GPU " +
			"(the log does not name the GPU's compute capability: `fastpath doctor` reads it)")}
	}
	title := fmt.Sprintf("Build vLLM from source for this GPU (compute capability %s) against the installed torch, as vLLM's documentation says (%s: "+
		"use an existing PyTorch installation): vllm._C, its compiled ops, has no code for the GPU", cc, vllmDocs)
	if c.SM() < 75 {
		// internal/cudaarch nvcc-targets.json: CUDA 13.0 removed sm_50 to sm_72.
		title += "; CUDA 13 no longer targets sm_70 or sm_72, so this build needs torch and nvcc of CUDA 12"
	}
	return []finding.Fix{{
		Title: title,
		Commands: []string{
			clone,
			"cd vllm",
			py + " use_existing_torch.py",
			e.pip("-r", "requirements/build.txt"),
			remedy.ArchList(cc),
			e.pip("--no-build-isolation", "-e", "."),
		},
	}}
}

// gpuCapability is the GPU's compute capability: from the log's sm_XY,
// else the facts' first GPU.
func (e *env) gpuCapability(caps map[string]string) string {
	if sm, err := strconv.Atoi(caps["sm"]); err == nil && sm > 0 {
		return cudaarch.CapabilityOfSM(sm).String()
	}
	if e.f != nil {
		for _, d := range e.f.GPU.Devices {
			if d.Capability != "" {
				return d.Capability
			}
		}
	}
	if lf := e.log; lf != nil {
		if lf.Capability != nil {
			return lf.Capability.Value
		}
		// The GPU the log names (nvidia-smi's table, a "GPU RTX 5070"),
		// through the KB's table of product names.
		if lf.GPU != nil {
			if m, ok := kb.GPUByName(lf.GPU.Value); ok && m.Capability != "" {
				return m.Capability
			}
		}
	}
	return ""
}

// fallbackFixes install the kernel packages transformers did not find.
func (e *env) fallbackFixes(caps map[string]string) []finding.Fix {
	var fixes []finding.Fix
	for _, d := range strings.Fields(caps["fallback_dists"]) {
		needsBuild := slices.Contains(e.sigs.Modules.NeedsBuild, d)
		if needsBuild {
			title := "Install " + d + " (it compiles CUDA code: it needs nvcc and torch visible to the build)"
			if _, ok := e.diag[finding.NoCUDACompiler]; ok {
				title = "Install " + d + " once the missing compiler is fixed (no-cuda-compiler: `fastpath doctor`)"
			}
			fixes = append(fixes, finding.Fix{Title: title, Commands: e.noIsolation(d, e.pip("--no-build-isolation", d))})
			continue
		}
		fixes = append(fixes, finding.Fix{Title: "Install " + d + " (pure Python and Triton: no compiler needed)", Commands: []string{e.pip(d)}})
	}
	return fixes
}

func gib(b int64) float64 { return float64(b) / (1 << 30) }

func orUnknown(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}

// attnMinCapability is the oldest GPU an attention package's kernels run
// on (families.json attention_implementations: flash-attn 2 needs 8.0),
// "" for a package with no such floor.
func attnMinCapability(dist string) string {
	if dist == "" {
		return ""
	}
	for _, a := range kb.Families().AttnImpls {
		if a.Package == dist && a.MinCapability != "" {
			return a.MinCapability
		}
	}
	return ""
}

// driverLibraryFixes orders the fixes for NVML's Driver/library version
// mismatch by what the log shows. Most often the driver's libraries were
// upgraded under a module still loaded (lyulyul/shine-cluster#30, #50:
// unattended-upgrades): a reboot loads the new module. But a reboot mends
// nothing when the libraries and the module come from two releases: an
// image carrying driver libraries of its own (k4yt3x/video2x#1226: NVML
// 565.57 in the image, driver 535 on the host), or a module built apart
// from the installed libraries (tinygrad/open-gpu-kernel-modules#47:
// 570.124.04's .run with --no-kernel-modules, 570.124.06's module).
func (e *env) driverLibraryFixes() []finding.Fix {
	reboot := finding.Fix{Title: "Reboot, so that the kernel loads the nvidia module of the driver now installed", Commands: []string{"sudo reboot"}}
	reload := manual("Without a reboot: stop every process using the GPU, unload the nvidia modules (sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia) and run nvidia-smi, which loads the new ones. To keep it from coming back, hold the driver packages out of unattended upgrades (apt-mark hold)")
	image := "inside a container whose nvidia-smi reports another NVML library version than the host's driver, the image carries driver libraries of its own; use an image without them (the NVIDIA runtime mounts the host's)"
	oneRelease := "reinstall the driver so that its kernel module and its libraries come from one release"
	lf := e.log
	var libs, host string
	if lf != nil && lf.NVMLLibrary != nil {
		libs = lf.NVMLLibrary.Value
	}
	if lf != nil && lf.Driver != nil {
		host = lf.Driver.Value
	} else if lf != nil && lf.KernelModule != nil {
		host = lf.KernelModule.Value
	}
	if lf != nil && lf.Container != nil && lf.ImageBuild == nil && libs != "" && host != "" && !sameDriver(libs, host) {
		return []finding.Fix{
			manual(fmt.Sprintf("The container's driver libraries are not the host's: nvidia-smi in it loaded NVML %s (line %d), the host's driver is %s (line %d), so %s. No reboot changes the image's libraries", libs, lf.NVMLLibrary.Line, host, driverLine(lf), strings.TrimPrefix(image, "inside a container whose nvidia-smi reports another NVML library version than the host's driver, "))),
			manual("Or, if the image needs that driver release, install a host driver of at least " + libs + " and reboot"),
		}
	}
	if lf != nil && lf.ModuleApart != nil && lf.KernelModule != nil && lf.ModuleApart.Value != lf.KernelModule.Value {
		return []finding.Fix{
			manual(fmt.Sprintf("The driver's libraries and its kernel module come from two releases: the installer of %s ran with --no-kernel-modules (line %d) and the module is %s's (line %d); a reboot loads that same module again. Install the libraries of the module's release (nvidia-uninstall, then NVIDIA-Linux-x86_64-%s.run --no-kernel-modules), or build the module from the tree of the libraries' release, %s, then reboot", lf.ModuleApart.Value, lf.ModuleApart.Line, lf.KernelModule.Value, lf.KernelModule.Line, lf.KernelModule.Value, lf.ModuleApart.Value)),
		}
	}
	return []finding.Fix{reboot, reload,
		manual("If it stays after a reboot: " + image + ". On the host, " + oneRelease),
	}
}

// sameDriver reports whether two driver versions as logs print them are
// one release: NVML prints 565.57 for 565.57.01, and users write the
// branch alone (535).
func sameDriver(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			return false
		}
	}
	return true
}

func driverLine(lf *LogFacts) int {
	if lf.Driver != nil {
		return lf.Driver.Line
	}
	return lf.KernelModule.Line
}

// archProbeFixes: a build asked torch for the GPU where none is visible
// (torch's _get_cuda_arch_flags with TORCH_CUDA_ARCH_LIST unset, or a
// setup.py's own torch.cuda.get_device_capability()). Naming the targets
// is the fix (pytorch/pytorch#28955, pytorch/vision#1566,
// rusty1s/pytorch_sparse#234, NVIDIA/apex#486); a build whose setup.py
// compiles CUDA only when torch.cuda.is_available() also needs its own
// switch (builds.json: no_gpu_needs, force_build_env).
func (e *env) archProbeFixes(caps map[string]string) []finding.Fix {
	list, known := "", false
	if cc := e.gpuCapability(caps); cc != "" {
		list, known = cc, true
	}
	title := "Name the GPUs to compile for, so the build does not ask the device: TORCH_CUDA_ARCH_LIST"
	if known {
		title += " (the GPU the log names: " + list + "; add the capabilities of every GPU the build must run on, \";\"-separated)"
	} else {
		list = "8.0;8.6;8.9;9.0"
		title += " (example list: put the compute capabilities of the GPUs the build must run on, as nvidia-smi --query-gpu=compute_cap --format=csv shows them there; add +PTX to the newest for GPUs newer still)"
	}
	env := "TORCH_CUDA_ARCH_LIST=" + remedy.Quote(list)
	pkg := pkgArg(caps)
	prof, hasProf := kb.Builds().Packages[pkg]
	var fixes []finding.Fix
	if hasProf && prof.ForceBuildEnv != "" && prof.NoGPUNeeds == prof.ForceBuildEnv && prof.ForceBuildValue != "" {
		// It compiles CUDA only with a GPU visible unless told to.
		env += " " + prof.ForceBuildEnv + "=" + prof.ForceBuildValue
		title += "; " + pkg + " also needs " + prof.ForceBuildEnv + "=" + prof.ForceBuildValue + " to compile its CUDA code without a GPU (" + prof.Source + ")"
	} else if hasProf && !prof.HonoursArchList {
		title += "; " + pkg + "'s " + prof.ArchFile + " chooses its own targets, so read how it is told them without a GPU"
	}
	f := finding.Fix{Title: title, Commands: []string{remedy.ArchList(list)}}
	if pkg != "" {
		f.Commands = []string{env + " " + e.pip("--no-build-isolation", pkg)}
	}
	fixes = append(fixes, f)
	fixes = append(fixes,
		manual("In a Dockerfile: set it before the build step (ENV TORCH_CUDA_ARCH_LIST=\""+list+"\"): no GPU or driver library is visible while an image builds, whatever docker run is later given. Packages that build CUDA code only when torch.cuda.is_available() (torchvision, torch-scatter, pytorch3d, ...) also need FORCE_CUDA=1"),
		manual("Or build where the GPU is visible: inside a container started with docker run --gpus all, or, with Docker's classic builder, with nvidia as Docker's default runtime (\"default-runtime\": \"nvidia\" in /etc/docker/daemon.json, then restart Docker)"),
		manual("If python -c \"import torch; print(torch.version.cuda)\" prints None, torch itself is a CPU-only build: install a CUDA build of torch first, or the extension compiles but cannot run on the GPU"),
	)
	return fixes
}

// libcudaDir is the folder of the 64-bit libcuda.so.1 in the list Triton's
// libcuda_dirs() assertion prints (['/lib/x86_64-linux-gnu/libcuda.so.1']),
// "" when none of them is clearly 64-bit or a path is not plain.
func libcudaDir(located string) string {
	for _, q := range strings.Split(located, ",") {
		p := strings.Trim(strings.TrimSpace(q), "'\"")
		dir, base := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		if base != "libcuda.so.1" || !strings.HasPrefix(dir, "/") || !plainPath.MatchString(dir) {
			continue
		}
		if strings.Contains(dir, "x86_64") || strings.Contains(dir, "aarch64") || strings.HasSuffix(dir, "lib64") {
			return dir
		}
	}
	return ""
}

// plainPath is a folder a shell command may name unquoted.
var plainPath = regexp.MustCompile(`^[A-Za-z0-9_./+-]+$`)

// ldirsAsFiles turns the -L folders of Triton's failed command
// (", '-L/lib/x86_64-linux-gnu', '-L/lib/i386-linux-gnu'") into the
// libcuda.so.1 list libcudaDir reads; an entry cut short is dropped.
func ldirsAsFiles(ldirs string) string {
	var files []string
	for _, q := range strings.Split(ldirs, ",") {
		q = strings.TrimSpace(q)
		if !strings.HasPrefix(q, "'-L/") || !strings.HasSuffix(q, "'") || len(q) < 5 {
			continue
		}
		files = append(files, "'"+strings.TrimSuffix(q[3:len(q)-1], "/")+"/libcuda.so.1'")
	}
	return strings.Join(files, ", ")
}
