package remedy

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/pep440"
	"github.com/fastpath-dev/fastpath/internal/render"
)

// SdistDir is the variable the narrowed build keeps its work folder in (a
// fresh mktemp -d folder, never a fixed path).
const SdistDir = "FASTPATH_SDIST_DIR"

// narrowProgram cuts a setup.py's literal -gencode pairs down to the sm
// numbers given (comma-separated), replacing each cut pair with `pass` so
// that the if-blocks around them stay valid Python. It refuses (exit 1,
// file untouched) when no pair for a kept sm is there, and checks that the
// result still compiles. One line without single quotes, so that it reads as
// one shell word in the plan.
const narrowProgram = `import re,sys; p,keep=sys.argv[1],set(sys.argv[2].split(",")); s=open(p).read(); kept=[]; cut=[]; ` +
	`f=lambda m: (kept.append(m.group(3)) or m.group(0)) if m.group(3) in keep else (cut.append(m.group(3)) or m.group(1)+"pass"); ` +
	`s=re.sub(r"^([ \t]*)(\w+)\.append\(\s*[\"\x27]-gencode[\"\x27]\s*\)[ \t]*\n[ \t]*\2\.append\(\s*[\"\x27]arch=compute_\w+,code=sm_(\d+)a?[\"\x27]\s*\)", f, s, flags=re.M); ` +
	`kept or sys.exit("fastpath: no -gencode pair for sm_%s found in %s: not narrowed" % (sys.argv[2], p)); compile(s, p, "exec"); open(p, "w").write(s); ` +
	`print("fastpath: %s now builds sm_%s only (cut sm_%s)" % (p, ",".join(sorted(set(kept))), ",".join(cut)))`

// Jobs is the build parallelism for this machine: one job per GiBPerJob of
// memory (available, else total), at most one per core and at most one per
// source file the build compiles; with the reason in words.
func Jobs(c Context, p kb.BuildProfile) (jobs int, why string, known bool) {
	per := p.GiBPerJob
	perSrc := p.GiBPerJobSource
	if per == 0 {
		per, perSrc = kb.Builds().GiBPerJob, "fastpath's rule of thumb"
	}
	mem, word := c.MemAvail, "available"
	if !mem.Known() {
		mem, word = c.MemTotal, "total"
	}
	if !mem.Known() {
		return 1, "memory unknown: 1, the safe choice; raise it where memory allows", false
	}
	jobs = int(float64(mem.Value) / (per * float64(gib)))
	why = fmt.Sprintf("%s %s memory%s / %.0f GiB a job (%s)", gibs(mem.Value), word, mem.where(), per, perSrc)
	if jobs < 1 {
		jobs = 1
	}
	if c.CPUs.Known() && jobs > c.CPUs.Value {
		jobs = c.CPUs.Value
		why += fmt.Sprintf(", at most %d cores%s", c.CPUs.Value, c.CPUs.where())
	}
	if p.CUDASources > 0 && jobs > p.CUDASources+1 {
		jobs = p.CUDASources + 1
		why += fmt.Sprintf(", at most its %d source files", p.CUDASources+1)
	}
	return jobs, why, true
}

// parallelEnv is the variable that sets parallelism for the build system:
// MAX_JOBS for setuptools/torch builds, CMAKE_BUILD_PARALLEL_LEVEL for
// CMake (which never reads MAX_JOBS).
func parallelEnv(p kb.BuildProfile) string {
	if len(p.Parallel) > 0 {
		return p.Parallel[0]
	}
	if p.BuildSystem == BuildCMake {
		return "CMAKE_BUILD_PARALLEL_LEVEL"
	}
	return "MAX_JOBS"
}

// Estimate is what a build of n targets will cost, from the profile's
// measurements.
type Estimate struct {
	Targets     []int
	NVCC        string
	Seconds     int // 0 unknown
	SecondsHigh int // an upper figure where only a range is known
	MemGiB      float64
	Words       string
}

