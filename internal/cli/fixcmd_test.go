package cli

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// This file reads the install commands fastpath prints back the way a shell
// and pip would: shell words, then pip's options and requirements. The
// offline tests (TestFixCommandsRunnable) and the PyPI oracle
// (TestNetworkFixCommandsResolve) share it.

// shellWords splits a command line as a POSIX shell does for the words
// fastpath writes: blanks separate, '...' and "..." quote (no expansion is
// done; $VAR stays as written), a backslash escapes one character outside
// single quotes. ok is false for an unterminated quote. An unquoted
// character a shell treats specially (< > | ; & ( ) ` and a leading ~) is
// reported in bare: the command would not run as written.
func shellWords(s string) (words []string, bare []string, ok bool) {
	var cur strings.Builder
	in := false // a word is being built
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words, cur, in = append(words, cur.String()), strings.Builder{}, false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, nil, false
			}
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		default:
			if strings.IndexByte("<>|;&()`", c) >= 0 {
				bare = append(bare, string(c))
			}
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, bare, true
}

// pipInstall is one pip (or uv pip) install command, read back.
type pipInstall struct {
	Cmd                                            string
	Env                                            []string // VAR=value words before the command
	Installer                                      string   // "pip" (python -m pip) or "uv"
	Verb                                           string   // install, download, wheel
	Python                                         string   // the interpreter: python -m pip's, uv's --python ("" none)
	Index                                          string   // --index-url ("" PyPI)
	Extra                                          []string // --extra-index-url
	FindLinks                                      []string
	NoIndex                                        bool
	NoBuildIsolation, NoDeps, OnlyBinary, NoBinary bool
	Reqs                                           []requirement
	Paths                                          []string // wheel files, folders, git+ URLs: not index requirements
}

// requirement is one requirement specifier of a pip command line.
type requirement struct {
	Text   string
	Name   string // as written
	Extras []string
	Spec   string // ">=2.4,<3", "==2.1.0", "" any
}

// Pinned is the version of an exact pin (==V, not ==V.*), else "".
func (r requirement) Pinned() string {
	if strings.HasPrefix(r.Spec, "==") && !strings.ContainsAny(r.Spec, ",*") {
		return strings.TrimPrefix(r.Spec, "==")
	}
	return ""
}

// canonical is a project name normalised as PEP 503 does.
func canonical(name string) string {
	name = strings.ToLower(name)
	return strings.NewReplacer("_", "-", ".", "-").Replace(name)
}

// parseRequirement reads NAME[extra,...]SPEC (no markers, no URLs).
func parseRequirement(s string) (requirement, error) {
	r := requirement{Text: s}
	i := strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	})
	if i < 0 {
		i = len(s)
	}
	r.Name = s[:i]
	if r.Name == "" {
		return r, fmt.Errorf("%q: no project name", s)
	}
	rest := s[i:]
	if strings.HasPrefix(rest, "[") {
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return r, fmt.Errorf("%q: unterminated extras", s)
		}
		for _, e := range strings.Split(rest[1:j], ",") {
			if e = strings.TrimSpace(e); e != "" {
				r.Extras = append(r.Extras, e)
			}
		}
		rest = rest[j+1:]
	}
	r.Spec = strings.ReplaceAll(rest, " ", "")
	if r.Spec != "" {
		for _, part := range strings.Split(r.Spec, ",") {
			if _, _, err := splitSpec(part); err != nil {
				return r, fmt.Errorf("%q: %v", s, err)
			}
		}
	}
	return r, nil
}

// splitSpec splits one clause (">=2.4") into its operator and version.
func splitSpec(clause string) (op, v string, err error) {
	for _, o := range []string{"===", "~=", "==", "!=", ">=", "<=", ">", "<"} {
		if strings.HasPrefix(clause, o) {
			v = clause[len(o):]
			if v == "" {
				return "", "", fmt.Errorf("clause %q has no version", clause)
			}
			return o, v, nil
		}
	}
	return "", "", fmt.Errorf("clause %q has no operator", clause)
}

// pipOptionsWithValue are pip install's options that take the next word.
var pipOptionsWithValue = map[string]bool{
	"--index-url": true, "-i": true, "--extra-index-url": true, "--find-links": true, "-f": true,
	"--only-binary": true, "--no-binary": true, "--python": true, "-c": true, "--constraint": true,
	"-r": true, "--requirement": true, "-t": true, "--target": true, "--prefix": true, "--root": true,
	"--config-settings": true, "-C": true, "--platform": true, "--python-version": true, "--abi": true,
	"--implementation": true, "--upgrade-strategy": true, "--progress-bar": true, "--trusted-host": true,
	"--cache-dir": true, "-d": true, "--dest": true, "-w": true, "--wheel-dir": true,
}

