// Package model judges a model against an environment: for the layers
// internal/collect/modelread read from its config.json (and, where it could,
// from the installed transformers' modeling code), which run kernel
// packages and which fall back to torch, given the environment's facts and
// the knowledge base. It is pure: it reads nothing itself. Report is the
// value the renderers print (cli, report) and diagnose turns into findings.
package model

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/pep440"
)

// Report is the JSON of `fastpath model --json` and each entry of doctor's
// "models": DESIGN's {model_type, num_layers, layer_kinds, kernels,
// fallback_layers} plus how each was decided.
type Report struct {
	Model         string `json:"model"` // the argument as given
	Source        string `json:"source,omitempty"`
	ModelType     string `json:"model_type"`
	TextModelType string `json:"text_model_type,omitempty"`
	// TextConfig is where a wrapper keeps its language model
	// ("text_config", "thinker_config.text_config").
	TextConfig string `json:"text_config,omitempty"`
	// Family is the knowledge-base family the model is judged as (lfm2
	// for an lfm2_vl config).
	Family         string         `json:"family,omitempty"`
	NumLayers      int            `json:"num_layers"`
	LayerKinds     map[string]int `json:"layer_kinds"`
	KindsFrom      string         `json:"kinds_from,omitempty"`
	Known          bool           `json:"known"`
	Kernels        []Kernel       `json:"kernels"`
	FallbackLayers int            `json:"fallback_layers"`
	// Kinds is the verdict per kernel-dependent layer kind.
	Kinds []KindVerdict `json:"kinds"`
	// Packages is what was found for each kernel package involved.
	Packages []PackageStatus `json:"packages"`
	// Transformers is the selected environment's transformers version ("" if
	// absent) and Mechanism how it resolves kernels: "module-import" (up to
	// 5.14) or "per-function" (5.15 on).
	Transformers string `json:"transformers"`
	Mechanism    string `json:"mechanism"`
	// HubKernels says whether Hugging Face Hub kernels are a substitute
	// here (the `kernels` package in transformers' accepted window, not
	// disabled); they apply only to models loaded with use_kernels=True.
	HubKernels       bool     `json:"hub_kernels"`
	HubKernelsReason string   `json:"hub_kernels_reason"`
	AttnImpl         *AttnRe  `json:"attn_implementation,omitempty"`
	WillNotLoad      string   `json:"will_not_load,omitempty"`
	Slowdowns        []string `json:"published_slowdowns,omitempty"`
	Notes            []string `json:"notes,omitempty"`
	// Judged is true when every layer of the config was tied to a verdict;
	// JudgedFrom says by what: "transformers source" (the installed
	// modeling file, read statically) or "knowledge base". NotJudged says
	// why not, with what was read.
	Judged     bool   `json:"judged"`
	JudgedFrom string `json:"judged_from,omitempty"`
	NotJudged  string `json:"not_judged,omitempty"`
	// Code is the static reading of the installed transformers' modeling
	// file; CodeVsKB lists where it and the knowledge base disagree.
	Code     *modelread.CodeReading `json:"code,omitempty"`
	CodeVsKB []string               `json:"code_vs_kb,omitempty"`
	// AttentionFallbackLayers counts attention layers transformers silently
	// runs on a slower implementation than the config asks for (see
	// attn_implementation); they are not in FallbackLayers.
	AttentionFallbackLayers int `json:"attention_fallback_layers,omitempty"`
}

// Kernel is the verdict for one kernel function.
type Kernel struct {
	Function string   `json:"function"`
	Package  string   `json:"package"` // distribution name (causal-conv1d)
	Module   string   `json:"module"`  // where transformers imports it from
	Kinds    []string `json:"kinds"`   // layer kinds that call it
	// Resolves is what transformers will call: "package" or "torch".
	Resolves string `json:"resolves"`
	Reason   string `json:"reason"`
	Hub      string `json:"hub,omitempty"` // the Hub kernel that can stand in
	// File and Line are where the installed transformers binds it (from
	// the static reading; empty when judged from the knowledge base), Gate
	// how (modelread.CodeGate.How) and Fallback what runs without it.
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Gate     string `json:"gate,omitempty"`
	Fallback string `json:"fallback,omitempty"`
}

