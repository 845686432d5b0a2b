package diagnose

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// checkTorchArch: a GPU for which torch has no SASS that runs on it and no
// PTX the driver could JIT (error), or only PTX (warning: every kernel is
// JIT-compiled at first use). Without Archs (no CUDA library was read) it
// says nothing rather than guess from the version string.
func checkTorchArch(c *judgement) []finding.Finding {
	t := c.torch
	if t == nil || t.CUDA == "" || len(t.Archs) == 0 {
		return nil
	}
	sass := parseTargets(t.Archs)
	ptx := parseTargets(t.PTX)
	var out []finding.Finding
	for _, g := range c.gpuGroups() {
		cc := g.cc
		if _, how := cudaarch.Best(sass, cc); how == cudaarch.Native || how == cudaarch.Family {
			continue
		}
		gpu := fmt.Sprintf("sm_%d (compute capability %s)", cc.SM(), cc)
		ev := []string{
			torchEvidence(t),
			"torch's SASS (in every kernel of libtorch_cuda.so, as torch.cuda.get_arch_list() reports it): " + strings.Join(t.Archs, " "),
			"torch's PTX: " + orNone(t.PTX),
			"read: " + strings.Join(t.ArchLibs, ", "),
			"GPUs: " + g.summary,
		}
		if jit, how := cudaarch.Best(ptx, cc); how == cudaarch.PTXJIT {
			out = append(out, finding.Finding{
				ID:       finding.TorchArchUnsupported,
				Severity: finding.Warning,
				Title:    fmt.Sprintf("torch %s runs on %s only through PTX JIT (%s)", t.Version, gpu, jit),
				Detail: "torch has no SASS for this GPU: the driver JIT-compiles every kernel from PTX at first use " +
					"(minutes of start-up, cached in ~/.nv/ComputeCache) and the kernels run slower than native code.",
				Evidence: ev,
				Fixes:    c.torchArchFixes(cc),
			})
			continue
		}
		out = append(out, finding.Finding{
			ID:       finding.TorchArchUnsupported,
			Severity: finding.Error,
			Title:    fmt.Sprintf("torch %s has no code for %s", t.Version, gpu),
			Detail: "torch has neither SASS that runs on this GPU nor PTX the driver could JIT-compile for it: " +
				"every CUDA operation fails with \"no kernel image is available for execution on the device\".",
			Evidence: ev,
			Fixes:    c.torchArchFixes(cc),
		})
	}
	return out
}

// gpuGroup is the GPUs of one compute capability.
type gpuGroup struct {
	cc      cudaarch.Capability
	summary string // "8 × NVIDIA RTX PRO 6000 Blackwell Server Edition (compute capability 12.0)"
}

// gpuGroups returns the GPUs by capability, in device order.
func (c *judgement) gpuGroups() []gpuGroup {
	var out []gpuGroup
	index := map[cudaarch.Capability]int{}
	counts := map[cudaarch.Capability]map[string]int{}
	names := map[cudaarch.Capability][]string{}
	for _, d := range c.gpus() {
		cc, err := cudaarch.ParseCapability(d.Capability)
		if err != nil {
			continue
		}
		if _, ok := index[cc]; !ok {
			index[cc] = len(out)
			out = append(out, gpuGroup{cc: cc})
			counts[cc] = map[string]int{}
		}
		name := d.Name
		if name == "" {
			name = "GPU"
		}
		if counts[cc][name] == 0 {
			names[cc] = append(names[cc], name)
		}
		counts[cc][name]++
	}
	for i := range out {
		cc := out[i].cc
		var parts []string
		for _, n := range names[cc] {
			parts = append(parts, fmt.Sprintf("%d × %s (compute capability %s)", counts[cc][n], n, cc))
		}
		out[i].summary = strings.Join(parts, ", ")
	}
	return out
}

// torchArchFixes names the torch wheel that has SASS for cc: the newest CUDA
// build of torch's newest release (kb torch_wheels) whose targets run on cc and whose CUDA the
// driver runs (when the driver is known), as a reinstall of the installed
// release where it is that release.
func (c *judgement) torchArchFixes(cc cudaarch.Capability) []finding.Fix {
	version := c.cuda.TorchWheels.Release
	if base, _, _ := strings.Cut(c.torch.Version, "+"); sameMinor(base, c.cuda.TorchWheels.Release) {
		version = base
	}
	driver := ""
	if c.f.GPU.Driver != nil {
		driver = c.f.GPU.Driver.Version
	}
	pick, pickDriverOK := "", false
	for _, cu := range c.torchWheelCUDAs() {
		if _, how := cudaarch.Best(parseTargets(c.cuda.TorchWheelArchs(cu)), cc); how != cudaarch.Native && how != cudaarch.Family {
			continue
		}
		driverOK := true
		if driver != "" {
			if _, floor, ok := c.cuda.DriverMinimum(cu); ok && kb.CompareDotted(driver, floor) < 0 {
				driverOK = false
			}
		}
		if pick == "" || (driverOK && !pickDriverOK) {
			pick, pickDriverOK = cu, driverOK
		}
		if driverOK {
			break
		}
	}
	if pick == "" {
		return []finding.Fix{{
			Title:    fmt.Sprintf("No torch %s wheel has code for compute capability %s: use an older torch release built for it, or build torch from source with TORCH_CUDA_ARCH_LIST=%s", c.cuda.TorchWheels.Release, cc, cc),
			Commands: []string{},
		}}
	}
	title := fmt.Sprintf("Install torch %s built for CUDA %s (its wheels carry %s)", version, pick, strings.Join(c.cuda.TorchWheelArchs(pick), " "))
	if !pickDriverOK {
		title += "; it needs a newer driver too"
	}
	fx := toFix(remedy.TorchInstall(c.remedy(), version, pick, true))
	if remedy.TorchBuildExists(version, pick) {
		fx.Title = title
	}
	return []finding.Fix{fx}
}

// sameMinor reports whether versions a and b share major.minor (2.11.1, 2.11.0).
func sameMinor(a, b string) bool {
	ma, _, _, okA := kb.MajorMinor(a)
	mb, _, _, okB := kb.MajorMinor(b)
	return okA && okB && ma == mb
}

// parseTargets parses sm_90 / compute_90 strings, leaving out what does not parse.
func parseTargets(ss []string) []cudaarch.Target {
	var out []cudaarch.Target
	for _, s := range ss {
		if tg, err := cudaarch.ParseTarget(s); err == nil {
			out = append(out, tg)
		}
	}
	return out
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, " ")
}
