// Package plan turns a diagnosis into ordered, concrete fix steps: for each
// finding that has a fix, the ways out for this exact environment, each with
// the preconditions it checked against the facts and why it ranks where it
// does. Looking wheels up (indexes, find-links, GitHub releases) is the only
// I/O, and only when asked (not --offline).
package plan

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// Plan is `fastpath plan --json`'s answer.
type Plan struct {
	// Steps are best first: findings in doctor's order (root causes first),
	// each finding's options in rank order (viable ones before the rest).
	Steps []Step `json:"steps"`
	// Notes are what the planner could not do (a lookup that failed).
	Notes []string `json:"notes,omitempty"`
}

// Step is one way to fix one finding.
type Step struct {
	ID       string     `json:"id"`
	Title    string     `json:"title"`
	Finding  finding.ID `json:"finding"`
	Package  string     `json:"package,omitempty"` // the kernel package it installs
	Option   int        `json:"option"`            // 1 = the best for its finding
	Commands []string   `json:"commands"`
	// Preconditions are the checks made against the facts.
	Preconditions []Precondition `json:"preconditions"`
	RankReason    string         `json:"rank_reason"`
	// Verified: what the step downloads was seen to exist (an index
	// listing, a release asset answering HEAD), or it downloads nothing
	// that needs looking up; Verification says which, or why not.
	Verified     bool   `json:"verified"`
	Verification string `json:"verification,omitempty"`
	// Viable: no precondition is known to fail.
	Viable bool `json:"viable"`
	// Manual steps change something other than this environment (an
	// image), or need a value fastpath does not have (FillIn says which):
	// fix --apply shows them but never runs them.
	Manual bool   `json:"manual,omitempty"`
	FillIn string `json:"fill_in,omitempty"`
	// Changes, Cost and Undo come from the remedy the step was made of.
	Changes []string    `json:"changes,omitempty"`
	Cost    remedy.Cost `json:"cost"`
	Undo    []string    `json:"undo,omitempty"`
	// Effects: what the step leaves behind (the compiler's CUDA, torch's
	// CUDA, the distributions installed, the host g++), where known.
	Effects Effects `json:"effects"`
}

// Effects is what a step leaves behind.
type Effects struct {
	CompilerCUDA string   `json:"compiler_cuda,omitempty"`
	TorchCUDA    string   `json:"torch_cuda,omitempty"`
	Installs     []string `json:"installs,omitempty"`
	HostGCC      int      `json:"host_gcc,omitempty"`
}

// Precondition is one check a step made (remedy's, so that a remedy's
// checks are a step's without copying).
type Precondition = remedy.Check

// Options say where wheels may be looked up.
type Options struct {
	Offline   bool
	NoIndex   bool     // pip --no-index: only FindLinks
	IndexURLs []string // the first is pip's --index-url, the rest --extra-index-url
	FindLinks []string
	// GitHubAPI is the releases API base (default from data/wheels.json, or
	// $FASTPATH_GITHUB_API).
	GitHubAPI string
	Timeout   time.Duration // per request (default 10 s)
	Client    *http.Client
	// DiskFree reports free bytes of the file system holding a path; nil
	// when it cannot be known (not the live host).
	DiskFree func(path string) (int64, error)
	// Euid is the user fix --apply would run as; nil when unknown (not the
	// live host).
	Euid *int
}

// Input is what a plan is made from.
type Input struct {
	Facts    *facts.Facts
	Findings []finding.Finding
	Models   []*model.Report
}

// Build makes the plan.
func Build(ctx context.Context, in Input, o Options) *Plan {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.GitHubAPI == "" {
		o.GitHubAPI = os.Getenv("FASTPATH_GITHUB_API")
	}
	if o.GitHubAPI == "" {
		o.GitHubAPI = kb.Wheels().GitHubAPI
	}
	p := &planner{f: in.Facts, o: o, fetch: &fetcher{client: o.Client, timeout: o.Timeout}, ctx: ctx}
	p.torchCUDA, p.torchMajor = torchCUDA(in.Facts)
	out := &Plan{Steps: []Step{}}
	compilerFinding := false
	for _, fd := range in.Findings {
		if fd.ID == finding.NoCUDACompiler {
			compilerFinding = true
		}
	}
	p.compilerFinding = compilerFinding
	donePkgs := map[string]bool{}
	for _, fd := range in.Findings {
		var steps []Step
		switch fd.ID {
		case finding.NoCUDACompiler:
			steps = p.compilerSteps(fd.ID)
		case finding.TorchMissing, finding.TorchCPUOnly:
			steps = p.torchSteps(fd)
		case finding.FastPathFallback, finding.ModelWillNotLoad:
			pkgs := missingPackages(in.Models, fd.ID, in.Facts)
			gains := map[string]gain{}
			for _, pkg := range pkgs {
				gains[pkg] = measuredGain(in.Models, pkg)
			}
			// The package whose fallback costs most comes first; one never
			// measured counts as costly (its cost is unknown).
			sort.SliceStable(pkgs, func(i, j int) bool { return gains[pkgs[i]].rank() > gains[pkgs[j]].rank() })
			for _, pkg := range pkgs {
				if donePkgs[pkg] {
					continue
				}
				donePkgs[pkg] = true
				ps := rank(p.packageSteps(fd.ID, pkg))
				for i := range ps {
					ps[i].RankReason += "; " + gains[pkg].words(ps[i].Cost)
				}
				steps = append(steps, ps...)
			}
			if len(steps) == 0 {
				steps = fromFixes(p.rctx(), fd)
			}
			out.Steps = append(out.Steps, steps...)
			continue
		default:
			steps = fromFixes(p.rctx(), fd)
		}
		out.Steps = append(out.Steps, rank(steps)...)
	}
	out.Notes = p.notes
	return out
}

