// Package toolchain finds the host compilers and build tools.
package toolchain

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/fastpath-dev/fastpath/internal/collect/toolchain/sitedist"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/fastpath-dev/fastpath/internal/version"
)

// Collect finds gcc, g++, CUDAHOSTCXX, ninja and cmake. gcc's version comes
// from `gcc -dumpfullversion` on the live host; elsewhere from the name the
// gcc link resolves to (gcc-13) checked against the /usr/lib/gcc/<triplet>/N
// folders that hold its cc1. ninja and cmake come from PATH, or from the
// selected environment's pip wheels.
func Collect(ctx context.Context, src source.Source, env *facts.PythonEnv, timeout time.Duration) (facts.Toolchain, []string) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	c := &collector{src: src, ctx: ctx, timeout: timeout, pathList: src.Env().Get("PATH")}
	var tc facts.Toolchain
	tc.GCC = c.compiler("gcc", "cc1")
	tc.GXX = c.compiler("g++", "cc1plus")
	tc.CUDAHostCXX = c.hostCXX()
	tc.Ninja = c.buildTool("ninja", env, nil)
	tc.CMake = c.buildTool("cmake", env, c.cmakeShareVersion)
	tc.GCCSearched = c.searched
	return tc, c.warns
}

type collector struct {
	src      source.Source
	ctx      context.Context
	timeout  time.Duration
	pathList string
	searched []string
	warns    []string
}

// lookPath is source.LookPath that also records each place looked at.
func (c *collector) lookPath(name string) (string, bool) {
	if c.pathList == "" {
		c.searched = append(c.searched, "PATH: not set, no "+name+" looked for")
		return "", false
	}
	for _, dir := range strings.Split(c.pathList, ":") {
		if !strings.HasPrefix(dir, "/") {
			continue
		}
		p := path.Join(dir, name)
		if source.IsExecutable(c.src, p) {
			outcome := "found"
			if r, err := c.src.Resolve(p); err == nil && r != p {
				outcome += ", resolves to " + r
			}
			c.searched = append(c.searched, fmt.Sprintf("PATH: %s (%s)", p, outcome))
			return p, true
		}
		c.searched = append(c.searched, fmt.Sprintf("PATH: %s (absent)", p))
	}
	return "", false
}

// compiler finds gcc or g++ on PATH; cc1 is the part that proves a GCC
// version is really installed (cc1plus for g++).
func (c *collector) compiler(name, cc1 string) *facts.Tool {
	p, ok := c.lookPath(name)
	if !ok {
		return nil
	}
	t := &facts.Tool{Path: p, Via: "PATH"}
	c.version(t, cc1)
	return t
}

// version fills a gcc-like tool's version: run on the live host, read from
// names and folders elsewhere (or when running fails).
func (c *collector) version(t *facts.Tool, cc1 string) {
	if c.src.Info().Live {
		ctx, cancel := context.WithTimeout(c.ctx, c.timeout)
		out, err := c.src.Exec(ctx, t.Path, "-dumpfullversion")
		cancel()
		v := strings.TrimSpace(string(out))
		if err == nil && isGCCVersion(v) {
			t.Version, t.VersionFrom = v, path.Base(t.Path)+" -dumpfullversion"
			return
		}
		c.warns = append(c.warns, fmt.Sprintf("toolchain: %s -dumpfullversion: %v %q", t.Path, err, truncate(v)))
	}
	t.Version, t.VersionFrom = c.staticGCCVersion(t.Path, cc1)
}

// isGCCVersion reports whether v is a GCC version as ^\d{1,3}(\.\d{1,4}){0,2}$
// has it (13, 12.3, 13.2.0): a scan, not a regexp, since it runs on every
// start (version_test.go compares the two).
func isGCCVersion(v string) bool {
	parts := strings.Split(v, ".")
	if len(parts) > 3 {
		return false
	}
	for i, p := range parts {
		if n := len(p); n == 0 || (i == 0 && n > 3) || n > 4 {
			return false
		}
		for j := 0; j < len(p); j++ {
			if p[j] < '0' || p[j] > '9' {
				return false
			}
		}
	}
	return true
}

