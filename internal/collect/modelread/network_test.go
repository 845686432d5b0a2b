package modelread

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread/transformerstest"
	"github.com/fastpath-dev/fastpath/internal/testenv"
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
			py := transformerstest.Venv(t, py3, base, v)
			out := filepath.Join(base, "kinds-"+tag)
			if _, err := os.Stat(filepath.Join(out, "manifest.json")); err != nil {
				_ = os.RemoveAll(out)
				testenv.Run(t, []string{"TRANSFORMERS_VERBOSITY=error", "HF_HUB_OFFLINE=1"}, py, script, out)
			}
			checkManifest(t, out)
		})
	}
}
