package diagnose

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// checkLive compares the static reading with what the interpreter answered
// (`doctor --live`): every place they differ is a finding, because one of
// the two is wrong, and a wrong static reading is a fastpath bug to fix.
func checkLive(c *judgement) []finding.Finding {
	lf := c.f.Live
	if lf == nil || lf.Error != "" || lf.Probe == 0 {
		return nil
	}
	var out []finding.Finding
	add := func(title, detail string, evidence ...string) {
		out = append(out, finding.Finding{ID: finding.StaticLiveDisagree, Severity: finding.Warning, Title: title,
			Detail:   detail + " One of the two readings is wrong: trust the live one, and report the static one as a fastpath bug.",
			Evidence: evidence})
	}
	py := c.python()
	lt := lf.Torch
	switch {
	case c.torch == nil && lt.OK:
		add("torch imports, but the static scan found none",
			fmt.Sprintf("The static scan found no torch in the selected environment, but %s imports torch %s.", py, lt.Version),
			"live: torch "+lt.Version+" from "+lt.File)
	case c.torch != nil && !lt.OK && len(c.torch.MissingLibraries) == 0: // missing libraries: torch-libraries-missing said so
		add("torch is installed but does not import",
			fmt.Sprintf("The static scan found torch %s at %s, but importing it in %s fails: %s", c.torch.Version, c.torch.Location, py, lt.Error),
			"static: torch "+c.torch.Version+" at "+c.torch.Location, "live: "+lt.Error)
	case c.torch != nil && lt.OK:
		liveTorchChecks(c, lf, add)
	}
	livePackageChecks(c, lf, add)
	liveModelChecks(c, lf, add)
	return out
}

type addFunc func(title, detail string, evidence ...string)

func liveTorchChecks(c *judgement, lf *facts.LiveFacts, add addFunc) {
	lt, t := lf.Torch, c.torch
	if lt.Version != t.Version {
		add("torch's version differs", fmt.Sprintf("The static scan read torch %s; the interpreter imports torch %s.", t.Version, lt.Version),
			"static: "+t.Version+" at "+t.Location, "live: "+lt.Version+" from "+lt.File)
	}
	if lt.CUDA != "" || t.CUDA != "" {
		smm, _, _, sok := kb.MajorMinor(t.CUDA)
		lmm, _, _, lok := kb.MajorMinor(lt.CUDA)
		if sok != lok || smm != lmm {
			add("torch's CUDA version differs", fmt.Sprintf("The static scan read torch built for CUDA %q; torch.version.cuda is %q.", t.CUDA, lt.CUDA),
				"static: cuda "+orDashLive(t.CUDA)+" (from "+orDashLive(t.BuildFrom)+")", "live: torch.version.cuda "+orDashLive(lt.CUDA))
		}
	}
	if len(t.Archs) > 0 && len(lt.ArchList) > 0 {
		var sass, ptx []string
		for _, a := range lt.ArchList {
			if strings.HasPrefix(a, "compute_") {
				ptx = append(ptx, a)
			} else {
				sass = append(sass, a)
			}
		}
		staticPTX := make([]string, 0, len(t.PTX))
		for _, p := range t.PTX {
			staticPTX = append(staticPTX, "compute_"+strings.TrimPrefix(strings.TrimPrefix(p, "compute_"), "sm_"))
		}
		if !sameSet(sass, t.Archs) || (len(ptx) > 0 && !sameSet(ptx, staticPTX)) {
			add("torch's GPU targets differ", "The static reading of torch's fatbins does not match torch.cuda.get_arch_list().",
				"static: "+strings.Join(append(append([]string{}, t.Archs...), staticPTX...), " ")+" (from "+strings.Join(t.ArchLibs, ", ")+")",
				"live: torch.cuda.get_arch_list() "+strings.Join(lt.ArchList, " "))
		}
	}
	if t.CXX11ABI != nil && lt.CXX11ABI != nil && *t.CXX11ABI != *lt.CXX11ABI {
		add("torch's C++ ABI differs", fmt.Sprintf("The static scan read _GLIBCXX_USE_CXX11_ABI=%v; torch.compiled_with_cxx11_abi() is %v.", *t.CXX11ABI, *lt.CXX11ABI),
			"static: "+t.CXX11ABIFrom, fmt.Sprintf("live: torch.compiled_with_cxx11_abi() %v", *lt.CXX11ABI))
	}
	// GPUs: a CUDA torch with GPUs on the machine should see them.
	gpus := c.gpus()
	if t.CUDA != "" && len(gpus) > 0 && !c.f.GPU.Overridden {
		if !lt.CUDAAvailable {
			ev := []string{fmt.Sprintf("static: %s", plural(len(gpus), "GPU", "GPUs")), "live: torch.cuda.is_available() False"}
			if lt.CUDAError != "" {
				ev = append(ev, "live: "+lt.CUDAError)
			}
			add("torch cannot use the GPUs", "The machine has GPUs and torch is a CUDA build, but torch.cuda.is_available() is False (a driver too old for its CUDA, CUDA_VISIBLE_DEVICES, or no device access).", ev...)
		} else {
			var staticCaps, liveCaps []string
			for _, d := range gpus {
				staticCaps = append(staticCaps, d.Capability)
			}
			for _, d := range lf.Torch.Devices {
				liveCaps = append(liveCaps, d.Capability)
			}
			// CUDA_VISIBLE_DEVICES may hide some: compare capabilities seen, not counts.
			if len(liveCaps) > 0 && !subset(liveCaps, staticCaps) {
				add("GPU compute capabilities differ", "torch reports a compute capability the static reading of the GPUs does not have.",
					"static: "+strings.Join(staticCaps, " "), "live: "+strings.Join(liveCaps, " "))
			}
		}
	}
}