// EstimateBuild words a build's cost: "9 targets with nvcc 13.0, about N min
// on 16 cores, about M GiB at MAX_JOBS=16".
func EstimateBuild(c Context, p kb.BuildProfile, nvcc string, sms []int, jobs int) Estimate {
	e := Estimate{Targets: sms, NVCC: nvcc}
	per := p.GiBPerJob
	if per == 0 {
		per = kb.Builds().GiBPerJob
	}
	threads := p.NVCCThreads
	if threads < 1 {
		threads = 1
	}
	// Jobs beyond the .cu files compile nothing more.
	conc := jobs
	if p.CUDASources > 0 && conc > p.CUDASources {
		conc = p.CUDASources
	}
	e.MemGiB = float64(conc) * per
	parts := []string{fmt.Sprintf("%s with nvcc %s", plural(len(sms), "target"), nvcc)}
	// Per-target time from the measured build with the fewest targets
	// that finished, scaled by targets and cores.
	var base *kb.BuildMeasurement
	var floor *kb.BuildMeasurement
	for i := range p.Measured {
		m := &p.Measured[i]
		if m.AtLeast {
			if len(m.SMs) == len(sms) {
				floor = m
			}
			continue
		}
		if base == nil || len(m.SMs) <= len(base.SMs) { // the latest of the smallest
			base = m
		}
	}
	cores := 0
	if c.CPUs.Known() {
		cores = c.CPUs.Value
	}
	if base != nil && len(base.SMs) > 0 {
		perTarget := float64(base.Seconds) / float64(len(base.SMs))
		scale := 1.0
		if cores > 0 && cores < base.Cores && cores < conc*threads {
			scale = float64(base.Cores) / float64(cores)
		}
		high := int(perTarget * float64(len(sms)) * scale)
		low := high
		if len(sms) > 1 {
			low = int(perTarget * float64((len(sms)+threads-1)/threads) * scale)
		}
		if floor != nil && low < floor.Seconds {
			low = floor.Seconds
		}
		e.Seconds, e.SecondsHigh = low, high
		where := fmt.Sprintf("%d cores", base.Cores)
		if cores > 0 {
			where = fmt.Sprintf("%d cores", cores)
		}
		if low == high {
			parts = append(parts, fmt.Sprintf("about %d min on %s", (low+30)/60, where))
		} else {
			parts = append(parts, fmt.Sprintf("about %d to %d min on %s", (low+30)/60, (high+30)/60, where))
		}
		basis := fmt.Sprintf("from %d s measured (%s; %s)", base.Seconds, base.What, base.Machine)
		if floor != nil {
			basis += fmt.Sprintf("; the same %d targets measured at more than %d s there", len(sms), floor.Seconds)
		}
		parts = append(parts, basis)
	} else {
		parts = append(parts, "build time not measured")
	}
	parts = append(parts, fmt.Sprintf("about %.0f GiB at %s=%d (estimate: %.0f GiB a compile job)", e.MemGiB, parallelEnv(p), jobs, per))
	e.Words = strings.Join(parts, ", ")
	return e
}

// plural is render.Count with the regular plural ("2 targets").
func plural(n int, w string) string { return render.Count(n, w, w+"s") }

func smList(sms []int) string {
	var s []string
	for _, x := range sms {
		s = append(s, fmt.Sprintf("sm_%d", x))
	}
	return strings.Join(s, ", ")
}

// Narrowed are the package's stock targets the GPUs here would run: for
// each GPU the best SASS target in the stock list (same major, highest
// minor not above the GPU's). nil when a GPU has no target in the list.
func Narrowed(stock []int, c Context) []int {
	var targets []cudaarch.Target
	for _, sm := range stock {
		targets = append(targets, cudaarch.Target{SM: sm, Kind: cudaarch.SASS})
	}
	seen := map[int]bool{}
	var out []int
	for _, sm := range c.SMs() {
		t, compat := cudaarch.Best(targets, cudaarch.CapabilityOfSM(sm))
		if compat == cudaarch.None || t.Kind != cudaarch.SASS {
			return nil
		}
		if !seen[t.SM] {
			seen[t.SM] = true
			out = append(out, t.SM)
		}
	}
	sort.Ints(out)
	return out
}

