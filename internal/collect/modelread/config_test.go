package modelread

import (
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfigLayouts(t *testing.T) {
	cases := []struct {
		name, json string
		want       map[string]int
		first      []string
	}{
		{"qwen3.5 nested, interval", `{"model_type":"qwen3_5","text_config":{"num_hidden_layers":64,"full_attention_interval":4}}`,
			map[string]int{"linear_attention": 48, "full_attention": 16}, []string{"linear_attention", "linear_attention", "linear_attention", "full_attention"}},
		{"qwen3_next legacy names remapped", `{"model_type":"qwen3_next","num_hidden_layers":2,"layer_types":["mamba","attention"]}`,
			map[string]int{"linear_attention": 1, "full_attention": 1}, nil},
		{"kimi 1-indexed", `{"model_type":"kimi_linear","num_hidden_layers":4,"linear_attn_config":{"kda_layers":[1,2,3],"full_attn_layers":[4]}}`,
			map[string]int{"linear_attention": 3, "full_attention": 1}, []string{"linear_attention", "linear_attention", "linear_attention", "full_attention"}},
		{"nemotron pattern", `{"model_type":"nemotron_h","hybrid_override_pattern":"M-M*E"}`,
			map[string]int{"linear_attention": 2, "mlp": 1, "full_attention": 1, "moe": 1}, nil},
		{"jamba period", `{"model_type":"jamba","num_hidden_layers":8,"attn_layer_period":8,"attn_layer_offset":4}`,
			map[string]int{"linear_attention": 7, "full_attention": 1}, nil},
		{"mamba python Infinity", `{"model_type":"mamba2","num_hidden_layers":3,"time_step_limit":[0.0, Infinity],"x":"NaN"}`,
			map[string]int{"linear_attention": 3}, nil},
		{"unknown type: reported, not guessed", `{"model_type":"llama","num_hidden_layers":32}`, map[string]int{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.KindCounts()); diff != "" {
				t.Error(diff)
			}
			if tc.first != nil && !cmp.Equal(c.Kinds[:len(tc.first)], tc.first) {
				t.Errorf("first kinds %v", c.Kinds[:len(tc.first)])
			}
		})
	}
	c, _ := ParseConfig([]byte(`{"model_type":"llama","num_hidden_layers":32}`))
	if c.Known || c.NumLayers != 32 || !strings.Contains(strings.Join(c.Notes, " "), "only the installed transformers' code can judge it") {
		t.Errorf("unknown model_type: %+v", c)
	}
}

