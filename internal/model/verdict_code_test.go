package model

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/collect/modelread/transformerstest"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Verdicts judged from code read by modelread (its tests check the
// reading itself).

func codeTree(t *testing.T, modelType, modeling string) *modelread.TransformersCode {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, filepath.FromSlash(site), "transformers", "models", modelType)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "modeling_"+modelType+".py"), []byte(modeling), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(root, source.Env{})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := modelread.NewTransformersCode(src, site, "5.24.0")
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func analyzeCode(t *testing.T, cfg string, f *facts.Facts, tc *modelread.TransformersCode) *Report {
	t.Helper()
	c, err := modelread.ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	code, why := modelread.ReadCode(tc, c, "")
	return AnalyzeWithCode("m", nil, c, f, code, why)
}

// A family the knowledge base does not know, judged from its code; and the
// same with no code: not judged, never "0 fall back".
func TestVerdictFromCodeUnknownFamily(t *testing.T) {
	cfg := `{"model_type":"toy","num_hidden_layers":4,"layer_types":["linear_attention","linear_attention","full_attention","moe"]}`
	f := envFacts("transformers", "5.24.0", "flash-linear-attention", "0.4.1", "fla-core", "0.4.1")
	r := analyzeCode(t, cfg, f, codeTree(t, "toy", transformerstest.HubStyle))
	if !r.Judged || r.JudgedFrom != "transformers source" || r.FallbackLayers != 2 {
		t.Fatalf("judged %v from %q: %d (%s)", r.Judged, r.JudgedFrom, r.FallbackLayers, r.NotJudged)
	}
	if got := resolves(r); got["causal_conv1d_fn"] != "torch" || got["chunk_gated_delta_rule"] != "package" {
		t.Errorf("resolves %v", got)
	}
	for _, k := range r.Kernels {
		if k.File == "" || k.Line == 0 || k.Gate != "hub-fallback" {
			t.Errorf("%+v", k)
		}
	}
	r = analyze(t, cfg, f)
	if r.Judged || r.FallbackLayers != 0 || !strings.HasPrefix(r.NotJudged, "cannot judge: ") {
		t.Errorf("without code: judged %v %q", r.Judged, r.NotJudged)
	}
}

// Attention: what transformers raises, and what the GPU cannot run.
func TestAttentionFromCodeAndGPU(t *testing.T) {
	const llama = `class LlamaPreTrainedModel(PreTrainedModel):
    _supports_flash_attn = True
    _supports_sdpa = True


class LlamaModel(LlamaPreTrainedModel):
    pass
`
	const noSDPA = "class OldPreTrainedModel(PreTrainedModel):\n    pass\n\n\nclass OldModel(OldPreTrainedModel):\n    pass\n"
	withFA := func(cc string, dists ...string) *facts.Facts {
		f := envFacts(append([]string{"transformers", "5.24.0"}, dists...)...)
		f.GPU.Devices = []facts.Device{{Capability: cc}}
		return f
	}
	cases := []struct {
		name, mt, code, attn string
		f                    *facts.Facts
		ok, downgrade        bool
		reason               string
	}{
		{"fa2 on sm_75", "llama", llama, "flash_attention_2", withFA("7.5", "flash-attn", "2.8.3"), false, false, "needs compute capability 8.0 or newer; this GPU is 7.5"},
		{"fa2 on sm_90", "llama", llama, "flash_attention_2", withFA("9.0", "flash-attn", "2.8.3"), true, false, "flash-attn 2.8.3"},
		{"fa3 on sm_100", "llama", llama, "flash_attention_3", withFA("10.0", "flash-attn-3", "3.0.0"), false, false, "compute capability 9.x only (Hopper); this GPU is 10.0"},
		{"fa3 on sm_90", "llama", llama, "flash_attention_3", withFA("9.0", "flash-attn-3", "3.0.0"), true, false, "flash-attn-3 3.0.0"},
		{"fa2 unsupported by the model", "old", noSDPA, "flash_attention_2", withFA("9.0", "flash-attn", "2.8.3"), false, false, "transformers raises ValueError, this model does not support Flash Attention (modeling_old.py sets none of"},
		{"sdpa unsupported", "old", noSDPA, "sdpa", withFA("9.0"), false, false, "this model does not support it"},
		{"default on a model without sdpa", "old", noSDPA, "", withFA("9.0"), true, true, "silently runs eager attention"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fmt.Sprintf(`{"model_type":%q,"num_hidden_layers":2`, tc.mt)
			if tc.attn != "" {
				cfg += fmt.Sprintf(`,"attn_implementation":%q`, tc.attn)
			}
			r := analyzeCode(t, cfg+"}", tc.f, codeTree(t, tc.mt, tc.code))
			a := r.AttnImpl
			if a == nil || a.OK != tc.ok || a.Downgrade != tc.downgrade || !strings.Contains(a.Reason, tc.reason) {
				t.Fatalf("%+v", a)
			}
			if (r.WillNotLoad != "") == tc.ok {
				t.Errorf("will not load %q", r.WillNotLoad)
			}
			if tc.downgrade && r.AttentionFallbackLayers != 2 {
				t.Errorf("attention fallback layers %d", r.AttentionFallbackLayers)
			}
		})
	}
}
