package diagnose

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/pep440"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// extGroups groups the extensions that match by distribution, in the order
// the facts list them (sorted by path).
func extGroups(exts []facts.Extension, match func(*facts.Extension) bool) [][]facts.Extension {
	var out [][]facts.Extension
	type distVersion struct{ dist, version string }
	at := map[distVersion]int{}
	for i := range exts {
		e := &exts[i]
		if !match(e) {
			continue
		}
		k := distVersion{e.Dist, e.Version}
		g, ok := at[k]
		if !ok {
			g = len(out)
			at[k] = g
			out = append(out, nil)
		}
		out[g] = append(out[g], *e)
	}
	return out
}

func hasCUDACode(e *facts.Extension) bool { return len(e.SASS)+len(e.PTX) > 0 }

// loaded is the extensions the packages' own loading code will load, by the rules
// of kb data/loading.json: a package that ships one library per CUDA version
// (bitsandbytes) loads only the one torch's CUDA (or its override variable) picks;
// the others are never opened and are not judged. It is worked out once per
// judgement; callers must not change what it returns.
func (c *judgement) loaded() []facts.Extension {
	if !c.loadedDone {
		c.loadedExts, c.loadedDone = c.pickLoaded(), true
	}
	return c.loadedExts
}

func (c *judgement) pickLoaded() []facts.Extension {
	rules := kb.Loading()
	// Usually all of them are loaded: share the facts' slice until one is not.
	out := c.f.Extensions[:0:0]
	all := true
	keep := func(i int) {
		if all {
			return
		}
		out = append(out, c.f.Extensions[i])
	}
	drop := func(i int) {
		if all {
			all = false
			out = append(make([]facts.Extension, 0, len(c.f.Extensions)), c.f.Extensions[:i]...)
		}
	}
	picked := map[string]string{}
	for i, e := range c.f.Extensions {
		r := rules.PackageLoadRule(e.Dist)
		if r == nil || r.Rule != "one-library-per-cuda" {
			keep(i)
			continue
		}
		if _, ok := r.Match(path.Base(e.Path)); !ok {
			keep(i)
			continue
		}
		k := e.Dist + "\x00" + path.Dir(e.Path)
		sel, ok := picked[k]
		if !ok {
			sel = c.pickCUDALibrary(r, e)
			picked[k] = sel
		}
		if path.Base(e.Path) == sel {
			keep(i)
		} else {
			drop(i)
		}
	}
	if all {
		return c.f.Extensions
	}
	return out
}

// pickCUDALibrary is the library name a one-library-per-cuda package loads, as its
// loader picks it (bitsandbytes cextension.py): the override variable's version
// outright; else torch's CUDA exactly, else the highest lower, else the lowest
// higher of the same major. "" when torch's CUDA is unknown (nothing is judged).
func (c *judgement) pickCUDALibrary(r *kb.PackageLoad, e facts.Extension) string {
	var names []string
	for _, o := range c.f.Extensions {
		if o.Dist == e.Dist && path.Dir(o.Path) == path.Dir(e.Path) {
			if _, ok := r.Match(path.Base(o.Path)); ok {
				names = append(names, path.Base(o.Path))
			}
		}
	}
	want := ""
	if r.OverrideEnv != "" {
		want = envValue(c, r.OverrideEnv)
	}
	if want == "" {
		if c.torchCUDA == "" {
			return ""
		}
		want = strings.ReplaceAll(c.torchCUDA, ".", "")
	}
	exact, lower, higher := "", "", ""
	lowerV, higherV := -1, 1<<30
	wantV, _ := strconv.Atoi(want)
	for _, n := range names {
		v, _ := r.Match(n)
		if strings.Contains(n, "_nocublaslt") {
			continue // bitsandbytes 0.41 picks these only on GPUs without int8 matmul
		}
		iv, _ := strconv.Atoi(v)
		switch {
		case v == want:
			exact = n
		case iv/10 == wantV/10 && iv < wantV && iv > lowerV:
			lower, lowerV = n, iv
		case iv/10 == wantV/10 && iv > wantV && iv < higherV:
			higher, higherV = n, iv
		}
	}
	if exact != "" || envValue(c, r.OverrideEnv) != "" {
		return exact
	}
	if lower != "" {
		return lower
	}
	return higher
}

