package modelread

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/fastpath-dev/fastpath/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// transformersVersions are the releases compared: the last 4.x, the last
// release with module-level kernel imports, and the newest release when this
// was written (FASTPATH_TRANSFORMERS_VERSIONS="a b c" overrides).
var transformersVersions = []string{"4.57.6", "5.14.0", "5.24.0"}

// TestNetworkTransformersLayerKinds installs each transformers release from
// PyPI (no torch: configuration classes only) into a cached venv, has its
// own config classes write every family's configs and derive their layer
// kinds (scripts/transformers-layer-kinds.py), and checks fastpath derives
// the same kinds from the same files.
func TestNetworkTransformersLayerKinds(t *testing.T) {
	py3 := testenv.Python3(t)
	versions := transformersVersions
	if v := os.Getenv("FASTPATH_TRANSFORMERS_VERSIONS"); v != "" {
		versions = strings.Fields(v)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "scripts", "transformers-layer-kinds.py"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	// The variants are families.json's: a change to either reruns the script.
	fams, err := os.ReadFile(filepath.Join("..", "..", "kb", "data", "families.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(src, fams...))
	tag := hex.EncodeToString(sum[:6])
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			base := filepath.Join(testenv.CacheDir(t), "transformers", v)
			py := transformersVenv(t, py3, base, v)
			out := filepath.Join(base, "kinds-"+tag)
			if _, err := os.Stat(filepath.Join(out, "manifest.json")); err != nil {
				_ = os.RemoveAll(out)
				testenv.Run(t, []string{"TRANSFORMERS_VERBOSITY=error", "HF_HUB_OFFLINE=1"}, py, script, out)
			}
			checkManifest(t, out)
		})
	}
}

// transformersVenv makes (once) a venv holding transformers==version.
func transformersVenv(t *testing.T, py3, base, version string) string {
	t.Helper()
	dir := filepath.Join(base, "venv")
	py := filepath.Join(dir, "bin", "python")
	marker := filepath.Join(base, ".complete")
	if _, err := os.Stat(marker); err == nil {
		return py
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if uv, err := exec.LookPath("uv"); err == nil {
		env := []string{"UV_CACHE_DIR=" + filepath.Join(testenv.CacheDir(t), "uv"), "UV_NO_PROGRESS=1"}
		testenv.Run(t, env, uv, "venv", "--quiet", "--python", py3, dir)
		testenv.Run(t, env, uv, "pip", "install", "--quiet", "--python", py, "transformers=="+version)
	} else {
		testenv.Run(t, nil, py3, "-m", "venv", dir)
		testenv.Run(t, []string{"PIP_DISABLE_PIP_VERSION_CHECK=1"}, py, "-m", "pip", "install", "--quiet", "transformers=="+version)
	}
	if err := os.WriteFile(marker, []byte(version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return py
}
