// Package nvcc finds every CUDA compiler on a source and works out which one
// torch's extension builder would use.
package nvcc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fastpath-dev/fastpath/internal/collect/toolchain/sitedist"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect finds the CUDA compilers of src: on PATH, under CUDA_HOME and
// CUDA_PATH, the system toolkits, conda prefixes, pip wheel layouts in the
// Python environments, and torch/bin. Every place looked at is listed in
// Searched, found or not. The same file reached several ways is one
// compiler with several Via. On the live host each nvcc found is asked its
// version; elsewhere versions are read from files.
func Collect(ctx context.Context, src source.Source, py facts.Python, t *facts.Torch, timeout time.Duration) (facts.CUDA, []string) {
	c := &collector{src: src, env: src.Env(), looked: map[string]int{}, byResolved: map[string]int{}}
	c.searchPATH()
	c.searchEnvHome("CUDA_HOME")
	c.searchEnvHome("CUDA_PATH")
	c.look("/usr/local/cuda", "/usr/local/cuda", "/usr/local/cuda/bin/nvcc", nil)
	c.searchGlob("/usr/local/cuda-*")
	c.searchGlob("/opt/cuda*")
	c.searchConda()
	c.searchPip(py)
	if t != nil && path.IsAbs(t.Location) {
		c.look("torch", "torch/bin", path.Join(t.Location, "bin", "nvcc"), nil)
	}
	c.describe(ctx, timeout)
	home, ws := TorchHome(src, c.env)
	c.warns = append(c.warns, ws...)
	out := facts.CUDA{Compilers: c.compilers, Searched: c.searched, TorchHome: home, Incomplete: c.incomplete}
	if out.Compilers == nil {
		out.Compilers = []facts.NVCC{}
	}
	if out.Searched == nil {
		out.Searched = []string{}
	}
	return out, c.warns
}

type collector struct {
	src        source.Source
	env        source.Env
	compilers  []facts.NVCC
	hints      []*pipHint // per compiler, from the pip layout that holds it
	searched   []string
	incomplete []facts.IncompleteCompiler
	warns      []string
	looked     map[string]int // nvcc path as looked at -> compiler index, -1 when none
	byResolved map[string]int // resolved nvcc path -> compiler index
}

// pipHint is what a pip layout knows about its nvcc: the wheel that put it
// there and where the companion runtime wheel keeps cuda_runtime.h.
type pipHint struct {
	dist     sitedist.Dist
	runtimeH string
}

// look checks one candidate nvcc path and records it in Searched as
// "<label>: <path> (<outcome>)".
func (c *collector) look(via, label, p string, hint *pipHint) bool {
	if idx, seen := c.looked[p]; seen {
		if idx >= 0 {
			c.addVia(idx, via, hint)
		}
		return idx >= 0
	}
	outcome, ok := c.probe(p)
	if !ok {
		c.looked[p] = -1
		c.searched = append(c.searched, fmt.Sprintf("%s: %s (%s)", label, p, outcome))
		return false
	}
	resolved, err := c.src.Resolve(p)
	if err != nil {
		resolved = p
	}
	if idx, dup := c.byResolved[resolved]; dup {
		c.looked[p] = idx
		c.addVia(idx, via, hint)
		if !slices.Contains(c.compilers[idx].Paths, p) {
			c.compilers[idx].Paths = append(c.compilers[idx].Paths, p)
		}
		c.searched = append(c.searched, fmt.Sprintf("%s: %s (found: the same file as %s)", label, p, c.compilers[idx].Path))
		return true
	}
	idx := len(c.compilers)
	c.looked[p], c.byResolved[resolved] = idx, idx
	c.compilers = append(c.compilers, facts.NVCC{Path: p, Paths: []string{p}, Home: path.Dir(path.Dir(p)), Via: []string{via}})
	c.hints = append(c.hints, hint)
	if resolved != p {
		outcome = "found, resolves to " + resolved
	}
	c.searched = append(c.searched, fmt.Sprintf("%s: %s (%s)", label, p, outcome))
	return true
}

