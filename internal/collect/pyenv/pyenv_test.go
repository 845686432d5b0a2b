package pyenv

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// ubuntu writes an Ubuntu-like root: /usr python 3.12.3 with headers and
// Debian's dist-packages layout.
func ubuntu(t *testing.T) *fixture.Tree {
	t.Helper()
	tr := fixture.New(t.TempDir())
	tr.File("/etc/debian_version", "trixie/sid\n")
	tr.PythonInstall("/usr", "3.12.3", true)
	tr.Dir("/usr/lib/python3/dist-packages").Dir("/usr/local/lib/python3.12/dist-packages")
	return tr
}

func collectRoot(t *testing.T, tr *fixture.Tree, python string, env ...string) (facts.Python, []string) {
	t.Helper()
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	e, err := source.ParseEnv(env)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(tr.Root, e)
	if err != nil {
		t.Fatal(err)
	}
	return Collect(context.Background(), src, python)
}

func names(ds []facts.Distribution) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

func find(t *testing.T, e *facts.PythonEnv, name string) facts.Distribution {
	t.Helper()
	for _, d := range e.Distributions {
		if d.Name == name && !d.Shadowed {
			return d
		}
	}
	t.Fatalf("%s not found in %q", name, names(e.Distributions))
	return facts.Distribution{}
}

const venvPATH = "PATH=/root/venv/bin:/usr/local/bin:/usr/bin:/bin"

func TestVenvOverDebianPython(t *testing.T) {
	for _, system := range []bool{false, true} {
		t.Run(map[bool]string{false: "isolated", true: "system-site"}[system], func(t *testing.T) {
			tr := ubuntu(t)
			v := tr.Venv("/root/venv", "/usr", "3.12.3", fixture.VenvOptions{SystemSitePackages: system, Pip: true})
			tr.Dist(v.SitePackages(), fixture.Dist{Name: "numpy", Version: "2.3.5", Tag: "cp312-cp312-manylinux_2_27_x86_64",
				Files: []string{"numpy/__init__.py", "numpy/_core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so", "numpy.libs/libscipy_openblas64_-ff651d7f.so.0.3"}})
			tr.Dist("/usr/lib/python3/dist-packages", fixture.Dist{Name: "numpy", Version: "1.26.4", Installer: "debian"})
			tr.Dist("/usr/lib/python3/dist-packages", fixture.Dist{Name: "PyYAML", Version: "6.0.1", EggInfo: true})
			tr.Dist("/usr/local/lib/python3.12/dist-packages", fixture.Dist{Name: "requests", Version: "2.31.0"})
			tr.Dist("/root/.local/lib/python3.12/site-packages", fixture.Dist{Name: "userpkg", Version: "1.0"})
			py, warnings := collectRoot(t, tr, "", venvPATH, "HOME=/root")
			if len(warnings) > 0 {
				t.Errorf("warnings: %q", warnings)
			}
			e := py.Selected
			if e == nil || e.Kind != "venv" || e.Prefix != "/root/venv" || e.BasePrefix != "/usr" || e.Version != "3.12.3" {
				t.Fatalf("selected %+v", e)
			}
			if e.IncludeSystemSitePackages != system || e.PythonH != "/usr/include/python3.12/Python.h" {
				t.Errorf("system site %v, Python.h %q", e.IncludeSystemSitePackages, e.PythonH)
			}
			wantPath := []string{"/root/venv/lib/python3.12/site-packages"}
			wantList := []string{"numpy", "pip"}
			if system {
				wantPath = append(wantPath, "/root/.local/lib/python3.12/site-packages",
					"/usr/local/lib/python3.12/dist-packages", "/usr/lib/python3/dist-packages")
				wantList = []string{"numpy", "pip", "PyYAML", "requests", "userpkg"}
			}
			if !slices.Equal(e.SitePath, wantPath) {
				t.Errorf("site path %q, want %q", e.SitePath, wantPath)
			}
			if got := names(Listed(e)); !slices.Equal(got, wantList) {
				t.Errorf("listed %q, want %q", got, wantList)
			}
			np := find(t, e, "numpy")
			if np.Version != "2.3.5" || np.Location != wantPath[0] || len(np.Tags) != 1 || np.Files != 7 ||
				!slices.Equal(np.Extensions, []string{"numpy/_core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so", "numpy.libs/libscipy_openblas64_-ff651d7f.so.0.3"}) {
				t.Errorf("numpy %+v", np)
			}
			shadowed := 0
			for _, d := range e.Distributions {
				if d.Shadowed {
					shadowed++
					if d.Name != "numpy" || d.Version != "1.26.4" || d.Installer != "debian" {
						t.Errorf("shadowed %+v", d)
					}
				}
			}
			if want := map[bool]int{false: 0, true: 1}[system]; shadowed != want {
				t.Errorf("%d shadowed, want %d", shadowed, want)
			}
			if system {
				if y := find(t, e, "PyYAML"); y.Format != "egg-info" {
					t.Errorf("PyYAML %+v", y)
				}
			}
			if py.Pip == nil || py.Pip.Path != "/root/venv/bin/pip" || !py.Pip.SameAsPython || py.Pip.Prefix != "/root/venv" {
				t.Errorf("pip %+v", py.Pip)
			}
		})
	}
}

