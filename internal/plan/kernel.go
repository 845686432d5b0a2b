package plan

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/pep440"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

const gib = int64(1) << 30

// wheelEnv is what a prebuilt wheel must match here, with the checks that
// could not be read from the facts.
func (p *planner) wheelEnv() (kb.WheelEnv, []Precondition) {
	var checks []Precondition
	t := p.f.Torch
	base, _, _ := strings.Cut(t.Version, "+")
	torchMM, _, _, _ := kb.MajorMinor(base)
	env := kb.WheelEnv{CUDAMajor: p.torchMajor, TorchMM: torchMM, Machine: p.f.OS.Arch}
	if t.CXX11ABI != nil {
		env.CXX11ABI = *t.CXX11ABI
		checks = append(checks, Precondition{Check: "torch's C++ ABI", OK: true,
			Detail: fmt.Sprintf("cxx11abi%s (%s)", abiWord(env.CXX11ABI), t.CXX11ABIFrom)})
	} else {
		// pip's torch wheels are cxx11abiTRUE only from 2.7 on.
		env.CXX11ABI = kb.CompareDotted(torchMM, "2.7") >= 0
		checks = append(checks, Precondition{Check: "torch's C++ ABI", OK: true, Unknown: true,
			Detail: fmt.Sprintf("not read; cxx11abi%s assumed (pip's torch >= 2.7 is built with the new ABI only)", abiWord(env.CXX11ABI))})
	}
	if py := p.f.Python.Selected; py != nil {
		if _, maj, min, ok := kb.MajorMinor(py.Version); ok {
			env.PyTag = fmt.Sprintf("cp%d%d", maj, min)
		}
	}
	if env.PyTag == "" {
		checks = append(checks, Precondition{Check: "Python version", OK: false, Detail: "unknown: the wheel's cp3XY tag cannot be named"})
	}
	return env, checks
}

