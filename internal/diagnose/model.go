package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// checkModels turns each model's layer verdict into findings.
func checkModels(c *judgement) []finding.Finding {
	var out []finding.Finding
	for _, r := range c.models {
		if r.WillNotLoad != "" {
			out = append(out, finding.Finding{
				ID:       finding.ModelWillNotLoad,
				Severity: finding.Error,
				Title:    fmt.Sprintf("%s (%s) will not run in this environment", r.Model, r.ModelType),
				Detail:   r.WillNotLoad,
				Evidence: modelEvidence(r),
				Fixes:    modelFixes(c, r),
			})
		}
		if r.FallbackLayers > 0 {
			out = append(out, fallbackFinding(c, r))
		}
		if r.AttentionFallbackLayers > 0 && r.AttnImpl != nil {
			out = append(out, finding.Finding{
				ID:       finding.FastPathFallback,
				Severity: finding.Warning,
				Title:    fmt.Sprintf("%d of %d layers (attention) run %s attention, not %s", r.AttentionFallbackLayers, r.NumLayers, r.AttnImpl.Effective, r.AttnImpl.Name),
				Detail:   fmt.Sprintf("%s (%s): %s.", r.Model, r.ModelType, r.AttnImpl.Reason),
				Evidence: append(append([]string{}, r.AttnImpl.Evidence...), modelEvidence(r)...),
				Fixes:    []finding.Fix{},
			})
		}
		if !r.Judged {
			out = append(out, finding.Finding{
				ID:       finding.ModelNotJudged,
				Severity: finding.Info,
				Title:    fmt.Sprintf("%s (%s): %d layers not judged: fastpath cannot say which of them fall back", r.Model, r.ModelType, r.NumLayers),
				Detail:   r.NotJudged,
				Evidence: modelEvidence(r),
				Fixes:    []finding.Fix{},
			})
		}
		if len(r.CodeVsKB) > 0 {
			out = append(out, finding.Finding{
				ID:       finding.ModelCodeKBDisagree,
				Severity: finding.Info,
				Title:    fmt.Sprintf("%s (%s): the installed transformers %s and fastpath's knowledge base disagree on its kernels (the verdict follows the code)", r.Model, r.ModelType, orUnknown(r.Transformers)),
				Detail:   strings.Join(r.CodeVsKB, "; "),
				Evidence: modelEvidence(r),
				Fixes:    []finding.Fix{},
			})
		}
	}
	return out
}

// fallbackGroup is the functions that fall back for one reason.
type fallbackGroup struct {
	reason string
	fns    []string
}

func fallbackFinding(c *judgement, r *model.Report) finding.Finding {
	var kinds, withouts []string
	for _, k := range r.Kinds {
		if !k.Fast {
			kinds = append(kinds, k.Kind)
			withouts = append(withouts, k.Kind+": "+k.Without)
		}
	}
	var groups []fallbackGroup
	idx := map[string]int{}
	for _, k := range r.Kernels {
		if k.Resolves == "package" {
			continue
		}
		i, ok := idx[k.Reason]
		if !ok {
			i = len(groups)
			idx[k.Reason] = i
			groups = append(groups, fallbackGroup{reason: k.Reason})
		}
		groups[i].fns = append(groups[i].fns, k.Function)
	}
	var why []string
	for _, g := range groups {
		why = append(why, fmt.Sprintf("%s (%s)", g.reason, strings.Join(g.fns, ", ")))
	}
	if len(why) == 0 {
		why = append(why, "transformers has no kernel for these layers")
	}
	title := fmt.Sprintf("%d of %d layers (%s) will run the torch fallback: %s", r.FallbackLayers, r.NumLayers, strings.Join(kinds, ", "), strings.Join(why, "; "))
	detail := fmt.Sprintf("%s (%s): transformers %s resolves kernels %s. Without the kernels: %s.",
		r.Model, r.ModelType, orUnknown(r.Transformers), mechanismWords(r.Mechanism), strings.Join(withouts, "; "))
	if r.JudgedFrom == "transformers source" && r.Code != nil {
		detail += " Read statically from the installed transformers: " + r.Code.File + "."
	}
	if len(r.Slowdowns) > 0 {
		detail += " Published measurements: " + strings.Join(r.Slowdowns, "; ") + "."
	}
	// The severity follows the measured cost: an error where the fallback
	// dominates a layer (or its cost was never measured at these shapes:
	// the question asked with --model was "does this model run on its fast
	// path here?", and exit status 1 lets CI gate an image on it), a
	// warning where what is left costs a fraction of a layer.
	cost := fallbackCost(r)
	sev := finding.Error
	if cost.measured && cost.maxShare < dominates {
		sev = finding.Warning
	}
	if cost.words != "" {
		detail += " " + cost.words
	}
	return finding.Finding{
		ID:       finding.FastPathFallback,
		Severity: sev,
		Title:    title,
		Detail:   detail,
		Evidence: append(modelEvidence(r), cost.evidence...),
		Fixes:    modelFixes(c, r),
		Decisive: modelDecisive(r),
	}
}