func TestUVVenvAndConda(t *testing.T) {
	tr := ubuntu(t)
	tr.PythonInstall("/opt/conda", "3.11.9", true)
	tr.File("/opt/conda/conda-meta/python-3.11.9-h955ad1f_0.json", "{}")
	tr.Dist("/opt/conda/lib/python3.11/site-packages", fixture.Dist{Name: "conda", Version: "24.1.2"})
	tr.Venv("/srv/app/.venv", "/opt/conda", "3.11.9", fixture.VenvOptions{CreatedBy: "uv"})
	tr.Dist("/srv/app/.venv/lib/python3.11/site-packages", fixture.Dist{Name: "six", Version: "1.17.0", Installer: "uv"})

	py, _ := collectRoot(t, tr, "/srv/app/.venv")
	e := py.Selected
	if e == nil || e.Kind != "uv" || e.CreatedBy != "uv 0.9.5" || e.Version != "3.11.9" || e.BasePrefix != "/opt/conda" {
		t.Fatalf("uv venv: %+v (%q)", e, py.Resolution)
	}
	if got := string(PipListJSON(e)); got != `[{"name": "six", "version": "1.17.0"}]` {
		t.Errorf("uv venv pip list %s", got)
	}

	py, _ = collectRoot(t, tr, "", "PATH=/opt/conda/bin:/usr/bin")
	e = py.Selected
	if e == nil || e.Kind != "conda" || e.Version != "3.11.9" || e.Prefix != "/opt/conda" ||
		!slices.Equal(e.SitePath, []string{"/opt/conda/lib/python3.11/site-packages"}) {
		t.Fatalf("conda: %+v", e)
	}
	var others []string
	for _, o := range py.Others {
		others = append(others, o.Kind+":"+o.Prefix)
	}
	if !slices.Equal(others, []string{"system:/usr"}) {
		t.Errorf("others %q", others)
	}
}

// pyenvTree writes ~/.pyenv with a shim, versions 3.11.7 and 3.12.1, and
// a system python3 in /usr/bin.
func pyenvTree(t *testing.T) *fixture.Tree {
	tr := ubuntu(t)
	shim := "#!/usr/bin/env bash\nset -e\n[ -n \"$PYENV_DEBUG\" ] && set -x\n\nprogram=\"${0##*/}\"\n\nexport PYENV_ROOT=\"/root/.pyenv\"\nexec \"/root/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n"
	tr.Exec("/root/.pyenv/shims/python3", shim).Exec("/root/.pyenv/shims/pip", shim)
	for _, v := range []string{"3.11.7", "3.12.1"} {
		pfx := "/root/.pyenv/versions/" + v
		tr.PythonInstall(pfx, v, true)
		tr.Exec(pfx+"/bin/pip", fixture.PipScript(pfx+"/bin/python"+fixture.MajorMinor(v)))
	}
	tr.Exec("/usr/bin/pip", fixture.PipScript("/usr/bin/python3"))
	return tr
}