// gatedOff returns the rule under which e's package never uses e on a GPU of
// capability cc (sgl-kernel's flash_ops outside majors 8 and 9), or nil.
func gatedOff(e *facts.Extension, cc cudaarch.Capability) *kb.PackageLoad {
	// Gated modules are named by their folder and file: sm90/common_ops.abi3.so.
	name := path.Base(path.Dir(e.Path)) + "/" + path.Base(e.Path)
	for _, r := range kb.Loading().PackageLoadRules(e.Dist) {
		if r.Rule != "module-gated-by-major" {
			continue
		}
		if _, ok := r.Match(name); ok && !slices.Contains(r.Majors, cc.Major) {
			return r
		}
	}
	return nil
}

// archOnly says whether a container's targets are all arch- or family-specific SASS
// (sm_90a, sm_100a, sm_100f) with no PTX: code built for those GPUs alone (kb
// loading.json arch_specific_modules), which the package dispatches to only there.
func archOnly(set []string) bool {
	if len(set) == 0 {
		return false
	}
	for _, s := range set {
		t, err := cudaarch.ParseTarget(s)
		if err != nil || t.Kind != cudaarch.SASS || t.Variant == cudaarch.VariantPlain {
			return false
		}
	}
	return true
}

// extContainers counts, for a GPU, e's containers that run, that have no code, and
// that are code for other GPUs alone. Facts without TargetSets are one set.
// Arch-specific containers beside containers that run are the package's kernels for
// other GPUs (vllm, sgl-kernel: a module per wheel, kernels per GPU) and never fail
// by themselves: the package launches them only on their GPU. So are, beside
// sets that run, sets of code for other GPUs alone (cudaarch.ForOtherGPUs: each
// target newer than the GPU or held by a set that runs too; vllm 0.33.0's
// Turing-only Marlin {sm_75}; onnxruntime-gpu 1.31.1's {sm_80 ... sm_120a} on a
// T4), as `fastpath inspect` counts them (other_arch). Sets whose containers define no kernel (KernelLessSets) are not
// counted: nothing is launched from them.
func extContainers(e *facts.Extension, cc cudaarch.Capability) (runs, none, otherArch int) {
	sets := e.TargetSets
	if len(sets) == 0 {
		sets = [][]string{append(slices.Clone(e.SASS), e.PTX...)}
	}
	runTargets := map[string]bool{}
	var missing [][]string
	for _, set := range sets {
		if kernelLessSet(e, set) {
			continue // nothing is launched from these containers: no GPU can fail them
		}
		var ts []cudaarch.Target
		for _, s := range set {
			if t, err := cudaarch.ParseTarget(s); err == nil {
				ts = append(ts, t)
			}
		}
		if _, got := cudaarch.Best(ts, cc); got == cudaarch.None {
			missing = append(missing, set)
			continue
		}
		runs++
		for _, s := range set {
			runTargets[s] = true
		}
	}
	for _, set := range missing {
		var ts []cudaarch.Target
		for _, s := range set {
			if t, err := cudaarch.ParseTarget(s); err == nil {
				ts = append(ts, t)
			}
		}
		switch {
		case archOnly(set):
			otherArch++
		case runs > 0 && len(ts) == len(set) && cudaarch.ForOtherGPUs(ts, cc, func(t cudaarch.Target) bool { return runTargets[t.String()] }):
			otherArch++
		default:
			none++
		}
	}
	return runs, none, otherArch
}

// kernelLessSet says whether set is one of e's sets whose containers define no kernel.
func kernelLessSet(e *facts.Extension, set []string) bool {
	return slices.ContainsFunc(e.KernelLessSets, func(s []string) bool { return slices.Equal(s, set) })
}

// byHandUnlessDistName keeps fixes when dist, a name from the diagnosed
// machine's METADATA, is a distribution name; otherwise it is one fix done
// by hand, with no command: the name is never put on a command line, where
// "--index-url=http://evil/" would be an option of pip (remedy.DistName).
func byHandUnlessDistName(dist string, fixes []finding.Fix) []finding.Fix {
	if remedy.DistName(dist) {
		return fixes
	}
	return []finding.Fix{{
		Title: fmt.Sprintf("Rebuild or reinstall the distribution that owns this extension by hand: its METADATA names it %q, "+
			"which is not a distribution name, so fastpath gives no command with it", dist),
		Commands: []string{},
	}}
}

// rebuildCommand reinstalls dist from source against the installed torch:
// no build isolation (the build must see this torch, not a fresh one from
// PyPI), no wheel from the index or pip's cache (which would be the same
// mismatched build), and no dependencies (--force-reinstall would otherwise
// reinstall torch itself).
func (c *judgement) rebuildCommand(dist, version string) string {
	base, _, _ := strings.Cut(version, "+")
	spec := dist
	if _, err := pep440.Parse(base); err == nil {
		spec += "==" + base
	}
	return c.pipInstall("--no-build-isolation", "--no-binary", dist, "--no-cache-dir", "--force-reinstall", "--no-deps", spec)
}