// parsePipInstall reads a command back as a pip install, download or wheel;
// ok is false for any other command (apt-get, export, pip uninstall...).
func parsePipInstall(cmd string) (p pipInstall, ok bool, err error) {
	words, _, good := shellWords(cmd)
	if !good {
		return p, false, fmt.Errorf("unterminated quote")
	}
	p.Cmd = cmd
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") && !strings.Contains(words[0], "/") {
		p.Env, words = append(p.Env, words[0]), words[1:]
	}
	var rest []string
	verb := func(w string) bool { return w == "install" || w == "download" || w == "wheel" }
	switch {
	case len(words) >= 4 && words[1] == "-m" && words[2] == "pip" && verb(words[3]):
		p.Installer, p.Python, p.Verb, rest = "pip", words[0], words[3], words[4:]
	case len(words) >= 3 && words[0] == "uv" && words[1] == "pip" && verb(words[2]):
		p.Installer, p.Verb, rest = "uv", words[2], words[3:]
	case len(words) >= 2 && (words[0] == "pip" || words[0] == "pip3") && verb(words[1]):
		p.Installer, p.Verb, rest = "bare-pip", words[1], words[2:]
	case len(words) >= 2 && words[0] == "%pip" && verb(words[1]):
		// IPython's magic: installs into the notebook kernel's Python.
		p.Installer, p.Verb, rest = "jupyter", words[1], words[2:]
	default:
		return p, false, nil
	}
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		name, val, hasVal := strings.Cut(w, "=")
		if !strings.HasPrefix(w, "-") {
			if strings.Contains(w, "/") || strings.HasPrefix(w, ".") || strings.HasSuffix(w, ".whl") || strings.Contains(w, "$") {
				p.Paths = append(p.Paths, w)
				continue
			}
			r, err := parseRequirement(w)
			if err != nil {
				return p, true, err
			}
			p.Reqs = append(p.Reqs, r)
			continue
		}
		if !hasVal {
			name = w
			if pipOptionsWithValue[w] {
				if i+1 >= len(rest) {
					return p, true, fmt.Errorf("%s without a value", w)
				}
				i++
				val = rest[i]
			}
		}
		switch name {
		case "--index-url", "-i":
			p.Index = strings.TrimSuffix(val, "/")
		case "--extra-index-url":
			p.Extra = append(p.Extra, val)
		case "--find-links", "-f":
			p.FindLinks = append(p.FindLinks, val)
		case "--no-index":
			p.NoIndex = true
		case "--no-build-isolation":
			p.NoBuildIsolation = true
		case "--no-deps":
			p.NoDeps = true
		case "--only-binary":
			p.OnlyBinary = true
		case "--no-binary":
			p.NoBinary = true
		case "--python":
			p.Python = val
		}
	}
	return p, true, nil
}

// TestFixCommandsRunnable reads back every command of every fix that
// explain (the whole corpus), doctor and plan print for the seed container
// and its variants (fixCommandSources, all offline): each must be valid
// shell with no unquoted < > | ; & ( ) (a `pip install torch>=2.4` writes a
// file named =2.4), no placeholder left ({torch}, <version>, PACKAGE), and
// each pip install must parse and run with the environment's own installer:
// its interpreter's `-m pip`, or `uv pip install --python INTERPRETER` in a
// uv environment without pip; never a bare `pip`.
func TestFixCommandsRunnable(t *testing.T) {
	placeholder := regexp.MustCompile(`\{[A-Za-z_][A-Za-z_0-9]*\}|<[a-z][a-z_ -]*>|\bPACKAGE\b|/path/to/`)
	n, pips := 0, 0
	for _, fx := range fixCommandSources(t) {
		pipThere := false // an earlier command of the fix installed pip
		for _, c := range fx.commands {
			n++
			words, bare, ok := shellWords(c)
			if !ok {
				t.Errorf("%s: %q: unterminated quote", fx.from, c)
				continue
			}
			for _, w := range words {
				if placeholder.MatchString(w) {
					t.Errorf("%s: %q: placeholder %q", fx.from, c, w)
				}
			}
			if fx.kind == "uv" && !pipThere && slices.Contains(words, "-m") && slices.Contains(words, "pip") {
				t.Errorf("%s: %q: a uv environment without pip has no -m pip", fx.from, c)
			}
			if fx.kind == "conda" && len(words) > 1 && words[0] == "conda" && (words[1] == "install" || words[1] == "remove") {
				prefix := filepath.Dir(filepath.Dir(fx.python))
				if i := slices.Index(words, "-p"); i < 0 || i+1 >= len(words) || words[i+1] != prefix {
					t.Errorf("%s: %q: a conda command for %s must name it (-p %s), not the active environment", fx.from, c, fx.python, prefix)
				}
			}
			// A pytorch/pytorch tag names a torch release and one of its
			// CUDA builds (kb torch_release_cuda).
			if len(words) == 3 && words[0] == "docker" && words[1] == "pull" {
				if m := regexp.MustCompile(`^pytorch/pytorch:([0-9.]+)-cuda([0-9]+\.[0-9]+)-`).FindStringSubmatch(words[2]); m != nil && !remedy.TorchBuildExists(m[1], m[2]) {
					t.Errorf("%s: %q: torch %s has no CUDA %s build, so no such image", fx.from, c, m[1], m[2])
				}
			}
			p, isPip, err := parsePipInstall(c)
			if err != nil {
				t.Errorf("%s: %q: %v", fx.from, c, err)
				continue
			}
			if !isPip {
				continue
			}
			pips++
			if slices.ContainsFunc(p.Reqs, func(r requirement) bool { return r.Name == "pip" }) {
				pipThere = true
			}
			if len(bare) > 0 {
				t.Errorf("%s: %q: unquoted %q in a pip command", fx.from, c, bare)
			}
			if p.Installer == "bare-pip" {
				t.Errorf("%s: %q: a bare pip may install into another environment", fx.from, c)
			}
			if len(p.Reqs)+len(p.Paths) == 0 {
				t.Errorf("%s: %q installs nothing", fx.from, c)
			}
			if fx.python == "" {
				continue
			}
			if p.Verb != "install" {
				continue // pip download and pip wheel run with the interpreter's pip (after uv installed it)
			}
			switch {
			case fx.kind == "uv" && p.Installer != "uv":
				t.Errorf("%s: %q: a uv environment without pip needs uv pip install --python %s", fx.from, c, fx.python)
			case p.Python != fx.python:
				t.Errorf("%s: %q: installs with %q, not the environment's %s", fx.from, c, p.Python, fx.python)
			}
		}
	}
	t.Logf("%d commands read, %d pip installs", n, pips)
	if pips < 20 {
		t.Errorf("only %d pip installs read", pips)
	}
}

