package pyenv

import (
	"path"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// shebangInterpreter reads the interpreter a script runs: "#!/path/python",
// "#!/usr/bin/env python3" (looked up on PATH), or the sh trampoline pip
// writes when the path is too long for a shebang:
//
//	#!/bin/sh
//	'''exec' "/very/long/path/bin/python" "$0" "$@"
//	' '''
func (c *collector) shebangInterpreter(script string) string {
	text, err := readHead(c.src, script, maxScript)
	if err != nil || !strings.HasPrefix(text, "#!") {
		return ""
	}
	lines := strings.SplitN(universalNewlines(text), "\n", 3)
	f := strings.Fields(lines[0][2:])
	if len(f) == 0 {
		return ""
	}
	switch {
	case path.Base(f[0]) == "env":
		for _, a := range f[1:] {
			if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
				continue
			}
			if strings.HasPrefix(a, "/") {
				return a
			}
			p, _ := source.LookPath(c.src, c.env.Get("PATH"), a)
			return p
		}
		return ""
	case path.Base(f[0]) == "sh" && len(lines) > 1 && strings.HasPrefix(lines[1], "'''exec' "):
		rest := strings.TrimSpace(strings.TrimPrefix(lines[1], "'''exec' "))
		if strings.HasPrefix(rest, `"`) {
			if end := strings.IndexByte(rest[1:], '"'); end >= 0 {
				return rest[1 : 1+end]
			}
			return ""
		}
		if f := strings.Fields(rest); len(f) > 0 {
			return f[0]
		}
		return ""
	}
	return f[0]
}

// pip describes `pip` on PATH and which environment it installs into.
func (c *collector) pip(sel *facts.PythonEnv) *facts.Pip {
	p, ok := source.LookPath(c.src, c.env.Get("PATH"), "pip")
	if !ok {
		return nil
	}
	out := &facts.Pip{Path: p}
	script := p
	if root, ok := c.pyenvShim(p); ok {
		script, _ = c.throughShim(p, root, "pip")
		if script == "" {
			return out
		}
	}
	out.Interpreter = c.shebangInterpreter(script)
	if out.Interpreter == "" {
		return out
	}
	quiet := *c
	quiet.warn = func(string, ...any) {}
	if root, ok := quiet.pyenvShim(out.Interpreter); ok {
		// "#!/usr/bin/env python3" may land on a shim too.
		if q, _ := quiet.throughShim(out.Interpreter, root, path.Base(out.Interpreter)); q != "" {
			out.Interpreter = q
		}
	}
	e, _ := quiet.envFor(out.Interpreter)
	if e == nil {
		return out
	}
	out.Prefix = e.Prefix
	b, err2 := c.src.Resolve(e.Prefix)
	if sel != nil {
		a, err1 := c.src.Resolve(sel.Prefix)
		out.SameAsPython = err1 == nil && err2 == nil && a == b
	}
	// python3 on PATH, whatever --python selected: the environment `python3 -c
	// 'import X'` uses after `pip install X`.
	if interp, _ := quiet.selectInterpreter(""); interp != "" {
		if pe, _ := quiet.envFor(interp); pe != nil {
			out.PathPythonPrefix = pe.Prefix
			a, err1 := c.src.Resolve(pe.Prefix)
			out.SameAsPathPython = err1 == nil && err2 == nil && a == b
		}
	}
	return out
}
