package model

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// kbPackageFor maps an import path transformers names (causal_conv1d,
// fla.ops.kda, mamba_ssm) to the knowledge base's package key.
func kbPackageFor(d *kb.FamiliesData, imp string) string {
	root, _, _ := strings.Cut(imp, ".")
	var names []string
	for n := range d.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if d.Packages[n].Import == root {
			return n
		}
	}
	return ""
}

func isMamba2Function(d *kb.FamiliesData, fn string) bool {
	for _, f := range d.FunctionSets["mamba2"] {
		if f.Name == fn && (fn == "mamba_chunk_scan_combined" || fn == "mamba_split_conv1d_scan_combined") {
			return true
		}
	}
	return false
}

// judgeFromCode fills r's kernels and kind verdicts from the static reading.
// It returns false (and leaves r alone) when a gate names a package the
// knowledge base cannot check for.
func judgeFromCode(r *Report, c *modelread.Config, code *modelread.CodeReading, env *envView, d *kb.FamiliesData, perFunction bool, status func(string, bool) *PackageStatus) bool {
	first := map[string]modelread.CodeGate{} // by function: the first package gate
	for _, g := range code.Gates {
		if g.How == "hub-only" {
			continue
		}
		if _, ok := first[g.Function]; !ok {
			first[g.Function] = g
		}
	}
	for _, ck := range code.Kinds {
		for _, fn := range ck.Functions {
			if kbPackageFor(d, first[fn].Import) == "" {
				code.Judged = false
				code.Why = fmt.Sprintf("%s:%d binds %s from %q, a package fastpath cannot check for", path.Base(code.File), first[fn].Line, fn, first[fn].Import)
				return false
			}
		}
	}
	env.readsUseMambaKernels = code.UseMambaKernels
	counts := c.KindCounts()
	byFunc := map[string]*Kernel{}
	var order []string
	base := path.Base(code.File)
	for _, ck := range code.Kinds {
		n := counts[ck.Kind]
		if n == 0 || len(ck.Functions) == 0 {
			continue
		}
		kv := KindVerdict{Kind: ck.Kind, Layers: n, Fast: true, Classes: ck.Classes, Dispatch: ck.Dispatch}
		var withouts []string
		for _, fn := range ck.Functions {
			g := first[fn]
			kern, ok := byFunc[fn]
			if !ok {
				pkg := kbPackageFor(d, g.Import)
				mamba2 := strings.Contains(g.Condition, "mamba_2") || (!perFunction && isMamba2Function(d, fn))
				s := status(pkg, mamba2)
				kern = &Kernel{Function: fn, Package: pkg, Module: g.Import, Hub: d.Packages[pkg].Hub,
					File: code.File, Line: g.Line, Gate: g.How, Fallback: g.Fallback}
				kern.Resolves, kern.Reason = env.resolve(s, c)
				byFunc[fn] = kern
				order = append(order, fn)
			}
			kern.Kinds = append(kern.Kinds, ck.Kind)
			if kern.Resolves != "package" {
				kv.Fast = false
				kv.Fallback = append(kv.Fallback, fn)
			}
			w := g.Fallback
			if w == "None" {
				w = fn + " unset: the layer's torch path"
			}
			if s := fmt.Sprintf("%s (%s:%d)", w, base, g.Line); !slices.Contains(withouts, s) {
				withouts = append(withouts, s)
			}
		}
		if len(code.FastPathAll) > 0 {
			withouts = append(withouts, fmt.Sprintf("all-or-nothing: is_fast_path_available = all(...) at %s:%d", base, code.FastPathLine))
		}
		kv.Without = "torch: " + strings.Join(withouts, "; ")
		if !kv.Fast {
			r.FallbackLayers += n
		}
		r.Kinds = append(r.Kinds, kv)
	}
	for _, fn := range order {
		r.Kernels = append(r.Kernels, *byFunc[fn])
	}
	return true
}

