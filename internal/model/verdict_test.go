package model

import (
	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"maps"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
)

const site = "/root/venv/lib/python3.12/site-packages"

// envFacts: torch 2.11.0+cu128 in a venv with the given distributions
// (name, version pairs) on a GPU of compute capability 12.0.
func envFacts(dists ...string) *facts.Facts {
	f := &facts.Facts{
		Python: facts.Python{Selected: &facts.PythonEnv{Kind: "venv", Interpreter: "/root/venv/bin/python3", Prefix: "/root/venv", SitePath: []string{site}}},
		Torch:  &facts.Torch{Version: "2.11.0+cu128", CUDA: "12.8"},
		GPU:    facts.GPU{Devices: []facts.Device{{Capability: "12.0"}}},
	}
	for i := 0; i+1 < len(dists); i += 2 {
		f.Python.Selected.Distributions = append(f.Python.Selected.Distributions, facts.Distribution{Name: dists[i], Version: dists[i+1], Location: site})
	}
	return f
}

var qwen35 = `{"model_type":"qwen3_5","text_config":{"model_type":"qwen3_5_text","num_hidden_layers":64,"full_attention_interval":4}}`

func analyze(t *testing.T, cfg string, f *facts.Facts) *Report {
	t.Helper()
	c, err := modelread.ParseConfig([]byte(cfg))
	if err != nil {
		t.Fatal(err)
	}
	return Analyze("m", nil, c, f)
}

func resolves(r *Report) map[string]string {
	m := map[string]string{}
	for _, k := range r.Kernels {
		m[k.Function] = k.Resolves
	}
	return m
}

// The seed: fla present, causal-conv1d missing: 48 of 64 layers fall back,
// the conv functions go to torch and the delta-rule ones to fla.
func TestSeedVerdict(t *testing.T) {
	r := analyze(t, qwen35, envFacts("transformers", "5.17.0", "flash-linear-attention", "0.4.1", "fla-core", "0.4.1"))
	if r.NumLayers != 64 || r.LayerKinds["linear_attention"] != 48 || r.FallbackLayers != 48 {
		t.Fatalf("report %+v", r)
	}
	want := map[string]string{"causal_conv1d_fn": "torch", "causal_conv1d_update": "torch", "chunk_gated_delta_rule": "package", "fused_recurrent_gated_delta_rule": "package"}
	if got := resolves(r); !maps.Equal(got, want) {
		t.Errorf("resolves %v, want %v", got, want)
	}
	if r.Mechanism != "per-function" || len(r.Slowdowns) == 0 || !strings.Contains(r.Slowdowns[0], "transformers#48718") {
		t.Errorf("mechanism %q slowdowns %q", r.Mechanism, r.Slowdowns)
	}
}

func convExt(sass ...string) facts.Extension {
	return facts.Extension{Dist: "causal_conv1d", Version: "1.6.1", Path: site + "/causal_conv1d_cuda.cpython-312-x86_64-linux-gnu.so", LinksTorch: true, SASS: sass, CommonSASS: sass}
}