// BuildFromSource are the ways to build pkg from source against the
// installed torch with an nvcc of version nvcc ("13.0"): where its build
// hard-codes more targets than the GPUs here need, first a build of its own
// sdist narrowed to those GPUs (a clearly labelled step of its own), then
// the stock build. install is what pip installs (a distribution name).
func BuildFromSource(c Context, pkg, install, nvcc string) []Remedy {
	// PyPI has no sdist of it (or its PyPI name is another project's):
	// pip install NAME is no build from source.
	if wo, ok := WheelOnlyRebuild(c, pkg, "", strings.Join(c.Capabilities(), ";")); ok {
		return []Remedy{wo}
	}
	p, hasProfile := kb.Builds().Packages[pkg]
	// The release asked for (pkg==V) or installed here is the one whose
	// build the answer describes: where an older release builds other
	// targets, the stock build installs exactly that release.
	ver := askedVersion(c, pkg, install)
	readFor := ""
	if hasProfile {
		vp, known := p.ForVersion(ver)
		if !known || vp.Version != p.Version {
			install = pkg + "==" + ver
			readFor = ver
		}
		if !known {
			vp.ArchNote = fmt.Sprintf("%s %s is older than every release of it fastpath read (%s and the older runs in its profile): its targets are not known", pkg, ver, p.Version)
		}
		p = vp
	}
	if !hasProfile {
		p = kb.BuildProfile{BuildSystem: BuildSetuptools, HonoursArchList: true}
		if sch, ok := kb.Wheels().Packages[pkg]; ok {
			p.ForceBuildEnv, p.DiskGiB = sch.ForceBuildEnv, sch.BuildDiskGiB
		}
	}
	if nvcc == "" {
		nvcc, _ = CompilerCUDA(c) // the only kind torch builds with
	}
	jobs, jobsWhy, jobsKnown := Jobs(c, p)
	var checks []Check
	checks = append(checks, Check{Check: fmt.Sprintf("memory for %d parallel job(s)", jobs), OK: true, Unknown: !jobsKnown, Detail: parallelEnv(p) + "=" + strconv.Itoa(jobs) + ": " + jobsWhy})
	env := []string{parallelEnv(p) + "=" + strconv.Itoa(jobs)}
	if p.ForceBuildEnv != "" {
		env = append(env, p.ForceBuildEnv+"="+orWord(p.ForceBuildValue, "TRUE"))
	}
	stock := p.TargetsFor(nvcc)
	var out []Remedy
	if narrowed := Narrowed(stock, c); hasProfile && p.Narrowable && p.Version != "" && p.Sdist != "" && len(narrowed) > 0 && len(narrowed) < len(stock) {
		out = append(out, narrowedBuild(c, pkg, p, nvcc, stock, narrowed, jobs, env, checks))
	}
	// The stock build.
	r := Remedy{ID: "build/" + pkg, Title: fmt.Sprintf("Build %s from source against the installed torch", pkg),
		Changes: []string{"installs " + pkg + " (compiled here) into " + c.envWords()},
		Undo:    []string{c.PipUninstall(pkg)}, CUDA: nvcc, Installs: []string{pkg}}
	stockChecks := append([]Check{}, checks...)
	caps := c.Capabilities()
	switch {
	case p.HonoursArchList && len(caps) > 0 && p.ArchEnv != "" && p.ArchEnv != "TORCH_CUDA_ARCH_LIST" && len(p.Targets) == 0:
		// The package's own variable, with no list of its own to pick
		// from: the GPUs here, spelled its way.
		val := strings.Join(caps, ";")
		if p.ArchEnvFormat != "capability" {
			var sms []string
			for _, sm := range c.SMs() {
				sms = append(sms, strconv.Itoa(sm))
			}
			val = strings.Join(sms, ";")
		}
		env = append(env, p.ArchEnv+"="+val)
		stockChecks = append(stockChecks, Check{Check: "targets", OK: true, Detail: fmt.Sprintf("%s=%s: the GPUs here%s; TORCH_CUDA_ARCH_LIST has no effect on %s", p.ArchEnv, val, c.GPUs[0].where(), pkg)})
	case p.HonoursArchList && len(caps) > 0 && p.ArchEnv != "" && p.ArchEnv != "TORCH_CUDA_ARCH_LIST":
		// The package's own variable takes sm numbers from its own list.
		if narrowed := Narrowed(stock, c); len(narrowed) > 0 {
			var sms []string
			for _, sm := range narrowed {
				sms = append(sms, strconv.Itoa(sm))
			}
			env = append(env, p.ArchEnv+"="+strings.Join(sms, ";"))
			stockChecks = append(stockChecks, Check{Check: "targets", OK: true, Detail: fmt.Sprintf("%s=%s: what the GPUs here (%s%s) run of its %s; TORCH_CUDA_ARCH_LIST has no effect on it",
				p.ArchEnv, strings.Join(sms, ";"), strings.Join(caps, ", "), c.GPUs[0].where(), smList(stock))})
			stock = narrowed
		} else {
			stockChecks = append(stockChecks, Check{Check: "targets", OK: false, Detail: fmt.Sprintf("%s builds %s with nvcc %s: nothing the GPUs here (%s) run", pkg, smList(stock), nvcc, strings.Join(caps, ", "))})
		}
	case p.HonoursArchList && len(caps) > 0 && !hasProfile:
		// Nobody read its build: torch's list decides only where it passes
		// no arch flags of its own, and some builds compile no CUDA at all
		// without a GPU visible or a variable of their own.
		env = append(env, "TORCH_CUDA_ARCH_LIST="+strings.Join(caps, ";"))
		stockChecks = append(stockChecks, Check{Check: "targets", OK: true, Unknown: true, Detail: fmt.Sprintf(
			"TORCH_CUDA_ARCH_LIST=%s (the GPUs here%s) decides only if %s's build passes no -gencode/arch flags of its own; fastpath has not read its build files: whether it honours the list, and what it needs to compile CUDA code where no GPU is visible, are unknown (read its setup.py or CMakeLists.txt)",
			strings.Join(caps, ";"), c.GPUs[0].where(), pkg)})
	case p.HonoursArchList && len(caps) > 0:
		env = append(env, "TORCH_CUDA_ARCH_LIST="+strings.Join(caps, ";"))
		stockChecks = append(stockChecks, Check{Check: "targets", OK: true, Detail: fmt.Sprintf("TORCH_CUDA_ARCH_LIST=%s: the GPUs here%s", strings.Join(caps, ";"), c.GPUs[0].where())})
	case p.HonoursArchList && p.NoGPUNeeds != "" && p.NoGPUNeeds != p.ForceBuildEnv:
		stockChecks = append(stockChecks, Check{Check: "targets", OK: false, Unknown: true,
			Detail: fmt.Sprintf("no GPU known: where the build sees no GPU, %s needs %s set (give --gpu CC to name the GPUs); without it it %s", pkg, p.NoGPUNeeds, p.NoGPUOtherwise)})
	case !p.HonoursArchList:
		d := fmt.Sprintf("%s's %s chooses its own targets (%s); TORCH_CUDA_ARCH_LIST has no effect", pkg, orWord(p.ArchFile, "build"), orWord(p.ArchNote, "fixed list"))
		ok := true
		if len(stock) > 0 {
			d = fmt.Sprintf("%s %s's %s builds %s with nvcc %s whatever TORCH_CUDA_ARCH_LIST says", pkg, p.Version, p.ArchFile, smList(stock), nvcc)
		}
		if len(stock) > 0 && len(caps) > 0 && Narrowed(stock, c) == nil {
			// No code for a GPU here: the build succeeds and the kernels
			// then fail with "no kernel image is available".
			ok = false
			d += fmt.Sprintf(": none of it runs on the GPUs here (%s%s)", strings.Join(caps, ", "), c.GPUs[0].where())
			full, _ := kb.Builds().Packages[pkg]
			if o, found := full.OlderFor(nvcc, func(sms []int) bool { return Narrowed(sms, c) != nil }); found && readFor == "" {
				d += fmt.Sprintf("; releases %s up to (not including) %s still build %s with nvcc %s (%s)", o.From, o.Below, smList(Narrowed((kb.BuildProfile{Targets: o.Targets}).TargetsFor(nvcc), c)), nvcc, o.Sdist)
				// Their IDs name the release: the latest's stock build
				// stays "build/"+pkg.
				for _, b := range BuildFromSource(c, pkg, pkg+"=="+o.Version, nvcc) {
					b.ID += "@" + o.Version
					out = append(out, b)
				}
			}
		}
		stockChecks = append(stockChecks, Check{Check: "targets", OK: ok, Detail: d})
	default:
		stockChecks = append(stockChecks, Check{Check: "targets", OK: true, Unknown: true,
			Detail: "no GPU known: torch builds for the GPUs it sees at build time (give --gpu CC to name them)"})
	}
	r.Commands = append(buildImports(c, p), envCommand(env, c.Pip(install, "--no-build-isolation")))
	r.Preconditions = stockChecks
	if len(stock) > 0 {
		e := EstimateBuild(c, p, nvcc, stock, jobs)
		r.Cost = Cost{Seconds: e.Seconds, MemMiB: int(e.MemGiB * 1024), DiskMiB: p.DiskGiB * 1024, Basis: e.Words}
		r.Title = fmt.Sprintf("Build %s from source against the installed torch (%s)", pkg, plural(len(stock), "target"))
	} else if p.DiskGiB > 0 {
		r.Cost = Cost{DiskMiB: p.DiskGiB * 1024, Basis: "build time not measured"}
	}
	r.Reason = "compiles against this exact torch"
	return append(out, r)
}