// KindVerdict is one layer kind's outcome.
type KindVerdict struct {
	Kind     string   `json:"kind"`
	Layers   int      `json:"layers"`
	Fast     bool     `json:"fast"`
	Fallback []string `json:"fallback_functions,omitempty"`
	Without  string   `json:"without"`
	// Classes and Dispatch (from the static reading): the layer classes of
	// this kind that call kernels, and where the code picks them by kind.
	Classes  []string `json:"classes,omitempty"`
	Dispatch []string `json:"dispatch,omitempty"`
}

// PackageStatus is one kernel package in the selected environment.
type PackageStatus struct {
	Name      string   `json:"name"`
	Import    string   `json:"import"`
	Installed bool     `json:"installed"`
	Dist      string   `json:"dist,omitempty"`
	Version   string   `json:"version,omitempty"`
	Location  string   `json:"location,omitempty"`
	Usable    bool     `json:"usable"`
	Problem   string   `json:"problem,omitempty"`
	Evidence  []string `json:"evidence,omitempty"`
}

// AttnRe is the config's attn_implementation and whether it can load.
type AttnRe struct {
	Name    string `json:"name"`
	Package string `json:"package,omitempty"`
	OK      bool   `json:"ok"`
	Reason  string `json:"reason,omitempty"`
	// Effective is what transformers runs instead when it silently
	// downgrades (OK stays true; Downgrade says so).
	Effective string `json:"effective,omitempty"`
	Downgrade bool   `json:"downgrade,omitempty"`
	// Evidence is the transformers file:line and GPU facts behind Reason.
	Evidence []string `json:"evidence,omitempty"`
}

// Analyze judges a parsed config against the facts of an environment from
// the knowledge base alone (no transformers source to read).
func Analyze(arg string, loc *modelread.Located, c *modelread.Config, f *facts.Facts) *Report {
	return AnalyzeWithCode(arg, loc, c, f, nil, "transformers' source was not read")
}

// AnalyzeWithCode judges a parsed config against the facts of an
// environment and what modelread read of the installed transformers'
// modeling file (nil: not read, noCode says why; modelread.ReadCode gives
// both). It reads nothing itself.
func AnalyzeWithCode(arg string, loc *modelread.Located, c *modelread.Config, f *facts.Facts, code *modelread.CodeReading, noCode string) *Report {
	d := kb.Families()
	r := &Report{Model: arg, ModelType: c.ModelType, TextModelType: c.TextModelType, TextConfig: c.TextConfig, Family: c.Family, NumLayers: c.NumLayers,
		LayerKinds: c.KindCounts(), KindsFrom: c.KindsFrom, Known: c.Known, Kernels: []Kernel{}, Kinds: []KindVerdict{},
		Packages: []PackageStatus{}, Notes: append([]string(nil), c.Notes...)}
	if loc != nil {
		r.Source = loc.Path
	}
	env := newEnvView(f)
	r.Transformers = env.transformers
	perFunction := true
	switch {
	case env.transformers == "":
		r.Mechanism = "per-function"
		r.Notes = append(r.Notes, "transformers is not installed in the selected environment: judged as transformers "+d.Mechanism.PerFunctionFrom+" and later would resolve kernels")
	case pep440.Less(env.transformers, d.Mechanism.PerFunctionFrom):
		r.Mechanism, perFunction = "module-import", false
	default:
		r.Mechanism = "per-function"
	}
	r.HubKernels, r.HubKernelsReason = env.hubKernels(d)

	pkgs := map[string]*PackageStatus{}
	status := func(name string, mamba2 bool) *PackageStatus {
		key := name
		if mamba2 {
			key += "/mamba2"
		}
		if s, ok := pkgs[key]; ok {
			return s
		}
		s := env.packageStatus(d, name, perFunction, mamba2)
		pkgs[key] = &s
		if !mamba2 || pkgs[name] == nil {
			r.Packages = append(r.Packages, s)
		}
		return &s
	}

	fam, known := d.Families[c.Family]
	known = known && c.Family != ""
	r.Code = code
	switch {
	case code != nil && code.Judged && judgeFromCode(r, c, code, env, d, perFunction, status):
		r.Judged, r.JudgedFrom = true, "transformers source"
		if known {
			r.CodeVsKB = compareWithKB(r, c, code, fam, d, perFunction)
			r.WillNotLoad = willNotLoad(fam, c, r, env)
		}
	case known && c.Kinds != nil:
		r.judgeFromKB(c, fam, d, env, perFunction, status)
		r.Judged, r.JudgedFrom = true, "knowledge base"
		switch {
		case code != nil:
			r.Notes = append(r.Notes, "the installed transformers' "+code.File+" could not be tied to this config's layers ("+code.Why+"): judged from fastpath's knowledge base")
		default:
			r.Notes = append(r.Notes, noCode+": judged from fastpath's knowledge base")
		}
	default:
		r.NotJudged = notJudgedWhy(c, code, noCode, known)
	}
	if r.FallbackLayers > 0 {
		for _, s := range d.Slowdowns {
			for _, fm := range s.Families {
				if fm == c.Family {
					r.Slowdowns = append(r.Slowdowns, s.Text+" ("+s.Source+")")
				}
			}
		}
	}
	if r.Judged && len(r.Kinds) == 0 {
		r.Notes = append(r.Notes, "no layer of this config is of a kernel-dependent kind")
	}
	r.AttnImpl = env.attnCheck(d, c, code, status)
	if r.AttnImpl != nil {
		if !r.AttnImpl.OK && r.WillNotLoad == "" {
			r.WillNotLoad = r.AttnImpl.Reason
		}
		if r.AttnImpl.Downgrade {
			r.AttentionFallbackLayers = attentionLayers(c)
		}
	}
	return r
}

