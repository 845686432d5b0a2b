package model

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread"
	"github.com/fastpath-dev/fastpath/internal/collect/modelread/transformerstest"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// oracleFile is what scripts/transformers-config-oracle.py recorded for
// testdata/real-configs with the newest transformers on PyPI when it was run.
const oracleFile = "real-configs-oracle-5.24.0.json"

// configOracle is the script's output.
type configOracle struct {
	Transformers string `json:"transformers"`
	Configs      map[string]struct {
		ModelType     string         `json:"model_type"`
		TextModelType *string        `json:"text_model_type"`
		NumLayers     *int           `json:"num_layers"`
		LayerKinds    map[string]int `json:"layer_kinds"`
		Via           string         `json:"via"`
		Error         string         `json:"error"`
	} `json:"configs"`
}

func readOracle(t *testing.T, path string) *configOracle {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var o configOracle
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &o
}

// TestRealConfigsAgreeWithTransformers: for every config under
// testdata/real-configs, fastpath finds the language model transformers
// finds (get_text_config), counts the same layers and, where transformers
// lists per-layer kinds, the same kinds.
func TestRealConfigsAgreeWithTransformers(t *testing.T) {
	o := readOracle(t, filepath.Join("testdata", oracleFile))
	files, _ := filepath.Glob(filepath.Join("testdata", "real-configs", "*.json"))
	if len(files) < 30 {
		t.Fatalf("%d real configs; the oracle has %d", len(files), len(o.Configs))
	}
	for _, f := range files {
		name := filepath.Base(f)
		want, ok := o.Configs[name]
		if !ok {
			t.Errorf("%s: not in %s: run scripts/transformers-config-oracle.py", name, oracleFile)
			continue
		}
		checkAgainstOracle(t, name, f, want.TextModelType, want.NumLayers, want.LayerKinds, want.Error)
	}
	names := make([]string, 0, len(o.Configs))
	for n := range o.Configs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := os.Stat(filepath.Join("testdata", "real-configs", n)); err != nil {
			t.Errorf("%s is in %s but not in testdata/real-configs", n, oracleFile)
		}
	}
}

