package diagnose

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// torchWheelCUDAs are the CUDA builds of torch's newest release on
// download.pytorch.org, newest first (kb: cuda.json torch_wheels).
func (c *judgement) torchWheelCUDAs() []string {
	var out []string
	for _, r := range c.cuda.TorchWheels.Rows {
		out = append(out, r.CUDA)
	}
	return out
}

// checkPython: no interpreter at all.
func checkPython(c *judgement) []finding.Finding {
	if c.py != nil {
		return nil
	}
	return []finding.Finding{{
		ID:       finding.TorchMissing,
		Severity: finding.Error,
		Title:    "No Python environment found",
		Detail:   "python3 is not on PATH and --python was not given, so there is no torch to diagnose.",
		Evidence: append([]string{"PATH=" + envValue(c, "PATH")}, c.f.Python.Resolution...),
		Fixes:    []finding.Fix{{Title: "Name the interpreter or environment to diagnose: fastpath doctor --python followed by its path (by hand: fastpath cannot know which)", Commands: []string{}}},
	}}
}

// checkTorch: torch missing, or a CPU build where NVIDIA GPUs are present.
func checkTorch(c *judgement) []finding.Finding {
	if c.py == nil {
		return nil
	}
	cuda := c.recommendedTorchCUDA()
	if c.torch == nil {
		return []finding.Finding{{
			ID:       finding.TorchMissing,
			Severity: finding.Error,
			Title:    "torch is not installed in " + c.py.Prefix,
			Detail:   fmt.Sprintf("The selected environment (%s, Python %s) has no torch distribution on its sys.path.", c.py.Kind, orUnknown(c.py.Version)),
			Evidence: []string{fmt.Sprintf("python: %s", c.python()), fmt.Sprintf("searched for torch in: %s", strings.Join(c.py.SitePath, ", "))},
			Fixes:    []finding.Fix{toFix(remedy.TorchInstall(c.remedy(), "", cuda, false))},
		}}
	}
	if c.torch.CUDA != "" || c.torch.HIP != "" || c.torch.BuildFrom == "" || len(c.f.GPU.Devices) == 0 {
		return nil // a build that could not be read is not called CPU-only
	}
	base, _, _ := strings.Cut(c.torch.Version, "+")
	return []finding.Finding{{
		ID:       finding.TorchCPUOnly,
		Severity: finding.Error,
		Title:    fmt.Sprintf("torch %s is a CPU-only build, but NVIDIA GPUs are present", c.torch.Version),
		Detail:   "torch.cuda.is_available() is False with this build: every model runs on the CPU, and every kernel package falls back to torch.",
		Evidence: []string{torchEvidence(c.torch), "GPUs: " + c.f.GPU.Summary()},
		Fixes:    []finding.Fix{toFix(remedy.TorchInstall(c.remedy(), base, cuda, true))},
	}}
}

// recommendedTorchCUDA is the newest CUDA build of torch that the driver
// runs and that has code for every GPU (Blackwell needs 12.8 or newer).
func (c *judgement) recommendedTorchCUDA() string { return remedy.TorchWheelCUDA(c.remedy()) }

// checkDriver: the driver is older than torch's CUDA runtime needs.
func checkDriver(c *judgement) []finding.Finding {
	drv := c.f.GPU.Driver
	if c.torchCUDA == "" || drv == nil || drv.Version == "" {
		return nil
	}
	full, floor, ok := c.cuda.DriverMinimum(c.torchCUDA)
	if !ok || kb.CompareDotted(drv.Version, full) >= 0 {
		return nil
	}
	ev := []string{fmt.Sprintf("driver %s (%s)", drv.Version, drv.From), torchEvidence(c.torch),
		fmt.Sprintf("CUDA %s needs driver >= %s; minor-version compatibility starts CUDA %d.x on >= %s (%s)", c.torchCUDA, full, c.torchMajor, floor, "CUDA release notes")}
	if drv.CUDA != "" {
		ev = append(ev, "the driver supports CUDA "+drv.CUDA+" at most (nvidia-smi's \"CUDA Version\"; not the toolkit's, not torch's)")
	}
	upgrade := finding.Fix{Title: fmt.Sprintf("Upgrade the NVIDIA driver to %s or newer (on the host, not in the container)", full), Commands: []string{}}
	if kb.CompareDotted(drv.Version, floor) >= 0 {
		return []finding.Finding{{
			ID:       finding.DriverTooOld,
			Severity: finding.Warning,
			Title:    fmt.Sprintf("Driver %s is older than CUDA %s's %s: running on minor-version compatibility", drv.Version, c.torchCUDA, full),
			Detail:   "torch starts, but PTX newer than the driver cannot be JIT-compiled, and some kernels built for the newest GPUs may refuse to load.",
			Evidence: ev,
			Fixes:    []finding.Fix{upgrade},
		}}
	}
	base, _, _ := strings.Cut(c.torch.Version, "+")
	fixes := []finding.Fix{upgrade}
	if cu := c.recommendedTorchCUDA(); cu != c.torchCUDA {
		fx := toFix(remedy.TorchInstall(c.remedy(), base, cu, true))
		if remedy.TorchBuildExists(base, cu) {
			fx.Title = fmt.Sprintf("Or install torch %s built for CUDA %s, which this driver runs", base, cu)
		} else {
			fx.Title = "Or, for this driver: " + fx.Title
		}
		fixes = append(fixes, fx)
	}
	return []finding.Finding{{
		ID:       finding.DriverTooOld,
		Severity: finding.Error,
		Title:    fmt.Sprintf("Driver %s is too old for torch's CUDA %s (needs >= %s)", drv.Version, c.torchCUDA, floor),
		Detail:   "torch.cuda.is_available() will be False: \"The NVIDIA driver on your system is too old\".",
		Evidence: ev,
		Fixes:    fixes,
	}}
}