func TestPyenvShimSelection(t *testing.T) {
	const path = "PATH=/root/.pyenv/shims:/usr/local/bin:/usr/bin:/bin"
	cases := []struct {
		name   string
		setup  func(tr *fixture.Tree)
		env    []string
		prefix string
		kind   string
		why    string
	}{
		{"global version file", func(tr *fixture.Tree) { tr.File("/root/.pyenv/version", "3.12.1\n") }, nil,
			"/root/.pyenv/versions/3.12.1", "pyenv", "/root/.pyenv/version"},
		{"PYENV_VERSION wins", func(tr *fixture.Tree) { tr.File("/root/.pyenv/version", "3.12.1\n") }, []string{"PYENV_VERSION=3.11.7"},
			"/root/.pyenv/versions/3.11.7", "pyenv", "PYENV_VERSION=3.11.7"},
		{".python-version in a parent of PWD", func(tr *fixture.Tree) {
			tr.File("/root/.pyenv/version", "3.12.1\n").File("/work/.python-version", "# pinned\n3.11\n").Dir("/work/proj/src")
		}, []string{"PWD=/work/proj/src"}, "/root/.pyenv/versions/3.11.7", "pyenv", "/work/.python-version"},
		{"no version: system", nil, nil, "/usr", "system", "system"},
		{"missing version falls through to the next", func(tr *fixture.Tree) { tr.File("/root/.pyenv/version", "3.9.1\nsystem\n") }, nil,
			"/usr", "system", "/root/.pyenv/version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := pyenvTree(t)
			if c.setup != nil {
				c.setup(tr)
			}
			py, _ := collectRoot(t, tr, "", append([]string{path, "HOME=/root"}, c.env...)...)
			e := py.Selected
			if e == nil || e.Prefix != c.prefix || e.Kind != c.kind {
				t.Fatalf("selected %+v, resolution %q", e, py.Resolution)
			}
			if !strings.Contains(strings.Join(py.Resolution, "\n"), c.why) {
				t.Errorf("resolution %q does not say %q", py.Resolution, c.why)
			}
			if py.Pip == nil || !py.Pip.SameAsPython {
				t.Errorf("pip through the shim: %+v", py.Pip)
			}
		})
	}
}

func TestEditableInstalls(t *testing.T) {
	tr := ubuntu(t)
	v := tr.Venv("/root/venv", "/usr", "3.12.3", fixture.VenvOptions{})
	sp := v.SitePackages()
	// PEP 660: direct_url.json with a percent-encoded file: URL.
	tr.Dist(sp, fixture.Dist{Name: "fla_core", Version: "0.4.1", Editable: "/src/my%20fla%C3%A9"})
	// Legacy `setup.py develop`: an .egg-link and an easy-install.pth line.
	tr.File("/src/legacy/legacy_pkg.egg-info/PKG-INFO", "Metadata-Version: 1.0\nName: legacy-pkg\nVersion: 0.1.dev0\n")
	tr.File(sp+"/legacy-pkg.egg-link", "/src/legacy\n.\n")
	tr.File(sp+"/easy-install.pth", "/src/legacy\nimport sys; sys.path.append('/nowhere')\n/does/not/exist\n")
	py, warnings := collectRoot(t, tr, "", venvPATH)
	e := py.Selected
	if len(warnings) > 0 {
		t.Errorf("warnings %q", warnings)
	}
	if !slices.Equal(e.SitePath, []string{sp, "/src/legacy"}) {
		t.Errorf("site path %q", e.SitePath)
	}
	want := `[{"name": "fla_core", "version": "0.4.1", "editable_project_location": "/src/my fla\u00e9"}, ` +
		`{"name": "legacy-pkg", "version": "0.1.dev0", "editable_project_location": "/src/legacy"}]`
	if got := string(PipListJSON(e)); got != want {
		t.Errorf("pip list\n got %s\nwant %s", got, want)
	}
	if d := find(t, e, "legacy-pkg"); d.Location != "/src/legacy" || !d.Editable {
		t.Errorf("legacy %+v", d)
	}
}