func (c *collector) addVia(idx int, via string, hint *pipHint) {
	if !slices.Contains(c.compilers[idx].Via, via) {
		c.compilers[idx].Via = append(c.compilers[idx].Via, via)
	}
	if c.hints[idx] == nil {
		c.hints[idx] = hint
	}
}

// probe says whether p is a program that could be run, and if not, why.
func (c *collector) probe(p string) (string, bool) {
	fi, err := c.src.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if target, lerr := c.src.ReadLink(p); lerr == nil {
				return "absent: a dangling link to " + target, false
			}
			return "absent", false
		}
		c.warns = append(c.warns, fmt.Sprintf("nvcc: cannot check %s: %v", p, err))
		return fmt.Sprintf("unreadable: %v", unwrap(err)), false
	}
	switch {
	case fi.IsDir():
		return "a folder, not a program", false
	case !fi.Mode().IsRegular():
		return "not a regular file", false
	case fi.Mode()&0o111 == 0:
		return "present but not executable", false
	}
	return "found", true
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (c *collector) searchPATH() {
	pathList, set := c.env.Lookup("PATH")
	if !set || pathList == "" {
		c.searched = append(c.searched, "PATH: not set, no entries to look in")
		return
	}
	for _, dir := range strings.Split(pathList, ":") {
		if !strings.HasPrefix(dir, "/") {
			c.searched = append(c.searched, fmt.Sprintf("PATH: relative entry %q skipped (it depends on the working directory)", dir))
			continue
		}
		c.look("PATH", "PATH", path.Join(dir, "nvcc"), nil)
	}
}

func (c *collector) searchEnvHome(name string) {
	v, set := c.env.Lookup(name)
	switch {
	case !set:
		c.searched = append(c.searched, name+": not set")
	case v == "":
		c.searched = append(c.searched, name+": set but empty")
	case !strings.HasPrefix(v, "/"):
		c.searched = append(c.searched, fmt.Sprintf("%s=%s: a relative path, not looked at", name, v))
	default:
		c.look(name, name+"="+v, path.Join(v, "bin", "nvcc"), nil)
	}
}

// searchGlob looks in every toolkit folder matching pattern
// (/usr/local/cuda-12.8, /opt/cuda).
func (c *collector) searchGlob(pattern string) {
	n := 0
	for _, m := range source.Glob(c.src, pattern) {
		if !source.IsDir(c.src, m) {
			continue
		}
		n++
		c.look("toolkit", pattern, path.Join(m, "bin", "nvcc"), nil)
	}
	if n == 0 {
		c.searched = append(c.searched, pattern+": no folder matches")
	}
}

// searchConda looks in the active conda prefix and the usual installs with
// their named environments.
func (c *collector) searchConda() {
	if p := c.env.Get("CONDA_PREFIX"); strings.HasPrefix(p, "/") {
		c.look("conda", "conda (CONDA_PREFIX)", path.Join(p, "bin", "nvcc"), nil)
	} else {
		c.searched = append(c.searched, "conda (CONDA_PREFIX): not set")
	}
	roots := []string{"/opt/conda"}
	if home := c.env.Get("HOME"); strings.HasPrefix(home, "/") {
		for _, d := range []string{"miniconda3", "miniforge3", "anaconda3"} {
			roots = append(roots, path.Join(home, d))
		}
	}
	for _, r := range roots {
		if !source.IsDir(c.src, r) {
			c.searched = append(c.searched, fmt.Sprintf("conda: %s (absent)", r))
			continue
		}
		c.look("conda", "conda", path.Join(r, "bin", "nvcc"), nil)
		for _, env := range source.Glob(c.src, path.Join(r, "envs", "*")) {
			if source.IsDir(c.src, env) {
				c.look("conda", "conda env", path.Join(env, "bin", "nvcc"), nil)
			}
		}
	}
}

