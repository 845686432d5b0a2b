package pyenv

import (
	"path"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// siteDirs is site.getsitepackages for one prefix, existing folders only.
// Debian's python (base /usr) uses dist-packages, and in a venv also the
// venv's lib/pythonX.Y/site-packages.
func (c *collector) siteDirs(e *env, prefix string) []string {
	mm := "python" + e.mm
	libdirs := []string{e.platlib}
	if e.platlib != "lib" {
		libdirs = append(libdirs, "lib")
	}
	var cands []string
	if e.debian {
		if e.venv {
			cands = append(cands, path.Join(prefix, "lib", mm, "site-packages"))
		}
		cands = append(cands, path.Join(prefix, "local/lib", mm, "dist-packages"), path.Join(prefix, "lib", "python3", "dist-packages"))
		for _, l := range libdirs {
			cands = append(cands, path.Join(prefix, l, mm, "dist-packages"))
		}
	} else {
		for _, l := range libdirs {
			cands = append(cands, path.Join(prefix, l, mm, "site-packages"))
		}
	}
	var out []string
	for _, p := range cands {
		if source.IsDir(c.src, p) {
			out = append(out, p)
		}
	}
	return out
}

// userSite is the user site-packages folder when site.py would add it.
func (c *collector) userSite(e *env) string {
	if c.env.Get("PYTHONNOUSERSITE") != "" || (e.venv && !e.system) {
		return ""
	}
	base := c.env.Get("PYTHONUSERBASE")
	if !strings.HasPrefix(base, "/") {
		if c.home == "" {
			return ""
		}
		base = path.Join(c.home, ".local")
	}
	p := path.Join(base, "lib", "python"+e.mm, "site-packages")
	if source.IsDir(c.src, p) {
		return p
	}
	return ""
}

// sitePath computes the distribution-bearing part of sys.path as site.py
// builds it: PYTHONPATH; for a venv its site-packages, then (with system
// site packages) the user site and the base's; otherwise the user site then
// the prefix's. Each site folder's .pth files append their existing path
// lines right after it ("import" lines are code: not run).
func (c *collector) sitePath(e *env, withPythonPath bool) []string {
	known := map[string]bool{}
	var out []string
	add := func(p string) bool {
		p = path.Clean(p)
		if known[p] {
			return false
		}
		known[p] = true
		out = append(out, p)
		return true
	}
	if withPythonPath {
		for _, p := range strings.Split(c.env.Get("PYTHONPATH"), ":") {
			if p == "" {
				continue
			}
			if !strings.HasPrefix(p, "/") {
				p = path.Join(c.cwd, p)
			}
			if source.IsDir(c.src, p) {
				add(p)
			}
		}
	}
	addSite := func(dir string) {
		add(dir)
		c.processPth(dir, known, &out)
	}
	var prefixes []string
	if e.venv {
		for _, d := range c.siteDirs(e, e.Prefix) {
			addSite(d)
		}
		if e.system {
			prefixes = []string{e.Prefix, e.BasePrefix}
		}
	} else {
		prefixes = []string{e.Prefix}
	}
	if us := c.userSite(e); us != "" {
		addSite(us)
	}
	seen := map[string]bool{}
	for _, pfx := range prefixes {
		if seen[pfx] {
			continue
		}
		seen[pfx] = true
		for _, d := range c.siteDirs(e, pfx) {
			addSite(d)
		}
	}
	return out
}

// processPth reads dir's *.pth files in sorted order, as site.addsitedir
// does, appending each existing path they name.
func (c *collector) processPth(dir string, known map[string]bool, out *[]string) {
	ents, err := c.src.ReadDir(dir)
	if err != nil {
		c.warn("%s: %v", dir, err)
		return
	}
	for _, ent := range ents { // ReadDir is sorted, as site.py sorts
		n := ent.Name()
		if !strings.HasSuffix(n, ".pth") || strings.HasPrefix(n, ".") {
			continue
		}
		p := path.Join(dir, n)
		text, err := source.ReadFile(c.src, p, maxPth)
		if err != nil {
			c.warn("%s: %v", p, err)
			continue
		}
		for _, line := range strings.Split(universalNewlines(string(text)), "\n") {
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" ||
				strings.HasPrefix(line, "import ") || strings.HasPrefix(line, "import\t") {
				continue
			}
			line = strings.TrimRight(line, " \t\f\v\r")
			if len(line) > source.MaxPathLen {
				// Cannot name a folder (ENAMETOOLONG); a 30,000-component
				// line cost 3.5 GB before paths were capped (F2).
				c.warn("%s: a line of %d bytes is longer than a path can be (%d); skipped", p, len(line), source.MaxPathLen)
				continue
			}
			if strings.ContainsRune(line, 0) {
				break // Python stops at the error such a line raises
			}
			q := line
			if !strings.HasPrefix(q, "/") {
				q = path.Join(dir, q)
			}
			q = path.Clean(q)
			if !known[q] && source.Exists(c.src, q) {
				known[q] = true
				*out = append(*out, q)
			}
		}
	}
}