func TestPipShebangMismatch(t *testing.T) {
	tr := ubuntu(t)
	tr.Venv("/root/venv", "/usr", "3.12.3", fixture.VenvOptions{})
	tr.Exec("/usr/local/bin/pip", fixture.PipScript("/usr/bin/python3"))
	py, _ := collectRoot(t, tr, "", venvPATH)
	if p := py.Pip; p == nil || p.Path != "/usr/local/bin/pip" || p.Interpreter != "/usr/bin/python3" || p.Prefix != "/usr" || p.SameAsPython {
		t.Errorf("pip %+v", py.Pip)
	}
	// pip's sh trampoline for long interpreter paths names the venv.
	long := "/root/venv/bin/python"
	tr.Exec("/usr/local/bin/pip", "#!/bin/sh\n'''exec' \""+long+"\" \"$0\" \"$@\"\n' '''\n# -*- coding: utf-8 -*-\nimport re\n")
	py, _ = collectRoot(t, tr, "", venvPATH)
	if p := py.Pip; p == nil || p.Interpreter != long || !p.SameAsPython {
		t.Errorf("trampoline pip %+v", py.Pip)
	}
}

func TestBadInputWarnsNeverCrashes(t *testing.T) {
	tr := ubuntu(t)
	v := tr.Venv("/root/venv", "/usr", "3.12.3", fixture.VenvOptions{})
	sp := v.SitePackages()
	tr.Dist(sp, fixture.Dist{Name: "good", Version: "1.0"})
	tr.File(sp+"/noname-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nVersion: 1.0\n")
	tr.File(sp+"/junk-1.0.dist-info/METADATA", "\x00\xff\xfe\x80binary junk")
	tr.File(sp+"/junk-1.0.dist-info/RECORD", "\"unterminated,\n\x00\n")
	tr.File(sp+"/badurl-1.0.dist-info/METADATA", "Name: badurl\nVersion: 1.0\n")
	tr.File(sp+"/badurl-1.0.dist-info/direct_url.json", "{not json")
	tr.Dir(sp + "/~ood-1.0.dist-info")
	tr.Symlink(sp+"/dangling-1.0.dist-info", "/nowhere")
	tr.Symlink(sp+"/loop-1.0.dist-info", "loop-1.0.dist-info")
	tr.Symlink(sp+"/loop.pth", "loop.pth")
	tr.File(sp+"/junk.pth", "\x00\x01\x02\n../../../../..\n")
	tr.File("/root/venv/pyvenv.cfg", "\x00\xff=\n==\nversion = banana\nhome\n")
	py, warnings := collectRoot(t, tr, "", venvPATH)
	e := py.Selected
	if e == nil {
		t.Fatalf("nothing selected: %q", warnings)
	}
	if got := names(Listed(e)); !slices.Equal(got, []string{"badurl", "good"}) {
		t.Errorf("listed %q", got)
	}
	joined := strings.Join(warnings, "\n")
	for _, w := range []string{"noname-1.0.dist-info", "junk-1.0.dist-info", "direct_url.json", "dangling-1.0.dist-info", "loop-1.0.dist-info", "banana"} {
		if !strings.Contains(joined, w) {
			t.Errorf("no warning about %s in:\n%s", w, joined)
		}
	}
	// A python3 that loops or dangles is a warning, not a selection.
	tr2 := ubuntu(t)
	tr2.Symlink("/root/venv/bin/python3", "python3")
	tr2.Symlink("/opt/bin/python3", "/missing/python3")
	for _, p := range []string{"/root/venv/bin/python3", "/opt/bin/python3"} {
		py, warnings := collectRoot(t, tr2, p)
		if py.Selected != nil || len(warnings) == 0 {
			t.Errorf("%s: selected %+v, warnings %q", p, py.Selected, warnings)
		}
	}
}