func checkAgainstOracle(t *testing.T, name, path string, textMT *string, layers *int, kinds map[string]int, refused string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := modelread.ParseConfig(b)
	if refused != "" {
		if err == nil && c.Known {
			t.Errorf("%s: transformers refuses it (%s) but fastpath judges it as %s", name, refused, c.Family)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: transformers reads it, fastpath: %v", name, err)
		return
	}
	wantText := ""
	if textMT != nil {
		wantText = *textMT
	}
	switch {
	case c.TextModelType == "" && c.TextConfig != "" && wantText != "":
		// The nested config names no model_type; transformers fills in its
		// class's default sub-config, which only its tables know.
		t.Logf("%s: %s names no model_type (transformers: %s); layers counted from it", name, c.TextConfig, wantText)
	case c.TextModelType != wantText:
		t.Errorf("%s: language model %q (%s), transformers' get_text_config: %q", name, c.TextModelType, c.TextConfig, wantText)
	}
	if layers != nil && c.NumLayers != *layers {
		t.Errorf("%s: %d layers, transformers %d", name, c.NumLayers, *layers)
	}
	got := c.KindCounts()
	switch {
	case kinds != nil && !maps.Equal(got, kinds):
		// A model_type fastpath has no family for is read the generic way
		// or by its class's own derivation (config_reading.own_layouts:
		// recurrent_gemma's block_types, dory's saved pairs); either way
		// its kinds must be transformers' own.
		t.Errorf("%s: kinds %v (from %s), transformers %v", name, got, c.KindsFrom, kinds)
	case kinds == nil && !c.Known && len(got) != 0:
		t.Errorf("%s: kinds %v for a model transformers lists none for", name, got)
	}
}

// TestNetworkRealConfigsOracle reruns scripts/transformers-config-oracle.py
// with the newest transformers on PyPI (configuration classes only, no
// torch) over testdata/real-configs and checks fastpath against what it
// says now; where that release reads a file differently from the committed
// oracle it says so (rerun the script and commit its output).
func TestNetworkRealConfigsOracle(t *testing.T) {
	py, script, v := oracleVenv(t)
	out := filepath.Join(t.TempDir(), "oracle.json")
	testenv.Run(t, []string{"TRANSFORMERS_VERBOSITY=error", "HF_HUB_OFFLINE=1"}, py, script, filepath.Join("testdata", "real-configs"), out)
	fresh := readOracle(t, out)
	committed := readOracle(t, filepath.Join("testdata", oracleFile))
	if fresh.Transformers != v {
		t.Fatalf("the script ran transformers %s, not %s", fresh.Transformers, v)
	}
	for name, want := range fresh.Configs {
		checkAgainstOracle(t, name, filepath.Join("testdata", "real-configs", name), want.TextModelType, want.NumLayers, want.LayerKinds, want.Error)
		old, _ := json.Marshal(committed.Configs[name])
		now, _ := json.Marshal(want)
		if string(old) != string(now) {
			t.Logf("%s: transformers %s reads it as %s; %s recorded %s", name, v, now, committed.Transformers, old)
		}
	}
}

// TestNetworkWrappersFromCode: wrapper configs in the seed container (no
// causal-conv1d, fla 0.4.1) with transformers 5.17.0's real source are
// judged from their language model's modeling file, not the wrapper's own
// (which binds no kernel and would pass for a fast model).
func TestNetworkWrappersFromCode(t *testing.T) {
	testenv.Network(t)
	site := transformerstest.Source(t, "5.17.0")
	cases := []struct {
		file, module string
		layers       int
		fallback     int
	}{
		// lfm2_vl: its 10 conv layers need causal-conv1d (modeling_lfm2.py).
		{"lfm2_vl-16-layers-raw.json", "lfm2", 16, 10},
		// kimi_k25 with a kimi_linear text model: 21 KDA layers.
		{"kimi_k25-5.24.json", "kimi_linear", 27, 21},
		// A llava wrapping jamba: its 14 mamba layers.
		{"llava-jamba-5.24.json", "jamba", 16, 14},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			src, _ := seedWithSource(t, site, tc.module)
			r := judgeInSeed(t, src, filepath.Join("testdata", "real-configs", tc.file))
			if !r.Judged || r.JudgedFrom != "transformers source" || r.NumLayers != tc.layers || r.FallbackLayers != tc.fallback {
				t.Fatalf("judged %v from %q (%s): %d of %d", r.Judged, r.JudgedFrom, r.NotJudged, r.FallbackLayers, r.NumLayers)
			}
			if r.Code == nil || !strings.HasSuffix(r.Code.File, "modeling_"+tc.module+".py") {
				t.Errorf("read %+v, want modeling_%s.py", r.Code, tc.module)
			}
			t.Logf("%s (%s): %d of %d layers fall back, from %s", r.ModelType, r.Family, r.FallbackLayers, r.NumLayers, r.Code.File)
		})
	}
}

// defaultsOwnDerivation: pi0, whose language model fastpath finds in
// vlm_config where transformers' get_text_config stops at the config
// itself (fastpath's purpose is the layers that run kernels). Logged.
// (Classes that derive their count or kinds their own way, dory,
// longcat_flash, recurrent_gemma, are config_reading.own_layouts and
// checked like the rest.)
var defaultsOwnDerivation = map[string]bool{"pi0.json": true}