// dominates is the share of a fast layer's time above which a fallback is
// said to dominate the layer (and fast-path-fallback is an error).
const dominates = 0.5

// measuredCost is what the missing functions were measured to cost.
type measuredCost struct {
	measured bool    // every missing function has a measurement here
	maxShare float64 // the largest added time as a share of a fast layer
	words    string
	evidence []string
}

// fallbackCost reads the knowledge base's measurements for the model's
// shapes: per missing function, what its fallback adds per forward, and as a
// share of the fast layers' time at the same length.
func fallbackCost(r *model.Report) measuredCost {
	var mc measuredCost
	missing := map[string]bool{}
	for _, k := range r.Kernels {
		if k.Resolves != "package" {
			missing[k.Function] = true
		}
	}
	if len(missing) == 0 {
		return mc
	}
	allMeasured := true
	var parts []string
	for _, kv := range r.Kinds {
		if kv.Fast {
			continue
		}
		m, ok := kb.Measurements().FallbackCostFor(r.CodeModelType(), r.NumLayers, kv.Kind, kv.Layers)
		if !ok {
			allMeasured = false
			continue
		}
		fns := append([]string{}, kv.Fallback...)
		if len(fns) == 0 {
			for f := range missing {
				fns = append(fns, f)
			}
			sort.Strings(fns)
		}
		for _, fn := range fns {
			found := false
			for _, fc := range m.Functions {
				if fc.Function != fn {
					continue
				}
				found = true
				if fc.Phase == "decode" {
					parts = append(parts, fmt.Sprintf("%s +%.3g ms per decode step", fn, fc.PerForwardMS))
					continue
				}
				share := 0.0
				if fast := m.LayerFastMS(fc.SeqLen); fast > 0 && m.KindLayers > 0 {
					share = fc.PerForwardMS / float64(m.KindLayers) / fast
					if share > mc.maxShare {
						mc.maxShare = share
					}
					parts = append(parts, fmt.Sprintf("%s +%.3g ms per forward at %d tokens (%.0f%% of a fast %s layer's %.3g ms)",
						fn, fc.PerForwardMS, fc.SeqLen, 100*share, kv.Kind, fast))
				} else {
					parts = append(parts, fmt.Sprintf("%s +%.3g ms per forward at %d tokens", fn, fc.PerForwardMS, fc.SeqLen))
				}
			}
			if !found {
				allMeasured = false
				parts = append(parts, fn+": not measured")
			}
		}
		mc.evidence = append(mc.evidence, fmt.Sprintf("measured on %s (torch %s, transformers %s, %s, batch %d, %s; %s, %s): %s",
			m.GPU, m.Torch, m.Transformers, m.DType, m.Batch, m.Model, m.Command, m.Date, strings.Join(parts, "; ")))
	}
	mc.measured = allMeasured && len(mc.evidence) > 0
	if len(mc.evidence) == 0 {
		return mc
	}
	verdict := "the fallback dominates these layers"
	if mc.measured && mc.maxShare < dominates {
		verdict = fmt.Sprintf("what is left to win is at most %.0f%% of a layer", 100*mc.maxShare)
	}
	mc.words = "Measured cost: " + strings.Join(parts, "; ") + ": " + verdict + "."
	return mc
}

func mechanismWords(m string) string {
	if m == "module-import" {
		return "when its modeling module is imported (up to 5.14: metadata and minimum-version checks)"
	}
	return "per function (5.15 on: Hub kernel if enabled, else the installed package, else torch)"
}

func modelEvidence(r *model.Report) []string {
	ev, _ := modelEvidenceDecisive(r)
	return ev
}

