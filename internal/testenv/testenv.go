// Package testenv is what the tests that use real Python tooling share: the
// download cache, running commands, and wheels fetched from PyPI once.
// Only tests import it.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Network skips the test under -short: `go test -short ./...` never touches
// the network (docs/contributing.md). Tests that download call it first.
func Network(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("downloads from the network: skipped under -short")
	}
}

// CacheDir is $FASTPATH_TEST_CACHE, else <repo root>/.cache (git-ignored):
// downloads land there once and later runs install from it offline. Only
// tests that download use it, so it skips the test under -short (Network):
// every download (Wheels, the wheelhouse, uv's and transformers' caches)
// goes through here.
func CacheDir(t testing.TB) string {
	t.Helper()
	Network(t)
	if d := os.Getenv("FASTPATH_TEST_CACHE"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".cache")
		}
		if d == filepath.Dir(d) {
			t.Fatal("no go.mod above " + wd)
		}
	}
}

// Python3 is python3 on PATH; the test is skipped where there is none.
func Python3(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: no real pip to compare with")
	}
	return p
}

// Run runs a command with env added to this process's environment, failing
// the test with its output on error, and returns its standard output.
func Run(t testing.TB, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// Wheels makes sure a binary wheel for each requirement ("name==1.2.*") is
// in the cache's pip-wheels folder, downloading the missing ones from PyPI,
// and returns the folder (for pip install --no-index --find-links).
func Wheels(t testing.TB, reqs ...string) string {
	t.Helper()
	dir := filepath.Join(CacheDir(t), "pip-wheels")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	py := Python3(t)
	for _, req := range reqs {
		name, version, _ := strings.Cut(req, "==")
		glob := strings.ReplaceAll(name, "-", "_") + "-" + strings.TrimSuffix(version, "*") + "*.whl"
		if m, _ := filepath.Glob(filepath.Join(dir, glob)); len(m) > 0 {
			continue
		}
		Run(t, []string{"PIP_DISABLE_PIP_VERSION_CHECK=1"}, py, "-m", "pip", "download", "--quiet",
			"--only-binary=:all:", "--no-deps", "-d", dir, req)
	}
	return dir
}