// checkExtensionArch: an installed extension has CUDA code, but some of its
// fatbin containers hold neither SASS that runs on a GPU nor PTX the driver
// can JIT for it: its kernels fail with "no kernel image is available for
// execution on the device".
func checkExtensionArch(c *judgement) []finding.Finding {
	var caps []cudaarch.Capability
	var names []string
	for _, d := range c.gpus() {
		cc, err := cudaarch.ParseCapability(d.Capability)
		if err != nil || slices.Contains(caps, cc) {
			continue
		}
		caps = append(caps, cc)
		name := d.Name
		if name == "" {
			name = "GPU"
		}
		names = append(names, fmt.Sprintf("%s (compute capability %s)", name, cc))
	}
	var out []finding.Finding
	exts := c.loaded()
	for i, cc := range caps {
		// Modules built only for arch-specific targets of other GPUs: info.
		for _, g := range extGroups(exts, func(e *facts.Extension) bool {
			if !hasCUDACode(e) {
				return false
			}
			runs, none, other := extContainers(e, cc)
			return runs == 0 && none == 0 && other > 0 && kb.Loading().DispatchesByArch(e.Dist)
		}) {
			e0 := g[0]
			fd := finding.Finding{
				ID:       finding.ExtensionArchUnsupported,
				Severity: finding.Info,
				Title:    fmt.Sprintf("%s %s: %s built only for other GPUs (arch-specific code)", e0.Dist, e0.Version, plural(len(g), "module", "modules")),
				Detail: fmt.Sprintf("Every fatbin of these modules holds only arch-specific SASS (sm_XXa) for other GPUs than %s: "+
					"the package dispatches to them only on the GPU they were built for, so this is expected and not an error.", names[i]),
			}
			for _, e := range g {
				fd.Evidence = append(fd.Evidence, fmt.Sprintf("%s: SASS %s; PTX %s", e.Path, listOrNone(e.SASS), listOrNone(e.PTX)))
			}
			fd.Evidence = append(fd.Evidence, "rule: "+kb.Loading().ArchSpecificModules.Source)
			out = append(out, fd)
		}
		groups := extGroups(exts, func(e *facts.Extension) bool {
			if !hasCUDACode(e) {
				return false
			}
			if gatedOff(e, cc) != nil {
				return false // the package never launches this module's kernels on this GPU
			}
			runs, none, other := extContainers(e, cc)
			dispatches := kb.Loading().DispatchesByArch(e.Dist)
			if runs > 0 && dispatches {
				// A package known to dispatch by GPU ships kernels for one GPU in
				// containers of their own, plain SASS too (vllm 0.33.0's
				// _C_stable_libtorch: {sm_75} and {sm_89 sm_120f} layouts beside
				// ones for every GPU; its C++ picks the kernel by capability), and
				// launches them only there: with code for this GPU elsewhere in the
				// module, the others are not an error on their own (kb loading.json).
				return false
			}
			// A module with nothing at all for this GPU fails, arch-specific or not,
			// unless its package is known to dispatch by GPU (the info above).
			return none > 0 || runs == 0 && other > 0 && !dispatches
		})
		for _, g := range groups {
			e0 := g[0]
			fd := finding.Finding{
				ID:       finding.ExtensionArchUnsupported,
				Severity: finding.Error,
				Title:    fmt.Sprintf("%s %s has no code for %s", e0.Dist, e0.Version, names[i]),
				Detail: fmt.Sprintf("The CUDA code in %s has nothing for this GPU: neither SASS for sm_%d (SASS runs only on its own major, "+
					"from its minor up) nor PTX of compute_%d or older for the driver to compile. Its kernels fail with "+
					"\"CUDA error: no kernel image is available for execution on the device\".",
					plural(len(g), "module of "+e0.Dist, "modules of "+e0.Dist), cc.SM(), cc.SM()),
			}
			for _, e := range g {
				line := fmt.Sprintf("%s: SASS %s; PTX %s (%s)", e.Path, listOrNone(e.SASS), listOrNone(e.PTX), plural(e.Containers, "fatbin container", "fatbin containers"))
				if runs, none, other := extContainers(&e, cc); other > 0 {
					// The counts are of distinct target sets (facts keep each once), not of containers.
					line += fmt.Sprintf("; of its %s, %d run on this GPU, %d have no code for it, %d are code for other GPUs alone",
						plural(runs+none+other, "distinct container layout", "distinct container layouts"), runs, none, other)
				}
				if n := len(e.KernelLessSets); n > 0 {
					line += "; " + plural(n, "distinct container layout defines", "distinct container layouts define") + " no kernel (nothing is launched from it)"
				}
				fd.Evidence = append(fd.Evidence, line)
				if len(e.TargetSets) > 1 && len(e.TargetSets) <= 8 {
					for _, set := range e.TargetSets {
						line := "  a container holds: " + strings.Join(set, " ")
						if kernelLessSet(&e, set) {
							line += " (no kernels: nothing launched from it)"
						}
						fd.Evidence = append(fd.Evidence, line)
					}
				}
			}
			fd.Evidence = append(fd.Evidence, "GPU: "+names[i])
			fd.Fixes = []finding.Fix{{
				Title:    fmt.Sprintf("Rebuild %s for this GPU (compute capability %s) against the installed torch", e0.Dist, cc),
				Commands: remedy.Rebuild(c.remedy(), e0.Dist, cc.String(), c.rebuildCommand(e0.Dist, e0.Version)),
			}}
			if r, ok := remedy.WheelOnlyRebuild(c.remedy(), e0.Dist, e0.Version, cc.String()); ok {
				fd.Fixes = []finding.Fix{toFix(r)}
			}
			if !torchExtension(exts, e0.Dist) {
				// Not built with torch's cpp_extension (it links no libc10/libtorch):
				// TORCH_CUDA_ARCH_LIST does not choose its targets, and a rebuild
				// "against the installed torch" is no cure (faiss-gpu-cu12 1.14.1.post1,
				// onnxruntime-gpu 1.31.1: CMake builds with no sdist on PyPI).
				fd.Fixes = []finding.Fix{{
					Title: fmt.Sprintf("Install a build of %s with SASS for sm_%d (or PTX of compute_%d or older) (by hand: it is not a torch extension, "+
						"so TORCH_CUDA_ARCH_LIST does not choose its targets; its project's own build or another release does)", e0.Dist, cc.SM(), cc.SM()),
					Commands: []string{},
				}}
			}
			fd.Fixes = byHandUnlessDistName(e0.Dist, fd.Fixes)
			out = append(out, fd)
		}
		out = append(out, checkExtensionPTXDriver(c, exts, cc, names[i], groups)...)
	}
	return out
}