// judgeFromKB is the verdict from the knowledge base's family entry.
func (r *Report) judgeFromKB(c *modelread.Config, fam kb.Family, d *kb.FamiliesData, env *envView, perFunction bool, status func(string, bool) *PackageStatus) {
	counts := c.KindCounts()
	byFunc := map[string]*Kernel{}
	var kinds []string
	for k := range fam.Kinds {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		n := counts[kind]
		if n == 0 {
			continue
		}
		kk := fam.Kinds[kind]
		fns := d.Functions(kk, perFunction)
		kv := KindVerdict{Kind: kind, Layers: n, Fast: len(fns) > 0, Without: kk.Without}
		mamba2 := containsSet(kk.Sets, "mamba2")
		for _, fn := range fns {
			kern, ok := byFunc[fn.Name]
			if !ok {
				p := d.Packages[fn.Package]
				s := status(fn.Package, mamba2)
				kern = &Kernel{Function: fn.Name, Package: fn.Package, Module: fn.Module, Hub: p.Hub}
				kern.Resolves, kern.Reason = env.resolve(s, c)
				byFunc[fn.Name] = kern
				r.Kernels = append(r.Kernels, *kern)
			}
			kern.Kinds = append(kern.Kinds, kind)
			if kern.Resolves != "package" {
				kv.Fast = false
				kv.Fallback = append(kv.Fallback, fn.Name)
			}
		}
		if !kv.Fast {
			r.FallbackLayers += n
		}
		r.Kinds = append(r.Kinds, kv)
	}
	for i := range r.Kernels {
		r.Kernels[i].Kinds = byFunc[r.Kernels[i].Function].Kinds
	}
	r.WillNotLoad = willNotLoad(fam, c, r, env)
}

func containsSet(sets []string, s string) bool {
	for _, x := range sets {
		if x == s {
			return true
		}
	}
	return false
}

// willNotLoad: jamba and zamba raise in older transformers when their mamba
// kernels are missing and use_mamba_kernels is not False.
func willNotLoad(fam kb.Family, c *modelread.Config, r *Report, env *envView) string {
	if fam.RaisesBefore == "" || r.FallbackLayers == 0 || !env.cuda {
		return ""
	}
	if c.UseMambaKernels != nil && !*c.UseMambaKernels {
		return ""
	}
	if env.transformers != "" && !pep440.Less(env.transformers, fam.RaisesBefore) {
		return ""
	}
	if env.transformers == "" {
		return ""
	}
	var missing []string
	for _, k := range r.Kernels {
		if k.Resolves != "package" {
			missing = append(missing, k.Function)
		}
	}
	return fmt.Sprintf("transformers %s raises %s: %s resolve to no kernel (%s); set use_mamba_kernels=false in config.json to run the slow torch path instead",
		env.transformers, fam.Raises, strings.Join(missing, ", "), fam.RaisesChecked)
}