// modelDecisive indexes modelEvidence's lines that decide a fallback: the
// kernel packages that are not usable (a text report shows these by
// default; the functions that resolve to torch are in the title).
func modelDecisive(r *model.Report) []int {
	_, d := modelEvidenceDecisive(r)
	return d
}

func modelEvidenceDecisive(r *model.Report) (ev []string, decisive []int) {
	from := r.KindsFrom + "; "
	if r.KindsFrom == "" {
		from = "" // a family fastpath does not know: no field named the kinds
	}
	ev = []string{fmt.Sprintf("config: %s (%s%d layers: %s)", orUnknown(r.Source), from, r.NumLayers, model.FormatLayerKinds(r.LayerKinds, r.NumLayers))}
	for _, p := range r.Packages {
		switch {
		case p.Usable:
			ev = append(ev, fmt.Sprintf("%s: present (%s %s)", p.Name, p.Dist, p.Version))
		default:
			decisive = append(decisive, len(ev))
			ev = append(ev, fmt.Sprintf("%s: %s", p.Name, p.Problem))
		}
		for _, e := range p.Evidence {
			ev = append(ev, "  "+e)
		}
	}
	for _, k := range r.Kernels {
		e := fmt.Sprintf("%s (%s) -> %s", k.Function, k.Module, k.Resolves)
		if k.File != "" {
			e += fmt.Sprintf(" [%s:%d %s; without it: %s]", k.File, k.Line, k.Gate, k.Fallback)
		}
		ev = append(ev, e)
	}
	for _, k := range r.Kinds {
		for _, d := range k.Dispatch {
			ev = append(ev, fmt.Sprintf("%s layers: %s", k.Kind, d))
		}
		for _, cl := range k.Classes {
			ev = append(ev, fmt.Sprintf("%s layers build %s", k.Kind, cl))
		}
	}
	if r.JudgedFrom != "" {
		ev = append(ev, "judged from: "+r.JudgedFrom)
	}
	ev = append(ev, "Hub kernels: "+r.HubKernelsReason)
	return ev, decisive
}

// modelFixes: install (or reinstall) each package whose functions fall
// back; Hub kernels as the no-compiler alternative.
func modelFixes(c *judgement, r *model.Report) []finding.Fix {
	d := kb.Families()
	need := map[string]bool{}
	for _, k := range r.Kernels {
		if k.Resolves != "package" && c.torch != nil && (c.torch.CUDA != "" || c.torch.HIP != "") {
			need[k.Package] = true
		}
	}
	if r.AttnImpl != nil && !r.AttnImpl.OK && r.AttnImpl.Package != "" {
		need[r.AttnImpl.Package] = true
	}
	var names []string
	for n := range need {
		names = append(names, n)
	}
	sort.Strings(names)
	var fixes []finding.Fix
	var hubs []string
	for _, n := range names {
		p := d.Packages[n]
		title := "Install " + n
		args := []string{p.Install}
		var cmds []string
		if p.Native {
			title += " (it compiles against torch: pip needs --no-build-isolation, and a CUDA compiler unless a prebuilt wheel matches)"
			args = append(args, "--no-build-isolation")
			cmds = remedy.BuildImports(c.remedy(), p.Install)
		}
		fixes = append(fixes, finding.Fix{Title: title, Commands: append(cmds, c.pipInstall(args...))})
		if p.Hub != "" {
			hubs = append(hubs, p.Hub)
		}
	}
	if len(hubs) > 0 {
		w := d.Mechanism.KernelsWindows[len(d.Mechanism.KernelsWindows)-1]
		for _, kw := range d.Mechanism.KernelsWindows {
			if r.Transformers != "" && kb.CompareDotted(r.Transformers, kw.TransformersFrom) >= 0 {
				w = kw
			}
		}
		fixes = append(fixes, finding.Fix{
			Title:    fmt.Sprintf("Or use prebuilt Hugging Face Hub kernels (%s; no compiler, network once), loading the model with use_kernels=True", strings.Join(hubs, ", ")),
			Commands: []string{c.pipInstall(fmt.Sprintf("kernels>=%s,<%s", w.Min, w.Below))},
		})
	}
	if c.torch == nil || (c.torch.CUDA == "" && c.torch.HIP == "") {
		fixes = append(fixes, finding.Fix{Title: "Install a CUDA build of torch first: on a CPU-only torch every layer runs torch (see torch-cpu-only)", Commands: []string{}})
	}
	return fixes
}
