package model

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/collect/modelread/transformerstest"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/pep440"
	"github.com/fastpath-dev/fastpath/internal/source"
)

func seedWithSource(t *testing.T, site string, types ...string) (source.Source, string) {
	t.Helper()
	root := t.TempDir()
	if err := fixture.Seed(root); err != nil {
		t.Fatal(err)
	}
	sp, _ := filepath.Glob(filepath.Join(root, "root", "venv", "lib", "python3*", "site-packages"))
	if len(sp) != 1 {
		t.Fatalf("seed site-packages: %v", sp)
	}
	for _, mt := range append([]string{"auto"}, types...) {
		from := filepath.Join(site, "transformers", "models", mt)
		to := filepath.Join(sp[0], "transformers", "models", mt)
		if err := os.MkdirAll(to, 0o755); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(from)
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".py") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(from, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := source.Env{"PATH": "/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	src, err := source.Root(root, env)
	if err != nil {
		t.Fatal(err)
	}
	return src, root
}

func judgeInSeed(t *testing.T, src source.Source, cfgPath string) *Report {
	t.Helper()
	f := collect.Collect(context.Background(), src, collect.Options{GPUs: []string{"12.0"}})
	tc, why := modelread.TransformersFor(src, f)
	if tc == nil {
		t.Fatal(why)
	}
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := modelread.ParseConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	code, why := modelread.ReadCode(tc, c, "")
	return AnalyzeWithCode(cfgPath, &modelread.Located{Path: cfgPath}, c, f, code, why)
}

// TestNetworkSeedFromCode: the seed (Qwen3.5-27B, causal-conv1d missing, fla
// 0.4.1) with transformers 5.17.0's real source in the container gives the
// same "48 of 64" as the knowledge base, now from the code, with the file
// and line behind each kernel.
func TestNetworkSeedFromCode(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PyPI")
	}
	site := transformerstest.Source(t, "5.17.0")
	src, root := seedWithSource(t, site, "qwen3_5")
	cfg, _ := filepath.Glob(filepath.Join(root, "root", ".cache", "huggingface", "hub", "models--Qwen--Qwen3.5-27B", "snapshots", "*", "config.json"))
	if len(cfg) != 1 {
		t.Fatalf("seed config: %v", cfg)
	}
	r := judgeInSeed(t, src, cfg[0])
	if !r.Judged || r.JudgedFrom != "transformers source" || r.FallbackLayers != 48 || r.NumLayers != 64 {
		t.Fatalf("judged %v from %q: %d of %d (%s)", r.Judged, r.JudgedFrom, r.FallbackLayers, r.NumLayers, r.NotJudged)
	}
	want := map[string]string{"causal_conv1d_fn": "torch", "causal_conv1d_update": "torch", "chunk_gated_delta_rule": "package", "fused_recurrent_gated_delta_rule": "package"}
	for _, k := range r.Kernels {
		if want[k.Function] != k.Resolves || !strings.HasSuffix(k.File, "models/qwen3_5/modeling_qwen3_5.py") || k.Line == 0 {
			t.Errorf("%+v", k)
		}
		t.Logf("%s -> %s (%s:%d, %s, fallback %s)", k.Function, k.Resolves, k.File, k.Line, k.Gate, k.Fallback)
		delete(want, k.Function)
	}
	if len(want) > 0 {
		t.Errorf("kernels not found: %v", want)
	}
	if len(r.CodeVsKB) != 0 {
		t.Errorf("code and KB disagree on the seed: %v", r.CodeVsKB)
	}
	for _, k := range r.Kinds {
		t.Logf("%s: %d layers, classes %v, dispatch %v", k.Kind, k.Layers, k.Classes, k.Dispatch)
	}
}

// TestNetworkNewFamiliesFromCode: three families the knowledge base has
// never seen, judged from transformers 5.17.0's source alone in the seed
// container (no causal-conv1d; fla 0.4.1 installed): counts, files, lines.
func TestNetworkNewFamiliesFromCode(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PyPI")
	}
	site := transformerstest.Source(t, "5.17.0")
	cases := []struct {
		mt       string
		layers   int
		fallback int
		kind     string
		fns      []string
	}{
		// olmo_hybrid: 24 Gated DeltaNet layers need causal-conv1d + fla.
		{"olmo_hybrid", 32, 24, "linear_attention", []string{"causal_conv1d_fn", "causal_conv1d_update", "chunk_gated_delta_rule", "fused_recurrent_gated_delta_rule"}},
		// glm5_next: 34 KDA layers (causal-conv1d + fla's kda).
		{"glm5_next", 45, 34, "linear_attention", []string{"causal_conv1d_fn", "causal_conv1d_update", "chunk_kda", "fused_recurrent_kda"}},
		// qwen4_exp: 30 Gated DeltaNet layers.
		{"qwen4_exp", 40, 30, "linear_attention", []string{"causal_conv1d_fn", "causal_conv1d_update", "chunk_gated_delta_rule", "fused_recurrent_gated_delta_rule"}},
	}
	for _, tc := range cases {
		t.Run(tc.mt, func(t *testing.T) {
			src, _ := seedWithSource(t, site, tc.mt)
			r := judgeInSeed(t, src, filepath.Join("testdata", "device-configs", tc.mt+".json"))
			if r.Known || !r.Judged || r.NumLayers != tc.layers || r.FallbackLayers != tc.fallback {
				t.Fatalf("known %v judged %v (%s): %d of %d", r.Known, r.Judged, r.NotJudged, r.FallbackLayers, r.NumLayers)
			}
			if len(r.Kinds) != 1 || r.Kinds[0].Kind != tc.kind || strings.Join(r.Kinds[0].Fallback, ",") != "causal_conv1d_fn,causal_conv1d_update" {
				t.Errorf("kinds %+v", r.Kinds)
			}
			var fns []string
			for _, k := range r.Kernels {
				fns = append(fns, k.Function)
				if !strings.HasSuffix(k.File, "modeling_"+tc.mt+".py") || k.Line == 0 {
					t.Errorf("%+v", k)
				}
				t.Logf("%s -> %s (%s:%d; fallback %s)", k.Function, k.Resolves, filepath.Base(k.File), k.Line, k.Fallback)
			}
			sort.Strings(fns)
			if strings.Join(fns, ",") != strings.Join(tc.fns, ",") {
				t.Errorf("functions %v, want %v", fns, tc.fns)
			}
			t.Logf("%s: %d of %d layers fall back; %s built by %v (%v)", tc.mt, r.FallbackLayers, r.NumLayers, tc.kind, r.Kinds[0].Classes, r.Kinds[0].Dispatch)
		})
	}
}