// envView is what the verdict needs from the facts.
type envView struct {
	f            *facts.Facts
	dists        map[string]facts.Distribution // by normalized name
	transformers string
	cuda         bool   // torch with CUDA (or ROCm) support
	noCUDAWhy    string // why every layer runs torch
	gpus         []cudaarch.Capability
	// readsUseMambaKernels: the modeling file read tests use_mamba_kernels.
	readsUseMambaKernels bool
}

func newEnvView(f *facts.Facts) *envView {
	e := &envView{f: f, dists: map[string]facts.Distribution{}}
	if f.Python.Selected != nil {
		for _, d := range f.Python.Selected.Distributions {
			n := normalize(d.Name)
			if _, seen := e.dists[n]; seen || d.Shadowed {
				continue // the first on sys.path is the one Python imports
			}
			e.dists[n] = d
		}
	}
	if t, ok := e.dists["transformers"]; ok {
		e.transformers = t.Version
	}
	switch {
	case f.Python.Selected == nil:
		e.noCUDAWhy = "no Python environment was found"
	case f.Torch == nil:
		e.noCUDAWhy = "torch is not installed"
	case f.Torch.CUDA == "" && f.Torch.HIP == "":
		e.noCUDAWhy = fmt.Sprintf("torch %s is a CPU-only build (torch.cuda.is_available() is False)", f.Torch.Version)
	default:
		e.cuda = true
	}
	seen := map[cudaarch.Capability]bool{}
	for _, d := range f.GPU.Devices {
		if cc, err := cudaarch.ParseCapability(d.Capability); err == nil && !seen[cc] {
			seen[cc] = true
			e.gpus = append(e.gpus, cc)
		}
	}
	return e
}

// normalize is PEP 503 name normalisation.
func normalize(name string) string {
	name = strings.ToLower(name)
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '.' {
			return '-'
		}
		return r
	}, name)
}