// pipLayout is where one family of NVIDIA wheels puts its compiler.
type pipLayout struct {
	dist     string   // the wheel holding nvcc
	home     string   // below site-packages
	runtimeH string   // cuda_runtime.h of the companion runtime wheel, below site-packages
	parts    []string // compiler parts, relative to home, reported for incomplete installs
}

var pipLayouts = []pipLayout{
	// CUDA 12: one folder per wheel. The nvcc wheels ship ptxas, the crt
	// headers and libnvvm but no bin/nvcc (12.6.85, 12.8.93, 12.9.86).
	{dist: "nvidia-cuda-nvcc-cu12", home: "nvidia/cuda_nvcc", runtimeH: "nvidia/cuda_runtime/include/cuda_runtime.h",
		parts: []string{"bin/nvcc", "bin/ptxas", "nvvm/bin/cicc", "nvvm/lib64/libnvvm.so", "nvvm/libdevice/libdevice.10.bc", "include/crt/host_config.h"}},
	// CUDA 13: every wheel shares nvidia/cu13; nvcc comes with
	// nvidia-cuda-nvcc, cicc with nvidia-nvvm, crt with nvidia-cuda-crt.
	{dist: "nvidia-cuda-nvcc", home: "nvidia/cu13", runtimeH: "nvidia/cu13/include/cuda_runtime.h",
		parts: []string{"bin/nvcc", "bin/ptxas", "nvvm/bin/cicc", "lib/libnvvm.so.4", "nvvm/libdevice/libdevice.10.bc", "include/crt/host_config.h", "include/cuda_runtime.h"}},
}

// searchPip looks for the wheel layouts in every site-packages folder of
// the selected environment and of the others found.
func (c *collector) searchPip(py facts.Python) {
	var sites []string
	add := func(e *facts.PythonEnv) {
		for _, s := range e.SitePath {
			if path.IsAbs(s) && !slices.Contains(sites, s) {
				sites = append(sites, s)
			}
		}
	}
	if py.Selected != nil {
		add(py.Selected)
	}
	for i := range py.Others {
		add(&py.Others[i])
	}
	if len(sites) == 0 {
		c.searched = append(c.searched, "pip: no Python environment with site-packages to look in")
	}
	for _, site := range sites {
		if !source.IsDir(c.src, site) {
			c.searched = append(c.searched, fmt.Sprintf("pip: %s (absent)", site))
			continue
		}
		for _, l := range pipLayouts {
			c.searchPipLayout(site, l)
		}
	}
}