// compareWithKB lists where the static reading and the knowledge base's
// family entry disagree, each with the transformers file and line.
func compareWithKB(r *Report, c *modelread.Config, code *modelread.CodeReading, fam kb.Family, d *kb.FamiliesData, perFunction bool) []string {
	var out []string
	base := path.Base(code.File)
	lineOf := map[string]int{}
	for _, g := range code.Gates {
		if _, ok := lineOf[g.Function]; !ok && g.How != "hub-only" {
			lineOf[g.Function] = g.Line
		}
	}
	counts := c.KindCounts()
	codeKinds := map[string]modelread.CodeKind{}
	for _, ck := range code.Kinds {
		codeKinds[ck.Kind] = ck
	}
	var kinds []string
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		kbFns := map[string]bool{}
		if kk, ok := fam.Kinds[k]; ok {
			for _, f := range d.Functions(kk, perFunction) {
				kbFns[f.Name] = true
			}
		}
		codeFns := map[string]bool{}
		for _, f := range codeKinds[k].Functions {
			codeFns[f] = true
		}
		var extra, missing []string
		for f := range codeFns {
			if !kbFns[f] {
				extra = append(extra, fmt.Sprintf("%s (%s:%d)", f, base, lineOf[f]))
			}
		}
		for f := range kbFns {
			if !codeFns[f] {
				missing = append(missing, f)
			}
		}
		sort.Strings(extra)
		sort.Strings(missing)
		if len(extra) > 0 {
			out = append(out, fmt.Sprintf("%s layers: the installed transformers binds %s, which the knowledge base does not list", k, strings.Join(extra, ", ")))
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("%s layers: the knowledge base lists %s, which %s does not bind for them (read: %s)", k, strings.Join(missing, ", "), base, code.File))
		}
	}
	return out
}

// notJudgedWhy says why no verdict could be given, and what was read.
func notJudgedWhy(c *modelread.Config, code *modelread.CodeReading, noCode string, known bool) string {
	var why string
	switch {
	case code != nil:
		why = fmt.Sprintf("%s (read %s: %d kernel gates", code.Why, code.File, len(code.Gates))
		if fns := modelread.GateFunctions(code.Gates); fns != "" {
			why += ": " + fns
		}
		why += ")"
	default:
		why = noCode
	}
	if !known {
		why += fmt.Sprintf("; model_type %q is not in fastpath's knowledge base either", c.ModelType)
	} else if c.Kinds == nil {
		why += "; the knowledge base cannot count this config's layer kinds either"
	}
	return "cannot judge: " + why
}