func (e *envView) env(name string) (string, bool) {
	for _, v := range e.f.Env {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// hubKernels: is `kernels` installed within the window this transformers
// accepts, and not disabled with USE_HUB_KERNELS?
func (e *envView) hubKernels(d *kb.FamiliesData) (bool, string) {
	k, ok := e.dists["kernels"]
	if !ok {
		return false, "the `kernels` package is not installed"
	}
	if v, ok := e.env(d.Mechanism.HubDisableEnv); ok {
		switch strings.ToUpper(v) {
		case "1", "ON", "YES", "TRUE":
		default:
			return false, fmt.Sprintf("%s=%s disables Hub kernels", d.Mechanism.HubDisableEnv, v)
		}
	}
	var w *kb.KernelsWindow
	for i := range d.Mechanism.KernelsWindows {
		kw := &d.Mechanism.KernelsWindows[i]
		if e.transformers != "" && !pep440.Less(e.transformers, kw.TransformersFrom) {
			w = kw
		}
	}
	if w == nil {
		return true, fmt.Sprintf("kernels %s is installed (the version window of transformers %s is not in fastpath's knowledge base)", k.Version, orNone(e.transformers))
	}
	if pep440.Less(k.Version, w.Min) || !pep440.Less(k.Version, w.Below) {
		return false, fmt.Sprintf("kernels %s is outside the window transformers %s accepts (>= %s, < %s; checked against %s)", k.Version, e.transformers, w.Min, w.Below, w.Checked)
	}
	return true, fmt.Sprintf("kernels %s is within transformers %s's window (>= %s, < %s): load the model with use_kernels=True to use Hub kernels", k.Version, e.transformers, w.Min, w.Below)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// packageStatus decides whether a kernel package is installed, at a version
// transformers accepts, and loadable as far as static checks tell.
func (e *envView) packageStatus(d *kb.FamiliesData, name string, perFunction, mamba2 bool) PackageStatus {
	p := d.Packages[name]
	s := PackageStatus{Name: name, Import: p.Import}
	var dist facts.Distribution
	for _, dn := range p.Dists {
		if x, ok := e.dists[normalize(dn)]; ok {
			dist, s.Installed = x, true
			break
		}
	}
	if !s.Installed {
		s.Problem = name + " is not installed"
		return s
	}
	s.Dist, s.Version, s.Location = dist.Name, dist.Version, dist.Location
	s.Evidence = append(s.Evidence, fmt.Sprintf("%s %s in %s", dist.Name, dist.Version, dist.Location))
	min := p.MinVersion
	if !perFunction {
		if p.LegacyMinVersion != "" {
			min = p.LegacyMinVersion
		}
		if mamba2 && p.LegacyMinVersionMamba2 != "" {
			min = p.LegacyMinVersionMamba2
		}
	}
	if min != "" && pep440.Less(dist.Version, min) {
		s.Problem = fmt.Sprintf("%s %s is older than the %s transformers accepts", name, dist.Version, min)
		return s
	}
	// Loadable: every extension of the distribution must have code for
	// every GPU and resolve its torch symbols; otherwise importing the
	// package fails and transformers silently takes the torch path.
	for _, x := range e.f.Extensions {
		if normalize(x.Dist) != normalize(dist.Name) {
			continue
		}
		rel := path.Base(x.Path)
		if x.MissingCount > 0 {
			s.Problem = fmt.Sprintf("%s's extension %s needs %d symbols the installed torch lacks (built for another torch)", name, rel, x.MissingCount)
			s.Evidence = append(s.Evidence, x.Path+": missing "+strings.Join(x.MissingSymbols, ", "))
			return s
		}
		if x.CUDARuntime != "" && x.CUDARuntimeFound == "" {
			s.Problem = fmt.Sprintf("%s's extension %s needs %s, which is nowhere to be found", name, rel, x.CUDARuntime)
			s.Evidence = append(s.Evidence, x.Path+": DT_NEEDED "+x.CUDARuntime)
			return s
		}
		if len(x.SASS)+len(x.PTX) == 0 {
			continue
		}
		var targets []cudaarch.Target
		for _, t := range append(append([]string{}, x.SASS...), x.PTX...) {
			if tt, err := cudaarch.ParseTarget(t); err == nil {
				targets = append(targets, tt)
			}
		}
		for _, cc := range e.gpus {
			if _, compat := cudaarch.Best(targets, cc); compat == cudaarch.None {
				s.Problem = fmt.Sprintf("%s's extension %s has no code for the GPU (compute capability %s): %s", name, rel, cc, describeTargets(x))
				s.Evidence = append(s.Evidence, fmt.Sprintf("%s: %s", x.Path, describeTargets(x)))
				return s
			}
		}
		s.Evidence = append(s.Evidence, fmt.Sprintf("%s: %s", x.Path, describeTargets(x)))
	}
	s.Usable = true
	return s
}

func describeTargets(x facts.Extension) string {
	var parts []string
	if len(x.SASS) > 0 {
		parts = append(parts, "SASS "+strings.Join(x.SASS, ", "))
	}
	if len(x.PTX) > 0 {
		parts = append(parts, "PTX "+strings.Join(x.PTX, ", "))
	}
	if len(parts) == 0 {
		return "no CUDA code"
	}
	return strings.Join(parts, "; ")
}

// resolve says what transformers calls for a function of package s.
func (e *envView) resolve(s *PackageStatus, c *modelread.Config) (string, string) {
	if !e.cuda {
		return "torch", e.noCUDAWhy
	}
	if c.UseMambaKernels != nil && !*c.UseMambaKernels && (c.Family == "nemotron_h" || c.Family == "jamba" || c.Family == "zamba" || e.readsUseMambaKernels) {
		return "torch", "config.json sets use_mamba_kernels=false"
	}
	if !s.Usable {
		return "torch", s.Problem
	}
	return "package", fmt.Sprintf("%s %s", s.Dist, s.Version)
}

func (e *envView) attnImpl(d *kb.FamiliesData, name string, status func(string, bool) *PackageStatus) *AttnRe {
	req, ok := d.AttnImpls[name]
	if !ok {
		return &AttnRe{Name: name, OK: true, Reason: "needs no kernel package"}
	}
	a := &AttnRe{Name: name, Package: req.Package}
	s := status(req.Package, false)
	switch {
	case !e.cuda:
		a.Reason = fmt.Sprintf("attn_implementation=%s: %s, so %s cannot run", name, e.noCUDAWhy, req.Package)
	case s.Usable:
		a.OK, a.Reason = true, fmt.Sprintf("%s %s", s.Dist, s.Version)
	default:
		a.Reason = fmt.Sprintf("attn_implementation=%s: %s; %s", name, s.Problem, req.Without)
		if hub, why := e.hubKernels(d); hub {
			a.OK, a.Reason = true, fmt.Sprintf("%s; the Hub kernel %s stands in (%s)", s.Problem, req.Hub, why)
		}
	}
	return a
}