func (c *collector) searchPipLayout(site string, l pipLayout) {
	home := path.Join(site, l.home)
	label := fmt.Sprintf("pip (%s layout)", l.dist)
	homeExists := source.IsDir(c.src, home)
	var hint *pipHint
	d, haveDist, err := sitedist.Find(c.src, site, l.dist)
	if err != nil {
		c.warns = append(c.warns, fmt.Sprintf("nvcc: reading %s's dist-info in %s: %v", l.dist, site, err))
	}
	if haveDist || homeExists {
		hint = &pipHint{dist: d, runtimeH: path.Join(site, l.runtimeH)}
	}
	if c.look("pip", label, path.Join(home, "bin", "nvcc"), hint) || !homeExists {
		return
	}
	// No nvcc. A folder that holds compiler parts (or belongs to the nvcc
	// wheel) is an incomplete compiler; nvidia/cu13 with only torch's
	// runtime headers and libraries is not one.
	var has, missing []string
	for _, p := range l.parts {
		if source.Exists(c.src, path.Join(home, p)) {
			has = append(has, p)
		} else {
			missing = append(missing, p)
		}
	}
	if !haveDist && !slices.Contains(has, "bin/ptxas") {
		return
	}
	c.incomplete = append(c.incomplete, facts.IncompleteCompiler{Home: home, Dist: d.Name, Version: d.Version, Has: orEmpty(has), Missing: orEmpty(missing)})
	last := &c.searched[len(c.searched)-1]
	*last = strings.TrimSuffix(*last, ")") + fmt.Sprintf("; %s holds an incomplete compiler: %s)", home, strings.Join(has, ", "))
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// describe fills each compiler's version and cuda_runtime.h. Versions come
// from files first; on the live host `nvcc --version` (what torch itself
// checks) then overrides them, run for all compilers at once.
func (c *collector) describe(ctx context.Context, timeout time.Duration) {
	for i := range c.compilers {
		n := &c.compilers[i]
		resolvedHome := path.Dir(path.Dir(resolvedOr(c.src, n.Path)))
		homes := []string{n.Home}
		if resolvedHome != n.Home {
			homes = append(homes, resolvedHome)
		}
		if h := c.hints[i]; h != nil && h.dist.Name != "" {
			n.Dist = h.dist.Name
			n.Version, n.VersionFrom = h.dist.Version, "dist-info"
		}
		if n.Version == "" {
			n.Version, n.VersionFrom = c.staticVersion(homes)
		}
		n.CUDARuntimeH = c.runtimeHeader(homes, c.hints[i])
	}
	if !c.src.Info().Live || len(c.compilers) == 0 {
		return
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	warns := make([]string, len(c.compilers))
	var wg sync.WaitGroup
	for i := range c.compilers {
		n := &c.compilers[i]
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			out, err := c.src.Exec(cctx, n.Path, "--version")
			if err != nil {
				warns[i] = fmt.Sprintf("nvcc: %s --version failed: %v", n.Path, err)
				return
			}
			v, err := ParseNvccVersion(out)
			if err != nil {
				warns[i] = fmt.Sprintf("nvcc: %s --version: %v", n.Path, err)
				return
			}
			n.Version, n.VersionFrom = v, "nvcc --version"
		})
	}
	wg.Wait()
	for _, w := range warns {
		if w != "" {
			c.warns = append(c.warns, w)
		}
	}
}

func resolvedOr(src source.Source, p string) string {
	if r, err := src.Resolve(p); err == nil {
		return r
	}
	return p
}

// staticCap bounds version.json (about 3 KB in real toolkits).
const staticCap = 1 << 20

// staticVersion reads the toolkit's version.json or version.txt, or the
// conda-meta record of a conda cuda-nvcc.
func (c *collector) staticVersion(homes []string) (string, string) {
	for _, h := range homes {
		if data, err := source.ReadFile(c.src, path.Join(h, "version.json"), staticCap); err == nil {
			if v, err := ParseVersionJSON(data); err == nil {
				return v, "version.json"
			} else {
				c.warns = append(c.warns, fmt.Sprintf("nvcc: %s: %v", path.Join(h, "version.json"), err))
			}
		}
		if data, err := source.ReadFile(c.src, path.Join(h, "version.txt"), staticCap); err == nil {
			if v, err := ParseVersionTxt(data); err == nil {
				return v, "version.txt"
			} else {
				c.warns = append(c.warns, fmt.Sprintf("nvcc: %s: %v", path.Join(h, "version.txt"), err))
			}
		}
		// conda-meta/cuda-nvcc-12.4.131-0.json: name-version-build.
		for _, m := range source.Glob(c.src, path.Join(h, "conda-meta", "cuda-nvcc-[0-9]*.json")) {
			parts := strings.Split(strings.TrimSuffix(path.Base(m), ".json"), "-")
			if len(parts) == 4 && versionRE.MatchString(parts[2]) {
				return parts[2], "conda-meta"
			}
		}
	}
	return "", ""
}

func (c *collector) runtimeHeader(homes []string, hint *pipHint) string {
	var cands []string
	for _, h := range homes {
		cands = append(cands, path.Join(h, "include", "cuda_runtime.h"))
		cands = append(cands, source.Glob(c.src, path.Join(h, "targets", "*", "include", "cuda_runtime.h"))...)
	}
	if hint != nil {
		cands = append(cands, hint.runtimeH)
	}
	for _, p := range cands {
		if fi, err := c.src.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}
