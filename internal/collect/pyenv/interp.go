package pyenv

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/fastpath-dev/fastpath/internal/version"
)

// Reading caps: these files are small in real life, never trusted to be.
const (
	maxCfg      = 64 << 10
	maxScript   = 8 << 10
	maxMetadata = 4 << 20
	maxSmall    = 64 << 10
	maxRecord   = 64 << 20
	// maxExtensions: shared objects listed per distribution from its
	// RECORD (torch lists about 60, the largest real wheels a few
	// hundred). A 59 MB RECORD naming 4 million .so files took 39 s,
	// 741 MB and a 120 MB doctor --json; the files past the cap are
	// counted, not listed, with a warning.
	maxExtensions = 4096
	maxPth        = 1 << 20
)

// collector carries the source, its environment and the warnings of one run.
type collector struct {
	src  source.Source
	env  source.Env
	home string
	cwd  string // where pyenv looks for .python-version first
	// pyenvDir is PYENV_ROOT: the shim's own export when one was met,
	// else $PYENV_ROOT, else ~/.pyenv.
	pyenvDir string
	warn     func(format string, a ...any)
	listOnly bool // read only what pip list shows (Options.ListOnly)
	// native is Options.Native (nil outside the selected environment's
	// distributions).
	native func(dist, version, location string, files []string)
}

// env is a resolved environment with what sys.path computation needs.
type env struct {
	facts.PythonEnv
	mm      string // X.Y
	venv    bool
	system  bool // pyvenv.cfg's include-system-site-packages (venvs)
	platlib string
	debian  bool
}

// mmFromName returns "3.12" for "python3.12": what ^python(\d+\.\d+)$
// captures (a scan, not a regexp: it runs on every start; names_test.go
// compares the two).
func mmFromName(name string) string {
	mm, ok := strings.CutPrefix(name, "python")
	if !ok {
		return ""
	}
	major, minor, ok := strings.Cut(mm, ".")
	if !ok || !allDigits(major) || !allDigits(minor) {
		return ""
	}
	return mm
}

// allDigits reports whether s is one or more ASCII digits (regexp's \d).
func allDigits[T string | []byte](s T) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// majorMinor returns "3.12" for "3.12.3" (or "" when s is not a version).
func majorMinor(s string) string {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	for _, p := range parts[:2] {
		if _, err := strconv.Atoi(p); err != nil {
			return ""
		}
	}
	return parts[0] + "." + parts[1]
}

// readHead reads at most max bytes from the start of name.
func readHead(src source.Source, name string, max int64) (string, error) {
	f, err := src.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max))
	return string(b), err
}

