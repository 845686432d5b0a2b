package pyenv

import (
	"regexp"
	"strings"
	"testing"
)

// The byte loops that replaced three regular expressions (3.6% of doctor's
// CPU on 5,000 distributions) give what the expressions gave, on any name:
// canonicalize is packaging's canonicalize_name, lookupKey importlib's
// grouping key, eggLinkName pip's egg-link stem.
func FuzzNameNormalisers(f *testing.F) {
	nameRun := regexp.MustCompile(`[-_.]+`)
	eggLink := regexp.MustCompile(`[^A-Za-z0-9.]+`)
	for _, s := range []string{"", "torch", "Scale_Pkg-00042", "a--b__c..d", "-_.", "zope.interface", "ruamel.yaml.clib",
		"scale_pkg_00042-1.8.0.dist-info", "Flask-SQLAlchemy", "İstanbul_Kelvin\u212a", "a\xffb", "x y+z", "..a..", "ÄÖ-ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := canonicalize(s), strings.ToLower(nameRun.ReplaceAllString(s, "-")); got != want {
			t.Errorf("canonicalize(%q) = %q, want %q", s, got, want)
		}
		low := strings.ToLower(s)
		key := low
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			key = key[:i]
		}
		key, _, _ = strings.Cut(key, "-")
		if got, want := lookupKey(low), strings.ReplaceAll(strings.ToLower(nameRun.ReplaceAllString(key, "-")), "-", "_"); got != want {
			t.Errorf("lookupKey(%q) = %q, want %q", low, got, want)
		}
		if got, want := eggLinkName(s), eggLink.ReplaceAllString(s, "-"); got != want {
			t.Errorf("eggLinkName(%q) = %q, want %q", s, got, want)
		}
	})
}

// pathlibNorm's shortcut for paths already in pathlib's spelling agrees
// with the spelling it computes.
func FuzzPathlibNorm(f *testing.F) {
	for _, s := range []string{"", "/", "//", ".", "./", "a", "/a/b", "/a//b", "/a/./b", "a/b/", "/a/..", "../x", "/./", "a/."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		abs := strings.HasPrefix(p, "/")
		var parts []string
		for _, c := range strings.Split(p, "/") {
			if c != "" && c != "." {
				parts = append(parts, c)
			}
		}
		want := strings.Join(parts, "/")
		switch {
		case abs:
			want = "/" + want
		case want == "":
			want = "."
		}
		if got := pathlibNorm(p); got != want {
			t.Errorf("pathlibNorm(%q) = %q, want %q", p, got, want)
		}
	})
}

// The scans that replaced three more regular expressions (compiled on
// every doctor start: 50 µs of a 5 ms run, in one instrumented run) find what the expressions
// found: a Python's X.Y in its name, PY_VERSION in patchlevel.h, and the
// shared objects in a RECORD.
func FuzzScansMatchTheirRegexps(f *testing.F) {
	pyName := regexp.MustCompile(`^python(\d+\.\d+)$`)
	pyVersionRe := regexp.MustCompile(`#define\s+PY_VERSION\s+"([^"]+)"`)
	soRe := regexp.MustCompile(`\.so(\.[0-9]+)*$`)
	for _, s := range []string{"", "python3.12", "python3", "python3.12m", "python3.", "python.12", "python10.100", "pythonx.y",
		"python3.12.1", "Python3.12", "python٣.١٢",
		"#define PY_VERSION \"3.12.3\"\n", "#define\tPY_VERSION\t\t\"3.11.0rc1+\"", "#define PY_VERSION\"3.12\"", "#define  PY_VERSION \"\"",
		"#definePY_VERSION \"3.1\"", "#define PY_VERSION \"3.1", "#define X 1\n#define PY_VERSION \"3.9.2\"\n#define PY_VERSION \"4\"",
		"#define PY_VERSION\v\"3\"", "#define\f PY_VERSION\r\n\"3.13.0\"", "##define PY_VERSION \"a\nb\"",
		"libfoo.so", "a/b/_C.cpython-312-x86_64-linux-gnu.so", "libcudart.so.12", "libx.so.1.2.3", "libx.so.", "libx.so.1a",
		"x.so.1.so", ".so", "so", "x.SO", "libx.so.١", "x.so..1", "x.so.1..2", "torch/lib/libtorch_cuda.so,sha256=abc,123"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := ""
		if m := pyName.FindStringSubmatch(s); m != nil {
			want = m[1]
		}
		if got := mmFromName(s); got != want {
			t.Errorf("mmFromName(%q) = %q, the regexp %q", s, got, want)
		}
		want = ""
		m := pyVersionRe.FindStringSubmatch(s)
		if m != nil {
			want = m[1]
		}
		if got, ok := pyVersion(s); got != want || ok != (m != nil) {
			t.Errorf("pyVersion(%q) = %q, %v; the regexp %q, %v", s, got, ok, want, m != nil)
		}
		if got, want := isSharedObject([]byte(s)), soRe.MatchString(s); got != want {
			t.Errorf("isSharedObject(%q) = %v, the regexp %v", s, got, want)
		}
	})
}
