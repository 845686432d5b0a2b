package model

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestRealConfigs: configs fastpath was not built on (testdata/real-configs,
// README there for sources). The two releases must get transformers'
// layer counts and the kernel packages of their kinds; the families
// fastpath does not know must be left unjudged, with no fallback claimed
// and the kinds their config.json spells still counted.
func TestRealConfigs(t *testing.T) {
	cases := []struct {
		file     string
		layers   int
		kinds    map[string]int
		packages []string // the kernel packages the verdict names
		judged   bool
	}{
		{"nemotron-3-nano-30b-a3b.json", 52, map[string]int{"linear_attention": 23, "moe": 23, "full_attention": 6}, []string{"mamba-ssm", "causal-conv1d"}, true},
		{"qwen3-next-80b-a3b.json", 48, map[string]int{"linear_attention": 36, "full_attention": 12}, []string{"causal-conv1d", "flash-linear-attention"}, true},
		// Classes that work their layers out their own way
		// (config_reading.own_layouts): counted and kinds listed, as
		// transformers does, not judged.
		{"recurrent_gemma-default-5.24.json", 26, map[string]int{"linear_attention": 18, "sliding_attention": 8}, nil, false},
		{"recurrent_gemma-block-types-raw.json", 9, map[string]int{"linear_attention": 3, "sliding_attention": 6}, nil, false},
		{"dory-default-5.24.json", 36, map[string]int{"sliding_attention": 27, "full_attention": 9}, nil, false},
		{"longcat_flash-default-5.24.json", 56, nil, nil, false},
		{"longcat_flash-num-hidden-layers-raw.json", 20, nil, nil, false},
		{"lfm3-default-5.24.json", 24, map[string]int{"conv": 13, "full_attention": 6, "sliding_attention": 5}, nil, false},
		{"xlstm-default-5.24.json", 32, nil, nil, false},
		{"rwkv-default-5.24.json", 32, nil, nil, false},
		{"minimax_m2-default-5.24.json", 62, nil, nil, false},
		// Wrappers: judged by the language model they nest.
		{"lfm2_vl-default-5.24.json", 32, map[string]int{"full_attention": 32}, nil, true},
		{"lfm2_vl-16-layers-5.24.json", 16, map[string]int{"conv": 10, "full_attention": 6}, []string{"causal-conv1d"}, true},
		{"lfm2_vl-16-layers-raw.json", 16, map[string]int{"conv": 10, "full_attention": 6}, []string{"causal-conv1d"}, true},
		{"minicpmv4_6-default-5.24.json", 32, map[string]int{"linear_attention": 24, "full_attention": 8}, []string{"causal-conv1d", "flash-linear-attention"}, true},
		{"minicpm_ocr-default-5.24.json", 32, map[string]int{"linear_attention": 24, "full_attention": 8}, []string{"causal-conv1d", "flash-linear-attention"}, true},
		{"minicpmv4_6-text-no-model-type.json", 8, map[string]int{"linear_attention": 6, "full_attention": 2}, []string{"causal-conv1d", "flash-linear-attention"}, true},
		{"kimi_k25-5.24.json", 27, map[string]int{"linear_attention": 21, "full_attention": 6}, []string{"causal-conv1d", "flash-linear-attention"}, true},
		{"llava-jamba-5.24.json", 16, map[string]int{"linear_attention": 14, "full_attention": 2}, []string{"mamba-ssm", "causal-conv1d"}, true},
		{"nemotron_h_omni-llm_config-5.24.json", 4, map[string]int{"linear_attention": 1, "moe": 1, "full_attention": 1, "mlp": 1}, []string{"mamba-ssm", "causal-conv1d"}, true},
		{"nemo_speechlm-default-5.24.json", 52, map[string]int{"linear_attention": 23, "moe": 23, "full_attention": 6}, []string{"mamba-ssm", "causal-conv1d"}, true},
		{"qwen3_5_text-default-5.24.json", 32, map[string]int{"linear_attention": 24, "full_attention": 8}, []string{"causal-conv1d", "flash-linear-attention"}, true},
		{"granitemoehybrid-legacy-kinds-toy.json", 8, map[string]int{"linear_attention": 6, "full_attention": 2}, []string{"mamba-ssm", "causal-conv1d"}, true},
		{"jamba-1.5-mini.json", 32, map[string]int{"linear_attention": 28, "full_attention": 4}, []string{"mamba-ssm", "causal-conv1d"}, true},
		{"falcon-mamba-7b.json", 64, map[string]int{"linear_attention": 64}, []string{"mamba-ssm", "causal-conv1d"}, true},
		// Remote code transformers cannot load (attn_type_list is its own
		// class's field): counted, not judged.
		{"minimax-m1-80k.json", 80, nil, nil, false},
		// Wrappers of language models fastpath has no family for: the
		// nested model's layers are counted, nothing is judged.
		{"internvl3-1b.json", 24, map[string]int{"full_attention": 24}, nil, false},
		{"qwen3-omni-30b-a3b-shape.json", 48, nil, nil, false},
		{"colqwen2-default-5.24.json", 80, map[string]int{"full_attention": 80}, nil, false},
		{"gpt2-default-5.24.json", 12, nil, nil, false},
		{"mpt-default-5.24.json", 24, nil, nil, false},
	}
	for _, tc := range cases {
		b, err := os.ReadFile(filepath.Join("testdata", "real-configs", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		r := analyze(t, string(b), envFacts("transformers", "5.17.0"))
		if r.NumLayers != tc.layers {
			t.Errorf("%s: %d layers, want %d", tc.file, r.NumLayers, tc.layers)
		}
		if tc.kinds != nil && !maps.Equal(r.LayerKinds, tc.kinds) {
			t.Errorf("%s: kinds %v, want %v", tc.file, r.LayerKinds, tc.kinds)
		}
		if tc.judged && r.Family == "" {
			t.Errorf("%s: judged as no family", tc.file)
		}
		if r.Judged != tc.judged {
			t.Errorf("%s: judged %v (%s), want %v", tc.file, r.Judged, r.NotJudged, tc.judged)
		}
		if !tc.judged && r.FallbackLayers != 0 {
			t.Errorf("%s: not judged, yet %d layers said to fall back", tc.file, r.FallbackLayers)
		}
		got := map[string]bool{}
		for _, k := range r.Kernels {
			got[k.Package] = true
		}
		for _, p := range tc.packages {
			if !got[p] {
				t.Errorf("%s: no kernel of %s in %+v", tc.file, p, r.Kernels)
			}
		}
		if len(tc.packages) == 0 && len(r.Kernels) != 0 {
			t.Errorf("%s: kernels named for a family fastpath does not know: %+v", tc.file, r.Kernels)
		}
	}
}

// TestWrapperNames: what the text output and the live probe call a wrapper.
func TestWrapperNames(t *testing.T) {
	cases := []struct {
		r          Report
		name, code string
	}{
		{Report{ModelType: "lfm2_vl", TextModelType: "lfm2", TextConfig: "text_config", Family: "lfm2"}, "lfm2_vl (lfm2 in text_config)", "lfm2"},
		{Report{ModelType: "qwen3_5", TextModelType: "qwen3_5_text", TextConfig: "text_config", Family: "qwen3_5"}, "qwen3_5", "qwen3_5"},
		{Report{ModelType: "qwen3_5_text", Family: "qwen3_5"}, "qwen3_5_text (judged as qwen3_5)", "qwen3_5"},
		{Report{ModelType: "internvl_chat", TextModelType: "qwen2", TextConfig: "llm_config"}, "internvl_chat (qwen2 in llm_config)", "qwen2"},
		{Report{ModelType: "qwen3_omni_moe", TextConfig: "thinker_config.text_config"}, "qwen3_omni_moe (language model in thinker_config.text_config)", "qwen3_omni_moe"},
		{Report{ModelType: "llama"}, "llama", "llama"},
	}
	for _, tc := range cases {
		if got := FormatModelType(&tc.r); got != tc.name {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.name)
		}
		if got := tc.r.CodeModelType(); got != tc.code {
			t.Errorf("%+v: code model type %q, want %q", tc.r, got, tc.code)
		}
	}
}