func envValue(c *judgement, name string) string {
	for _, e := range c.f.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// checkTorchLibraries: a shared library `import torch` loads resolves nowhere the
// dynamic linker or torch's _preload_cuda_deps looks: `import torch` fails with
// "OSError: libX.so.N: cannot open shared object file" (or, from torch's own
// preloading, "ValueError: libX.so.*[0-9] not found in the system path").
func checkTorchLibraries(c *judgement) []finding.Finding {
	if c.torch == nil || len(c.torch.MissingLibraries) == 0 {
		return nil
	}
	var names, evidence, pkgs, extras, reqLines []string
	toolkitVersion := ""
	var lastSearched []string
	for _, m := range c.torch.MissingLibraries {
		names = append(names, m.Name)
		where := "not found in " + strings.Join(m.Searched, ", ")
		if slices.Equal(m.Searched, lastSearched) {
			where = "not found in the same folders"
		}
		lastSearched = m.Searched
		evidence = append(evidence, fmt.Sprintf("%s, needed by %s: %s", m.Name, strings.Join(m.NeededBy, ", "), where))
		p, raw := c.torchLibraryProvider(m.Name)
		if raw != "" && !slices.Contains(reqLines, raw) {
			reqLines = append(reqLines, raw)
		}
		// cuda-toolkit[x]==V specs merge into one cuda-toolkit[x,y]==V.
		if rest, ok := strings.CutPrefix(p, "cuda-toolkit["); ok {
			extra, version, _ := strings.Cut(rest, "]")
			toolkitVersion = version
			if !slices.Contains(extras, extra) {
				extras = append(extras, extra)
			}
			continue
		}
		if p != "" && !slices.Contains(pkgs, p) {
			pkgs = append(pkgs, p)
		}
	}
	if len(extras) > 0 {
		slices.Sort(extras)
		pkgs = append([]string{"cuda-toolkit[" + strings.Join(extras, ",") + "]" + toolkitVersion}, pkgs...)
	}
	evidence = append(evidence, torchEvidence(c.torch))
	for _, r := range reqLines {
		evidence = append(evidence, fmt.Sprintf("torch %s's own METADATA: Requires-Dist: %s", c.torch.Version, r))
	}
	evidence = append(evidence, "which wheel ships which library: "+kb.Loading().CUDALibraries.Source)
	fd := finding.Finding{
		ID:       finding.TorchLibrariesMissing,
		Severity: finding.Error,
		Title:    fmt.Sprintf("torch %s cannot be imported: %s not found", c.torch.Version, strings.Join(names, ", ")),
		Detail: fmt.Sprintf("`import torch` loads these through its libraries' DT_NEEDED entries; none resolves in torch/lib, the run paths of torch's libraries, "+
			"LD_LIBRARY_PATH, the nvidia/*/lib folders torch preloads from, ld.so.conf or the system's folders, so the import fails with "+
			"\"OSError: %s: cannot open shared object file: No such file or directory\".", names[0]),
		Evidence: evidence,
	}
	if len(pkgs) > 0 {
		fd.Fixes = []finding.Fix{{
			Title:    fmt.Sprintf("Install the NVIDIA wheels torch %s requires for them (as its own METADATA pins them)", c.torch.Version),
			Commands: []string{c.pipInstall(pkgs...)},
		}}
	} else {
		fd.Detail += " The package that provides it is not named in torch's requirements."
	}
	return []finding.Finding{fd}
}

// torchLibraryProvider is the requirement in torch's METADATA that ships soname:
// "nvidia-cublas-cu12==12.8.4.1", "nvidia-nccl-cu13==2.30.7", or the cuda-toolkit
// meta-package with the library's extra, "cuda-toolkit[cublas]==13.2.2".
//
// raw is the Requires-Dist line it comes from, verbatim.
func (c *judgement) torchLibraryProvider(soname string) (spec, raw string) {
	lib := kb.Loading().CUDALibraryFor(soname)
	if lib == nil || c.py == nil {
		return "", ""
	}
	var requires []string
	for _, d := range c.py.Distributions {
		if strings.EqualFold(d.Name, "torch") {
			requires = d.Requires
			break
		}
	}
	for _, r := range requires {
		spec, _, _ := strings.Cut(r, ";")
		spec = strings.TrimSpace(spec)
		name := spec
		if i := strings.IndexAny(spec, "[=<>~! "); i >= 0 {
			name = spec[:i]
		}
		n := strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(name))
		stem, ok := strings.CutPrefix(n, "nvidia-")
		if ok {
			if i := strings.LastIndex(stem, "-cu"); i >= 0 && isDigits(stem[i+3:]) {
				stem = stem[:i]
			}
			if stem == lib.Wheel {
				return strings.ReplaceAll(spec, " ", ""), r
			}
			continue
		}
		if n == "cuda-toolkit" && lib.ToolkitExtra != "" {
			extras := ""
			if i, j := strings.Index(spec, "["), strings.Index(spec, "]"); i >= 0 && j > i {
				extras = spec[i+1 : j]
			}
			for _, x := range strings.Split(extras, ",") {
				if strings.TrimSpace(x) == lib.ToolkitExtra {
					return "cuda-toolkit[" + lib.ToolkitExtra + "]" + strings.ReplaceAll(spec[strings.Index(spec, "]")+1:], " ", ""), r
				}
			}
		}
	}
	return "", ""
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