// checkExtensionPTXDriver: a module whose code for the GPU is, in some container,
// PTX only (SASS for other GPUs beside it) runs those kernels only once the driver
// JIT-compiles the PTX, and a driver older than the PTX's ISA refuses it: "the
// provided PTX was compiled with an unsupported toolchain"
// (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). The ISA is the newest of the module's PTX
// entries (one build writes one); the driver's CUDA is nvidia-smi's, judged by
// diagnose.Complete. Modules already reported as having no code for the GPU
// (failed) are not reported again.
func checkExtensionPTXDriver(c *judgement, exts []facts.Extension, cc cudaarch.Capability, gpuName string, failed [][]facts.Extension) []finding.Finding {
	drv := c.f.GPU.Driver
	if drv == nil || drv.CUDA == "" {
		return nil
	}
	driverCUDA, err := cudaarch.ParseVersion(drv.CUDA)
	if err != nil {
		return nil
	}
	reported := map[string]bool{}
	for _, g := range failed {
		for _, e := range g {
			reported[e.Path] = true
		}
	}
	var out []finding.Finding
	for _, g := range extGroups(exts, func(e *facts.Extension) bool {
		if e.PTXISA == "" || reported[e.Path] || gatedOff(e, cc) != nil {
			return false
		}
		isa, err := cudaarch.ParseVersion(e.PTXISA)
		if err != nil {
			return false
		}
		if ok, known := cudaarch.DriverCanJIT(isa, driverCUDA); ok || !known {
			return false
		}
		return jitOnly(e, cc)
	}) {
		e0 := g[0]
		isa, _ := cudaarch.ParseVersion(e0.PTXISA)
		needs, _ := cudaarch.PTXISAToCUDA(isa)
		fd := finding.Finding{
			ID:       finding.ExtensionArchUnsupported,
			Severity: finding.Error,
			Title:    fmt.Sprintf("%s %s runs on %s only through PTX that driver %s cannot compile", e0.Dist, e0.Version, gpuName, drv.Version),
			Detail: fmt.Sprintf("Some of its kernels have no SASS for this GPU, only PTX of ISA %s, which the driver compiles at first use; "+
				"PTX ISA %s needs a driver for CUDA %s or newer, and this one supports CUDA %s. Those kernels fail with "+
				"\"the provided PTX was compiled with an unsupported toolchain\".", e0.PTXISA, e0.PTXISA, needs, drv.CUDA),
		}
		for _, e := range g {
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("%s: SASS %s; PTX %s (PTX ISA %s)", e.Path, listOrNone(e.SASS), listOrNone(e.PTX), e.PTXISA))
		}
		fd.Evidence = append(fd.Evidence, fmt.Sprintf("driver %s (%s), supports CUDA %s", drv.Version, drv.From, drv.CUDA), "GPU: "+gpuName,
			"rule: a driver JIT-compiles PTX of an ISA only if it supports the CUDA release that introduced it (PTX ISA manual, release notes table, https://docs.nvidia.com/cuda/parallel-thread-execution/#release-notes)")
		fd.Fixes = []finding.Fix{{
			Title:    fmt.Sprintf("Upgrade the NVIDIA driver to one for CUDA %s or newer (on the host, not in the container), or install a build of %s with SASS for sm_%d", needs, e0.Dist, cc.SM()),
			Commands: []string{},
		}}
		out = append(out, fd)
	}
	return out
}

