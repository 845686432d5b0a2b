// Package transformerstest fetches real transformers releases for the
// oracle tests of internal/collect/modelread and internal/model (Network
// tests: they install from PyPI into the test cache, and skip under -short).
package transformerstest

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// OracleVersions are the transformers releases the static reading is
// checked on: the last 4.x, the last release binding kernels through
// lazy_load_kernel, the GPU machine's release, and the newest on PyPI.
func OracleVersions(t *testing.T) []string {
	if v := os.Getenv("FASTPATH_TRANSFORMERS_ORACLE_VERSIONS"); v != "" {
		return strings.Fields(v)
	}
	return []string{"4.57.6", "5.14.0", "5.17.0", NewestTransformers(t)}
}

// NewestTransformers asks PyPI's JSON API for the newest release.
func NewestTransformers(t *testing.T) string {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get("https://pypi.org/pypi/transformers/json")
	if err != nil {
		t.Fatalf("PyPI: %v", err)
	}
	defer resp.Body.Close()
	var info struct {
		Info struct {
			Version string `json:"version"`
		} `json:"info"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&info); err != nil || info.Info.Version == "" {
		t.Fatalf("PyPI transformers JSON: %v", err)
	}
	return info.Info.Version
}

// Source installs transformers==version's files (no
// dependencies, nothing compiled, never imported) into the test cache and
// returns the folder holding the transformers package.
func Source(t *testing.T, version string) string {
	t.Helper()
	py3 := testenv.Python3(t)
	dir := filepath.Join(testenv.CacheDir(t), "transformers-src", version)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	_ = os.RemoveAll(dir)
	testenv.Run(t, []string{"PIP_DISABLE_PIP_VERSION_CHECK=1"}, py3, "-m", "pip", "install", "--quiet", "--no-deps",
		"--no-compile", "--target", dir, "transformers=="+version)
	if err := os.WriteFile(filepath.Join(dir, ".complete"), []byte(version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Venv makes (once) under base a venv holding transformers==version (with
// its dependencies, no torch) and returns its python.
func Venv(t *testing.T, py3, base, version string) string {
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

// ModelTypes lists the model types of the transformers package below site
// that have a modeling file.
func ModelTypes(t *testing.T, site string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(site, "transformers", "models"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(site, "transformers", "models", e.Name(), "modeling_"+e.Name()+".py")); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// 5.15+ style: the decorator binds the package's function or keeps the torch
// one; an elif chain picks the mixer; a Hub-only kernel is not a package.
const HubStyle = `@use_kernel_func_from_hub_with_fallback("chunk_gated_delta_rule", "fla")
def torch_chunk_gated_delta_rule(q, k, v):
    return q


@use_kernel_func_from_hub_with_fallback(
    "causal_conv1d_fn",
    "causal_conv1d",
)
def causal_conv1d_fn(x):
    return x


@use_kernel_func_from_hub("rotary_pos_emb")
def apply_rotary_pos_emb(q, k):
    return q, k


def helper(x):
    return causal_conv1d_fn(x)


class ToyDeltaNet(nn.Module):
    def forward(self, x):
        return torch_chunk_gated_delta_rule(helper(x), x, x)


class ToyAttention(nn.Module):
    def forward(self, q, k):
        return apply_rotary_pos_emb(q, k)


class ToyMoE(nn.Module):
    pass


class ToyDecoderLayer(GradientCheckpointingLayer):
    def __init__(self, config, i):
        self.block_type = config.layer_types[i]
        if self.block_type == "linear_attention":
            self.linear_attn = ToyDeltaNet(config)
        elif self.block_type in ("full_attention", "sliding_attention"):
            self.self_attn = ToyAttention(config)
        else:
            self.moe = ToyMoE(config)


class ToyModel(PreTrainedModel):
    def __init__(self, config):
        self.layers = [ToyDecoderLayer(config, i) for i in range(4)]
`
