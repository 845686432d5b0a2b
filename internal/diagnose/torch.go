package diagnose

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// torchWheelCUDAs are the CUDA builds of torch's newest release on
// download.pytorch.org, newest first (kb: cuda.json torch_wheels).
func (c *context) torchWheelCUDAs() []string {
	var out []string
	for _, r := range c.cuda.TorchWheels.Rows {
		out = append(out, r.CUDA)
	}
	return out
}

// checkPython: no interpreter at all.
func checkPython(c *context) []finding.Finding {
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
func checkTorch(c *context) []finding.Finding {
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
func (c *context) recommendedTorchCUDA() string { return remedy.TorchWheelCUDA(c.remedy()) }

// checkDriver: the driver is older than torch's CUDA runtime needs.
func checkDriver(c *context) []finding.Finding {
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
		fx.Title = fmt.Sprintf("Or install torch %s built for CUDA %s, which this driver runs", base, cu)
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

func envValue(c *context, name string) string {
	for _, e := range c.f.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