func abiWord(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// packageSteps are the options for one missing kernel package, in the
// issue's order: (a) a prebuilt wheel for this exact environment, (b)-(e) a
// compiler and a source build, (f) Hugging Face Hub kernels, and last a
// wheel for a neighbouring torch minor whose ABI cannot be known statically.
func (p *planner) packageSteps(id finding.ID, pkg string) []Step {
	fam := kb.Families().Packages[pkg]
	install := fam.Install
	if install == "" {
		install = pkg
	}
	if !fam.Native {
		s := Step{ID: pkg + "/pip", Title: "Install " + pkg + " (pure Python/Triton: no compiler needed)", Finding: id, Package: pkg,
			Commands: []string{p.pipInstall(install)}, RankReason: "it ships no compiled code: pip installs it anywhere", Verified: true}
		return append([]Step{s}, p.hubStep(id, pkg, fam)...)
	}
	var steps, later []Step
	scheme, hasScheme := kb.Wheels().Packages[pkg]
	env, envChecks := p.wheelEnv()
	if hasScheme {
		exact, neighbours := p.wheelSteps(id, pkg, scheme, env, envChecks)
		steps = append(steps, exact...)
		later = append(later, neighbours...)
	}
	steps = append(steps, p.buildSteps(id, pkg, install)...)
	steps = append(steps, p.hubStep(id, pkg, fam)...)
	return append(steps, later...)
}

// wheelSteps: (a) the package's own prebuilt wheel: from the indexes and
// find-links the user gave, then its GitHub release.
func (p *planner) wheelSteps(id finding.ID, pkg string, scheme kb.WheelScheme, env kb.WheelEnv, envChecks []Precondition) (exact, neighbours []Step) {
	wd := kb.Wheels()
	want := fmt.Sprintf("cp%s/%s/cu%d/torch%s/cxx11abi%s", strings.TrimPrefix(env.PyTag, "cp"), orX86(env.Machine), env.CUDAMajor, env.TorchMM, abiWord(env.CXX11ABI))
	found := false
	if !p.o.Offline {
		type source struct {
			name  string
			links []Link
			err   error
		}
		var sources []source
		for _, idx := range p.o.IndexURLs {
			links, err := p.fetch.IndexFiles(p.ctx, idx, pkg)
			sources = append(sources, source{"index " + idx, links, err})
		}
		for _, fl := range p.o.FindLinks {
			links, err := p.fetch.FindLinks(p.ctx, fl)
			sources = append(sources, source{"find-links " + fl, links, err})
		}
		for _, src := range sources {
			if src.err != nil {
				p.note("%s: %v", pkg, src.err)
				exact = append(exact, Step{ID: pkg + "/wheel-index", Finding: id, Package: pkg,
					Title:         fmt.Sprintf("Install a prebuilt %s wheel from %s", pkg, src.name),
					Preconditions: []Precondition{{Check: "the " + src.name + " answers", OK: false, Detail: src.err.Error()}},
					RankReason:    "a prebuilt wheel needs no compiler", Verification: "lookup failed: " + src.err.Error()})
				continue
			}
			best, near, n := pickWheels(src.links, pkg, env)
			if best == nil {
				exact = append(exact, Step{ID: pkg + "/wheel-index", Finding: id, Package: pkg,
					Title: fmt.Sprintf("Install a prebuilt %s wheel from %s", pkg, src.name),
					Preconditions: []Precondition{{Check: "a wheel for " + want, OK: false,
						Detail: fmt.Sprintf("%s lists %d %s file(s), none a wheel pip would install here", src.name, n, pkg)}},
					RankReason: "a prebuilt wheel needs no compiler", Verification: "looked up: none fits"})
			} else {
				found = true
				exact = append(exact, Step{ID: pkg + "/wheel-index", Finding: id, Package: pkg,
					Title:         fmt.Sprintf("Install the prebuilt wheel %s from %s", best.File, src.name),
					Commands:      []string{p.pipInstall(best.URL)},
					Preconditions: append(append([]Precondition{}, envChecks...), Precondition{Check: "a wheel for " + want, OK: true, Detail: "listed: " + best.URL}),
					RankReason:    "a prebuilt wheel for this exact environment: no compiler, no build, seconds to install; from the index you named",
					Verified:      true, Verification: "listed by " + src.name})
			}
			if near != nil {
				neighbours = append(neighbours, p.neighbourStep(id, pkg, *near, src.name, env))
			}
		}
	}
	if found || p.o.NoIndex {
		return exact, neighbours
	}
	version := scheme.KnownVersion
	name := wd.WheelName(scheme, version, env)
	url := wd.WheelURL(scheme, version, name)
	step := Step{ID: pkg + "/wheel-github", Finding: id, Package: pkg,
		RankReason: "a prebuilt wheel for this exact environment needs no compiler and installs in seconds; the package's own releases name it by its setup.py's scheme",
	}
	checks := append([]Precondition{}, envChecks...)
	if p.o.Offline {
		step.Verification = fmt.Sprintf("unverified (--offline): named by %s's scheme for release v%s, the newest fastpath knew; release matrices lag new torch releases, so it may not exist", pkg, version)
	} else if rel, err := p.fetch.LatestRelease(p.ctx, p.o.GitHubAPI, scheme.Repo); err != nil {
		p.note("%s: latest release: %v", pkg, err)
		step.Verification = fmt.Sprintf("unverified: the latest release could not be looked up (%v); named for v%s, the newest fastpath knew", err, version)
	} else {
		version = strings.TrimPrefix(rel.TagName, "v")
		name = wd.WheelName(scheme, version, env)
		url = wd.WheelURL(scheme, version, name)
		var assets []Link
		for _, a := range rel.Assets {
			assets = append(assets, Link{File: a.Name, URL: a.URL, From: "release " + rel.TagName})
			if a.Name == name && a.URL != "" {
				url = a.URL
			}
		}
		if best, _, _ := pickWheels(assets, pkg, env); best != nil && best.File == name {
			if err := p.fetch.head(p.ctx, url); err != nil {
				checks = append(checks, Precondition{Check: "the wheel downloads", OK: false, Detail: err.Error()})
				step.Verification = "listed in release " + rel.TagName + " but " + err.Error()
			} else {
				step.Verified = true
				step.Verification = fmt.Sprintf("listed in release %s and answered HEAD", rel.TagName)
			}
		} else {
			checks = append(checks, Precondition{Check: "release " + rel.TagName + " has a wheel for " + want, OK: false,
				Detail: fmt.Sprintf("its %d assets have no %s (release matrices lag new torch releases)", len(rel.Assets), name)})
			step.Verification = "looked up: not in release " + rel.TagName
			if _, near, _ := pickWheels(assets, pkg, env); near != nil {
				neighbours = append(neighbours, p.neighbourStep(id, pkg, *near, "release "+rel.TagName, env))
			}
		}
	}
	step.Title = fmt.Sprintf("Install %s's prebuilt wheel %s", pkg, name)
	step.Commands = []string{p.pipInstall(url)}
	step.Preconditions = checks
	return append(exact, step), neighbours
}

func orX86(m string) string {
	if m == "" {
		return "x86_64"
	}
	return m
}

// pickWheels returns the newest exact wheel and the newest neighbour-torch
// wheel for pkg among links, and how many of pkg's files there were.
func pickWheels(links []Link, pkg string, env kb.WheelEnv) (best, near *Link, n int) {
	var bestV, nearV string
	newer := func(a, b string) bool {
		va, err1 := pep440.Parse(a)
		vb, err2 := pep440.Parse(b)
		if err1 != nil || err2 != nil {
			return a > b
		}
		return va.Compare(vb) > 0
	}
	for i := range links {
		l := &links[i]
		name := l.File
		if w, ok := ParseWheel(name); ok {
			if w.Name != canonical(pkg) {
				continue
			}
			n++
			switch w.FitFor(env) {
			case Exact:
				if best == nil || newer(w.Version, bestV) {
					best, bestV = l, w.Version
				}
			case Neighbour:
				if near == nil || newer(w.Version, nearV) {
					near, nearV = l, w.Version
				}
			}
		} else if strings.HasPrefix(canonical(name), canonical(pkg)+"-") {
			n++ // an sdist or another archive of pkg
		}
	}
	return best, near, n
}

// neighbourStep offers a wheel built for another torch minor: it loads only
// if the torch ABI it links did not change, which cannot be known without
// the wheel's binary, so it ranks below building.
func (p *planner) neighbourStep(id finding.ID, pkg string, l Link, from string, env kb.WheelEnv) Step {
	w, _ := ParseWheel(l.File)
	return Step{ID: pkg + "/wheel-neighbour", Finding: id, Package: pkg,
		Title:    fmt.Sprintf("Install %s built for torch %s (this torch is %s; unverified: ABI unknown)", l.File, w.TorchMM(), env.TorchMM),
		Commands: []string{p.pipInstall(l.URL)},
		Preconditions: []Precondition{{Check: fmt.Sprintf("torch %s's ABI is torch %s's", env.TorchMM, w.TorchMM()), OK: true, Unknown: true,
			Detail: "cannot be known statically without the wheel: after installing, doctor's extension-abi-mismatch checks its undefined symbols against this torch"}},
		RankReason: "ranked below building: a wheel for another torch minor loads only if torch's ABI did not change",
		Verified:   false, Verification: "unverified: ABI unknown (listed by " + from + ")"}
}

// buildSteps: (b)-(e) a compiler, then the package built against this
// torch (remedy.BuildFromSource: a build narrowed to the GPUs here where the
// package hard-codes more targets, then the stock build). Each build is
// paired with the compiler it follows, so its targets and estimate are that
// compiler's.
func (p *planner) buildSteps(id finding.ID, pkg, install string) []Step {
	c := p.rctx()
	extra := p.buildChecks(pkg)
	home := p.f.CUDA.TorchHome
	if !p.compilerFinding && home != nil && home.NVCC != "" {
		var cc []Precondition
		if c.NVCC.Known() {
			cc = p.compilerChecks(c.NVCC.Value)
		}
		var out []Step
		for _, b := range remedy.BuildFromSource(c, pkg, install, c.NVCC.Value) {
			s := fromRemedy(b, id, pkg+"/"+buildKind(b, ""), pkg)
			s.Title = fmt.Sprintf("%s, with the nvcc builds already find (%s)", b.Title, home.NVCC)
			s.Preconditions = append(append(append([]Precondition{{Check: "a CUDA compiler builds find", OK: true,
				Detail: fmt.Sprintf("%s via %s", home.NVCC, home.Via)}}, cc...), s.Preconditions...), extra...)
			s.RankReason = "no wheel for this environment is needed: " + b.Reason
			out = append(out, s)
		}
		return out
	}
	var out []Step
	for _, r := range p.compilerRoutes() {
		kind := strings.TrimPrefix(r.ID, "compiler/")
		for _, b := range remedy.BuildFromSource(c, pkg, install, r.CUDA) {
			s := fromRemedy(b, id, pkg+"/"+buildKind(b, kind), pkg)
			route := fromRemedy(r, id, "", "")
			s.Title = fmt.Sprintf("%s after: %s", b.Title, lowerFirst(r.Title))
			s.Commands = append(append([]string{}, r.Commands...), b.Commands...)
			if len(r.Commands) == 0 {
				s.Commands = []string{}
			}
			s.Manual, s.FillIn = r.Manual, r.FillIn
			s.Preconditions = append(append(route.Preconditions, s.Preconditions...), extra...)
			s.Changes = append(append([]string{}, r.Changes...), b.Changes...)
			s.Undo = append(append([]string{}, b.Undo...), r.Undo...)
			s.Cost = remedy.Cost{Seconds: r.Cost.Seconds + b.Cost.Seconds, Download: r.Cost.Download + b.Cost.Download,
				DiskMiB: r.Cost.DiskMiB + b.Cost.DiskMiB, MemMiB: b.Cost.MemMiB, Basis: strings.TrimPrefix(b.Cost.Basis+"; compiler: "+r.Cost.Basis, "; ")}
			s.RankReason = b.Reason + "; compiler route: " + r.Reason
			out = append(out, s)
		}
	}
	return out
}

// buildKind names a build step: build-KIND for the stock build,
// build-narrowed-KIND for the one narrowed to the GPUs here, each with
// @VERSION where the build is of an older release than the latest
// (remedy IDs "build/PKG@VERSION").
func buildKind(b remedy.Remedy, kind string) string {
	name := "build"
	if strings.HasPrefix(b.ID, "build-narrowed/") {
		name = "build-narrowed"
	}
	_, release, _ := strings.Cut(b.ID, "@")
	if kind != "" {
		name += "-" + kind
	}
	if release != "" {
		name += "@" + release
	}
	return name
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// buildChecks are what any source build needs besides a compiler: Python.h,
// ninja, disk.
func (p *planner) buildChecks(pkg string) []Precondition {
	var checks []Precondition
	py := p.f.Python.Selected
	switch {
	case py == nil:
	case py.PythonH != "":
		checks = append(checks, Precondition{Check: "Python.h", OK: true, Detail: py.PythonH})
	default:
		checks = append(checks, Precondition{Check: "Python.h", OK: false, Detail: "missing (see missing-python-headers)"})
	}
	if n := p.f.Toolchain.Ninja; n != nil {
		checks = append(checks, Precondition{Check: "ninja", OK: true, Detail: n.Path})
	} else {
		checks = append(checks, Precondition{Check: "ninja", OK: true, Unknown: true, Detail: "absent: the build works but runs serially (slow); pip install ninja first"})
	}
	need := int64(kb.Builds().Packages[pkg].DiskGiB) * gib
	if need == 0 {
		need = int64(kb.Wheels().Packages[pkg].BuildDiskGiB) * gib
	}
	if need == 0 {
		need = 2 * gib
	}
	return append(checks, p.diskCheck(need)...)
}

// hubStep: (f) Hugging Face Hub kernels through the `kernels` package, in
// the version window the installed transformers accepts.
func (p *planner) hubStep(id finding.ID, pkg string, fam kb.KernelPackage) []Step {
	if fam.Hub == "" {
		return nil
	}
	d := kb.Families()
	windows := d.Mechanism.KernelsWindows
	if len(windows) == 0 {
		return nil
	}
	tf := ""
	if py := p.f.Python.Selected; py != nil {
		for _, dist := range py.Distributions {
			if canonical(dist.Name) == "transformers" && !dist.Shadowed {
				tf = dist.Version
			}
		}
	}
	w := windows[len(windows)-1]
	check := Precondition{Check: "transformers loads Hub kernels", OK: false}
	switch {
	case tf == "":
		check.Detail = "transformers is not installed"
	case kb.CompareDotted(tf, windows[0].TransformersFrom) < 0:
		check.Detail = fmt.Sprintf("transformers %s predates Hub kernels for these layers (from %s)", tf, windows[0].TransformersFrom)
	default:
		for _, kw := range windows {
			if kb.CompareDotted(tf, kw.TransformersFrom) >= 0 {
				w = kw
			}
		}
		check.OK = true
		check.Detail = fmt.Sprintf("transformers %s accepts kernels >=%s,<%s", tf, w.Min, w.Below)
	}
	return []Step{{ID: pkg + "/hub-kernels", Finding: id, Package: pkg,
		Title:         fmt.Sprintf("Use the prebuilt Hugging Face Hub kernel %s instead (load the model with use_kernels=True)", fam.Hub),
		Commands:      []string{p.pipInstall(fmt.Sprintf("kernels>=%s,<%s", w.Min, w.Below))},
		Preconditions: []Precondition{check},
		RankReason:    "no compiler and no wheel matrix, but only models loaded with use_kernels=True use it, and the Hub must be reached once",
		Verified:      true}}
}
