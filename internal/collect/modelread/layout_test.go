package modelread

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// TestEveryKBFamilyHasALayout: every family of the knowledge base carries
// a layout rule this build applies, so adding a family is data only.
func TestEveryKBFamilyHasALayout(t *testing.T) {
	fams := kb.Families().Families
	if got := KnownModelTypes(); len(got) != len(fams) {
		t.Errorf("KnownModelTypes %v, families %d", got, len(fams))
	}
	for mt, f := range fams {
		if f.Layers == nil {
			t.Errorf("%s: no layers rule in families.json", mt)
			continue
		}
		cfg := fmt.Sprintf(`{"model_type":%q,"num_hidden_layers":12}`, mt)
		if f.Nested {
			cfg = fmt.Sprintf(`{"model_type":%q,"text_config":{"num_hidden_layers":12}}`, mt)
		}
		c, err := ParseConfig([]byte(cfg))
		if err != nil {
			t.Errorf("%s: %v", mt, err)
			continue
		}
		if !c.Known || c.NumLayers == 0 {
			t.Errorf("%s: known %v, %d layers", mt, c.Known, c.NumLayers)
		}
		if c.Kinds == nil && !strings.Contains(strings.Join(c.Notes, " "), "unknown") {
			t.Errorf("%s: no kinds and no note why: %+v", mt, c)
		}
		for kind := range c.KindCounts() {
			if _, needs := f.Kinds[kind]; !needs && kind != "full_attention" && kind != "mlp" && kind != "moe" {
				t.Errorf("%s: layer kind %q is in neither the family's kinds nor the kernel-free ones", mt, kind)
			}
		}
	}
}

// TestUnknownLayoutRule: a rule name this build does not know is an error
// that says so, not a silent guess.
func TestUnknownLayoutRule(t *testing.T) {
	r := &reader{m: map[string]any{}}
	err := applyRule(r, &Config{ModelType: "x"}, &kb.LayerRule{Rule: "spiral"}, 4)
	if err == nil || !strings.Contains(err.Error(), `"spiral"`) {
		t.Errorf("err = %v", err)
	}
}
