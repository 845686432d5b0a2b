package pyenv

import (
	"fmt"
	"path"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/fastpath-dev/fastpath/internal/version"
)

var shimRootRe = lazyregexp.New(`(?m)^export PYENV_ROOT="([^"]+)"`)

// pyenvShim reports whether p is a pyenv shim (a shell script in a shims
// folder that execs `pyenv exec`), and the PYENV_ROOT it exports.
func (c *collector) pyenvShim(p string) (root string, ok bool) {
	if path.Base(path.Dir(p)) != "shims" {
		return "", false
	}
	text, err := readHead(c.src, p, maxScript)
	if err != nil || !strings.HasPrefix(text, "#!") || !strings.Contains(text, "pyenv") || !strings.Contains(text, " exec ") {
		return "", false
	}
	if m := shimRootRe.FindStringSubmatch(text); m != nil && strings.HasPrefix(m[1], "/") {
		return path.Clean(m[1]), true
	}
	if r := c.env.Get("PYENV_ROOT"); strings.HasPrefix(r, "/") {
		return path.Clean(r), true
	}
	return path.Dir(path.Dir(p)), true
}

// readVersionFile reads a pyenv version file as pyenv-version-file-read
// does: the first word of each line, skipping blanks, comments, ".." and
// anything with a slash.
func (c *collector) readVersionFile(p string) []string {
	text, err := readHead(c.src, p, maxSmall)
	if err != nil {
		c.warn("%s: %v", p, err)
		return nil
	}
	var out []string
	for _, line := range strings.Split(universalNewlines(text), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || f[0] == ".." || strings.Contains(f[0], "/") {
			continue
		}
		out = append(out, f[0])
	}
	return out
}

// pyenvVersions returns the versions pyenv would select, and why.
func (c *collector) pyenvVersions(root string) ([]string, string) {
	if v := c.env.Get("PYENV_VERSION"); v != "" {
		return strings.Split(v, ":"), "PYENV_VERSION=" + v
	}
	dir := c.cwd
	if d := c.env.Get("PYENV_DIR"); strings.HasPrefix(d, "/") {
		dir = path.Clean(d)
	}
	for d := dir; ; d = path.Dir(d) {
		f := path.Join(d, ".python-version")
		if isFile(c.src, f) {
			return c.readVersionFile(f), f
		}
		if d == "/" {
			break
		}
	}
	f := path.Join(root, "version")
	if isFile(c.src, f) {
		return c.readVersionFile(f), f
	}
	return nil, "no PYENV_VERSION, .python-version or " + f
}

// pyenvInstalled maps a version name to an installed version folder: the
// name itself, or (as pyenv 2.3+ does) the newest X.Y.Z matching a prefix.
func (c *collector) pyenvInstalled(root, v string) string {
	v = strings.TrimPrefix(v, "python-")
	if source.IsDir(c.src, path.Join(root, "versions", v)) {
		return v
	}
	ents, _ := c.src.ReadDir(path.Join(root, "versions"))
	var best string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, v+".") && digitsRe.MatchString(n) && (best == "" || version.Less(best, n)) {
			best = n
		}
	}
	return best
}

// throughShim finds what a pyenv shim for cmd runs.
func (c *collector) throughShim(shim, root, cmd string) (string, []string) {
	c.pyenvDir = root
	versions, why := c.pyenvVersions(root)
	steps := []string{fmt.Sprintf("%s is a pyenv shim (PYENV_ROOT=%s)", shim, root)}
	if len(versions) == 0 {
		versions = []string{"system"}
		why += ": system"
	}
	steps = append(steps, fmt.Sprintf("pyenv version %s (from %s)", strings.Join(versions, ":"), why))
	for _, v := range versions {
		if v == "system" {
			// pyenv runs the next cmd on PATH with its shims removed.
			var dirs []string
			for _, d := range strings.Split(c.env.Get("PATH"), ":") {
				if path.Clean(d) != path.Join(root, "shims") {
					dirs = append(dirs, d)
				}
			}
			if p, ok := source.LookPath(c.src, strings.Join(dirs, ":"), cmd); ok {
				steps = append(steps, fmt.Sprintf("system: %s is the next %s on PATH", p, cmd))
				return p, steps
			}
			steps = append(steps, "system: no "+cmd+" on PATH besides the shims")
			continue
		}
		name := c.pyenvInstalled(root, v)
		if name == "" {
			c.warn("pyenv version %q (from %s) is not installed in %s/versions", v, why, root)
			steps = append(steps, fmt.Sprintf("pyenv version %s is not installed", v))
			continue
		}
		p := path.Join(root, "versions", name, "bin", cmd)
		if source.IsExecutable(c.src, p) {
			steps = append(steps, fmt.Sprintf("pyenv %s: %s", name, p))
			return p, steps
		}
		steps = append(steps, fmt.Sprintf("pyenv %s has no %s", name, cmd))
	}
	return "", steps
}

// selectInterpreter names the interpreter to describe: --python (a file or
// an environment folder), else python3 (then python) on PATH, through a
// pyenv shim when that is what PATH gives.
func (c *collector) selectInterpreter(python string) (string, []string) {
	var steps []string
	if python != "" {
		p := python
		if !strings.HasPrefix(p, "/") {
			p = path.Join(c.cwd, p)
		}
		p = path.Clean(p)
		if source.IsDir(c.src, p) {
			for _, n := range []string{"bin/python3", "bin/python", "python3", "python"} {
				if source.IsExecutable(c.src, path.Join(p, n)) {
					p = path.Join(p, n)
					break
				}
			}
		}
		steps = append(steps, "--python "+python+": "+p)
		if root, ok := c.pyenvShim(p); ok {
			q, more := c.throughShim(p, root, path.Base(p))
			return q, append(steps, more...)
		}
		return p, steps
	}
	pathList := c.env.Get("PATH")
	for _, name := range []string{"python3", "python"} {
		p, ok := source.LookPath(c.src, pathList, name)
		if !ok {
			steps = append(steps, "no "+name+" on PATH")
			continue
		}
		steps = append(steps, fmt.Sprintf("%s on PATH: %s", name, p))
		if root, ok := c.pyenvShim(p); ok {
			q, more := c.throughShim(p, root, name)
			return q, append(steps, more...)
		}
		return p, steps
	}
	return "", steps
}