func TestSeedContainer(t *testing.T) {
	dir := t.TempDir()
	if err := fixture.Seed(dir); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(dir, source.Env{"PATH": fixture.SeedPATH, "HOME": "/root"})
	if err != nil {
		t.Fatal(err)
	}
	py, warnings := Collect(context.Background(), src, "")
	if len(warnings) > 0 || py.Selected == nil || py.Selected.Prefix != fixture.SeedVenv {
		t.Fatalf("selected %+v, warnings %q", py.Selected, warnings)
	}
	listed := Listed(py.Selected)
	// 39 seed distributions, torch and pip, sorted by canonical name.
	if len(listed) != 41 || listed[0].Name != "einops" || listed[36].Name != "torch" {
		t.Errorf("%d listed: %q", len(listed), names(listed))
	}
}

// Metadata header parsing follows email.message_from_string as
// importlib.metadata uses it.
func TestParseMetadata(t *testing.T) {
	cases := []struct {
		in, name, version string
		nameOK            bool
	}{
		{"Metadata-Version: 2.1\nName: foo\nVersion: 1.0\n\nName: body\n", "foo", "1.0", true},
		{"name: first\nNAME: second\nversion:\t2.0  \n", "first", "2.0  ", true},
		// importlib.metadata dedents "        " + value (checked with CPython 3.11).
		{"Name: folded\n  continued\nVersion: 1\n", "      folded\ncontinued", "1", true},
		{"Name: a\r\nVersion: 3\r\n", "a", "3", true},
		{"From someone\nName: x\n", "x", "", true},
		{"Summary: s\nnot a header\nName: late\n", "", "", false},
		{"Key With Space: v\nName: x\n", "", "", false},
		{":empty\nName: y\n", "y", "", true},
		{"", "", "", false},
	}
	for _, c := range cases {
		md := parseMetadata(c.in)
		name, ok := md.Get("Name")
		version, _ := md.Get("Version")
		if name != c.name || ok != c.nameOK || version != c.version {
			t.Errorf("%q: name %q (%v), version %q; want %q (%v), %q", c.in, name, ok, version, c.name, c.nameOK, c.version)
		}
	}
}

