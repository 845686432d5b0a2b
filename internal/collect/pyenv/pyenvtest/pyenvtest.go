// Package pyenvtest builds real Python environments for tests that compare
// fastpath with pip itself: a `python -m venv` and a `uv venv`, filled from
// PyPI downloads cached once on disk (wheels, an sdist built at install
// time, and an editable local project).
package pyenvtest

import (
	"github.com/fastpath-dev/fastpath/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Packages are downloaded (without dependencies) into the cache: small
// wheels, an sdist-only package (docopt), real specimens from the seed
// machine, and the build backends the sdist and the editable project need.
var Packages = []string{"six", "docopt", "transformers", "flash-linear-attention", "setuptools", "wheel", "packaging", "pip"}

// Installed are the Packages installed into each environment.
var Installed = []string{"six", "docopt", "transformers", "flash-linear-attention"}

// quietPip keeps pip off the network and its cache, and quiet.
var quietPip = []string{"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_NO_CACHE_DIR=1"}

// Wheelhouse downloads Packages once into the cache and returns the folder.
func Wheelhouse(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(testenv.CacheDir(t), "pypi")
	marker := filepath.Join(dir, ".complete")
	want := strings.Join(Packages, "\n") + "\n"
	if b, err := os.ReadFile(marker); err == nil && string(b) == want {
		return dir
	}
	py := testenv.Python3(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Run(t, quietPip, py, append([]string{"-m", "pip", "download", "--quiet", "--no-deps", "-d", dir}, Packages...)...)
	if err := os.WriteFile(marker, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Project writes a tiny setuptools project in a folder whose name needs
// percent-encoding in a file: URL, for an editable install.
func Project(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "my proj é")
	files := map[string]string{
		"pyproject.toml": "[build-system]\nrequires = [\"setuptools>=64\"]\nbuild-backend = \"setuptools.build_meta\"\n\n" +
			"[project]\nname = \"Fp_Local.Proj\"\nversion = \"1.0.0-dev1\"\n",
		"fp_local_proj/__init__.py": "VALUE = 1\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Venv makes a `python3 -m venv` with Installed and an editable project,
// all from the wheelhouse, and returns its bin/python.
func Venv(t testing.TB) string {
	t.Helper()
	wh := Wheelhouse(t)
	dir := filepath.Join(t.TempDir(), "venv")
	testenv.Run(t, nil, testenv.Python3(t), "-m", "venv", dir)
	py := filepath.Join(dir, "bin", "python")
	// The build backends go in first so the sdist and the editable project
	// build without an isolated environment each (seconds saved per build).
	args := []string{"-m", "pip", "install", "--quiet", "--no-compile", "--no-index", "--find-links", wh, "--no-deps"}
	testenv.Run(t, quietPip, py, append(args, "setuptools", "wheel", "packaging")...)
	args = append(args, "--no-build-isolation")
	testenv.Run(t, quietPip, py, append(args, append(Installed, "-e", Project(t))...)...)
	return py
}

// UVVenv makes a `uv venv` the same way (with pip, for the oracle), or
// skips when uv is not on PATH.
func UVVenv(t testing.TB) string {
	t.Helper()
	uv, err := exec.LookPath("uv")
	if err != nil {
		t.Skip("uv is not on PATH (pip install uv): cannot make a uv venv")
	}
	wh := Wheelhouse(t)
	base := strings.TrimSpace(testenv.Run(t, nil, testenv.Python3(t), "-c", "import sys; print(sys.executable)"))
	dir := filepath.Join(t.TempDir(), "uvvenv")
	env := []string{"UV_CACHE_DIR=" + filepath.Join(testenv.CacheDir(t), "uv"), "UV_NO_PROGRESS=1", "UV_OFFLINE=1"}
	testenv.Run(t, env, uv, "venv", "--quiet", "--python", base, dir)
	py := filepath.Join(dir, "bin", "python")
	args := []string{"pip", "install", "--quiet", "--python", py, "--no-index", "--find-links", wh, "--no-deps"}
	testenv.Run(t, env, uv, append(args, append(Installed, "pip")...)...)
	testenv.Run(t, env, uv, append(args, "-e", Project(t))...)
	return py
}

// PipList is the oracle: `python -m pip list --format=json`'s output.
func PipList(t testing.TB, python string) []byte {
	t.Helper()
	return []byte(testenv.Run(t, quietPip, python, "-m", "pip", "list", "--format=json"))
}
