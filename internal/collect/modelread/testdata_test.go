package modelread

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// manifest is what scripts/transformers-layer-kinds.py writes.
type manifest struct {
	Transformers string `json:"transformers"`
	Cases        []struct {
		Name      string   `json:"name"`
		ModelType string   `json:"model_type"`
		File      string   `json:"file"`
		Attr      *string  `json:"attr"`
		Kinds     []string `json:"kinds"`
		NumLayers *int     `json:"num_layers"`
	} `json:"cases"`
	Skipped []struct {
		ModelType string `json:"model_type"`
		Why       string `json:"why"`
	} `json:"skipped"`
}

// olderVocabulary maps the kind names releases before 5.x derive (mamba,
// attention) to transformers' current ones: its _LEGACY_LAYER_TYPE_REMAP.
// Before 5.x falcon_h1's layers_block_type called every layer "attention";
// its decoder layer has always run attention and mamba2 side by side, which
// 5.x names "hybrid".
func olderVocabulary(modelType string, kinds []string) []string {
	out := remap(kinds)
	if modelType == "falcon_h1" {
		for i, k := range out {
			if k == "full_attention" {
				out[i] = "hybrid"
			}
		}
	}
	return out
}

// checkManifest compares fastpath's layer kinds with those transformers
// derived for every config the script wrote.
func checkManifest(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Cases) == 0 {
		t.Fatalf("%s: no cases", dir)
	}
	for _, s := range m.Skipped {
		t.Logf("transformers %s: skipped %s: %s", m.Transformers, s.ModelType, s.Why)
	}
	for _, tc := range m.Cases {
		t.Run(m.Transformers+"/"+tc.Name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(tc.File)))
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseConfig(data)
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if c.ModelType != tc.ModelType {
				t.Errorf("model_type %q, want %q", c.ModelType, tc.ModelType)
			}
			if tc.Kinds == nil {
				// transformers exposes no per-layer list: the layer count
				// must still agree, and fastpath must not invent kinds
				// where transformers has none (lfm2_moe).
				if tc.NumLayers != nil && c.NumLayers != *tc.NumLayers {
					t.Errorf("num_layers %d, want %d", c.NumLayers, *tc.NumLayers)
				}
				if tc.ModelType == "lfm2_moe" && c.Kinds != nil {
					t.Errorf("lfm2_moe without layer_types: fastpath derived %v", c.KindCounts())
				}
				return
			}
			want := olderVocabulary(tc.ModelType, tc.Kinds)
			if diff := cmp.Diff(want, c.Kinds); diff != "" {
				t.Errorf("layer kinds differ from transformers %s's %s (-transformers +fastpath):\n%s", m.Transformers, *tc.Attr, diff)
			}
		})
	}
}

// The configs transformers 5.17.0's own classes wrote (defaults and
// non-default layouts, saved and raw), with the kinds it derived.
func TestTransformers517Kinds(t *testing.T) {
	checkManifest(t, filepath.Join(modelTestdata, "kinds-5.17.0"))
}

// The default configs written on the H200 reference machine, against the
// counts transformers 5.17.0 derived there (derived-layer-kinds.txt).
func TestReferenceDefaultConfigs(t *testing.T) {
	f, err := os.Open(filepath.Join(modelTestdata, "reference-5.17", "derived-layer-kinds.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := regexp.MustCompile(`^DEFAULT (\S+) (\S+) (\d+) \{(.*)\}$`)
	pair := regexp.MustCompile(`'([^']+)': (\d+)`)
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n++
		mt, attr := m[1], m[2]
		layers, _ := strconv.Atoi(m[3])
		want := map[string]int{}
		for _, p := range pair.FindAllStringSubmatch(m[4], -1) {
			want[p[1]], _ = strconv.Atoi(p[2])
		}
		t.Run(mt, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(modelTestdata, "reference-5.17", mt, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseConfig(b)
			if err != nil {
				t.Fatal(err)
			}
			if c.NumLayers != layers {
				t.Errorf("num_layers %d, want %d", c.NumLayers, layers)
			}
			if attr == "num_hidden_layers" { // no per-layer list exposed
				if c.Kinds != nil {
					t.Errorf("derived kinds %v where transformers has none", c.KindCounts())
				}
				return
			}
			if mt == "olmo_hybrid" && !c.Known {
				return // not one of fastpath's families: layer_types reported as given
			}
			if diff := cmp.Diff(want, c.KindCounts()); diff != "" {
				t.Errorf("%s kinds (-transformers +fastpath):\n%s", strings.TrimSpace(mt), diff)
			}
		})
	}
	if n < 17 {
		t.Fatalf("read %d reference lines", n)
	}
}

// modelTestdata is internal/model's testdata: the recorded transformers
// oracles stay there, next to the verdict tests and the scripts that name it.
var modelTestdata = filepath.Join("..", "..", "model", "testdata")
