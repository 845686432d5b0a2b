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
}

// Collect gathers the Facts of src. It never fails: what cannot be read
// becomes a warning in the facts.
func Collect(ctx context.Context, src source.Source, o Options) *facts.Facts {
	if o.ExecTimeout == 0 {
		o.ExecTimeout = 10 * time.Second
	}
	f := &facts.Facts{Schema: facts.Schema, Tool: o.ToolVersion, Source: src.Info()}
	var mu sync.Mutex
	warn := func(ws []string) {
		mu.Lock()
		f.Warnings = append(f.Warnings, ws...)
		mu.Unlock()
	}
	start := time.Now()
	timed := func(name string, fn func()) {
		t0 := time.Now()
		fn()
		if o.Trace != nil {
			mu.Lock()
			fmt.Fprintf(o.Trace, "fastpath: %-10s %6.1f ms (done at %6.1f ms)\n", name, ms(time.Since(t0)), ms(time.Since(start)))
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	// The first wave needs nothing but the source.
	wg.Go(func() {
		timed("os", func() {
			var ws []string
			f.OS, ws = osinfo.Collect(ctx, src)
			warn(ws)
		})
	})
	wg.Go(func() { f.Env = envvars.Collect(src.Env()) })
	wg.Go(func() {
		timed("gpu", func() {
			var ws []string
			f.GPU, ws = gpu.Collect(ctx, src, o.GPUs, o.ExecTimeout)
			warn(ws)
		})
	})
	timed("python", func() {
		var ws []string
		f.Python, ws = pyenv.Collect(ctx, src, o.Python)
		warn(ws)
	})
	// The second wave looks inside the selected environment.
	wg.Go(func() {
		var ws []string
		timed("torch", func() { f.Torch, ws = torch.Collect(src, f.Python.Selected) })
		warn(ws)
		timed("nvcc", func() { f.CUDA, ws = nvcc.Collect(ctx, src, f.Python, f.Torch, o.ExecTimeout) })
		warn(ws)
	})
	// The extension scan needs only torch's folder (for the ABI check), not
	// the torch facts whose binary reads take the longest.
	wg.Go(func() {
		var located *facts.Torch
		if site, ok := torch.Locate(src, f.Python.Selected); ok {
			loc := path.Join(site, "torch")
			located = &facts.Torch{Location: loc, Lib: path.Join(loc, "lib")}
		}
		var ws []string
		timed("extensions", func() { f.Extensions, ws = extensions.Collect(ctx, src, f.Python.Selected, located) })
		warn(ws)
	})
	wg.Go(func() {
		var ws []string
		timed("toolchain", func() { f.Toolchain, ws = toolchain.Collect(ctx, src, f.Python.Selected, o.ExecTimeout) })
		warn(ws)
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
	return f
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