// TestShellWordsAndRequirements: the reader the oracle uses reads fastpath's
// own quoting back and catches what a shell would mangle.
func TestShellWordsAndRequirements(t *testing.T) {
	for _, tc := range []struct {
		cmd    string
		reqs   []string // name|spec|extras
		bare   bool
		python string
		inst   string
	}{
		{`/v/bin/python3 -m pip install 'torch>=2.4' ninja`, []string{"torch|>=2.4|", "ninja||"}, false, "/v/bin/python3", "pip"},
		{`/v/bin/python3 -m pip install torch>=2.4`, []string{"torch|>=2.4|"}, true, "/v/bin/python3", "pip"},
		{`uv pip install --python /v/bin/python3 --no-build-isolation "flash-attn==2.8.3"`, []string{"flash-attn|==2.8.3|"}, false, "/v/bin/python3", "uv"},
		{`%pip install --no-build-isolation "flash-attn==2.8.3"`, []string{"flash-attn|==2.8.3|"}, false, "", "jupyter"},
		{`MAX_JOBS=4 python3 -m pip install 'vllm[audio]==0.9.1' --index-url https://download.pytorch.org/whl/cu128`, []string{"vllm|==0.9.1|audio"}, false, "python3", "pip"},
		{`pip install xformers`, []string{"xformers||"}, false, "", "bare-pip"},
		{remedy.Command("python3", "-m", "pip", "install", "kernels>=0.16.0,<0.17.0"), []string{"kernels|>=0.16.0,<0.17.0|"}, false, "python3", "pip"},
	} {
		_, bare, ok := shellWords(tc.cmd)
		p, isPip, err := parsePipInstall(tc.cmd)
		if !ok || !isPip || err != nil {
			t.Errorf("%q: ok %v pip %v err %v", tc.cmd, ok, isPip, err)
			continue
		}
		var got []string
		for _, r := range p.Reqs {
			got = append(got, r.Name+"|"+r.Spec+"|"+strings.Join(r.Extras, ","))
		}
		if strings.Join(got, " ") != strings.Join(tc.reqs, " ") || (len(bare) > 0) != tc.bare || p.Python != tc.python || p.Installer != tc.inst {
			t.Errorf("%q: reqs %q bare %q python %q installer %q", tc.cmd, got, bare, p.Python, p.Installer)
		}
	}
	if !matchSpec("2.5.1", ">=2.4,<3") || matchSpec("2.3.0", ">=2.4") || !matchSpec("13.0.88", "==13.0.*") || matchSpec("13.1.0", "==13.0.*") ||
		!matchSpec("2.5.1+cu124", "==2.5.1") || !matchSpec("0.0.28.post3", "~=0.0.28") || matchSpec("2.6.0", "==2.5.1") {
		t.Error("matchSpec")
	}
	if !linuxWheel("xformers-0.0.28.post3-cp311-cp311-manylinux_2_28_x86_64.whl") || linuxWheel("x-1-cp38-cp38-manylinux1_x86_64.whl") ||
		!linuxWheel("sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl") || linuxWheel("x-1-cp312-cp312-macosx_11_0_arm64.whl") || !linuxWheel("ninja-1.11-py3-none-any.whl") ||
		!linuxWheel("xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl") || linuxWheel("xformers-0.0.35-py39-none-win_amd64.whl") {
		t.Error("linuxWheel")
	}
}