// jitOnly says whether some container of e that defines kernels runs on cc only
// through PTX JIT.
func jitOnly(e *facts.Extension, cc cudaarch.Capability) bool {
	sets := e.TargetSets
	if len(sets) == 0 {
		sets = [][]string{append(slices.Clone(e.SASS), e.PTX...)}
	}
	for _, set := range sets {
		if kernelLessSet(e, set) {
			continue
		}
		var ts []cudaarch.Target
		for _, s := range set {
			if t, err := cudaarch.ParseTarget(s); err == nil {
				ts = append(ts, t)
			}
		}
		if _, got := cudaarch.Best(ts, cc); got == cudaarch.PTXJIT {
			return true
		}
	}
	return false
}

// onDemand returns the rule under which the package loads every module of g only
// when asked (kb loading.json "loaded-on-demand"), or nil.
func onDemand(g []facts.Extension) *kb.PackageLoad {
	var r *kb.PackageLoad
	for _, e := range g {
		if r = kb.Loading().LoadedOnDemand(e.Dist, path.Base(e.Path)); r == nil {
			return nil
		}
	}
	return r
}

// loadCaught returns the rule under which the package's import survives a failed
// load of every module of g (kb loading.json "load-failure-caught"), or nil.
func loadCaught(g []facts.Extension) *kb.PackageLoad {
	var r *kb.PackageLoad
	for _, e := range g {
		if r = kb.Loading().LoadFailureCaught(e.Dist, path.Base(e.Path)); r == nil {
			return nil
		}
	}
	return r
}

// torchExtension says whether dist is a torch extension, the kind a rebuild with
// TORCH_CUDA_ARCH_LIST retargets: one of its modules links torch, or the knowledge
// base has a build profile for it.
func torchExtension(exts []facts.Extension, dist string) bool {
	for _, e := range exts {
		if e.Dist == dist && e.LinksTorch {
			return true
		}
	}
	_, known := kb.Builds().Packages[strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(dist))]
	return known
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, " ")
}

// builtForRe reads the torch a build was made for from a local version
// label, as the kernel packages' own release wheels spell it:
// 2.8.3+cu12torch2.6cxx11abiTRUE, 1.5.2+cu128torch2.7.
var builtForRe = lazyregexp.New(`(?i)torch(\d+)\.?(\d+)`)
var abiRe = lazyregexp.New(`(?i)cxx11abi(true|false)`)