// TestNetworkEveryModelTypeDefault: the defaults of every configuration
// class of the newest transformers on PyPI. For each, fastpath finds the
// language model transformers finds and counts its layers as transformers
// does, or claims no count at all (encoder-decoder and vision classes that
// alias num_hidden_layers to encoder_layers, depth, ...: "no layer count");
// it never claims a different count or different kinds.
func TestNetworkEveryModelTypeDefault(t *testing.T) {
	py, script, v := oracleVenv(t)
	dir := t.TempDir()
	cfgs, out := filepath.Join(dir, "configs"), filepath.Join(dir, "oracle.json")
	testenv.Run(t, []string{"TRANSFORMERS_VERBOSITY=error", "HF_HUB_OFFLINE=1"}, py, script, "--write-defaults", cfgs, out)
	o := readOracle(t, out)
	if len(o.Configs) < 300 {
		t.Fatalf("transformers %s wrote %d default configs", v, len(o.Configs))
	}
	noCount := 0
	for name, want := range o.Configs {
		if want.Error != "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(cfgs, name))
		if err != nil {
			t.Fatal(err)
		}
		c, err := modelread.ParseConfig(b)
		if err != nil {
			t.Errorf("%s: transformers reads it, fastpath: %v", name, err)
			continue
		}
		if c.NumLayers == 0 && c.Kinds == nil {
			noCount++
			continue
		}
		if defaultsOwnDerivation[name] {
			n := -1
			if want.NumLayers != nil {
				n = *want.NumLayers
			}
			t.Logf("%s: fastpath %d layers %v, transformers %d %v (its class derives them)", name, c.NumLayers, c.KindCounts(), n, want.LayerKinds)
			continue
		}
		checkAgainstOracle(t, name, filepath.Join(cfgs, name), want.TextModelType, want.NumLayers, want.LayerKinds, "")
	}
	t.Logf("transformers %s: %d default configs, %d with no layer count fastpath reads", v, len(o.Configs), noCount)
}

// wrapperDefaultsPy prints, for every configuration class of the installed
// transformers whose get_text_config() is a nested config, that config's
// model_type when the class is built with its defaults.
const wrapperDefaultsPy = `
import json, warnings
warnings.filterwarnings("ignore")
from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES
out = {}
for mt in CONFIG_MAPPING_NAMES:
    try:
        c = CONFIG_MAPPING[mt]()
        try:
            t = c.get_text_config()
        except ValueError:
            t = c.get_text_config(decoder=True)
    except Exception:
        continue
    if t is not c and getattr(t, "model_type", ""):
        out[mt] = t.model_type
print(json.dumps(out))
`

// TestNetworkWrapperTextDefaults: the knowledge base's text_defaults (the
// language model a wrapper builds when its nested config names no
// model_type) are what the newest transformers' classes build, and every
// wrapper whose default language model is a knowledge-base family is
// listed.
func TestNetworkWrapperTextDefaults(t *testing.T) {
	testenv.Network(t)
	py3 := testenv.Python3(t)
	v := transformerstest.NewestTransformers(t)
	py := transformerstest.Venv(t, py3, filepath.Join(testenv.CacheDir(t), "transformers", v), v)
	var got map[string]string
	if err := json.Unmarshal([]byte(testenv.Run(t, []string{"TRANSFORMERS_VERBOSITY=error", "HF_HUB_OFFLINE=1"}, py, "-c", wrapperDefaultsPy)), &got); err != nil {
		t.Fatal(err)
	}
	d := kb.Families()
	for w, text := range d.ConfigReading.TextDefaults {
		if got[w] != text {
			t.Errorf("text_defaults says %s builds %s; transformers %s: %q", w, text, v, got[w])
		}
	}
	for w, text := range got {
		if d.FamilyOf(text) != "" && d.ConfigReading.TextDefaults[w] != text {
			t.Errorf("transformers %s: %s builds %s (family %s) by default; text_defaults does not list it", v, w, text, d.FamilyOf(text))
		}
	}
}

// oracleVenv is a venv with the newest transformers on PyPI (its version v)
// and the path of scripts/transformers-config-oracle.py, for the Network tests
// that rerun it.
func oracleVenv(t *testing.T) (py, script, v string) {
	t.Helper()
	testenv.Network(t)
	py3 := testenv.Python3(t)
	v = transformerstest.NewestTransformers(t)
	py = transformerstest.Venv(t, py3, filepath.Join(testenv.CacheDir(t), "transformers", v), v)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "transformers-config-oracle.py"))
	if err != nil {
		t.Fatal(err)
	}
	return py, script, v
}