// gain is what installing a package wins per forward, from the knowledge
// base's measurements at the model's shapes.
type gain struct {
	ms      float64 // per forward at the reference length (prefill)
	seqLen  int
	where   string // the measurement's machine and command
	unknown bool
}

func (g gain) rank() float64 {
	if g.unknown {
		return math.Inf(1)
	}
	return g.ms
}

// words puts the gain against the step's effort.
func (g gain) words(c remedy.Cost) string {
	effort := "effort: unknown build time"
	switch {
	case c.Seconds > 0:
		effort = fmt.Sprintf("effort: about %d min", (c.Seconds+30)/60)
	case c.Seconds == 0 && c.Basis == "":
		effort = "effort: an install, no build"
	}
	if c.DiskMiB > 0 {
		effort += fmt.Sprintf(", %.1f GiB disk", float64(c.DiskMiB)/1024)
	}
	if g.unknown {
		return "gain: not measured at this model's shapes; " + effort
	}
	return fmt.Sprintf("gain: %.3g ms per forward at %d tokens (measured on %s); %s", g.ms, g.seqLen, g.where, effort)
}

// measuredGain sums, over the models, what the package's missing functions
// were measured to add per prefill of 2048 tokens.
func measuredGain(models []*model.Report, pkg string) gain {
	g := gain{unknown: true}
	for _, r := range models {
		for _, kv := range r.Kinds {
			m, ok := kb.Measurements().FallbackCostFor(r.CodeModelType(), r.NumLayers, kv.Kind, kv.Layers)
			if !ok {
				continue
			}
			for _, fc := range m.Functions {
				if fc.Package == pkg && fc.Phase == "prefill" && fc.SeqLen == 2048 {
					g.unknown = false
					g.ms += fc.PerForwardMS
					g.seqLen = fc.SeqLen
					g.where = m.GPU + ", " + m.Command
				}
			}
		}
	}
	return g
}

// planner carries what the steps share.
type planner struct {
	ctx             context.Context
	f               *facts.Facts
	o               Options
	fetch           *fetcher
	torchCUDA       string
	torchMajor      int
	compilerFinding bool
	notes           []string
}

func torchCUDA(f *facts.Facts) (string, int) {
	if f.Torch == nil || f.Torch.CUDA == "" {
		return "", 0
	}
	mm, major, _, ok := kb.MajorMinor(f.Torch.CUDA)
	if !ok {
		return "", 0
	}
	return mm, major
}

// rank numbers a finding's options: viable before not viable, manual ones
// after those that change this environment, otherwise in the given order
// (which is the order the options are weighed in).
func rank(steps []Step) []Step {
	for i := range steps {
		steps[i].Viable = true
		for _, pc := range steps[i].Preconditions {
			if !pc.OK && !pc.Unknown {
				steps[i].Viable = false
			}
		}
		if steps[i].Preconditions == nil {
			steps[i].Preconditions = []Precondition{}
		}
		if steps[i].Commands == nil {
			steps[i].Commands = []string{}
		}
	}
	// A neighbour torch's wheel ranks below every build, the devel image's
	// included: whether it loads cannot be known before it is installed.
	class := func(s Step) int {
		switch {
		case !s.Viable:
			return 3
		case strings.HasSuffix(s.ID, "/wheel-neighbour"):
			return 2
		case s.Manual:
			return 1
		}
		return 0
	}
	sort.SliceStable(steps, func(i, j int) bool { return class(steps[i]) < class(steps[j]) })
	for i := range steps {
		steps[i].Option = i + 1
	}
	return steps
}

// withPipArgs gives doctor's pip commands the user's index options.
func withPipArgs(c remedy.Context, cmds []string) []string {
	out := make([]string, len(cmds))
	for i, cmd := range cmds {
		out[i] = c.WithPipArgs(cmd)
	}
	return out
}

