// Package diagnose turns Facts into Findings with the knowledge base. It is
// pure: no I/O, the same facts always give the same findings, so a Facts file
// saved on one machine is judged the same anywhere.
package diagnose

import (
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/remedy"
	"github.com/fastpath-dev/fastpath/internal/render"
)

// check is one diagnosis rule.
type check func(c *judgement) []finding.Finding

// checks run in this order; the output is then sorted by severity, keeping
// this order within a severity (root causes before their consequences).
var checks = []check{
	checkPython,
	checkTorch,
	checkTorchLibraries,
	checkTorchArch,
	checkDriver,
	checkCompilerPresence,
	checkCUDAHome,
	checkNVCCVersion,
	checkNVCCTarget,
	checkHostCompiler,
	checkPythonHeaders,
	checkNinja,
	checkPip,
	checkGPUBusy,
	checkExtensionArch, checkExtensionABI, checkExtensionCUDA, checkExtensionLive,
	checkModels,
	checkLive,
}

// Run returns the findings for f, most severe first.
func Run(f *facts.Facts) []finding.Finding {
	return RunWithModels(f, nil)
}

// RunWithModels also judges the models' layer verdicts (doctor --model).
// It completes f first (Complete): the KB's judgements in f are today's.
func RunWithModels(f *facts.Facts, models []*model.Report) []finding.Finding {
	Complete(f)
	c := newJudgement(f)
	c.models = models
	out := []finding.Finding{}
	for _, ch := range checks {
		out = append(out, ch(c)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity.Rank() < out[j].Severity.Rank() })
	for i := range out {
		if out[i].Evidence == nil {
			out[i].Evidence = []string{}
		}
		if out[i].Fixes == nil {
			out[i].Fixes = []finding.Fix{}
		}
	}
	return out
}

// judgement holds what several checks derive from the facts (named so it
// does not shadow the standard library's context package).
type judgement struct {
	f     *facts.Facts
	cuda  *kb.CUDAData
	py    *facts.PythonEnv
	torch *facts.Torch
	// torchCUDA is torch's CUDA "M.m" ("" for CPU/ROCm builds or no torch).
	torchCUDA              string
	torchMajor, torchMinor int
	// builds is true when extension builds matter: a CUDA torch is installed.
	builds bool
	// models are the verdicts of the models given with --model.
	models []*model.Report

	// remedyCtx and loadedExts are computed once, on first use: the
	// checks ask for them once per finding or per extension, and each
	// walks every distribution or extension (5,000 and 4,096 at scale).
	remedyCtx  *remedy.Context
	loadedExts []facts.Extension
	loadedDone bool
}

func newJudgement(f *facts.Facts) *judgement {
	c := &judgement{f: f, cuda: kb.CUDA(), py: f.Python.Selected, torch: f.Torch}
	if c.torch != nil && c.torch.CUDA != "" {
		if mm, maj, min, ok := kb.MajorMinor(c.torch.CUDA); ok {
			c.torchCUDA, c.torchMajor, c.torchMinor = mm, maj, min
			c.builds = true
		}
	}
	return c
}

// buildSeverity is the severity of something that blocks extension builds:
// an error where a CUDA torch is installed (kernel packages must build
// against it), a warning elsewhere.
func (c *judgement) buildSeverity() finding.Severity {
	if c.builds {
		return finding.Error
	}
	return finding.Warning
}

// python is the interpreter to name in commands ("python3" when unknown).
func (c *judgement) python() string {
	if c.py != nil && c.py.Interpreter != "" {
		return c.py.Interpreter
	}
	return "python3"
}

// pipInstall is the install command for the selected environment: its own
// interpreter's pip, never a bare `pip`; uv's pip for environments uv made
// that have no pip of their own.
func (c *judgement) pipInstall(args ...string) string {
	r := c.remedy()
	return r.Pip(args...)
}

// remedy is the remedy Context of the facts: every command doctor's fixes
// give is built there.
func (c *judgement) remedy() remedy.Context {
	if c.remedyCtx == nil {
		r := remedy.FromFacts(c.f)
		c.remedyCtx = &r
	}
	r := *c.remedyCtx
	// Each caller gets its own slices, as FromFacts would give it.
	r.GPUs, r.PipArgs = slices.Clone(r.GPUs), slices.Clone(r.PipArgs)
	return r
}

// dist returns the selected environment's distribution called name.
func (c *judgement) dist(name string) *facts.Distribution {
	if c.py == nil {
		return nil
	}
	want := canonicalName(name)
	for i := range c.py.Distributions {
		if d := &c.py.Distributions[i]; !d.Shadowed && canonicalName(d.Name) == want {
			return d
		}
	}
	return nil
}

func canonicalName(n string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(n))
}

// sitePackages is the selected environment's own site-packages folder.
func (c *judgement) sitePackages() string {
	if c.py == nil {
		return ""
	}
	for _, p := range c.py.SitePath {
		if strings.HasPrefix(p, c.py.Prefix+"/") && (strings.HasSuffix(p, "/site-packages") || strings.HasSuffix(p, "/dist-packages")) {
			return p
		}
	}
	if len(c.py.SitePath) > 0 {
		return c.py.SitePath[0]
	}
	return ""
}

// gpus returns the devices with a known capability.
func (c *judgement) gpus() []facts.Device {
	var out []facts.Device
	for _, d := range c.f.GPU.Devices {
		if d.Capability != "" {
			out = append(out, d)
		}
	}
	return out
}

// compilerAt returns the compiler whose path or home is p.
func (c *judgement) compilerAt(nvccPath string) *facts.NVCC {
	for i := range c.f.CUDA.Compilers {
		n := &c.f.CUDA.Compilers[i]
		if n.Path == nvccPath || path.Join(n.Home, "bin", "nvcc") == nvccPath || slices.Contains(n.Paths, nvccPath) {
			return n
		}
	}
	return nil
}

// bestCompiler picks the compiler to recommend: torch's CUDA M.m first, then
// torch's major, then the newest.
func (c *judgement) bestCompiler() *facts.NVCC {
	var best *facts.NVCC
	score := func(n *facts.NVCC) int {
		mm, maj, _, ok := kb.MajorMinor(n.Version)
		switch {
		case !ok:
			return 0
		case c.torchCUDA != "" && mm == c.torchCUDA:
			return 3
		case c.torchCUDA != "" && maj == c.torchMajor:
			return 2
		}
		return 1
	}
	for i := range c.f.CUDA.Compilers {
		n := &c.f.CUDA.Compilers[i]
		if best == nil || score(n) > score(best) || (score(n) == score(best) && kb.CompareDotted(n.Version, best.Version) > 0) {
			best = n
		}
	}
	return best
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string { return remedy.Quote(s) }

// plural is render.Count: the one count-and-noun helper.
func plural(n int, one, many string) string { return render.Count(n, one, many) }