// TestNetworkCodeAgreesWithKB: for every family of the knowledge base and
// every oracle release that ships it, the static reading of the default
// config (testdata/reference-5.17) must make the same layer kinds
// kernel-dependent as the knowledge base; function-level differences are
// logged (they are what model-code-kb-disagree reports).
func TestNetworkCodeAgreesWithKB(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PyPI")
	}
	fams := familiesForTest()
	for _, v := range transformerstest.OracleVersions(t) {
		t.Run(v, func(t *testing.T) {
			site := transformerstest.Source(t, v)
			src, err := source.Root("/", source.Env{})
			if err != nil {
				t.Fatal(err)
			}
			tc, err := modelread.NewTransformersCode(src, site, v)
			if err != nil {
				t.Fatal(err)
			}
			agree, n := 0, 0
			for _, mt := range fams {
				b, err := os.ReadFile(filepath.Join("testdata", "reference-5.17", mt, "config.json"))
				if err != nil {
					continue
				}
				c, err := modelread.ParseConfig(b)
				if err != nil {
					t.Fatal(err)
				}
				r, err := tc.Read(mt, c.Kinds)
				if err != nil {
					t.Logf("%s %s: %v", v, mt, err)
					continue
				}
				n++
				if !r.Judged {
					if c.Kinds == nil {
						t.Logf("%s %s: not judged, as the config lists no kinds: %s", v, mt, r.Why)
						agree++
						continue
					}
					t.Errorf("%s %s: not judged: %s", v, mt, r.Why)
					continue
				}
				kbKinds, codeKinds := kbDependentKinds(mt, c), map[string]bool{}
				for _, k := range r.Kinds {
					if len(k.Functions) > 0 {
						codeKinds[k.Kind] = true
					}
				}
				perFunction := !pep440.Less(v, kb.Families().Mechanism.PerFunctionFrom)
				for _, d := range compareWithKB(nil, c, r, kb.Families().Families[mt], kb.Families(), perFunction) {
					t.Logf("%s %s: %s", v, mt, d)
				}
				if fmt.Sprint(kbKinds) != fmt.Sprint(codeKinds) {
					t.Errorf("%s %s: kernel-dependent kinds: knowledge base %v, code %v", v, mt, kbKinds, codeKinds)
					continue
				}
				agree++
			}
			t.Logf("transformers %s: %d of %d knowledge-base families agree on which layer kinds need kernels", v, agree, n)
		})
	}
}

func familiesForTest() []string {
	var out []string
	for k := range kb.Families().Families {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// kbDependentKinds are the config's kinds the knowledge base gives kernel
// functions.
func kbDependentKinds(mt string, c *modelread.Config) map[string]bool {
	d := kb.Families()
	out := map[string]bool{}
	for k := range c.KindCounts() {
		if kk, ok := d.Families[mt].Kinds[k]; ok && len(d.Functions(kk, true)) > 0 {
			out[k] = true
		}
	}
	return out
}

// TestNetworkAttentionAgreesWithRuntime: for each attn_implementation the
// GPU machine tried on a llama (testdata/gates-runtime-5.17.0/attn.json:
// transformers 5.17.0, no flash-attn, no kernels, an H200), fastpath's
// verdict from transformers 5.17.0's modeling_llama.py must match: loads,
// or model-will-not-load.
func TestNetworkAttentionAgreesWithRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PyPI")
	}
	b, err := os.ReadFile(filepath.Join("testdata", "gates-runtime-5.17.0", "attn.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Transformers string `json:"transformers"`
		Capability   string `json:"capability"`
		Cases        []struct {
			Requested string `json:"requested"`
			Loaded    bool   `json:"loaded"`
			Error     string `json:"error"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	site := transformerstest.Source(t, rec.Transformers)
	src, err := source.Root("/", source.Env{})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := modelread.NewTransformersCode(src, site, rec.Transformers)
	if err != nil {
		t.Fatal(err)
	}
	f := envFacts("transformers", rec.Transformers)
	f.GPU.Devices[0].Capability = rec.Capability
	for _, c := range rec.Cases {
		cfg, err := modelread.ParseConfig([]byte(fmt.Sprintf(`{"model_type":"llama","num_hidden_layers":1,"attn_implementation":%q}`, c.Requested)))
		if err != nil {
			t.Fatal(err)
		}
		code, why := modelread.ReadCode(tc, cfg, "")
		r := AnalyzeWithCode("llama", nil, cfg, f, code, why)
		if loads := r.WillNotLoad == ""; loads != c.Loaded {
			t.Errorf("%s: transformers loaded=%v (%s); fastpath: %q", c.Requested, c.Loaded, c.Error, r.WillNotLoad)
		} else {
			t.Logf("%s: loaded=%v both (%s)", c.Requested, c.Loaded, r.WillNotLoad)
		}
	}
}