// Bad configs give an error that says what is wrong.
func TestParseConfigErrors(t *testing.T) {
	cases := []struct{ name, json, want string }{
		{"not JSON", `{"model_type": "qwen3_next",`, "not JSON"},
		{"binary", "\x7fELF\x00\x01", "not JSON"},
		{"list at top", `[1,2]`, "not an object"},
		{"no model_type", `{"num_hidden_layers": 4}`, "no model_type"},
		{"model_type a number", `{"model_type": 3}`, "model_type: want a string"},
		{"layers a string", `{"model_type":"mamba","num_hidden_layers":"32"}`, "num_hidden_layers: want an integer"},
		{"layers fractional", `{"model_type":"mamba","num_hidden_layers":3.5}`, "want an integer"},
		{"layers negative", `{"model_type":"mamba","num_hidden_layers":-4}`, "not a layer count"},
		{"layers huge", `{"model_type":"mamba","num_hidden_layers":1e300}`, "want an integer"},
		{"layer_types short", `{"model_type":"qwen3_next","num_hidden_layers":4,"layer_types":["linear_attention"]}`, "layer_types has 1 entries, num_hidden_layers is 4"},
		{"layer_types not strings", `{"model_type":"qwen3_next","num_hidden_layers":1,"layer_types":[1]}`, "layer_types[0]: want a string"},
		{"zero interval", `{"model_type":"qwen3_next","num_hidden_layers":4,"full_attention_interval":0}`, "full_attention_interval: 0"},
		{"negative period", `{"model_type":"jamba","num_hidden_layers":4,"attn_layer_period":-8}`, "attn_layer_period: -8"},
		{"negative offset", `{"model_type":"zamba","num_hidden_layers":4,"attn_layer_offset":-1}`, "attn_layer_offset: -1"},
		{"kda 0-indexed", `{"model_type":"kimi_linear","num_hidden_layers":2,"linear_attn_config":{"kda_layers":[0],"full_attn_layers":[2]}}`, "1-indexed"},
		{"kda gap", `{"model_type":"kimi_linear","num_hidden_layers":3,"linear_attn_config":{"kda_layers":[1],"full_attn_layers":[3]}}`, "layer 2 (1-indexed) is in neither"},
		{"pattern junk", `{"model_type":"nemotron_h","hybrid_override_pattern":"MX"}`, "none of M"},
		{"text_config a list", `{"model_type":"qwen3_5","text_config":[]}`, "text_config: want an object"},
		{"trailing data", `{"model_type":"mamba","num_hidden_layers":1} {}`, "data after"},
		{"too large", `{"model_type":"mamba","pad":"` + strings.Repeat("x", MaxConfigBytes) + `"}`, "more than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func FuzzConfig(f *testing.F) {
	for _, s := range []string{
		`{"model_type":"qwen3_5","text_config":{"num_hidden_layers":64,"full_attention_interval":4}}`,
		`{"model_type":"kimi_linear","num_hidden_layers":4,"linear_attn_config":{"kda_layers":[1,2,3],"full_attn_layers":[4]}}`,
		`{"model_type":"nemotron_h","hybrid_override_pattern":"M-M*E","num_hidden_layers":9}`,
		`{"model_type":"zamba","num_hidden_layers":2,"attn_layer_period":1}`,
		`{"model_type":"lfm2_moe","num_hidden_layers":3,"full_attn_idxs":[9,-1]}`,
		`{"model_type":"mamba2","num_hidden_layers":3,"time_step_limit":[0.0, Infinity]}`,
		`{"model_type":"bamba","num_hidden_layers":3,"attn_layer_indices":[-1,7,1]}`,
		`{"model_type":"w","thinker_config":{"text_config":{"model_type":"lfm2","num_hidden_layers":2,"layer_types":["conv","attention"]}}}`,
		`{"model_type":"internvl_chat","llm_config":{"model_type":"qwen2","n_layer":3},"language_config":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err != nil {
			return
		}
		if c.Kinds != nil && c.NumLayers != len(c.Kinds) {
			t.Fatalf("num_layers %d for %d kinds", c.NumLayers, len(c.Kinds))
		}
	})
}

// TestParseConfigWrappers: the language model of a wrapper config is found
// where transformers' get_text_config finds it, judged by its family, and
// read from that family's modeling file.
func TestParseConfigWrappers(t *testing.T) {
	cases := []struct {
		name, json                   string
		family, textMT, path, codeMT string
		layers                       int
		kinds                        map[string]int
	}{
		{"llm_config (InternVL remote code)", `{"model_type":"internvl_chat","llm_config":{"model_type":"qwen2","num_hidden_layers":24}}`,
			"", "qwen2", "llm_config", "qwen2", 24, map[string]int{}},
		{"thinker then text_config", `{"model_type":"qwen3_omni_moe","thinker_config":{"text_config":{"num_hidden_layers":48}},"talker_config":{"text_config":{"num_hidden_layers":20}}}`,
			"", "", "thinker_config.text_config", "qwen3_omni_moe", 48, map[string]int{}},
		{"vl wrapper of a family", `{"model_type":"lfm2_vl","text_config":{"model_type":"lfm2","num_hidden_layers":4,"full_attn_idxs":[3]}}`,
			"lfm2", "lfm2", "text_config", "lfm2", 4, map[string]int{"conv": 3, "full_attention": 1}},
		{"nested config naming no model_type: the wrapper's default", `{"model_type":"lfm2_vl","text_config":{"num_hidden_layers":3,"full_attn_idxs":[2]}}`,
			"lfm2", "lfm2", "text_config", "lfm2", 3, map[string]int{"conv": 2, "full_attention": 1}},
		{"a family nested in a wrapper is read at its own level", `{"model_type":"w","text_config":{"model_type":"jamba","num_hidden_layers":8,"text_config":{"num_hidden_layers":2}}}`,
			"jamba", "jamba", "text_config", "jamba", 8, map[string]int{"linear_attention": 7, "full_attention": 1}},
		{"language_config", `{"model_type":"x_vl","language_config":{"model_type":"jamba","num_hidden_layers":8}}`,
			"jamba", "jamba", "language_config", "jamba", 8, map[string]int{"linear_attention": 7, "full_attention": 1}},
		{"vlm_config then text_config", `{"model_type":"colx","vlm_config":{"model_type":"x","text_config":{"model_type":"kimi_linear","num_hidden_layers":5}}}`,
			"kimi_linear", "kimi_linear", "vlm_config.text_config", "kimi_linear", 5, map[string]int{"linear_attention": 4, "full_attention": 1}},
		{"text-only model type of a family", `{"model_type":"qwen3_5_text","num_hidden_layers":8}`,
			"qwen3_5", "", "", "qwen3_5", 8, map[string]int{"linear_attention": 6, "full_attention": 2}},
		{"a family at the top keeps its own fields", `{"model_type":"jamba","num_hidden_layers":8,"text_config":{"num_hidden_layers":99}}`,
			"jamba", "", "", "jamba", 8, map[string]int{"linear_attention": 7, "full_attention": 1}},
		{"decoder_config where the class reads it (dia)", `{"model_type":"dia","decoder_config":{"model_type":"dia_decoder","num_hidden_layers":18}}`,
			"", "dia_decoder", "decoder_config", "dia_decoder", 18, map[string]int{}},
		{"decoder_config that is no language model (maskformer's DETR)", `{"model_type":"maskformer","num_hidden_layers":6,"decoder_config":{"model_type":"detr","num_hidden_layers":3}}`,
			"", "", "", "maskformer", 6, map[string]int{}},
		{"a key of that name that holds no config", `{"model_type":"z","num_hidden_layers":4,"decoder":true,"generator":"greedy"}`,
			"", "", "", "z", 4, map[string]int{}},
		{"n_layer alias", `{"model_type":"gpt2","n_layer":12}`, "", "", "", "gpt2", 12, map[string]int{}},
		{"n_layers alias", `{"model_type":"mpt","n_layers":24}`, "", "", "", "mpt", 24, map[string]int{}},
		{"num_layers alias", `{"model_type":"gpt_neo","num_layers":24}`, "", "", "", "gpt_neo", 24, map[string]int{}},
		{"legacy kinds of an unknown family", `{"model_type":"y","num_hidden_layers":2,"layer_types":["mamba","qwen_sparse_attention"]}`,
			"", "", "", "y", 2, map[string]int{"linear_attention": 1, "indexed_attention": 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if c.Family != tc.family || c.TextModelType != tc.textMT || c.TextConfig != tc.path || c.CodeModelType() != tc.codeMT {
				t.Errorf("family %q, text model %q in %q, code %q; want %q, %q in %q, %q",
					c.Family, c.TextModelType, c.TextConfig, c.CodeModelType(), tc.family, tc.textMT, tc.path, tc.codeMT)
			}
			if c.Known != (tc.family != "") {
				t.Errorf("known %v for family %q", c.Known, c.Family)
			}
			if c.NumLayers != tc.layers {
				t.Errorf("%d layers, want %d", c.NumLayers, tc.layers)
			}
			if diff := cmp.Diff(tc.kinds, c.KindCounts()); diff != "" {
				t.Error(diff)
			}
		})
	}
	for _, bad := range []string{
		`{"model_type":"x","text_config":"qwen2"}`,
		`{"model_type":"x","thinker_config":{"text_config":[1]}}`,
	} {
		if _, err := ParseConfig([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	// A model fastpath does not know, with a count it cannot read (lxmert
	// keeps one per tower): noted, nothing counted, no error.
	for _, odd := range []string{`{"model_type":"gpt2","n_layer":-1}`, `{"model_type":"lxmert","num_hidden_layers":{"language":9,"vision":5}}`} {
		c, err := ParseConfig([]byte(odd))
		if err != nil || c.NumLayers != 0 || !strings.Contains(strings.Join(c.Notes, "; "), "cannot be read") {
			t.Errorf("%s: %v, %+v", odd, err, c)
		}
	}
	// Nesting deeper than MaxNesting stops there instead of recursing on.
	deep := `{"model_type":"x","num_hidden_layers":1}`
	for i := 0; i < 10; i++ {
		deep = `{"model_type":"x","text_config":` + deep + `}`
	}
	if c, err := ParseConfig([]byte(deep)); err != nil || strings.Count(c.TextConfig, "text_config") != MaxNesting {
		t.Errorf("deep nesting: %v, %+v", err, c)
	}
}

// TestParseConfigOwnLayouts: model_types fastpath has no family for whose
// configuration class works its layers out its own way
// (config_reading.own_layouts), with what transformers 5.24.0's class
// makes of each config (run through AutoConfig.for_model).
func TestParseConfigOwnLayouts(t *testing.T) {
	cases := []struct {
		name, cfg string
		layers    int
		kinds     map[string]int
	}{
		{"longcat_flash: 2 x num_layers", `{"model_type":"longcat_flash","num_layers":14}`, 28, map[string]int{}},
		{"longcat_flash: its default num_layers", `{"model_type":"longcat_flash"}`, 56, map[string]int{}},
		{"longcat_flash: num_hidden_layers rounded down", `{"model_type":"longcat_flash","num_hidden_layers":21,"num_layers":14}`, 20, map[string]int{}},
		{"dory: saved attention+mlp pairs folded", `{"model_type":"dory","num_hidden_layers":10,"layer_types":["full_attention","mlp","sliding_attention","mlp","full_attention","mlp","sliding_attention","mlp","full_attention","mlp"]}`,
			5, map[string]int{"full_attention": 3, "sliding_attention": 2}},
		{"dory: a list without mlp is one entry per layer", `{"model_type":"dory","num_hidden_layers":5,"layer_types":["full_attention","full_attention","full_attention","full_attention","full_attention"]}`,
			5, map[string]int{"full_attention": 5}},
		{"recurrent_gemma: block_types cycled", `{"model_type":"recurrent_gemma","num_hidden_layers":5,"block_types":["recurrent","attention"]}`,
			5, map[string]int{"linear_attention": 3, "sliding_attention": 2}},
		{"recurrent_gemma: any other block is attention", `{"model_type":"recurrent_gemma","num_hidden_layers":3,"block_types":["foo","recurrent"]}`,
			3, map[string]int{"linear_attention": 1, "sliding_attention": 2}},
		{"recurrent_gemma: the default block_types", `{"model_type":"recurrent_gemma","num_hidden_layers":26}`,
			26, map[string]int{"linear_attention": 18, "sliding_attention": 8}},
		// transformers would cycle the string's characters: no kinds is said.
		{"recurrent_gemma: a string block_types derives nothing", `{"model_type":"recurrent_gemma","num_hidden_layers":4,"block_types":"recurrent"}`,
			4, map[string]int{}},
		{"an unrelated model_type keeps the generic reading", `{"model_type":"x","num_layers":14}`, 14, map[string]int{}},
	}
	for _, tc := range cases {
		c, err := ParseConfig([]byte(tc.cfg))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c.NumLayers != tc.layers || !maps.Equal(c.KindCounts(), tc.kinds) || c.Known {
			t.Errorf("%s: %d layers %v (known %v), want %d %v", tc.name, c.NumLayers, c.KindCounts(), c.Known, tc.layers, tc.kinds)
		}
	}
}