// attnCheck judges the config's attn_implementation against the installed
// packages, the GPUs and (when read) the model's own _supports_* flags.
// transformers 5.x, modeling_utils.PreTrainedModel: an explicit
// flash_attention_N raises (ImportError) when flash-attn is missing and no
// Hub kernel can stand in, and (ValueError) when the model class does not
// set _supports_flash_attn; an explicit sdpa or flex_attention raises when
// the class does not support it; with none asked for, sdpa is tried and
// silently replaced by eager when the class lacks _supports_sdpa.
func (e *envView) attnCheck(d *kb.FamiliesData, c *modelread.Config, code *modelread.CodeReading, status func(string, bool) *PackageStatus) *AttnRe {
	name := c.AttnImplementation
	flag := func(k string) (modelread.AttnFlag, bool) {
		if code == nil {
			return modelread.AttnFlag{}, false
		}
		f, ok := code.Attention[k]
		return f, ok
	}
	supports := func(keys ...string) (bool, string, bool) {
		if code == nil {
			return false, "", false
		}
		for _, k := range keys {
			if f, ok := flag(k); ok {
				return f.Value == "True", f.Where, true
			}
		}
		return false, fmt.Sprintf("%s sets none of %s (PreTrainedModel's default is False)", path.Base(code.File), strings.Join(keys, ", ")), true
	}
	if name == "" {
		ok, where, read := supports("_supports_sdpa")
		if read && !ok {
			return &AttnRe{Name: "(default: sdpa)", OK: true, Effective: "eager", Downgrade: true,
				Reason:   "the config asks for no attention implementation; transformers tries sdpa and, as this model does not support it, silently runs eager attention",
				Evidence: []string{where}}
		}
		return nil
	}
	switch {
	case strings.HasPrefix(strings.TrimPrefix(name, "paged|"), "flash_attention_"):
		if ok, where, read := supports("_supports_flash_attn", "_supports_flash_attn_2"); read && !ok {
			return &AttnRe{Name: name, Reason: fmt.Sprintf("attn_implementation=%s: transformers raises ValueError, this model does not support Flash Attention (%s)", name, where), Evidence: []string{where}}
		}
		a := e.attnImpl(d, name, status)
		if !a.OK {
			return a
		}
		// The GPU: flash-attn 2 runs on sm_80 and newer, flash-attn 3 on
		// Hopper (sm_90) only; on others the kernel raises at the first
		// forward.
		req := d.AttnImpls[name]
		for _, cc := range e.gpus {
			major := cc.Major
			min, minErr := cudaarch.ParseCapability(req.MinCapability)
			switch {
			case req.MinCapability != "" && minErr == nil && cc.SM() < min.SM():
				a.OK, a.Reason = false, fmt.Sprintf("attn_implementation=%s: %s needs compute capability %s or newer; this GPU is %s (%s)", name, req.Package, req.MinCapability, cc, req.GPUSource)
			case len(req.OnlyCapabilityMajor) > 0 && !containsInt(req.OnlyCapabilityMajor, major):
				a.OK, a.Reason = false, fmt.Sprintf("attn_implementation=%s: %s runs on compute capability %s.x only (Hopper); this GPU is %s (%s)", name, req.Package, joinInts(req.OnlyCapabilityMajor), cc, req.GPUSource)
			}
			if !a.OK {
				a.Evidence = append(a.Evidence, "GPU compute capability "+cc.String())
				return a
			}
		}
		return a
	case name == "sdpa" || name == "flex_attention":
		key := map[string]string{"sdpa": "_supports_sdpa", "flex_attention": "_supports_flex_attn"}[name]
		if ok, where, read := supports(key); read && !ok {
			return &AttnRe{Name: name, Reason: fmt.Sprintf("attn_implementation=%s: transformers raises ValueError, this model does not support it (%s)", name, where), Evidence: []string{where}}
		}
		return &AttnRe{Name: name, OK: true, Reason: "needs no kernel package"}
	case name == "eager" || name == "paged|eager":
		return &AttnRe{Name: name, OK: true, Reason: "needs no kernel package"}
	case strings.Contains(name, "/"):
		// A Hub kernel repository: transformers loads it with `kernels`
		// and raises ImportError without a usable one.
		if ok, why := e.hubKernels(d); !ok {
			return &AttnRe{Name: name, Reason: fmt.Sprintf("attn_implementation=%s is a Hub kernel: transformers raises ImportError, as %s", name, why)}
		}
		return &AttnRe{Name: name, OK: true, Reason: "a Hub kernel, loaded with `kernels` (network on first use)"}
	}
	if _, known := d.AttnImpls[name]; known {
		return e.attnImpl(d, name, status)
	}
	return &AttnRe{Name: name, Reason: fmt.Sprintf("attn_implementation=%s: transformers raises ValueError (not an implementation it knows) unless the program registers it with AttentionInterface.register before loading", name)}
}

func containsInt(l []int, x int) bool {
	for _, v := range l {
		if v == x {
			return true
		}
	}
	return false
}

func joinInts(l []int) string {
	var s []string
	for _, v := range l {
		s = append(s, fmt.Sprint(v))
	}
	return strings.Join(s, ", ")
}

// attentionLayers counts the layers that run attention: kinds naming
// attention (not linear attention) and hybrid ones; every layer when the
// config lists no kinds.
func attentionLayers(c *modelread.Config) int {
	if c.Kinds == nil {
		return c.NumLayers
	}
	n := 0
	for _, k := range c.Kinds {
		k = modelread.NormalizeKind(k)
		if k == "hybrid" || (strings.Contains(k, "attention") && k != "linear_attention") {
			n++
		}
	}
	return n
}