func isFile(src source.Source, name string) bool {
	fi, err := src.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// envFor works out the environment interp (as a user names it) runs in.
// Like CPython's getpath and site.venv, a venv is recognised by a
// pyvenv.cfg next to the unresolved executable or one folder up.
func (c *collector) envFor(interp string) (*env, []string) {
	var steps []string
	e := &env{PythonEnv: facts.PythonEnv{Interpreter: interp, SitePath: []string{}}}
	exe, err := c.src.Resolve(interp)
	if err != nil {
		c.warn("python %s: %v", interp, err)
		return nil, steps
	}
	if !isFile(c.src, exe) {
		c.warn("python %s: not a file (%s)", interp, exe)
		return nil, steps
	}
	e.Executable = exe
	binDir := path.Dir(interp)
	var cfgPath string
	for _, p := range []string{path.Join(binDir, "pyvenv.cfg"), path.Join(path.Dir(binDir), "pyvenv.cfg")} {
		if isFile(c.src, p) {
			cfgPath = p
			break
		}
	}
	if cfgPath != "" {
		e.venv = true
		e.Kind = "venv"
		e.Prefix = path.Dir(binDir)
		text, err := readHead(c.src, cfgPath, maxCfg)
		if err != nil {
			c.warn("%s: %v", cfgPath, err)
		}
		cfg := parsePyvenvCfg(text)
		// site.py: a missing key means true.
		e.system = true
		if v, ok := cfg["include-system-site-packages"]; ok {
			e.system = strings.ToLower(v) == "true"
		}
		e.IncludeSystemSitePackages = e.system
		switch {
		case cfg["uv"] != "":
			e.Kind, e.CreatedBy = "uv", "uv "+cfg["uv"]
		case cfg["virtualenv"] != "":
			e.CreatedBy = "virtualenv " + cfg["virtualenv"]
		default:
			e.CreatedBy = "venv"
		}
		e.Version = cfg["version"]
		if e.Version == "" {
			e.Version = cfg["version_info"]
		}
		e.mm = majorMinor(e.Version)
		if e.mm == "" && e.Version != "" {
			c.warn("%s: version %q is not X.Y.Z", cfgPath, e.Version)
			e.Version = ""
		}
		steps = append(steps, fmt.Sprintf("%s: venv (include-system-site-packages = %t)", cfgPath, e.system))
		// The base interpreter: the venv's python links to it; a --copies
		// venv holds its own binary, and home names the base's bin.
		baseExe := exe
		if strings.HasPrefix(exe, e.Prefix+"/") {
			if home := cfg["home"]; strings.HasPrefix(home, "/") {
				for _, n := range []string{path.Base(interp), "python" + e.mm, "python3", "python"} {
					if r, err := c.src.Resolve(path.Join(home, n)); err == nil && isFile(c.src, r) {
						baseExe = r
						break
					}
				}
			}
		}
		if e.mm == "" {
			e.mm = mmFromName(path.Base(baseExe))
		}
		e.BasePrefix = c.prefixFromExe(baseExe, &e.mm)
	} else {
		e.Prefix = c.prefixFromExe(exe, &e.mm)
		e.BasePrefix = e.Prefix
		e.Kind = "system"
		if source.IsDir(c.src, path.Join(e.Prefix, "conda-meta")) {
			e.Kind = "conda"
		} else if strings.HasPrefix(e.Prefix, c.pyenvRoot()+"/versions/") {
			e.Kind = "pyenv"
		}
	}
	if e.mm == "" {
		c.warn("python %s: cannot tell its version (no pythonX.Y name, pyvenv.cfg or lib/pythonX.Y)", interp)
		return nil, steps
	}
	e.platlib = "lib"
	if isFile(c.src, path.Join(e.BasePrefix, "lib64", "python"+e.mm, "os.py")) {
		e.platlib = "lib64"
	}
	e.debian = e.BasePrefix == "/usr" && (source.IsDir(c.src, "/usr/lib/python3/dist-packages") || source.Exists(c.src, "/etc/debian_version"))
	if e.Version == "" {
		e.Version = c.baseVersion(e)
	}
	c.findPythonH(e)
	return e, steps
}

// prefixFromExe finds sys.prefix from the real executable the way getpath
// does: the nearest ancestor of its folder holding lib/pythonX.Y/os.py.
func (c *collector) prefixFromExe(exe string, mm *string) string {
	if *mm == "" {
		*mm = mmFromName(path.Base(exe))
	}
	dir := path.Dir(exe)
	for p := path.Dir(dir); ; p = path.Dir(p) {
		if *mm == "" {
			// python3 as the real binary: take the lib/pythonX.Y there.
			for _, lib := range []string{"lib", "lib64"} {
				ms := source.Glob(c.src, path.Join(p, lib, "python3.*", "os.py"))
				if len(ms) > 0 {
					sort.Slice(ms, func(i, j int) bool { return version.Less(ms[i], ms[j]) })
					*mm = mmFromName(path.Base(path.Dir(ms[len(ms)-1])))
					return p
				}
			}
		} else {
			for _, lib := range []string{"lib", "lib64"} {
				if isFile(c.src, path.Join(p, lib, "python"+*mm, "os.py")) {
					return p
				}
			}
		}
		if p == "/" {
			break
		}
	}
	return path.Dir(dir)
}

var digitsRe = lazyregexp.New(`\d+`)

// pyVersion finds PY_VERSION in patchlevel.h: the first match of
// #define\s+PY_VERSION\s+"([^"]+)" (regexp's \s: space, \t, \n, \f, \r),
// found by a scan (names_test.go compares the two).
func pyVersion(text string) (string, bool) {
	for rest := text; ; {
		i := strings.Index(rest, "#define")
		if i < 0 {
			return "", false
		}
		rest = rest[i+len("#define"):]
		s, ok := cutSpaces(rest)
		if !ok {
			continue
		}
		s, ok = strings.CutPrefix(s, "PY_VERSION")
		if !ok {
			continue
		}
		if s, ok = cutSpaces(s); !ok || !strings.HasPrefix(s, `"`) {
			continue
		}
		if v, _, ok := strings.Cut(s[1:], `"`); ok && v != "" {
			return v, true
		}
	}
}

// cutSpaces cuts one or more of regexp's \s from the start of s.
func cutSpaces(s string) (string, bool) {
	n := 0
	for n < len(s) && (s[n] == ' ' || s[n] == '\t' || s[n] == '\n' || s[n] == '\f' || s[n] == '\r') {
		n++
	}
	return s[n:], n > 0
}

// baseVersion reads the full version of e's base installation: patchlevel.h,
// conda-meta's python record, or the pyenv version folder's name.
func (c *collector) baseVersion(e *env) string {
	for _, inc := range []string{"python" + e.mm, "python" + e.mm + "m"} {
		if text, err := readHead(c.src, path.Join(e.BasePrefix, "include", inc, "patchlevel.h"), maxSmall); err == nil {
			if v, ok := pyVersion(text); ok && majorMinor(v) == e.mm {
				return v
			}
		}
	}
	for _, m := range source.Glob(c.src, path.Join(e.BasePrefix, "conda-meta", "python-"+e.mm+".*.json")) {
		// python-3.12.3-h..._0.json: the version is the second dash field.
		parts := strings.Split(strings.TrimSuffix(path.Base(m), ".json"), "-")
		if len(parts) >= 3 && majorMinor(parts[1]) == e.mm {
			return parts[1]
		}
	}
	if root := c.pyenvRoot(); strings.HasPrefix(e.BasePrefix, root+"/versions/") {
		name := path.Base(e.BasePrefix)
		if majorMinor(name) == e.mm {
			return name
		}
	}
	return e.mm
}

// findPythonH looks for Python.h of the base installation.
func (c *collector) findPythonH(e *env) {
	for _, inc := range []string{"python" + e.mm, "python" + e.mm + "m"} {
		p := path.Join(e.BasePrefix, "include", inc, "Python.h")
		e.PythonHSearched = append(e.PythonHSearched, p)
		if isFile(c.src, p) {
			e.PythonH = p
			return
		}
	}
}

// pyenvRoot is $PYENV_ROOT, or ~/.pyenv.
func (c *collector) pyenvRoot() string {
	if c.pyenvDir != "" {
		return c.pyenvDir
	}
	if r := c.env.Get("PYENV_ROOT"); strings.HasPrefix(r, "/") {
		return path.Clean(r)
	}
	return path.Join(c.home, ".pyenv")
}