func livePackageChecks(c *judgement, lf *facts.LiveFacts, add addFunc) {
	d := kb.Families()
	for _, p := range lf.Packages {
		kp, known := d.Packages[p.Name]
		if !known {
			continue
		}
		var dist *facts.Distribution
		for _, n := range kp.Dists {
			if dist = c.dist(n); dist != nil {
				break
			}
		}
		switch {
		case dist != nil && !p.OK:
			add(fmt.Sprintf("%s is installed but does not import", p.Name),
				fmt.Sprintf("The static scan found %s %s, but `import %s` in %s raises: %s", dist.Name, dist.Version, p.Import, c.python(), p.Error),
				"static: "+dist.Name+" "+dist.Version+" at "+dist.MetadataDir, "live: import "+p.Import+": "+p.Error)
		case dist == nil && p.OK:
			add(fmt.Sprintf("%s imports, but the static scan found no distribution", p.Name),
				fmt.Sprintf("No distribution of %s (%s) was found in the selected environment, but `import %s` succeeds.", p.Name, strings.Join(kp.Dists, ", "), p.Import),
				"live: import "+p.Import+" from "+p.File)
		}
	}
}

func liveModelChecks(c *judgement, lf *facts.LiveFacts, add addFunc) {
	for _, r := range c.models {
		lm, ok := lf.Models[r.CodeModelType()]
		if !ok || lm.Error != "" {
			continue
		}
		for _, k := range r.Kernels {
			fn, ok := lm.Functions[k.Function]
			if !ok || fn.Resolves == k.Resolves {
				continue
			}
			detail := fmt.Sprintf("fastpath predicted that transformers %s resolves %s for %s to %s (%s); the installed transformers resolves it to %s (%s).",
				orDashLive(r.Transformers), k.Function, r.ModelType, k.Resolves, k.Reason, fn.Resolves, fn.Module)
			if k.Resolves == "package" && r.HubKernels {
				detail += " The prediction counted a Hub kernel, which the probe does not load."
			}
			add(fmt.Sprintf("%s resolves to %s, not %s", k.Function, fn.Resolves, k.Resolves), detail,
				"static: "+k.Function+" -> "+k.Resolves+": "+k.Reason, "live: "+k.Function+" -> "+fn.Resolves+" ("+fn.Module+", via "+fn.Via+")")
		}
	}
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	sort.Strings(x)
	sort.Strings(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

func orDashLive(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