// checkExtensionABI: an installed extension needs torch symbols that none
// of the torch libraries it loads defines: importing it fails with
// "undefined symbol", the mark of a build made against another torch.
func checkExtensionABI(c *judgement) []finding.Finding {
	if c.torch == nil {
		return nil
	}
	var out []finding.Finding
	for _, g := range extGroups(c.loaded(), func(e *facts.Extension) bool { return e.LinksTorch && e.MissingCount > 0 }) {
		e0 := g[0]
		// Distinct symbols over the modules: the same missing function needed by four
		// modules is one symbol, not four. Only the first few names per module are in
		// the facts, so when some were cut the count is a lower bound.
		distinct := map[string]bool{}
		complete := true
		most := 0
		for _, e := range g {
			for _, s := range e.MissingSymbols {
				distinct[s] = true
			}
			complete = complete && e.MissingCount == len(e.MissingSymbols)
			most = max(most, e.MissingCount)
		}
		count := plural(len(distinct), "symbol", "symbols")
		if !complete {
			count = "at least " + plural(max(len(distinct), most), "symbol", "symbols")
		}
		fd := finding.Finding{
			ID:       finding.ExtensionABIMismatch,
			Severity: finding.Error,
			Title:    fmt.Sprintf("%s %s was built for another torch: %s missing from torch %s", e0.Dist, e0.Version, count, c.torch.Version),
			Detail: fmt.Sprintf("Its native code calls torch functions that the installed torch's libraries do not define, so `import` fails with "+
				"\"ImportError: ...: undefined symbol: ...\" (the mangled name of %s). torch has no stable C++ ABI: an extension must be built against the torch it runs with.",
				firstMissing(g)),
		}
		caught := loadCaught(g)
		if caught != nil {
			// Its import catches the failed load and logs it (xformers).
			fd.Detail = fmt.Sprintf("Its native code calls torch functions that the installed torch's libraries do not define, so loading it fails with "+
				"\"undefined symbol: ...\" (the mangled name of %s); the import catches that and only logs it (the rule below quotes how), so its operators "+
				"are unavailable. torch has no stable C++ ABI: an extension must be built against the torch it runs with.", firstMissing(g))
		}
		for _, e := range g {
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("%s needs %s no library of torch it loads defines (%s)", e.Path, plural(e.MissingCount, "symbol", "symbols"), strings.Join(torchNeeded(e), ", ")))
			for _, s := range e.MissingSymbols {
				fd.Evidence = append(fd.Evidence, "  missing: "+s)
			}
			if n := e.MissingCount - len(e.MissingSymbols); n > 0 {
				fd.Evidence = append(fd.Evidence, fmt.Sprintf("  ... and %d more", n))
			}
		}
		fd.Evidence = append(fd.Evidence, torchEvidence(c.torch))
		if caught != nil {
			fd.Evidence = append(fd.Evidence, "rule: "+caught.Source)
		}
		if _, local, ok := strings.Cut(e0.Version, "+"); ok {
			if m := builtForRe.FindStringSubmatch(local); m != nil {
				built := m[1] + "." + m[2]
				if mm, _, _, ok := kb.MajorMinor(c.torch.Version); ok && mm != built {
					fd.Evidence = append(fd.Evidence, fmt.Sprintf("its version's local part +%s says it was built for torch %s; torch %s is installed", local, built, c.torch.Version))
				}
			}
			if m := abiRe.FindStringSubmatch(local); m != nil && c.torch.CXX11ABI != nil {
				built := strings.EqualFold(m[1], "true")
				if built != *c.torch.CXX11ABI {
					fd.Evidence = append(fd.Evidence, fmt.Sprintf("its version says cxx11abi=%t; the installed torch uses cxx11abi=%t", built, *c.torch.CXX11ABI))
				}
			}
		}
		if r, ok := remedy.WheelOnlyRebuild(c.remedy(), e0.Dist, e0.Version, ""); ok {
			fd.Fixes = []finding.Fix{toFix(r)}
			out = append(out, fd)
			continue
		}
		if !remedy.DistName(e0.Dist) {
			fd.Fixes = byHandUnlessDistName(e0.Dist, nil)
			out = append(out, fd)
			continue
		}
		fd.Fixes = []finding.Fix{
			{
				Title:    fmt.Sprintf("Reinstall %s built for torch %s (its setup picks or builds the matching binary when it can see this torch)", e0.Dist, c.torch.Version),
				Commands: append(remedy.BuildImports(c.remedy(), e0.Dist), c.pipInstall("--no-build-isolation", "--no-cache-dir", "--force-reinstall", "--no-deps", "--upgrade", e0.Dist)),
			},
			{
				Title:    fmt.Sprintf("Or rebuild %s from source against the installed torch", e0.Dist),
				Commands: []string{c.rebuildCommand(e0.Dist, e0.Version)},
			},
		}
		out = append(out, fd)
	}
	return out
}

// firstMissing is the first missing symbol, demangled.
func firstMissing(g []facts.Extension) string {
	for _, e := range g {
		if len(e.MissingSymbols) > 0 {
			return e.MissingSymbols[0]
		}
	}
	return "..."
}

func torchNeeded(e facts.Extension) []string {
	var out []string
	for _, n := range e.Needed {
		if strings.HasPrefix(n, "libc10") || strings.HasPrefix(n, "libtorch") {
			out = append(out, n)
		}
	}
	return out
}