// nameVersion is the version suffix of gcc-13, x86_64-linux-gnu-g++-12:
// what -(\d{1,3}(?:\.\d{1,4}){0,2})$ captures.
func nameVersion(name string) (string, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || !isGCCVersion(name[i+1:]) {
		return "", false
	}
	return name[i+1:], true
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// gccLibDirs are where GCC keeps its per-version folders with cc1: Debian
// and Ubuntu use /usr/lib/gcc, Red Hat and SUSE put cc1 in /usr/libexec/gcc.
var gccLibDirs = []string{"/usr/lib/gcc", "/usr/libexec/gcc", "/usr/lib64/gcc"}

// staticGCCVersion reads the version a gcc link names (gcc -> gcc-13 ->
// x86_64-linux-gnu-gcc-13) and checks it against the installed
// <libdir>/<triplet>/<N>/cc1; without a version in the name, the highest N
// with cc1 is taken.
func (c *collector) staticGCCVersion(p, cc1 string) (string, string) {
	named, namedFrom := "", ""
	if r, err := c.src.Resolve(p); err == nil {
		if v, ok := nameVersion(path.Base(r)); ok {
			named, namedFrom = v, "link name "+path.Base(r)
		}
	}
	best, bestDir := "", ""
	for _, lib := range gccLibDirs {
		for _, dir := range source.Glob(c.src, path.Join(lib, "*", "*")) {
			v := path.Base(dir)
			if !isGCCVersion(v) {
				continue
			}
			has := source.Exists(c.src, path.Join(dir, cc1))
			if has {
				c.searched = append(c.searched, fmt.Sprintf("%s (found)", path.Join(dir, cc1)))
			} else {
				c.searched = append(c.searched, fmt.Sprintf("%s (absent)", path.Join(dir, cc1)))
				continue
			}
			if named != "" && (v == named || strings.HasPrefix(v, named+".")) {
				return v, namedFrom + ", " + dir
			}
			if best == "" || version.Less(best, v) {
				best, bestDir = v, dir
			}
		}
	}
	if named != "" {
		c.warns = append(c.warns, fmt.Sprintf("toolchain: %s names GCC %s but no %s of that version is installed", p, named, cc1))
		return named, namedFrom
	}
	if best != "" {
		return best, bestDir
	}
	return "", ""
}

// hostCXX is the compiler CUDAHOSTCXX names: CMake's host compiler for nvcc
// (pip builds of torch extensions do not read it).
func (c *collector) hostCXX() *facts.Tool {
	v := c.src.Env().Get("CUDAHOSTCXX")
	if v == "" {
		return nil
	}
	t := &facts.Tool{Path: v, Via: "env"}
	if !strings.Contains(v, "/") {
		p, ok := source.LookPath(c.src, c.pathList, v)
		if !ok {
			c.searched = append(c.searched, fmt.Sprintf("CUDAHOSTCXX=%s: not on PATH", v))
			return t
		}
		t.Path = p
	}
	if !source.IsExecutable(c.src, t.Path) {
		c.searched = append(c.searched, fmt.Sprintf("CUDAHOSTCXX=%s: %s is not an executable file", v, t.Path))
		return t
	}
	c.searched = append(c.searched, fmt.Sprintf("CUDAHOSTCXX=%s: %s (found)", v, t.Path))
	base := path.Base(resolvedOr(c.src, t.Path))
	if strings.Contains(base, "g++") || strings.Contains(base, "gcc") {
		c.version(t, "cc1plus")
	} else if v, ok := nameVersion(base); ok {
		t.Version, t.VersionFrom = v, "link name "+base
	}
	return t
}

func resolvedOr(src source.Source, p string) string {
	if r, err := src.Resolve(p); err == nil {
		return r
	}
	return p
}

// buildTool finds ninja or cmake: on PATH first (what torch and pip run),
// else the selected environment's wheel of that name. A tool inside the
// environment's bin takes the wheel's version; shareVersion reads a system
// install's version from its files.
func (c *collector) buildTool(name string, env *facts.PythonEnv, shareVersion func(string) (string, string)) *facts.Tool {
	dist, distSite := c.pipDist(name, env)
	if p, ok := source.LookPath(c.src, c.pathList, name); ok {
		t := &facts.Tool{Path: p, Via: "PATH"}
		if dist.Version != "" && env != nil && path.Dir(p) == path.Join(env.Prefix, "bin") {
			t.Version, t.VersionFrom = dist.Version, "dist-info"
		} else if shareVersion != nil {
			t.Version, t.VersionFrom = shareVersion(p)
		}
		return t
	}
	if dist.Version == "" {
		return nil
	}
	// Not on PATH: the wheel's launcher in the environment's bin, else the
	// binary inside the package.
	for _, p := range []string{path.Join(env.Prefix, "bin", name), path.Join(distSite, name, "data", "bin", name)} {
		if path.IsAbs(p) && source.IsExecutable(c.src, p) {
			return &facts.Tool{Path: p, Version: dist.Version, VersionFrom: "dist-info", Via: "pip"}
		}
	}
	return &facts.Tool{Path: dist.MetadataDir, Version: dist.Version, VersionFrom: "dist-info", Via: "pip"}
}

// pipDist finds the wheel called name in env's site-packages.
func (c *collector) pipDist(name string, env *facts.PythonEnv) (sitedist.Dist, string) {
	if env == nil {
		return sitedist.Dist{}, ""
	}
	for _, site := range env.SitePath {
		if !path.IsAbs(site) || !source.IsDir(c.src, site) {
			continue
		}
		d, ok, err := sitedist.Find(c.src, site, name)
		if err != nil {
			c.warns = append(c.warns, fmt.Sprintf("toolchain: reading %s's dist-info in %s: %v", name, site, err))
		}
		if ok {
			return d, site
		}
	}
	return sitedist.Dist{}, ""
}

var cmakeShareRE = lazyregexp.New(`^cmake-(\d{1,3}\.\d{1,3})$`)

// cmakeShareVersion reads a system cmake's version from its modules folder,
// <prefix>/share/cmake-3.28, beside the resolved binary's bin.
func (c *collector) cmakeShareVersion(p string) (string, string) {
	prefix := path.Dir(path.Dir(resolvedOr(c.src, p)))
	var found []string
	for _, m := range source.Glob(c.src, path.Join(prefix, "share", "cmake-*")) {
		if sm := cmakeShareRE.FindStringSubmatch(path.Base(m)); sm != nil && source.IsDir(c.src, m) {
			found = append(found, sm[1])
		}
	}
	if len(found) == 0 {
		return "", ""
	}
	slices.SortFunc(found, func(a, b string) int {
		if version.Less(a, b) {
			return -1
		}
		return 1
	})
	v := found[len(found)-1]
	return v, path.Join(prefix, "share", "cmake-"+v)
}