func TestPipListJSONEscapingAndVersions(t *testing.T) {
	e := &facts.PythonEnv{Distributions: []facts.Distribution{
		{Name: "Zeta_pkg", Version: "1.0.0-DEV1", MetadataDir: "/s/Zeta_pkg-1.0.0.dev1.dist-info"},
		{Name: "naïve \"q\"\t😀", Version: "2", MetadataDir: "/s/naive-2.dist-info"},
		{Name: "argparse", Version: "1.4.0", MetadataDir: "/s/argparse-1.4.0.dist-info"},
		{Name: "a.b", Version: "not a version", MetadataDir: "/s/a.b-x.dist-info"},
		{Name: "a-c", Version: " 1.0 ", MetadataDir: "/s/a_c-1.0.dist-info"},
	}}
	want := `[{"name": "a.b", "version": "not a version"}, {"name": "a-c", "version": "1.0"}, ` +
		`{"name": "na\u00efve \"q\"\t\ud83d\ude00", "version": "2"}, {"name": "Zeta_pkg", "version": "1.0.0.dev1"}]`
	if got := string(PipListJSON(e)); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

func TestParseDirectURL(t *testing.T) {
	cases := []struct {
		in, loc string
		valid   bool
	}{
		{`{"url": "file:///a/b%20c", "dir_info": {"editable": true}}`, "/a/b c", true},
		{`{"url": "file://localhost/x?q#f", "dir_info": {"editable": true}}`, "/x", true},
		{`{"url": "file:///a", "dir_info": {}}`, "", true},
		{`{"url": "https://h/x.whl", "archive_info": {"hash": "sha256=0"}}`, "", true},
		{`{"url": "file:///a", "dir_info": {"editable": 1}}`, "", false},
		{`{"url": "file:///a", "dir_info": {}, "archive_info": {}}`, "", false},
		{`{"url": "file://remote/a", "dir_info": {"editable": true}}`, "", false},
		{`[]`, "", false},
	}
	for _, c := range cases {
		loc, valid, _ := parseDirectURL(c.in)
		if loc != c.loc || valid != c.valid {
			t.Errorf("%s: %q %v, want %q %v", c.in, loc, valid, c.loc, c.valid)
		}
	}
}

func FuzzMetadata(f *testing.F) {
	for _, s := range []string{"Name: a\nVersion: 1\n", "From x\n :\n\tb\n\n", "Name: x\n  y\n\t z\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		md := parseMetadata(s)
		if len(md) > maxHeaders {
			t.Fatalf("%d headers", len(md))
		}
		for _, h := range md {
			if h.name == "" || strings.ContainsAny(h.name, ": \n") {
				t.Fatalf("bad header name %q", h.name)
			}
		}
	})
}

func FuzzPyvenvCfg(f *testing.F) {
	for _, s := range []string{"home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n", "uv = 0.9.5\nversion_info = 3.12\n", "=\n==\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg := parsePyvenvCfg(s)
		for k, v := range cfg {
			if k != strings.TrimSpace(k) || v != strings.TrimSpace(v) {
				t.Fatalf("untrimmed %q=%q", k, v)
			}
		}
		// A venv with this pyvenv.cfg must never crash collection.
		dir := t.TempDir()
		tr := fixture.New(dir)
		tr.PythonInstall("/usr", "3.12.3", false)
		tr.Venv("/v", "/usr", "3.12.3", fixture.VenvOptions{})
		if err := os.WriteFile(filepath.Join(dir, "v", "pyvenv.cfg"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		src, _ := source.Root(dir, source.Env{"PATH": "/v/bin"})
		Collect(context.Background(), src, "")
	})
}

// `fastpath packages` (ListOnly) lists exactly what doctor's full read
// lists, pip's JSON byte for byte: on the seed container, and on a venv
// with a PKG-INFO-only distribution, a PEP 660 editable (direct_url.json)
// and a legacy egg-link. (ListOnly does not list the dist-info folders
// first, as the full read does; a slip there once listed nothing.)
func TestListOnlyListsWhatFullReadLists(t *testing.T) {
	seed := t.TempDir()
	if err := fixture.Seed(seed); err != nil {
		t.Fatal(err)
	}
	tr := ubuntu(t)
	v := tr.Venv("/root/venv", "/usr", "3.12.3", fixture.VenvOptions{})
	sp := v.SitePackages()
	tr.Dist(sp, fixture.Dist{Name: "fla_core", Version: "0.4.1", Editable: "/src/my%20fla%C3%A9"})
	tr.Dist(sp, fixture.Dist{Name: "plain", Version: "2.0"})
	tr.File(sp+"/old_pkg-1.0.dist-info/PKG-INFO", "Metadata-Version: 1.0\nName: old-pkg\nVersion: 1.0\n")
	tr.File("/src/legacy/legacy_pkg.egg-info/PKG-INFO", "Metadata-Version: 1.0\nName: legacy-pkg\nVersion: 0.1.dev0\n")
	tr.File(sp+"/legacy-pkg.egg-link", "/src/legacy\n.\n")
	tr.File(sp+"/easy-install.pth", "/src/legacy\n")
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		root string
		env  source.Env
		min  int
	}{
		{seed, source.Env{"PATH": fixture.SeedPATH, "HOME": "/root"}, 41},
		{tr.Root, source.Env{"PATH": "/root/venv/bin:/usr/local/bin:/usr/bin:/bin"}, 4},
	} {
		pipList := func(o Options) string {
			src, err := source.Root(c.root, c.env)
			if err != nil {
				t.Fatal(err)
			}
			py, _ := CollectWith(context.Background(), src, "", o)
			if py.Selected == nil {
				t.Fatalf("%s: no environment selected", c.root)
			}
			if n := len(Listed(py.Selected)); n < c.min {
				t.Errorf("%s (ListOnly %v): %d distributions listed, want %d", c.root, o.ListOnly, n, c.min)
			}
			return string(PipListJSON(py.Selected))
		}
		if full, list := pipList(Options{}), pipList(Options{ListOnly: true}); full != list {
			t.Errorf("%s: ListOnly lists\n%s\nthe full read\n%s", c.root, list, full)
		}
	}
}

