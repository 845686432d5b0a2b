package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/model"
)

// world is a fixture's facts with what re-judging its model needs.
type world struct {
	name string
	f    *facts.Facts
	loc  *modelread.Located
	cfg  *modelread.Config
}

func (w world) input() Input {
	models := []*model.Report{model.Analyze(fixture.SeedModel, w.loc, w.cfg, w.f)}
	return Input{Facts: w.f, Findings: diagnose.RunWithModels(w.f, models), Models: models}
}

// worlds are the seed container and its variants: the H200 (cu130, 9.0),
// no torch at all, an A100, torch cu126, a g++ too new for CUDA 12.8.
func worlds(t *testing.T) []world {
	seed := seedWorld(t)
	base, loc, cfg := seed.f, seed.loc, seed.cfg
	variant := func(name string, change func(f *facts.Facts)) world {
		f := clone(t, base)
		if change != nil {
			change(f)
		}
		return world{name, f, loc, cfg}
	}
	setGPU := func(f *facts.Facts, cc, name string) {
		f.GPU.Devices = f.GPU.Devices[:1]
		f.GPU.Devices[0].Capability, f.GPU.Devices[0].Name = cc, name
	}
	return []world{
		variant("seed (cu128, 8x sm_120)", nil),
		variant("H200 (cu130, sm_90, 16 cores, 128 GiB)", func(f *facts.Facts) {
			f.Torch.Version, f.Torch.CUDA = "2.11.0+cu130", "13.0"
			setGPU(f, "9.0", "NVIDIA H200")
			f.OS.CPUs, f.OS.MemTotal, f.OS.MemAvail = 16, 128<<30, 120<<30
		}),
		variant("no torch", func(f *facts.Facts) {
			f.Torch = nil
			py := f.Python.Selected
			var ds []facts.Distribution
			for _, d := range py.Distributions {
				if d.Name != "torch" {
					ds = append(ds, d)
				}
			}
			py.Distributions = ds
		}),
		variant("A100, torch cu126", func(f *facts.Facts) {
			f.Torch.Version, f.Torch.CUDA = "2.11.0+cu126", "12.6"
			setGPU(f, "8.0", "NVIDIA A100-SXM4-80GB")
		}),
		variant("g++ 15 (too new for nvcc 12.8)", func(f *facts.Facts) {
			f.Toolchain.GXX.Version, f.Toolchain.GCC.Version = "15.1.0", "15.1.0"
		}),
	}
}

func clone(t *testing.T, f *facts.Facts) *facts.Facts {
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var out facts.Facts
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// apply changes the facts as the steps' effects say: the compiler they
// leave (CUDA_HOME pointing at it), torch's CUDA, the distributions they
// install, the host g++.
func apply(t *testing.T, f *facts.Facts, steps []Step) *facts.Facts {
	f = clone(t, f)
	for _, s := range steps {
		e := s.Effects
		if e.CompilerCUDA != "" {
			home := "/fake/cuda-" + e.CompilerCUDA
			f.CUDA.Compilers = append(f.CUDA.Compilers, facts.NVCC{Path: home + "/bin/nvcc", Home: home, Version: e.CompilerCUDA + ".0", VersionFrom: "plan"})
			f.CUDA.TorchHome = &facts.CUDAHome{Path: home, Via: "CUDA_HOME", NVCC: home + "/bin/nvcc"}
		}
		if e.TorchCUDA != "" {
			v := "2.11.0+cu" + strings.ReplaceAll(e.TorchCUDA, ".", "")
			if f.Torch == nil {
				f.Torch = &facts.Torch{Location: "/plan/torch"}
			}
			f.Torch.Version, f.Torch.CUDA = v, e.TorchCUDA
		}
		for _, d := range e.Installs {
			if py := f.Python.Selected; py != nil && d != "torch" {
				loc := ""
				if len(py.SitePath) > 0 {
					loc = py.SitePath[0]
				}
				py.Distributions = append(py.Distributions, facts.Distribution{Name: d, Version: "1.7.0", Location: loc})
			}
		}
		if e.HostGCC > 0 && f.Toolchain.GXX != nil {
			f.Toolchain.GXX.Version = fmt.Sprintf("%d.1.0", e.HostGCC)
		}
	}
	return f
}

func errorIDs(fs []finding.Finding) map[finding.ID]bool {
	out := map[finding.ID]bool{}
	for _, fd := range fs {
		if fd.Severity == finding.Error {
			out[fd.ID] = true
		}
	}
	return out
}

// TestPlansDoNotCreateErrors applies every plan the fixtures yield (each
// viable step that changes this environment on its own, and each fixture's
// fix --apply set together) to the facts, diagnoses the result, and fails
// on any error that was not there before: compiler, torch, driver and host
// compiler must be chosen together.
func TestPlansDoNotCreateErrors(t *testing.T) {
	applied := 0
	for _, w := range worlds(t) {
		in := w.input()
		// A finding already there may turn from warning to error (no
		// compiler matters once torch is installed): only new ones count.
		before := map[finding.ID]bool{}
		for _, fd := range in.Findings {
			before[fd.ID] = true
		}
		pl := Build(context.Background(), in, Options{Offline: true, Euid: ptr(0)})
		var runs [][]Step
		for _, s := range pl.Steps {
			if s.Viable && !s.Manual && len(s.Commands) > 0 {
				runs = append(runs, []Step{s})
			}
		}
		if best := pl.Best(); len(best) > 1 {
			runs = append(runs, best)
		}
		for _, steps := range runs {
			after := world{w.name, apply(t, w.f, steps), w.loc, w.cfg}.input()
			applied++
			var newErrs []string
			for id := range errorIDs(after.Findings) {
				if !before[id] {
					newErrs = append(newErrs, string(id))
				}
			}
			sort.Strings(newErrs)
			if len(newErrs) > 0 {
				var names []string
				for _, s := range steps {
					names = append(names, s.ID)
				}
				t.Errorf("%s: applying %v creates %v", w.name, names, newErrs)
			}
		}
	}
	if applied < 20 {
		t.Errorf("only %d plans applied", applied)
	}
	t.Logf("plans applied and diagnosed again: %d", applied)
}
