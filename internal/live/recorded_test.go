package live

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/render"
)

// recorded returns the JSON files under testdata/recorded whose names
// contain kind: answers recorded on GPU machines (probe-h200.json before fla
// was installed, h200-fla-probe.json after, bench-h200-*.json).
func recorded(t *testing.T, kind string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "recorded", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		if !strings.Contains(filepath.Base(p), kind) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	if len(out) == 0 {
		t.Fatalf("no %s recordings in testdata/recorded", kind)
	}
	return out
}

func TestRecordedProbes(t *testing.T) {
	for name, b := range recorded(t, "probe") {
		t.Run(name, func(t *testing.T) {
			lf, err := ParseProbe(b)
			if err != nil {
				t.Fatal(err)
			}
			if lf.Python.Version == "" || lf.Torch.ImportSeconds < 0 {
				t.Errorf("python %+v, torch import %v s", lf.Python, lf.Torch.ImportSeconds)
			}
			if len(lf.Packages) == 0 {
				t.Error("no package import attempts")
			}
			var out bytes.Buffer
			RenderProbe(&out, lf, render.Options{Width: 1000})
			for _, p := range lf.Packages {
				if !strings.Contains(out.String(), "import "+p.Import+":") {
					t.Errorf("render leaves out %s:\n%s", p.Import, out.String())
				}
			}
			// Noise printed before the answer does not hide it.
			if _, err := ParseProbe(append([]byte("banner from a library\n"), b...)); err != nil && !bytes.Contains(bytes.TrimSpace(b), []byte("\n")) {
				t.Errorf("one-line answer after noise: %v", err)
			}
		})
	}
}

// TestH200Probe checks the probe recorded on the H200 (torch 2.11.0+cu130,
// before fla was installed) field by field and as rendered.
func TestH200Probe(t *testing.T) {
	lf, err := ParseProbe(recorded(t, "probe-h200")["probe-h200.json"])
	if err != nil {
		t.Fatal(err)
	}
	tr := lf.Torch
	if !tr.OK || tr.Version != "2.11.0+cu130" || tr.CUDA != "13.0" || !tr.CUDAAvailable || tr.CXX11ABI == nil || !*tr.CXX11ABI {
		t.Errorf("torch = %+v", tr)
	}
	if len(tr.Devices) != 1 || tr.Devices[0].Capability != "9.0" || strings.Join(tr.ArchList, " ") != "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120" {
		t.Errorf("devices %+v, arch list %v", tr.Devices, tr.ArchList)
	}
	if f := lf.Models["qwen3_5"].Functions["chunk_gated_delta_rule"]; f.Resolves != "torch" {
		t.Errorf("chunk_gated_delta_rule = %+v", f)
	}
	var out bytes.Buffer
	RenderProbe(&out, lf, render.Options{Width: 1000})
	for _, want := range []string{
		"torch 2.11.0+cu130 (CUDA 13.0), imported in 5.61 s; cuda available: true; cxx11 abi: true",
		"device 0: NVIDIA H200, capability 9.0",
		"import causal_conv1d: ModuleNotFoundError: No module named 'causal_conv1d'",
		"import transformers: ok 5.17.0",
		"qwen3_5 causal_conv1d_fn -> torch (transformers.models.qwen3_5.modeling_qwen3_5)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("render lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRecordedBenches(t *testing.T) {
	for name, b := range recorded(t, "bench") {
		t.Run(name, func(t *testing.T) {
			bn, err := ParseBench(b)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Render(&out, bn, render.Options{Width: 1000}); err != nil {
				t.Fatal(err)
			}
			for _, r := range bn.Results {
				if !strings.Contains(out.String(), r.Function) {
					t.Errorf("render leaves out %s", r.Function)
				}
				if s := r.Slowdown(); (r.FastMS != nil && r.FallbackMS != nil && *r.FastMS > 0) != (s > 0) {
					t.Errorf("%s: slowdown %v with fast %v fallback %v", r.Function, s, r.FastMS, r.FallbackMS)
				}
			}
			if len(bn.Results) == 0 && len(bn.Errors) == 0 && len(bn.Skipped) == 0 {
				t.Error("a benchmark with no result says nothing about why")
			}
		})
	}
}

// TestH200Bench checks the benchmark recorded on the H200 at Qwen3.5-27B's
// shapes (fla 0.6.0 installed, causal-conv1d not) and its rendering.
func TestH200Bench(t *testing.T) {
	bn, err := ParseBench(recorded(t, "bench-h200-qwen3_5-27b")["bench-h200-qwen3_5-27b.json"])
	if err != nil {
		t.Fatal(err)
	}
	var chunk *BenchResult
	for i := range bn.Results {
		if r := &bn.Results[i]; r.Function == "chunk_gated_delta_rule" && r.SeqLen == 8192 {
			chunk = r
		}
	}
	if chunk == nil {
		t.Fatal("no chunk_gated_delta_rule at 8192")
	}
	if s := chunk.Slowdown(); s < 14.40 || s > 14.41 { // 21.941 / 1.523
		t.Errorf("slowdown = %v", s)
	}
	if d, ok := chunk.PerForwardMS(); !ok || d < 980.0 || d > 980.2 { // 48 x (21.941 - 1.523)
		t.Errorf("per forward = %v, %v", d, ok)
	}
	var out bytes.Buffer
	if err := Render(&out, bn, render.Options{Width: 1000}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"on NVIDIA H200, bf16, torch 2.11.0+cu130, transformers 5.17.0",
		"48 linear_attention layers",
		"14.4x",
		"+980.1 (48 layers x 1)",
		"Not compared:",
		"causal_conv1d_fn fast: causal_conv1d not importable: ModuleNotFoundError: No module named 'causal_conv1d'",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("render lacks %q:\n%s", want, text)
		}
	}
	// A function with no fast side shows "-" where a number would be.
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "causal_conv1d_fn ") && !strings.Contains(l, " - ") {
			t.Errorf("row without a fast time does not say so: %q", l)
		}
	}
}