// Options.Located is called once, before the other environments are
// looked for and before the distributions are all read, with a copy of the
// selected environment that has none of them (the collectors started from
// it must not see a half-read list); OthersFound follows, once, with the
// other environments as the facts give them. Located gets nil where no
// interpreter is found. What is collected does not depend on either.
func TestLocatedBeforeDistributions(t *testing.T) {
	dir := t.TempDir()
	if err := fixture.Seed(dir); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(dir, source.Env{"PATH": fixture.SeedPATH, "HOME": "/root"})
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	var sel *facts.PythonEnv
	var others []facts.PythonEnv
	py, _ := CollectWith(context.Background(), src, "", Options{
		Located:     func(s *facts.PythonEnv) { calls = append(calls, "located"); sel = s },
		OthersFound: func(o []facts.PythonEnv) { calls = append(calls, "others"); others = o },
	})
	if !slices.Equal(calls, []string{"located", "others"}) || sel == nil {
		t.Fatalf("calls %q, selected %v; want located then others, once each", calls, sel)
	}
	if sel == py.Selected || sel.Distributions != nil || sel.NumDists != 0 {
		t.Errorf("Located got the environment itself or its distributions (%d)", len(sel.Distributions))
	}
	if sel.Prefix != py.Selected.Prefix || !slices.Equal(sel.SitePath, py.Selected.SitePath) || sel.Version != py.Selected.Version {
		t.Errorf("Located got prefix %s, sys.path %q; the facts say %s, %q", sel.Prefix, sel.SitePath, py.Selected.Prefix, py.Selected.SitePath)
	}
	if len(py.Selected.Distributions) != 41 {
		t.Errorf("%d distributions collected, want 41", len(py.Selected.Distributions))
	}
	if len(others) != len(py.Others) || len(others) == 0 {
		t.Errorf("OthersFound got %d other environments, the facts have %d (the seed has /usr's)", len(others), len(py.Others))
	}
	plain, _ := Collect(context.Background(), src, "")
	if len(plain.Selected.Distributions) != len(py.Selected.Distributions) || len(plain.Others) != len(py.Others) {
		t.Errorf("with the callbacks: %d distributions, %d others; without: %d, %d",
			len(py.Selected.Distributions), len(py.Others), len(plain.Selected.Distributions), len(plain.Others))
	}

	empty, err := source.Root(t.TempDir(), source.Env{"PATH": "/usr/bin"})
	if err != nil {
		t.Fatal(err)
	}
	calls = nil
	CollectWith(context.Background(), empty, "", Options{
		Located:     func(s *facts.PythonEnv) { calls = append(calls, "located"); sel = s },
		OthersFound: func(o []facts.PythonEnv) { calls = append(calls, "others") },
	})
	if !slices.Equal(calls, []string{"located", "others"}) || sel != nil {
		t.Errorf("no Python: calls %q with %v, want located (nil) then others", calls, sel)
	}
}