// askedVersion is the release of pkg a build is for: the version install
// pins (pkg==V), else the one installed here; "" when neither.
func askedVersion(c Context, pkg, install string) string {
	if _, v, ok := strings.Cut(install, "=="); ok {
		return strings.TrimSpace(v)
	}
	if v, ok := c.Installed[pkg]; ok && c.Machine {
		v, _, _ = strings.Cut(v, "+")
		return v
	}
	return ""
}

// BuildImports installs what the setup.py of dist (a distribution fastpath
// has a build profile of) imports besides torch and the environment lacks,
// before a build of it without isolation; nil for other distributions.
func BuildImports(c Context, dist string) []string {
	p, ok := kb.Builds().Packages[canonicalDist(dist)]
	if !ok {
		return nil
	}
	return buildImports(c, p)
}

// buildImports installs what the package's setup.py imports besides torch
// (kb build_imports) and the environment lacks: a build without isolation
// sees only the environment. A module setup.py imports after setuptools
// that setuptools vendors (wheel, from 71.0.0: kb setuptools_vendors) is
// there with a setuptools that new, or one installed now. Where the
// environment's distributions are not known (a log's), all of them: pip
// leaves those present alone.
func buildImports(c Context, p kb.BuildProfile) []string {
	sv := kb.Builds().SetuptoolsVendors
	var missing []string
	vendors := false // setuptools was imported and puts its _vendor on sys.path
	for _, d := range p.BuildImports {
		v, have := c.Installed[canonicalDist(d)]
		have = have && c.Machine
		switch {
		case d == "setuptools":
			vendors = c.Machine && (!have || sv.From != "" && !pep440.Less(v, sv.From))
		case vendors && slices.Contains(sv.Modules, d):
			continue
		}
		if !have {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []string{c.Pip(missing...)}
}

// envCommand prefixes a command with VAR=value words.
func envCommand(env []string, cmd string) string {
	q := make([]string, len(env))
	for i, e := range env {
		k, v, _ := strings.Cut(e, "=")
		q[i] = k + "=" + Quote(v)
	}
	return strings.Join(append(q, cmd), " ")
}

// narrowedBuild downloads the package's own sdist (the version its profile
// was read from), cuts its -gencode list to the GPUs here, and builds it.
func narrowedBuild(c Context, pkg string, p kb.BuildProfile, nvcc string, stock, narrowed []int, jobs int, env []string, checks []Check) Remedy {
	dir := `"$` + SdistDir + `"`
	unpacked := strings.TrimSuffix(strings.TrimSuffix(p.Sdist, ".tar.gz"), ".zip")
	var keep []string
	for _, sm := range narrowed {
		keep = append(keep, strconv.Itoa(sm))
	}
	archFile := dir + "/" + Quote(unpacked+"/"+p.ArchFile)
	e := EstimateBuild(c, p, nvcc, narrowed, jobs)
	stockE := EstimateBuild(c, p, nvcc, stock, jobs)
	r := Remedy{ID: "build-narrowed/" + pkg, CUDA: nvcc, Installs: []string{pkg},
		Title: fmt.Sprintf("Build %s %s from its own sdist for this machine's GPUs only (%s instead of its %s)",
			pkg, p.Version, smList(narrowed), plural(len(stock), "target")),
		Commands: append(append([]string{Export(SdistDir, `"$(mktemp -d)"`)}, buildImports(c, p)...),
			c.PipDownload(dir, "--no-binary", pkg, pkg+"=="+p.Version),
			"tar -xzf "+dir+"/"+Quote(p.Sdist)+" -C "+dir,
			Command(c.Interpreter(), "-c", narrowProgram)+" "+archFile+" "+strings.Join(keep, ",")),
		Changes: []string{"installs " + pkg + " " + p.Version + " built for " + smList(narrowed) + " only into " + c.envWords() +
			": on other GPUs it will not load (build the stock package there)",
			"a temporary folder ($" + SdistDir + ") with the unpacked sdist and the built wheel (wheels/), to install on other machines with the same GPUs, torch and Python"},
		Cost:   Cost{Seconds: e.Seconds, MemMiB: int(e.MemGiB * 1024), DiskMiB: p.DiskGiB * 1024, Basis: e.Words},
		Undo:   []string{c.PipUninstall(pkg), `rm -rf "$` + SdistDir + `"`},
		Reason: fmt.Sprintf("the stock build compiles %s (%s); this one compiles only what the GPUs here run (%s)", plural(len(stock), "target"), stockE.Words, e.Words)}
	r.Commands = append(r.Commands,
		envCommand(env, c.PipWheel(dir+"/wheels", dir+"/"+Quote(unpacked))),
		c.Pip()+" "+dir+"/wheels/"+Quote(wheelPrefix(unpacked))+"-*.whl")
	if c.uvWithoutPip() {
		// pip download and pip wheel have no uv pip equivalent that builds
		// against the environment's torch: pip goes into the environment
		// first, so its interpreter's -m pip exists.
		r.Commands = append([]string{c.Pip("pip")}, r.Commands...)
		r.Changes = append(r.Changes, "pip, installed into "+c.envWords()+" (a uv environment without it) to download and build the sdist")
	}
	r.Preconditions = append(append([]Check{}, checks...),
		Check{Check: "targets", OK: true, Detail: fmt.Sprintf("%s's %s hard-codes %s for nvcc %s and ignores TORCH_CUDA_ARCH_LIST; the GPUs here (%s%s) run %s",
			pkg, p.ArchFile, smList(stock), nvcc, strings.Join(c.Capabilities(), ", "), c.GPUs[0].where(), smList(narrowed))},
		Check{Check: "the sdist fastpath's profile was read from", OK: true, Detail: fmt.Sprintf("%s (sha256 %s)", p.Sdist, short(p.SdistSHA256))})
	return r
}

// wheelPrefix is the wheel file name's start for an unpacked sdist folder
// ("causal_conv1d-1.7.0"): the name with - and . as _ (PEP 427), then the
// version.
func wheelPrefix(unpacked string) string {
	i := strings.LastIndex(unpacked, "-")
	if i < 0 {
		return unpacked
	}
	name := strings.NewReplacer("-", "_", ".", "_").Replace(unpacked[:i])
	return name + "-" + unpacked[i+1:]
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// StockBuild is the package's own build against the installed torch, with
// the parallelism variable its build system reads (MAX_JOBS for setuptools
// and torch builds, CMAKE_BUILD_PARALLEL_LEVEL for CMake) sized from the
// Context's memory, and its force-build variable.
func StockBuild(c Context, pkg, nvcc string) Remedy {
	rs := BuildFromSource(c, pkg, pkg, nvcc)
	return rs[len(rs)-1]
}

// WheelOnlyRebuild is the fix that rebuilds dist (installed version; ""
// unknown) when PyPI has only wheels of it (kb builds.json wheel_only):
// there pip install --no-binary finds no distribution and a reinstall
// from PyPI brings the same wheel back. archList "" is a CUDA or torch
// mismatch: the package's own index's wheel for torch's CUDA, where it has
// one. An archList ("9.0") is a GPU the wheel has no code for: a build from
// its repository for those GPUs, where its build is known. Otherwise the
// package's own way, by hand. ok is false where PyPI has an sdist (or the
// package is not known): the usual rebuild works.
func WheelOnlyRebuild(c Context, dist, version, archList string) (r Remedy, ok bool) {
	name := canonicalDist(dist)
	w, ok := kb.Builds().WheelOnly.Packages[name]
	if !ok {
		return Remedy{}, false
	}
	pypi := fmt.Sprintf("PyPI has no sdist of %s (only wheels; its JSON API, checked %s)", name, kb.Builds().WheelOnly.Checked)
	why := "PyPI has only wheels of it"
	if w.OtherProject {
		pypi = fmt.Sprintf("PyPI's %q is another project, not this %s", name, name)
		why = "PyPI's " + name + " is another project"
	}
	base, _, _ := strings.Cut(version, "+")
	r = Remedy{ID: "wheel-only/" + name, Installs: []string{name},
		Preconditions: []Check{{Check: "a source distribution on PyPI", OK: false, Detail: pypi}},
		Reason:        "pip install --no-binary " + name + " cannot rebuild it: " + pypi}
	r.Undo = []string{c.PipUninstall(name)}
	force := []string{"--force-reinstall", "--no-deps", "--no-cache-dir"}
	switch {
	case archList == "" && w.Index != "" && c.TorchCUDA.Known():
		index := strings.ReplaceAll(w.Index, "{Mm}", strings.ReplaceAll(c.TorchCUDA.Value, ".", ""))
		spec := name
		if base != "" {
			spec += "==" + base // the release that matched this torch, built for its CUDA
		}
		r.Title = fmt.Sprintf("Reinstall %s from its own index for torch's CUDA %s (%s): %s", spec, c.TorchCUDA.Value, index, why)
		r.Commands = []string{c.Pip(append(force, spec, "--index-url", index)...)}
		r.Changes = []string{name + " in " + c.envWords()}
		return r, true
	case archList != "" && w.Git != "":
		ref := w.Git
		if w.Tag != "" && base != "" {
			ref += "@" + strings.ReplaceAll(w.Tag, "{version}", base)
		}
		env := append([]string{"TORCH_CUDA_ARCH_LIST=" + archList}, w.BuildEnv...)
		r.Title = fmt.Sprintf("Build %s from its repository for compute capability %s against the installed torch: %s", name, archList, why)
		r.Commands = []string{envCommand(env, c.Pip(append([]string{"--no-build-isolation"}, append(force, "git+"+ref)...)...))}
		r.Changes = []string{name + " (compiled here from " + ref + ") in " + c.envWords()}
		return r, true
	}
	r.Title = fmt.Sprintf("Get %s built for this torch and GPU its own way: %s", name, why)
	fill := w.How
	if fill == "" {
		fill = fmt.Sprintf("a %s wheel for torch's CUDA from its own index (%s), or a build from %s", name, w.Index, w.Git)
		if !c.TorchCUDA.Known() {
			fill = fmt.Sprintf("torch's CUDA (not known here), then %s's wheel for it from %s; or a build from %s", name, w.Index, w.Git)
		}
	}
	return r.manual(fill), true
}