func TestVerdicts(t *testing.T) {
	both := []string{"transformers", "5.17.0", "causal-conv1d", "1.6.1", "fla-core", "0.4.1", "flash-linear-attention", "0.4.1"}
	cases := []struct {
		name     string
		cfg      string
		f        func() *facts.Facts
		fallback int
		notLoad  string // substring of WillNotLoad; "" means it loads
		reason   string // substring of causal_conv1d_fn's reason
	}{
		{"healthy: both packages, code for sm_120", qwen35, func() *facts.Facts {
			f := envFacts(both...)
			f.Extensions = []facts.Extension{convExt("sm_100", "sm_120")}
			return f
		}, 0, "", "causal-conv1d 1.6.1"},
		{"healthy: extensions not read yet count as loadable", qwen35, func() *facts.Facts { return envFacts(both...) }, 0, "", ""},
		{"extension with SASS for sm_80 only on 12.0", qwen35, func() *facts.Facts {
			f := envFacts(both...)
			f.Extensions = []facts.Extension{convExt("sm_80")}
			return f
		}, 48, "", "no code for the GPU (compute capability 12.0): SASS sm_80"},
		{"extension built for another torch", qwen35, func() *facts.Facts {
			f := envFacts(both...)
			x := convExt("sm_120")
			x.MissingSymbols, x.MissingCount = []string{"c10::cuda::getCurrentCUDAStream(signed char)"}, 1
			f.Extensions = []facts.Extension{x}
			return f
		}, 48, "", "symbols the installed torch lacks"},
		{"CPU-only torch: every layer torch", qwen35, func() *facts.Facts {
			f := envFacts(both...)
			f.Torch.CUDA, f.Torch.Version = "", "2.11.0+cpu"
			return f
		}, 48, "", "CPU-only"},
		{"transformers 5.14: fla below 0.2.2 is refused", qwen35, func() *facts.Facts {
			return envFacts("transformers", "5.14.0", "causal-conv1d", "1.6.1", "fla-core", "0.2.1")
		}, 48, "", "causal-conv1d 1.6.1"},
		{"jamba without mamba-ssm on 4.57 raises", `{"model_type":"jamba","num_hidden_layers":32}`, func() *facts.Facts {
			return envFacts("transformers", "4.57.6", "causal-conv1d", "1.6.1")
		}, 28, "raises", "causal-conv1d 1.6.1"},
		{"jamba with use_mamba_kernels=false loads", `{"model_type":"jamba","num_hidden_layers":32,"use_mamba_kernels":false}`, func() *facts.Facts {
			return envFacts("transformers", "4.57.6")
		}, 28, "", "use_mamba_kernels=false"},
		{"jamba on 5.17 falls back quietly", `{"model_type":"jamba","num_hidden_layers":32}`, func() *facts.Facts {
			return envFacts("transformers", "5.17.0")
		}, 28, "", "not installed"},
		{"zamba on 5.14 raises", `{"model_type":"zamba","num_hidden_layers":20}`, func() *facts.Facts {
			return envFacts("transformers", "5.14.0")
		}, 20, "raises", "not installed"},
		{"flash_attention_2 without flash-attn", `{"model_type":"llama","num_hidden_layers":32,"attn_implementation":"flash_attention_2"}`, func() *facts.Facts {
			return envFacts("transformers", "5.17.0")
		}, 0, "flash-attn is not installed", ""},
		{"flash_attention_2 with a Hub kernel", `{"model_type":"llama","num_hidden_layers":32,"attn_implementation":"flash_attention_2"}`, func() *facts.Facts {
			return envFacts("transformers", "5.17.0", "kernels", "0.16.1")
		}, 0, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := analyze(t, tc.cfg, tc.f())
			if r.FallbackLayers != tc.fallback {
				t.Errorf("fallback_layers %d, want %d (%+v)", r.FallbackLayers, tc.fallback, r.Kinds)
			}
			if tc.notLoad == "" && r.WillNotLoad != "" || !strings.Contains(r.WillNotLoad, tc.notLoad) {
				t.Errorf("will_not_load %q, want %q", r.WillNotLoad, tc.notLoad)
			}
			if tc.reason != "" {
				found := false
				for _, k := range r.Kernels {
					if k.Function == "causal_conv1d_fn" && strings.Contains(k.Reason, tc.reason) {
						found = true
					}
				}
				if !found {
					t.Errorf("causal_conv1d_fn reason lacks %q: %+v", tc.reason, r.Kernels)
				}
			}
		})
	}
}

// Hub kernels: the window transformers 5.17 accepts is 0.16.x.
func TestHubKernelsWindow(t *testing.T) {
	for v, want := range map[string]bool{"0.16.1": true, "0.15.2": false, "0.17.0": false} {
		r := analyze(t, qwen35, envFacts("transformers", "5.17.0", "kernels", v))
		if r.HubKernels != want {
			t.Errorf("kernels %s: hub %v (%s)", v, r.HubKernels, r.HubKernelsReason)
		}
	}
	f := envFacts("transformers", "5.17.0", "kernels", "0.16.1")
	f.Env = []facts.EnvVar{{Name: "USE_HUB_KERNELS", Value: "NO"}}
	if r := analyze(t, qwen35, f); r.HubKernels {
		t.Error("USE_HUB_KERNELS=NO did not disable Hub kernels")
	}
}