// cudartMajorRe reads the major of a CUDA runtime soname: libcudart.so.12, and
// CUDA 11's libcudart.so.11.0.
var cudartMajorRe = lazyregexp.New(`^libcudart\.so\.(\d+)(\.0)?$`)

// runtimeWheel is the NVIDIA wheel that ships libcudart.so.<major> and the
// folder (below site-packages) it puts it in.
func runtimeWheel(major int) (spec, dir string) {
	if major >= 13 {
		return fmt.Sprintf("nvidia-cuda-runtime==%d.*", major), "nvidia/cu13/lib"
	}
	return fmt.Sprintf("nvidia-cuda-runtime-cu%d", major), "nvidia/cuda_runtime/lib"
}

// checkExtensionCUDA: an installed extension needs a CUDA runtime
// (libcudart.so.N) that is nowhere the loader looks, or whose major differs
// from torch's: built for another CUDA.
func checkExtensionCUDA(c *judgement) []finding.Finding {
	var out []finding.Finding
	type key struct {
		dist, version, soname string
		found                 bool
	}
	groups := map[key][]facts.Extension{}
	var order []key
	for _, e := range c.loaded() {
		m := cudartMajorRe.FindStringSubmatch(e.CUDARuntime)
		if m == nil {
			continue
		}
		major, _ := strconv.Atoi(m[1])
		if e.CUDARuntimeFound != "" && (c.torchCUDA == "" || major == c.torchMajor || !torchExtension(c.loaded(), e.Dist)) {
			// Found, and of torch's major or of a package that is no torch
			// extension (cupy-cuda12x, ctransformers beside a CUDA 13 torch): its
			// own runtime next to torch's is how it is meant to run.
			continue
		}
		k := key{e.Dist, e.Version, e.CUDARuntime, e.CUDARuntimeFound != ""}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
	}
	for _, k := range order {
		g := groups[k]
		major, _ := strconv.Atoi(cudartMajorRe.FindStringSubmatch(k.soname)[1])
		fd := finding.Finding{ID: finding.ExtensionCUDAMismatch}
		for _, e := range g {
			where := "found nowhere the loader looks"
			if e.CUDARuntimeFound != "" {
				where = "found at " + e.CUDARuntimeFound
			}
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("%s needs %s: %s", e.Path, e.CUDARuntime, where))
		}
		if c.torch != nil {
			fd.Evidence = append(fd.Evidence, torchEvidence(c.torch))
		}
		otherMajor := c.torchCUDA != "" && major != c.torchMajor
		// Rebuilding against torch retargets its CUDA only for a torch extension.
		rebuild := otherMajor && torchExtension(c.loaded(), k.dist)
		switch {
		case !k.found:
			fd.Severity = finding.Error
			fd.Title = fmt.Sprintf("%s %s needs %s, which is not installed", k.dist, k.version, k.soname)
			fd.Detail = fmt.Sprintf("Importing it fails with \"ImportError: %s: cannot open shared object file: No such file or directory\". "+
				"Searched: its run path, LD_LIBRARY_PATH, the environment's nvidia wheels (which torch preloads), ld.so.conf's folders, the system's library folders and /usr/local/cuda*/lib64.", k.soname)
			if r := loadCaught(g); r != nil {
				// The import works: the package loads the module inside a try and
				// logs the failure (xformers' _cpp_lib.py);
				// its operators are missing.
				fd.Detail = fmt.Sprintf("Importing it works: it loads these modules inside a try and only logs a failure (the rule below quotes how), "+
					"and the load fails with \"%s: cannot open shared object file: No such file or directory\", "+
					"so their operators are unavailable and the calls that need them fail. "+
					"Searched: its run path, LD_LIBRARY_PATH, the environment's nvidia wheels (which torch preloads), ld.so.conf's folders, the system's library folders and /usr/local/cuda*/lib64.", k.soname)
				fd.Evidence = append(fd.Evidence, "rule: "+r.Source)
			} else if r := onDemand(g); r != nil {
				// The import works; the load that fails comes later (onnxruntime-gpu's
				// CUDA provider, when a session asks for it).
				fd.Detail = fmt.Sprintf("Importing it works: it loads these libraries only when asked for them, and that load fails with "+
					"\"%s: cannot open shared object file: No such file or directory\", so their GPU code never runs. "+
					"Searched: its run path, LD_LIBRARY_PATH, the environment's nvidia wheels (which torch preloads), ld.so.conf's folders, the system's library folders and /usr/local/cuda*/lib64.", k.soname)
				fd.Evidence = append(fd.Evidence, "rule: "+r.Source)
			}
		default:
			fd.Severity = finding.Warning
			fd.Title = fmt.Sprintf("%s %s was built for CUDA %d, torch for CUDA %s", k.dist, k.version, major, c.torchCUDA)
			fd.Detail = fmt.Sprintf("It loads its own CUDA %d runtime next to torch's CUDA %d one: two runtimes in one process, "+
				"and a build made for another torch than this one.", major, c.torchMajor)
		}
		if rebuild {
			fd.Evidence = append(fd.Evidence, fmt.Sprintf("CUDA runtime major %d differs from torch's CUDA %s", major, c.torchCUDA))
			rebuildFix := finding.Fix{
				Title:    fmt.Sprintf("Rebuild %s against the installed torch (CUDA %s)", k.dist, c.torchCUDA),
				Commands: []string{c.rebuildCommand(k.dist, k.version)},
			}
			if r, ok := remedy.WheelOnlyRebuild(c.remedy(), k.dist, k.version, ""); ok {
				rebuildFix = toFix(r)
			}
			fd.Fixes = append(fd.Fixes, byHandUnlessDistName(k.dist, []finding.Fix{rebuildFix})...)
		}
		if !k.found {
			spec, dir := runtimeWheel(major)
			title := fmt.Sprintf("Install the CUDA %d runtime and put it on the loader's path", major)
			if rebuild {
				title = "Or " + strings.ToLower(title[:1]) + title[1:]
			}
			fd.Fixes = append(fd.Fixes, finding.Fix{
				Title: title,
				Commands: []string{
					c.pipInstall(spec),
					remedy.LibraryPath(path.Join(c.sitePackages(), dir)),
				},
			})
		}
		out = append(out, fd)
	}
	return out
}

