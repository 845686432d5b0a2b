package modelread

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread/transformerstest"
)

// The snippets below are written for these tests, each in the style of one
// transformers era (the real files are checked by the Network oracles).

func TestTokenizePython(t *testing.T) {
	src := "x = f\"a{y[\"k\"]}b\"  # comment \"not a string\nif (a ==\n    'conv'):\n\tpass\ns = '''multi\n\"line\"''' + r'\\d'\ny = 1 + \\\n  2\n"
	lines, err := tokenizePython([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		var ts []string
		for _, tk := range l.toks {
			ts = append(ts, tk.text)
		}
		got = append(got, fmt.Sprintf("%d@%d:%s", l.line, l.indent, strings.Join(ts, " ")))
	}
	want := []string{
		`1@0:x = a{y["k"]}b`,
		`2@0:if ( a == conv ) :`,
		`4@8:pass`,
		"5@0:s = multi\n\"line\" + \\d",
		`7@0:y = 1 + 2`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"x = 'open", "x = \"\"\"never closed", "f'{'"} {
		if _, err := tokenizePython([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := tokenizePython(make([]byte, maxPySource+1)); err == nil {
		t.Error("oversized source accepted")
	}
}

// 4.x style: module-level imports under is_*_available(), all(...), and
// `f or torch_f` in the layer; layer kinds through a table.
const legacyStyle = `from ...utils.import_utils import is_causal_conv1d_available, is_mamba_2_ssm_available

if is_mamba_2_ssm_available():
    from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined
else:
    mamba_chunk_scan_combined = None

if is_causal_conv1d_available():
    from causal_conv1d import causal_conv1d_fn, causal_conv1d_update as conv_update
else:
    causal_conv1d_fn, conv_update = None, None

is_fast_path_available = all((mamba_chunk_scan_combined, causal_conv1d_fn, conv_update))


def torch_conv_update(x):
    return x


class ToyMixer(nn.Module):
    def __init__(self, config):
        self.update = conv_update or torch_conv_update

    def forward(self, x):
        if is_fast_path_available:
            return mamba_chunk_scan_combined(x)
        return x


class ToyAttention(nn.Module):
    pass


LAYERS = {"mamba": ToyMixer, "attention": ToyAttention}


class ToyDecoderLayer(nn.Module):
    def __init__(self, config, i):
        self.mixer = LAYERS[config.layers_block_type[i]](config)


class ToyPreTrainedModel(PreTrainedModel):
    _supports_flash_attn = True
    _supports_sdpa = False


class ToyModel(ToyPreTrainedModel):
    def __init__(self, config):
        self.layers = nn.ModuleList([ToyDecoderLayer(config, i) for i in range(config.num_hidden_layers)])
`

// 5.0-5.14 style: lazy_load_kernel in the layer, an alias for the kind test
// and the layer built in an else branch; a ternary for another class.
const lazyStyle = `from ...integrations import lazy_load_kernel


class ToyConv(nn.Module):
    def __init__(self, config):
        global causal_conv1d_fn
        causal_conv1d = lazy_load_kernel("causal-conv1d")
        causal_conv1d_fn = getattr(causal_conv1d, "causal_conv1d_fn", None)
        mamba_ssm = lazy_load_kernel("mamba-ssm")
        scan = resolve_internal_import(mamba_ssm, chained_path="ops.selective_scan_interface.selective_scan_fn")

    def forward(self, x):
        return causal_conv1d_fn(x) if causal_conv1d_fn is not None else x


class ToyNorm(nn.Module):
    pass


class ToyFancyNorm(nn.Module):
    def forward(self, x):
        return causal_conv1d_fn(x)


class ToyAttention(nn.Module):
    pass


class ToyDecoderLayer(nn.Module):
    def __init__(self, config, i):
        self.is_attention_layer = config.layer_types[i] != "conv"
        if self.is_attention_layer:
            self.attn = ToyAttention(config)
        else:
            self.conv = ToyConv(config)
        self.norm = ToyFancyNorm() if config.layer_types[i] == "conv" else ToyNorm()


class ToyModel(PreTrainedModel):
    def __init__(self, config):
        self.layers = self.get_layers(config)

    def get_layers(self, config):
        return [ToyDecoderLayer(config, i) for i in range(3)]
`

func readSnippet(t *testing.T, src string, kinds ...string) *CodeReading {
	t.Helper()
	m, err := scanModule("models/toy/modeling_toy.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return readCode(m, kinds)
}

func gateList(r *CodeReading) string {
	var out []string
	for _, g := range r.Gates {
		out = append(out, fmt.Sprintf("%s=%s@%s %s fb=%s :%d", g.Local, g.Function, g.Import, g.How, g.Fallback, g.Line))
	}
	return strings.Join(out, "\n")
}

func kindFns(r *CodeReading) map[string]string {
	out := map[string]string{}
	for _, k := range r.Kinds {
		out[k.Kind] = strings.Join(k.Functions, ",")
	}
	return out
}

func TestReadLegacyStyle(t *testing.T) {
	r := readSnippet(t, legacyStyle, "mamba", "mamba", "attention")
	want := strings.Join([]string{
		"mamba_chunk_scan_combined=mamba_chunk_scan_combined@mamba_ssm.ops.triton.ssd_combined import-if-available fb=None :4",
		"causal_conv1d_fn=causal_conv1d_fn@causal_conv1d import-if-available fb=None :9",
		"conv_update=causal_conv1d_update@causal_conv1d import-if-available fb=torch_conv_update :9",
	}, "\n")
	if got := gateList(r); got != want {
		t.Errorf("gates\n%s\nwant\n%s", got, want)
	}
	if r.Gates[0].Condition != "is_mamba_2_ssm_available()" || r.FastPathLine != 13 || len(r.FastPathAll) != 3 {
		t.Errorf("condition %q fast path %v@%d", r.Gates[0].Condition, r.FastPathAll, r.FastPathLine)
	}
	if !r.Judged {
		t.Fatal(r.Why)
	}
	// The legacy spellings in the table match the config's, and the
	// current ones (the remap), alike.
	if got := kindFns(r); got["mamba"] != "causal_conv1d_fn,causal_conv1d_update,mamba_chunk_scan_combined" || got["attention"] != "" {
		t.Errorf("kinds %v", got)
	}
	if r.Attention["_supports_sdpa"].Value != "False" || !strings.Contains(r.Attention["_supports_flash_attn"].Where, "modeling_toy.py:43") {
		t.Errorf("attention %v", r.Attention)
	}
}

func TestReadLazyStyle(t *testing.T) {
	r := readSnippet(t, lazyStyle, "conv", "full_attention", "conv")
	want := strings.Join([]string{
		"causal_conv1d_fn=causal_conv1d_fn@causal_conv1d lazy-load-kernel fb=None :8",
		"scan=selective_scan_fn@mamba_ssm.ops.selective_scan_interface lazy-load-kernel fb=None :10",
	}, "\n")
	if got := gateList(r); got != want {
		t.Errorf("gates\n%s\nwant\n%s", got, want)
	}
	if !r.Judged {
		t.Fatal(r.Why)
	}
	// Through the alias, the else branch, the ternary and get_layers (the
	// class binding a gate counts as using it, as 5.14 binds in __init__).
	if got := kindFns(r); got["conv"] != "causal_conv1d_fn,selective_scan_fn" || got["full_attention"] != "" {
		t.Errorf("kinds %v", got)
	}
}

func TestReadHubStyle(t *testing.T) {
	r := readSnippet(t, transformerstest.HubStyle, "linear_attention", "linear_attention", "full_attention", "moe")
	want := strings.Join([]string{
		"torch_chunk_gated_delta_rule=chunk_gated_delta_rule@fla hub-fallback fb=torch_chunk_gated_delta_rule :1",
		"causal_conv1d_fn=causal_conv1d_fn@causal_conv1d hub-fallback fb=causal_conv1d_fn :6",
		"apply_rotary_pos_emb=rotary_pos_emb@ hub-only fb=apply_rotary_pos_emb :14",
	}, "\n")
	if got := gateList(r); got != want {
		t.Errorf("gates\n%s\nwant\n%s", got, want)
	}
	if !r.Judged {
		t.Fatal(r.Why)
	}
	// causal_conv1d_fn through helper(); the Hub-only kernel is no package.
	got := kindFns(r)
	if got["linear_attention"] != "causal_conv1d_fn,chunk_gated_delta_rule" || got["full_attention"] != "" || got["moe"] != "" {
		t.Errorf("kinds %v", got)
	}
	for _, k := range r.Kinds {
		if k.Kind == "linear_attention" && (len(k.Dispatch) == 0 || !strings.HasPrefix(k.Dispatch[0], "modeling_toy.py:40: ")) {
			t.Errorf("dispatch %v", k.Dispatch)
		}
	}
}

// Honesty: when the layers cannot be tied to code, nothing is claimed.
func TestReadCannotJudge(t *testing.T) {
	cases := []struct {
		name, src string
		kinds     []string
		why       string
	}{
		{"no kinds in config", transformerstest.HubStyle, nil, "config.json lists no per-layer kinds"},
		{"no dispatch on several kinds", strings.Replace(strings.Replace(transformerstest.HubStyle, `if self.block_type == "linear_attention":`, `if config.use_delta:`, 1),
			`elif self.block_type in ("full_attention", "sliding_attention"):`, `elif config.use_attention:`, 1),
			[]string{"linear_attention", "full_attention"}, "tests none of them"},
		{"layer class never built", strings.Replace(transformerstest.HubStyle, "self.linear_attn = ToyDeltaNet(config)", "self.linear_attn = None", 1),
			[]string{"linear_attention", "full_attention"}, "are not built by"},
		{"no model class", strings.ReplaceAll(transformerstest.HubStyle, "ToyModel", "ToyThing"), []string{"linear_attention"}, "no *Model class"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := readSnippet(t, tc.src, tc.kinds...)
			if r.Judged || !strings.Contains(r.Why, tc.why) {
				t.Errorf("judged %v why %q, want %q", r.Judged, r.Why, tc.why)
			}
		})
	}
	// A file binding nothing judges every kind: no kernels.
	r := readSnippet(t, "class LlamaModel(PreTrainedModel):\n    pass\n", "full_attention")
	if !r.Judged || len(r.Kinds) != 1 || len(r.Kinds[0].Functions) != 0 {
		t.Errorf("%+v", r)
	}
}

// A source tree for the verdict: transformers at site with one modeling file.
func FuzzScanModule(f *testing.F) {
	for _, s := range []string{legacyStyle, lazyStyle, transformerstest.HubStyle, "f'{x[\"a\"]}'", "x = (\n", "'''", "\\\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := scanModule("modeling_fuzz.py", b)
		if err != nil {
			return
		}
		readCode(m, []string{"linear_attention", "full_attention", "conv"})
		readCode(m, nil)
	})
}

// BenchmarkScanModule reads transformers 5.17.0's modeling_qwen3_5.py (96
// KB) from the test cache (TestNetworkSeedFromCode puts it there).
func BenchmarkScanModule(b *testing.B) {
	p := filepath.Join(os.Getenv("FASTPATH_TEST_CACHE"), "transformers-src", "5.17.0", "transformers", "models", "qwen3_5", "modeling_qwen3_5.py")
	src, err := os.ReadFile(p)
	if err != nil {
		b.Skipf("%v: run the Network tests with FASTPATH_TEST_CACHE set first", err)
	}
	kinds := append(repeat("linear_attention", 48), repeat("full_attention", 16)...)
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		m, err := scanModule(p, src)
		if err != nil {
			b.Fatal(err)
		}
		if r := readCode(m, kinds); !r.Judged {
			b.Fatal(r.Why)
		}
	}
}
