package diagnose

import (
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
)

func modelReport(t *testing.T, f *facts.Facts, cfg string) *model.Report {
	t.Helper()
	c, err := modelread.ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return model.Analyze("Qwen/Qwen3.5-27B", nil, c, f)
}

func withDists(f *facts.Facts, nv ...string) *facts.Facts {
	for i := 0; i+1 < len(nv); i += 2 {
		f.Python.Selected.Distributions = append(f.Python.Selected.Distributions, facts.Distribution{Name: nv[i], Version: nv[i+1], Location: f.Python.Selected.SitePath[0]})
	}
	return f
}

const qwen35Config = `{"model_type":"qwen3_5","text_config":{"num_hidden_layers":64,"full_attention_interval":4}}`

func TestModelFindings(t *testing.T) {
	ext := func(sass string) facts.Extension {
		return facts.Extension{Dist: "causal_conv1d", Version: "1.6.1", Path: "/root/venv/lib/python3.12/site-packages/causal_conv1d_cuda.so", SASS: []string{sass}}
	}
	cases := []struct {
		name   string
		f      func() *facts.Facts
		cfg    string
		id     finding.ID
		sev    finding.Severity
		title  string
		noFire bool
	}{
		{"seed: causal-conv1d missing", func() *facts.Facts {
			return withDists(seedFacts(), "transformers", "5.17.0", "flash-linear-attention", "0.4.1", "fla-core", "0.4.1")
		}, qwen35Config, finding.FastPathFallback, finding.Warning,
			"48 of 64 layers (linear_attention) will run the torch fallback: causal-conv1d is not installed (causal_conv1d_fn, causal_conv1d_update)", false},
		// Without flash-linear-attention the torch chunk_gated_delta_rule
		// costs more than a fast layer (479 ms over 48 layers of 2.9 ms on
		// the H200): an error.
		{"seed without fla: the fallback dominates", func() *facts.Facts {
			return withDists(seedFacts(), "transformers", "5.17.0")
		}, qwen35Config, finding.FastPathFallback, finding.Error,
			"chunk_gated_delta_rule +479 ms per forward at 2048 tokens (344% of a fast linear_attention layer's 2.9 ms)", false},
		// A model measured nowhere keeps the error: its cost is unknown.
		{"qwen3_next: no measurement at its shapes", func() *facts.Facts {
			return withDists(seedFacts(), "transformers", "5.17.0", "flash-linear-attention", "0.4.1", "fla-core", "0.4.1")
		}, `{"model_type":"qwen3_next","num_hidden_layers":48,"full_attention_interval":4}`, finding.FastPathFallback, finding.Error,
			"will run the torch fallback", false},
		{"healthy: both packages, sm_120 code", func() *facts.Facts {
			f := withDists(seedFacts(), "transformers", "5.17.0", "causal-conv1d", "1.6.1", "fla-core", "0.4.1")
			f.Extensions = []facts.Extension{ext("sm_120")}
			return f
		}, qwen35Config, finding.FastPathFallback, "", "", true},
		{"broken extension: SASS sm_80 only on 12.0", func() *facts.Facts {
			f := withDists(seedFacts(), "transformers", "5.17.0", "causal-conv1d", "1.6.1", "fla-core", "0.4.1")
			f.Extensions = []facts.Extension{ext("sm_80")}
			return f
		}, qwen35Config, finding.FastPathFallback, finding.Warning, "has no code for the GPU (compute capability 12.0): SASS sm_80", false},
		{"zamba on 5.14 without mamba-ssm", func() *facts.Facts {
			return withDists(seedFacts(), "transformers", "5.14.0")
		}, `{"model_type":"zamba","num_hidden_layers":20}`, finding.ModelWillNotLoad, finding.Error, "will not run", false},
		{"flash_attention_2 without flash-attn", func() *facts.Facts {
			return withDists(seedFacts(), "transformers", "5.17.0")
		}, `{"model_type":"llama","num_hidden_layers":2,"attn_implementation":"flash_attention_2"}`, finding.ModelWillNotLoad, finding.Error, "will not run", false},
		{"flash_attention_2 with flash-attn", func() *facts.Facts {
			return withDists(seedFacts(), "transformers", "5.17.0", "flash_attn", "2.8.3")
		}, `{"model_type":"llama","num_hidden_layers":2,"attn_implementation":"flash_attention_2"}`, finding.ModelWillNotLoad, "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f()
			got := RunWithModels(f, []*model.Report{modelReport(t, f, tc.cfg)})
			fd := find(got, tc.id)
			if tc.noFire {
				if fd != nil {
					t.Fatalf("%s fired: %s", tc.id, fd.Title)
				}
				return
			}
			if fd == nil {
				t.Fatalf("%s did not fire: %v", tc.id, ids(got))
			}
			if fd.Severity != tc.sev || !strings.Contains(fd.Title+" "+fd.Detail, tc.title) {
				t.Errorf("%s %q\n%s", fd.Severity, fd.Title, fd.Detail)
			}
			if len(fd.Evidence) == 0 || len(fd.Fixes) == 0 {
				t.Errorf("no evidence or fixes: %+v", fd)
			}
		})
	}
	// The seed's evidence names fla as present and the fix installs causal-conv1d.
	f := withDists(seedFacts(), "transformers", "5.17.0", "flash-linear-attention", "0.4.1", "fla-core", "0.4.1")
	fd := find(RunWithModels(f, []*model.Report{modelReport(t, f, qwen35Config)}), finding.FastPathFallback)
	ev := strings.Join(fd.Evidence, "\n")
	if !strings.Contains(ev, "flash-linear-attention: present (fla-core 0.4.1)") || !strings.Contains(fixText(fd), "-m pip install causal-conv1d --no-build-isolation") {
		t.Errorf("evidence:\n%s\nfixes:\n%s", ev, fixText(fd))
	}
	if !strings.Contains(fd.Detail, "transformers#48718") {
		t.Errorf("detail lacks the published slowdown: %s", fd.Detail)
	}
	// The measured cost, per forward and as a share of a layer, names the
	// machine and command it came from.
	for _, want := range []string{"causal_conv1d_fn +8.3 ms per forward at 2048 tokens (6% of a fast linear_attention layer's 2.9 ms)",
		"causal_conv1d_update +4.6 ms per decode step", "at most 19% of a layer"} {
		if !strings.Contains(fd.Detail, want) {
			t.Errorf("detail lacks %q: %s", want, fd.Detail)
		}
	}
	if !strings.Contains(ev, "measured on NVIDIA H200 (torch 2.11.0+cu130, transformers 5.17.0, bf16, batch 1") || !strings.Contains(ev, "fastpath bench --model CONFIG") {
		t.Errorf("evidence lacks the measurement's provenance:\n%s", ev)
	}
}

// A model nothing can judge (a family the knowledge base lacks, no
// transformers source to read): an info model-not-judged that says why, and
// no fast-path claim either way.
func TestModelNotJudged(t *testing.T) {
	f := withDists(seedFacts(), "transformers", "5.17.0")
	fs := RunWithModels(f, []*model.Report{modelReport(t, f, `{"model_type":"minimax_m3","num_hidden_layers":10,"layer_types":["linear_attention","linear_attention","linear_attention","linear_attention","linear_attention","linear_attention","linear_attention","full_attention","full_attention","full_attention"]}`)})
	fd := find(fs, finding.ModelNotJudged)
	if fd == nil || fd.Severity != finding.Info || !strings.Contains(fd.Detail, "cannot judge: ") || !strings.Contains(fd.Detail, `"minimax_m3" is not in fastpath's knowledge base`) {
		t.Fatalf("%+v", fd)
	}
	if find(fs, finding.FastPathFallback) != nil {
		t.Error("a fast-path verdict for a model nobody judged")
	}
	if ev := strings.Join(fd.Evidence, "\n"); !strings.Contains(ev, "7 linear_attention, 3 full_attention") {
		t.Errorf("evidence does not show the layer kinds:\n%s", ev)
	}
}