// torchSteps install torch built for the CUDA the driver and GPUs take
// (remedy.TorchWheelCUDA, the same choice the compiler routes pair with);
// without an interpreter, doctor's manual step.
func (p *planner) torchSteps(fd finding.Finding) []Step {
	if p.f.Python.Selected == nil {
		return fromFixes(p.rctx(), fd)
	}
	c := p.rctx()
	cuda := remedy.TorchWheelCUDA(c)
	var r remedy.Remedy
	if fd.ID == finding.TorchCPUOnly && c.TorchVersion.Known() {
		base, _, _ := strings.Cut(c.TorchVersion.Value, "+")
		r = remedy.TorchInstall(c, base, cuda, true)
	} else {
		r = remedy.TorchInstall(c, "", cuda, false)
	}
	r.Reason = fmt.Sprintf("the newest CUDA build of torch (%s) that the driver runs and that has code for every GPU here", cuda)
	return []Step{fromRemedy(r, fd.ID, string(fd.ID)+"/torch-cu"+strings.ReplaceAll(cuda, ".", ""), "")}
}

// fromFixes turns a finding's own fixes into steps, in doctor's order, their
// pip commands with the user's index options.
func fromFixes(c remedy.Context, fd finding.Finding) []Step {
	var out []Step
	for i, fx := range fd.Fixes {
		s := Step{
			ID:         fmt.Sprintf("%s/%d", fd.ID, i+1),
			Title:      fx.Title,
			Finding:    fd.ID,
			Commands:   withPipArgs(c, fx.Commands),
			RankReason: fmt.Sprintf("doctor's fix %d of %d for %s, in doctor's order", i+1, len(fd.Fixes), fd.ID),
			Verified:   true,
		}
		if len(fx.Commands) == 0 {
			s.Preconditions = append(s.Preconditions, Precondition{Check: "commands for this environment", OK: false,
				Detail: "none can be given here: do it by hand as the title says"})
		}
		if isImageFix(fx.Commands) {
			s.Manual = true
			s.RankReason += "; it changes the image, not this environment"
		}
		out = append(out, s)
	}
	return out
}

func isImageFix(cmds []string) bool {
	for _, c := range cmds {
		if strings.HasPrefix(c, "docker ") || strings.HasPrefix(c, "FROM ") {
			return true
		}
	}
	return false
}

// missingPackages are the kernel packages the models need and lack, in the
// models' order.
func missingPackages(models []*model.Report, id finding.ID, f *facts.Facts) []string {
	if f.Torch == nil || (f.Torch.CUDA == "" && f.Torch.HIP == "") {
		return nil // torch-cpu-only / torch-missing come first
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, r := range models {
		if id == finding.FastPathFallback && r.FallbackLayers == 0 || id == finding.ModelWillNotLoad && r.WillNotLoad == "" {
			continue
		}
		for _, k := range r.Kernels {
			if k.Resolves != "package" {
				add(k.Package)
			}
		}
		if r.AttnImpl != nil && !r.AttnImpl.OK {
			add(r.AttnImpl.Package)
		}
	}
	return out
}

// pipArgs are the index options the user gave, for every pip command the
// plan writes.
func (p *planner) pipArgs() []string {
	var a []string
	if p.o.NoIndex {
		a = append(a, "--no-index")
	}
	for i, u := range p.o.IndexURLs {
		if i == 0 {
			a = append(a, "--index-url", u)
		} else {
			a = append(a, "--extra-index-url", u)
		}
	}
	for _, fl := range p.o.FindLinks {
		a = append(a, "--find-links", fl)
	}
	return a
}

func (p *planner) pipInstall(args ...string) string {
	c := p.rctx()
	return c.Pip(args...)
}

// rctx is the remedy Context of the facts and the options: the user's
// index options go into every pip command.
func (p *planner) rctx() remedy.Context {
	c := remedy.FromFacts(p.f)
	c.PipArgs = p.pipArgs()
	if p.o.Euid != nil {
		root := *p.o.Euid == 0
		c.Root = &root
	}
	return c
}

// fromRemedy is a step made of a remedy.
func fromRemedy(r remedy.Remedy, id finding.ID, stepID, pkg string) Step {
	s := Step{ID: stepID, Title: r.Title, Finding: id, Package: pkg, Commands: r.Commands, RankReason: r.Reason,
		Verified: true, Manual: r.Manual, FillIn: r.FillIn, Changes: r.Changes, Cost: r.Cost, Undo: r.Undo,
		Effects: Effects{CompilerCUDA: r.CUDA, TorchCUDA: r.TorchCUDA, Installs: r.Installs, HostGCC: r.HostGCC}}
	s.Preconditions = append(s.Preconditions, r.Preconditions...)
	if r.Manual && r.FillIn != "" {
		s.Preconditions = append(s.Preconditions, Precondition{Check: "everything the commands need is known", OK: false,
			Detail: "do it by hand: " + r.FillIn})
	}
	return s
}

func (p *planner) note(format string, a ...any) {
	p.notes = append(p.notes, fmt.Sprintf(format, a...))
}

// Best returns each finding's best step that fix --apply may run: the
// first viable, non-manual step with commands.
func (pl *Plan) Best() []Step {
	var out []Step
	done := map[string]bool{}
	for _, s := range pl.Steps {
		key := string(s.Finding) + "\x00" + s.Package
		if done[key] || !s.Viable || s.Manual || len(s.Commands) == 0 {
			continue
		}
		done[key] = true
		out = append(out, s)
	}
	return out
}
