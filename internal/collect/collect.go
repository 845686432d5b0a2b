// Package collect runs every collector against a Source and assembles the
// Facts. Collectors only observe; judging is diagnose's job.
package collect

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"sync"
	"time"

	"github.com/fastpath-dev/fastpath/internal/collect/envvars"
	"github.com/fastpath-dev/fastpath/internal/collect/extensions"
	"github.com/fastpath-dev/fastpath/internal/collect/gpu"
	"github.com/fastpath-dev/fastpath/internal/collect/nvcc"
	"github.com/fastpath-dev/fastpath/internal/collect/osinfo"
	"github.com/fastpath-dev/fastpath/internal/collect/pyenv"
	"github.com/fastpath-dev/fastpath/internal/collect/toolchain"
	"github.com/fastpath-dev/fastpath/internal/collect/torch"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Options are the source flags that shape collection.
type Options struct {
	// Python is --python: an interpreter or environment path; "" means the
	// one `python3` on PATH runs.
	Python string
	// GPUs are --gpu values (12.0, sm_120): they replace detected devices.
	GPUs []string
	// ToolVersion is fastpath's own version, recorded in the facts.
	ToolVersion string
	// ExecTimeout bounds each program run on the live host (nvcc, gcc,
	// nvidia-smi); 0 means 10 s.
	ExecTimeout time.Duration
	// Trace, when set, receives one line per collector with its wall time
	// (FASTPATH_TRACE=1): where a slow machine spends doctor's time.
	Trace io.Writer
	// Timings, when set, puts each collector's wall time and reads in
	// Facts.Timings (`--timings`).
	Timings bool
}

// Collect gathers the Facts of src. It never fails: what cannot be read
// becomes a warning in the facts.
//
// Collectors run side by side where they do not depend on each other: the
// OS, the environment variables, the GPUs and the Python environment first;
// then, inside the selected environment, torch, nvcc, the extensions and
// the toolchain. That is at most seven at a time; the file-level pools
// inside pyenv and extensions bound the rest. Every collector writes its own fields and warnings are sorted,
// so the facts do not depend on the order they finish in.
//
// All of them read through one per-run cache (source.Cache): a path is
// resolved, stat'ed or listed once, a small file read once.
func Collect(ctx context.Context, src source.Source, o Options) *facts.Facts {
	if o.ExecTimeout == 0 {
		o.ExecTimeout = 10 * time.Second
	}
	f := &facts.Facts{Schema: facts.Schema, Tool: o.ToolVersion, Source: src.Info()}
	cache := source.NewCache(src)
	var mu sync.Mutex
	warn := func(ws []string) {
		mu.Lock()
		f.Warnings = append(f.Warnings, ws...)
		mu.Unlock()
	}
	start := time.Now()
	var timings []facts.CollectorTiming
	// timed runs one collector with its own counting view of the cache.
	timed := func(name string, fn func(src source.Source)) {
		v := cache.View()
		t0 := time.Now()
		fn(v)
		d := time.Since(t0)
		mu.Lock()
		timings = append(timings, facts.CollectorTiming{Name: name, StartMS: ms(t0.Sub(start)), MS: ms(d), ReadStats: v.Stats()})
		if o.Trace != nil {
			fmt.Fprintf(o.Trace, "fastpath: %-10s %6.1f ms (done at %6.1f ms)\n", name, ms(d), ms(time.Since(start)))
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	// The first wave needs nothing but the source.
	wg.Go(func() {
		timed("os", func(src source.Source) {
			var ws []string
			f.OS, ws = osinfo.Collect(ctx, src)
			warn(ws)
		})
	})
	wg.Go(func() { timed("env", func(src source.Source) { f.Env = envvars.Collect(src.Env()) }) })
	wg.Go(func() {
		timed("gpu", func(src source.Source) {
			var ws []string
			f.GPU, ws = gpu.Collect(ctx, src, o.GPUs, o.ExecTimeout)
			warn(ws)
		})
	})
	// The extension scan starts reading native files while the Python
	// collector is still reading metadata (extensions.Early): as soon as
	// a distribution's RECORD names them.
	earlyView, earlyStart := cache.View(), time.Now()
	early := extensions.NewEarly(ctx, earlyView)
	// The second wave looks inside the selected environment. torch and
	// the toolchain need only where it is (its prefix and sys.path), so
	// they start as soon as the Python collector knows that
	// (pyenv.Options.Located), while it still reads every distribution's
	// metadata; nvcc, which also looks in the other environments'
	// site-packages, starts when those are found (OthersFound). Each gets
	// its own copy of what it reads. Where torch lives is one stat away
	// (torch.Locate); nvcc (which only looks in torch/bin) and the
	// extension scan (which needs only torch/lib for the ABI check) take
	// that instead of waiting for the torch facts, whose binary reads take
	// the longest.
	var located *facts.Torch
	var selected *facts.PythonEnv
	second := func(sel *facts.PythonEnv) {
		selected = sel
		if sel != nil {
			if site, ok := torch.Locate(cache.View(), sel); ok {
				loc := path.Join(site, "torch")
				located = &facts.Torch{Location: loc, Lib: path.Join(loc, "lib")}
			}
		}
		wg.Go(func() {
			timed("torch", func(src source.Source) {
				var ws []string
				f.Torch, ws = torch.Collect(src, sel)
				warn(ws)
			})
		})
		wg.Go(func() {
			timed("toolchain", func(src source.Source) {
				var ws []string
				f.Toolchain, ws = toolchain.Collect(ctx, src, sel, o.ExecTimeout)
				warn(ws)
			})
		})
	}
	withOthers := func(others []facts.PythonEnv) {
		py, loc := facts.Python{Selected: selected, Others: others}, located
		wg.Go(func() {
			timed("nvcc", func(src source.Source) {
				var ws []string
				f.CUDA, ws = nvcc.Collect(ctx, src, py, loc, o.ExecTimeout)
				warn(ws)
			})
		})
	}
	timed("python", func(src source.Source) {
		var ws []string
		f.Python, ws = pyenv.CollectWith(ctx, src, o.Python, pyenv.Options{Native: early.Add, Located: second, OthersFound: withOthers})
		warn(ws)
	})
	wg.Go(func() {
		timed("extensions", func(src source.Source) {
			var ws []string
			f.Extensions, ws = extensions.CollectWith(ctx, src, f.Python.Selected, located, early)
			warn(ws)
			d := time.Since(earlyStart)
			mu.Lock()
			timings = append(timings, facts.CollectorTiming{Name: "extensions-early", StartMS: ms(earlyStart.Sub(start)), MS: ms(d), ReadStats: earlyView.Stats()})
			mu.Unlock()
		})
	})
	wg.Wait()
	sort.Strings(f.Warnings)
	if f.Extensions == nil {
		f.Extensions = []facts.Extension{}
	}
	if f.Env == nil {
		f.Env = []facts.EnvVar{}
	}
	if f.Warnings == nil {
		f.Warnings = []string{}
	}
	if o.Timings {
		// In the order the collectors started: the shape of the run.
		sort.SliceStable(timings, func(i, j int) bool { return timings[i].StartMS < timings[j].StartMS })
		files, bytes := cache.Totals()
		f.Timings = &facts.Timings{TotalMS: ms(time.Since(start)), Collectors: timings, Files: files, Bytes: bytes}
	}
	return f
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
