// Package pyenv finds Python environments and their installed
// distributions, statically: nothing from the environment is run.
//
// It answers what `python3` on PATH is (through venvs, conda and pyenv
// shims), works out its sys.path the way CPython's getpath and site.py
// would, and reads the distributions there the way pip's importlib backend
// does, so `fastpath packages --json` prints what `pip list --format=json`
// prints.
package pyenv

import (
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/fastpath-dev/fastpath/internal/version"
)

// Collect finds the selected Python (python3 on PATH, or the --python
// value), its distributions, the other environments, and pip on PATH.
func Collect(ctx context.Context, src source.Source, python string) (facts.Python, []string) {
	return CollectWith(ctx, src, python, Options{})
}

// Options narrow what CollectWith reads.
type Options struct {
	// ListOnly reads just what `pip list` shows (each distribution's
	// metadata headers and direct_url.json): no INSTALLER, WHEEL or RECORD,
	// no other environments, no pip on PATH. `fastpath packages` uses it.
	ListOnly bool
	// Native, when set, is called (from several goroutines) with each
	// distribution of the selected environment whose RECORD lists native
	// files, as soon as that RECORD is read: the extension scan reads them
	// meanwhile (extensions.Early). The facts do not depend on it.
	Native func(dist, version, location string, files []string)
	// Located, when set, is called once, as soon as the selected
	// environment's interpreter, prefix and sys.path are known, while its
	// distributions are still being read: with a copy of it that has none
	// (nil when no interpreter was found). The collectors that need only
	// where things are (torch, the toolchain) start from it instead of
	// waiting for every METADATA and RECORD. The facts do not depend on it.
	Located func(selected *facts.PythonEnv)
	// OthersFound, when set, is called once after Located, when the other
	// environments are found (nvcc looks in their site-packages too),
	// with them as the facts will give them.
	OthersFound func(others []facts.PythonEnv)
}

// CollectWith is Collect with options.
func CollectWith(ctx context.Context, src source.Source, python string, o Options) (facts.Python, []string) {
	var (
		mu       sync.Mutex
		warnings []string
	)
	c := &collector{src: src, env: src.Env(), cwd: "/", listOnly: o.ListOnly, native: o.Native}
	c.warn = func(format string, a ...any) {
		mu.Lock()
		warnings = append(warnings, "python: "+fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	c.home = c.env.Get("HOME")
	if !strings.HasPrefix(c.home, "/") {
		c.home = ""
	}
	if src.Info().Kind == source.KindHost {
		if wd, err := os.Getwd(); err == nil {
			c.cwd = wd
		}
	} else if pwd := c.env.Get("PWD"); strings.HasPrefix(pwd, "/") {
		c.cwd = path.Clean(pwd)
	}

	py := facts.Python{Others: []facts.PythonEnv{}}
	interp, steps := c.selectInterpreter(python)
	var located *facts.PythonEnv // the selected environment before its distributions
	var dists sync.WaitGroup
	if interp != "" {
		e, more := c.envFor(interp)
		steps = append(steps, more...)
		if e != nil {
			e.SitePath = c.sitePath(e, true)
			steps = append(steps, fmt.Sprintf("%s: %s Python %s, prefix %s", interp, e.Kind, e.Version, e.Prefix))
			py.Selected = &e.PythonEnv
			sel := e.PythonEnv // copied before collectDists starts writing e
			located = &sel
			// The distributions are read while the other environments and
			// pip are looked for: neither needs them (both compare
			// prefixes only), so they take the copy.
			dists.Go(func() { c.collectDists(e) })
		}
	}
	py.Resolution = steps
	if o.Located != nil {
		o.Located(located)
	}
	if ctx.Err() == nil && !o.ListOnly {
		// A copy: pip's shim resolution may set pyenvDir, which nothing
		// reading distributions looks at, but which must not be written
		// while they are read.
		bg := *c
		py.Others = bg.others(located)
		py.Pip = bg.pip(located)
	}
	if o.OthersFound != nil {
		o.OthersFound(py.Others)
	}
	dists.Wait()
	sort.Strings(warnings)
	return py, warnings
}

// others describes the environments in the usual places besides the
// selected one, counting (not reading) their distributions.
func (c *collector) others(sel *facts.PythonEnv) []facts.PythonEnv {
	var cands []string
	add := func(prefix string) {
		for _, n := range []string{"bin/python3", "bin/python"} {
			if source.IsExecutable(c.src, path.Join(prefix, n)) {
				cands = append(cands, path.Join(prefix, n))
				return
			}
		}
	}
	add("/root/venv")
	if c.home != "" && c.home != "/root" {
		add(path.Join(c.home, "venv"))
	}
	for _, pat := range []string{"/opt/*/.venv", "/opt/*/venv"} {
		for _, p := range source.Glob(c.src, pat) {
			add(p)
		}
	}
	for _, conda := range []string{"/opt/conda", "/opt/miniconda3", "/opt/miniforge3"} {
		add(conda)
		for _, p := range source.Glob(c.src, conda+"/envs/*") {
			add(p)
		}
	}
	if c.home != "" || c.env.Get("PYENV_ROOT") != "" {
		vs := source.Glob(c.src, path.Join(c.pyenvRoot(), "versions", "*"))
		sort.SliceStable(vs, func(i, j int) bool { return version.Less(vs[i], vs[j]) })
		for _, p := range vs {
			add(p)
		}
	}
	add("/usr")
	add("/usr/local")

	seen := map[string]bool{}
	if sel != nil {
		if r, err := c.src.Resolve(sel.Prefix); err == nil {
			seen[r] = true
		}
	}
	out := []facts.PythonEnv{}
	for _, interp := range cands {
		// Silence: a half-made folder here is not the user's problem.
		quiet := *c
		quiet.warn = func(string, ...any) {}
		e, _ := quiet.envFor(interp)
		if e == nil {
			continue
		}
		r, err := c.src.Resolve(e.Prefix)
		if err != nil || seen[r] {
			continue
		}
		seen[r] = true
		e.SitePath = quiet.sitePath(e, false)
		for _, loc := range e.SitePath {
			ents, _ := c.src.ReadDir(loc)
			for _, ent := range ents {
				low := strings.ToLower(ent.Name())
				if strings.HasSuffix(low, ".dist-info") || strings.HasSuffix(low, ".egg-info") {
					e.NumDists++
				}
			}
		}
		out = append(out, e.PythonEnv)
	}
	return out
}