// checkExtensionLive compares the static extension verdicts with the probe's imports
// of the modules they name (`doctor --live`, live.AddStaticSuspects): a module said
// to fail to import (a missing CUDA runtime, missing torch symbols) that imports, or
// one said to lack code for the GPU whose tiny kernel runs, is static-live-disagree.
func checkExtensionLive(c *judgement) []finding.Finding {
	lf := c.f.Live
	if lf == nil || lf.Error != "" || lf.Probe == 0 {
		return nil
	}
	static := map[string]string{} // dist -> "import" or "code"
	for _, fd := range append(checkExtensionABI(c), append(checkExtensionCUDA(c), checkExtensionArch(c)...)...) {
		if fd.Severity != finding.Error {
			continue
		}
		for _, e := range c.loaded() {
			if !slices.ContainsFunc(fd.Evidence, func(ev string) bool { return strings.HasPrefix(ev, e.Path+":") || strings.HasPrefix(ev, e.Path+" ") }) {
				continue
			}
			switch {
			case fd.ID == finding.ExtensionArchUnsupported:
				if static[e.Dist] == "" {
					static[e.Dist] = "code"
				}
			case kb.Loading().LoadedOnDemand(e.Dist, path.Base(e.Path)) != nil, kb.Loading().LoadFailureCaught(e.Dist, path.Base(e.Path)) != nil:
				// Said to fail when loaded on demand, not at import: the import
				// proves nothing either way.
			default:
				static[e.Dist] = "import"
			}
		}
	}
	var out []finding.Finding
	add := func(title, detail string, evidence ...string) {
		out = append(out, finding.Finding{ID: finding.StaticLiveDisagree, Severity: finding.Warning, Title: title,
			Detail:   detail + " One of the two readings is wrong: trust the live one, and report the static one as a fastpath bug.",
			Evidence: evidence})
	}
	for _, p := range lf.Packages {
		verdict, ok := static[p.Name]
		if !ok {
			continue
		}
		switch {
		case verdict == "import" && p.OK:
			add(fmt.Sprintf("%s: fastpath said `import %s` fails, but it imports", p.Name, p.Import),
				fmt.Sprintf("A static error says a library %s loads is missing or lacks torch symbols, yet `import %s` succeeds in %s.", p.Name, p.Import, c.python()),
				"live: import "+p.Import+" from "+p.File)
		case verdict == "code" && p.OK && p.SmokeOK:
			add(fmt.Sprintf("%s: fastpath said it has no code for the GPU, but its kernel runs", p.Name),
				fmt.Sprintf("A static error says %s has no code for this GPU, yet its tiny kernel ran in %s.", p.Name, c.python()),
				"live: "+p.Smoke)
		}
	}
	return out
}
