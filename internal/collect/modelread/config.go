// Package modelread reads a model the way a collector reads a machine:
// it locates a Hugging Face model's config.json (a path, a folder or the Hub
// cache, confined to the source), parses it and works out, per layer, which
// kind of layer transformers builds (the layer accounting of each hybrid
// family), and reads the installed transformers' modeling code. It holds
// observations only; internal/model judges them against an environment's
// facts and the knowledge base.
package modelread

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// MaxConfigBytes caps config.json: real ones are a few KB; a 16 MB file is
// not a config.
const MaxConfigBytes = 16 << 20

// maxLayers bounds the layer count accepted from a file (the largest real
// models have a few hundred); larger values are a broken config, and a
// per-layer list of them would be a large allocation.
const maxLayers = 100000

// Config is what fastpath needs from a config.json.
type Config struct {
	ModelType string `json:"model_type"`
	// TextModelType is the nested language model's model_type where the
	// layers are nested (text_config, thinker_config.text_config, ...).
	TextModelType string `json:"text_model_type,omitempty"`
	// TextConfig is the path of the nested config the layers were read
	// from ("text_config", "thinker_config.text_config"); "" for the top.
	TextConfig string `json:"text_config,omitempty"`
	// Family is the knowledge-base family the model is judged as: the
	// model_type itself, or the nested language model's (lfm2 in lfm2_vl);
	// "" when none is known.
	Family    string `json:"family,omitempty"`
	NumLayers int    `json:"num_layers"`
	// Kinds is the kind of every layer, in order, spelled as transformers
	// spells it after its legacy remapping; nil when it cannot be known.
	Kinds []string `json:"-"`
	// KindsFrom names the field(s) the kinds were derived from.
	KindsFrom string `json:"kinds_from,omitempty"`
	// Known is whether the model_type is a family in the knowledge base.
	Known              bool     `json:"known"`
	AttnImplementation string   `json:"attn_implementation,omitempty"`
	UseMambaKernels    *bool    `json:"use_mamba_kernels,omitempty"`
	Notes              []string `json:"notes,omitempty"`
}

// KindCounts counts Kinds.
func (c *Config) KindCounts() map[string]int {
	m := map[string]int{}
	for _, k := range c.Kinds {
		m[k]++
	}
	return m
}

// remap renames legacy layer-kind spellings the way transformers'
// _LEGACY_LAYER_TYPE_REMAP does for every config (the table is the
// knowledge base's config_reading.legacy_layer_types).
func remap(kinds []string) []string {
	table := kb.Families().ConfigReading.LegacyLayerTypes
	out := make([]string, len(kinds))
	for i, k := range kinds {
		if r, ok := table[k]; ok {
			k = r
		}
		out[i] = k
	}
	return out
}

// MaxNesting bounds the descent into nested configs (qwen3_omni_moe's
// thinker_config.text_config is two levels).
const MaxNesting = 4

// textConfig descends from obj into the nested config that holds the
// language model, as transformers' get_text_config does: at each level the
// first of keys whose value is an object. path names the levels taken.
func textConfig(obj map[string]any, cr *kb.ConfigReading) (levels []map[string]any, path []string, err error) {
	levels = []map[string]any{obj}
	cur := obj
	for depth := 0; depth < MaxNesting; depth++ {
		next, name := map[string]any(nil), ""
		mt, _ := cur["model_type"].(string)
		for _, k := range cr.TextConfigKeys {
			if only, ok := cr.TextConfigKeysOnly[k]; ok && !slices.Contains(only, mt) {
				continue
			}
			v, ok := cur[k]
			if !ok || v == nil {
				continue
			}
			m, ok := v.(map[string]any)
			if !ok && k != "text_config" {
				// Only text_config always holds a config; another key may
				// be a model's own field of that name: not a nested config.
				continue
			}
			if !ok {
				return nil, nil, fmt.Errorf("%s: want an object, got %s", strings.Join(append(path, k), "."), jsonType(v))
			}
			next, name = m, k
			break
		}
		if next == nil {
			break
		}
		levels, path, cur = append(levels, next), append(path, name), next
	}
	return levels, path, nil
}

// ParseConfig reads a config.json. Malformed input gives an error that says
// what is wrong, never a panic.
func ParseConfig(b []byte) (*Config, error) {
	if len(b) > MaxConfigBytes {
		return nil, fmt.Errorf("config is %d bytes, more than the %d a config.json can be", len(b), MaxConfigBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(pythonConstants(b)))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	// Anything but white space after the object is refused, valid JSON or
	// not (Token returns an error, not io.EOF, for "}garbage").
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not JSON: data after the top-level object")
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a config: the top level is %s, not an object", jsonType(top))
	}
	mt, ok := obj["model_type"].(string)
	if !ok || mt == "" {
		if v, present := obj["model_type"]; present {
			return nil, fmt.Errorf("model_type: want a string, got %s", jsonType(v))
		}
		return nil, errors.New("no model_type: not a transformers config")
	}
	c := &Config{ModelType: mt}
	// Wrapper configs (vision-language, omni, retrieval) nest the language
	// model, whose layers are the ones that matter: text_config,
	// thinker_config.text_config, llm_config, ...
	levels, path, err := textConfig(obj, &kb.Families().ConfigReading)
	if err != nil {
		return nil, err
	}
	// Each level's model_type; a nested config that names none is its
	// wrapper class's default sub-config (text_defaults), as transformers
	// fills it in.
	types := make([]string, len(levels))
	for i, l := range levels {
		types[i], _ = l["model_type"].(string)
		if types[i] == "" && i > 0 {
			types[i] = kb.Families().ConfigReading.TextDefaults[types[i-1]]
		}
	}
	d, depth := obj, 0
	c.Family = kb.Families().FamilyOf(mt)
	if c.Family == "" || familyNested(c.Family) {
		d, depth = levels[len(levels)-1], len(levels)-1
		// Judged by the innermost language model fastpath knows; a family
		// that keeps its layers at its own level is read there.
		for i := len(levels) - 1; i > 0 && c.Family == ""; i-- {
			if c.Family = kb.Families().FamilyOf(types[i]); c.Family != "" && !familyNested(c.Family) {
				d, depth = levels[i], i
			}
		}
	}
	if depth > 0 {
		c.TextConfig = strings.Join(path[:depth], ".")
		c.TextModelType = types[depth]
	}
	for _, m := range levels[:depth+1] {
		for _, key := range []string{"attn_implementation", "_attn_implementation"} {
			if v, ok := m[key].(string); ok && v != "" {
				c.AttnImplementation = v
			}
		}
		if v, ok := m["use_mamba_kernels"].(bool); ok {
			c.UseMambaKernels = &v
		}
	}
	r := reader{m: d}
	rule, known := familyRule(c.Family)
	c.Known = known
	if !known {
		if err := unknownLayout(&r, c); err != nil {
			return nil, err
		}
		return c, nil
	}
	switch {
	case c.Family != mt && c.TextConfig != "":
		c.Notes = append(c.Notes, fmt.Sprintf("judged as %s, the family of its language model (%s)", c.Family, c.TextConfig))
	case c.Family != mt:
		c.Notes = append(c.Notes, fmt.Sprintf("judged as %s: %s is its text-only model_type", c.Family, mt))
	}
	if err := applyLayout(&r, c, rule); err != nil {
		return nil, fmt.Errorf("%s: %w", mt, err)
	}
	if c.Kinds != nil {
		c.NumLayers = len(c.Kinds)
	}
	if c.TextConfig != "" && c.KindsFrom != "" {
		c.KindsFrom += " in " + c.TextConfig
	}
	return c, nil
}

// reader reads typed fields from a config object.
type reader struct{ m map[string]any }

func (r *reader) has(key string) bool {
	v, ok := r.m[key]
	return ok && v != nil
}

// int reads a non-negative integer field no larger than maxLayers-ish
// bounds; def when absent or null.
func (r *reader) int(key string, def int) (int, error) {
	v, ok := r.m[key]
	if !ok || v == nil {
		return def, nil
	}
	return asInt(key, v)
}

func asInt(key string, v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: want an integer, got %s", key, jsonType(v))
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1e9 {
		return 0, fmt.Errorf("%s: want an integer, got %s", key, n.String())
	}
	return int(f), nil
}

// countKey is the field that holds the layer count: num_hidden_layers or
// the first of its attribute_map aliases present; "" when none is.
func (r *reader) countKey() string {
	for _, k := range kb.Families().ConfigReading.LayerCountKeys {
		if r.has(k) {
			return k
		}
	}
	return ""
}

func (r *reader) layers() (int, error) {
	key := r.countKey()
	if key == "" {
		return 0, errors.New("no num_hidden_layers")
	}
	n, err := r.int(key, 0)
	if err != nil {
		return 0, err
	}
	if n <= 0 || n > maxLayers {
		return 0, fmt.Errorf("%s: %d is not a layer count", key, n)
	}
	return n, nil
}

func (r *reader) strings(key string) ([]string, bool, error) {
	v, ok := r.m[key]
	if !ok || v == nil {
		return nil, false, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, true, fmt.Errorf("%s: want a list of strings, got %s", key, jsonType(v))
	}
	if len(arr) > maxLayers {
		return nil, true, fmt.Errorf("%s: %d entries", key, len(arr))
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, true, fmt.Errorf("%s[%d]: want a string, got %s", key, i, jsonType(e))
		}
		out[i] = s
	}
	return out, true, nil
}

func (r *reader) ints(key string) ([]int, bool, error) {
	return intsOf(key, r.m[key])
}

func intsOf(key string, v any) ([]int, bool, error) {
	if v == nil {
		return nil, false, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, true, fmt.Errorf("%s: want a list of integers, got %s", key, jsonType(v))
	}
	if len(arr) > maxLayers {
		return nil, true, fmt.Errorf("%s: %d entries", key, len(arr))
	}
	out := make([]int, len(arr))
	for i, e := range arr {
		n, err := asInt(fmt.Sprintf("%s[%d]", key, i), e)
		if err != nil {
			return nil, true, err
		}
		out[i] = n
	}
	return out, true, nil
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("a string (%q)", truncate(x, 40))
	case json.Number:
		return "a number (" + truncate(x.String(), 40) + ")"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// listOfN checks a per-layer list against num_hidden_layers: shorter is an
// error (transformers indexes it per layer); longer is an error where
// transformers validates the length (strict) and a note elsewhere.
func listOfN(c *Config, key string, list []string, n int, strict bool) ([]string, error) {
	switch {
	case len(list) < n || (strict && len(list) != n):
		return nil, fmt.Errorf("%s has %d entries, num_hidden_layers is %d", key, len(list), n)
	case len(list) > n:
		c.Notes = append(c.Notes, fmt.Sprintf("%s has %d entries, num_hidden_layers is %d: the first %d are used", key, len(list), n, n))
		return list[:n], nil
	}
	return list, nil
}

func repeat(kind string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = kind
	}
	return out
}

// fromList uses the per-layer list under key when present.
func fromList(r *reader, c *Config, key string, n int, strict bool) (bool, error) {
	list, ok, err := r.strings(key)
	if err != nil || !ok {
		return false, err
	}
	list, err = listOfN(c, key, list, n, strict)
	if err != nil {
		return true, err
	}
	c.Kinds, c.KindsFrom = remap(list), key
	return true, nil
}

// unknownLayout: a model_type fastpath has no family entry for. The layer
// count and the config's own layer_types are reported as they are; nothing
// is guessed.
func unknownLayout(r *reader, c *Config) error {
	if r.countKey() != "" {
		// A family fastpath does not know may keep something else under
		// the name (lxmert: one count per tower): say so, judge nothing.
		n, err := r.layers()
		if err != nil {
			c.Notes = append(c.Notes, fmt.Sprintf("the layer count cannot be read (%v): not counted", err))
		}
		c.NumLayers = n
	}
	own, hasOwn := kb.Families().ConfigReading.OwnLayouts[c.levelType()]
	if list, ok, err := r.strings("layer_types"); err == nil && ok && len(list) > 0 {
		c.Kinds, c.KindsFrom, c.NumLayers = remap(list), "layer_types", len(list)
	}
	if hasOwn {
		ownLayout(r, c, &own)
	}
	if c.TextConfig != "" && c.KindsFrom != "" {
		c.KindsFrom += " in " + c.TextConfig
	}
	what := fmt.Sprintf("model_type %q", c.ModelType)
	if c.TextModelType != "" && c.TextModelType != c.ModelType {
		what = fmt.Sprintf("model_type %q (language model %q in %s)", c.ModelType, c.TextModelType, c.TextConfig)
	}
	c.Notes = append(c.Notes, what+" is not in fastpath's knowledge base: only the installed transformers' code can judge it")
	return nil
}

// pythonConstants replaces the NaN, Infinity and -Infinity that Python's
// json module writes (transformers 4.57 saves mamba2's time_step_limit as
// [0.0, Infinity]) with null outside strings, so encoding/json reads the
// file the way json.load does. Nothing here needs their values.
func pythonConstants(b []byte) []byte {
	if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
		return b
	}
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if inString {
			out = append(out, ch)
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
			continue
		}
		switch {
		case ch == '"':
			inString = true
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			out, i = append(out, "null"...), i+len("-Infinity")-1
			continue
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out, i = append(out, "null"...), i+len("Infinity")-1
			continue
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out, i = append(out, "null"...), i+len("NaN")-1
			continue
		}
		out = append(out, ch)
	}
	return out
}

// levelType is the model_type of the config the layers are read from.
func (c *Config) levelType() string {
	if c.TextModelType != "" {
		return c.TextModelType
	}
	return c.ModelType
}

// ownLayout applies a configuration class's own derivation of its layer
// count or kinds (config_reading.own_layouts) to a model_type that is not
// a family; a field it cannot read leaves the generic reading as it is.
func ownLayout(r *reader, c *Config, own *kb.OwnLayout) {
	if ct := own.Count; ct != nil && ct.PerUnit > 0 {
		var n int
		var err error
		note := ""
		if r.has("num_hidden_layers") {
			n, err = r.int("num_hidden_layers", 0)
			if n%ct.PerUnit != 0 {
				note = fmt.Sprintf("num_hidden_layers %d is rounded down to a multiple of %d, as %s's class stores it", n, ct.PerUnit, c.levelType())
			}
			n = n / ct.PerUnit * ct.PerUnit
		} else {
			n, err = r.int(ct.Key, ct.Default)
			n *= ct.PerUnit
			note = fmt.Sprintf("%d layers: %s's num_hidden_layers is %d × %s (%d)", n, c.levelType(), ct.PerUnit, ct.Key, n/ct.PerUnit)
		}
		if err == nil && n > 0 && n <= maxLayers {
			c.NumLayers = n
			if note != "" {
				c.Notes = append(c.Notes, note)
			}
		}
	}
	if p := own.Pairs; p != nil && c.KindsFrom == p.List && slices.Contains(c.Kinds, p.Marker) {
		list, _, _ := r.strings(p.List)
		kinds := make([]string, 0, (len(list)+1)/2)
		for i := 0; i < len(list); i += 2 {
			kinds = append(kinds, list[i])
		}
		c.Kinds, c.NumLayers = remap(kinds), len(kinds)
		c.KindsFrom = fmt.Sprintf("%s, every other entry (each layer is saved as its block then %q)", p.List, p.Marker)
	}
	if cy := own.Cycle; cy != nil && c.Kinds == nil && c.NumLayers > 0 {
		blocks, ok, err := r.strings(cy.Key)
		from := cy.Key
		if err != nil {
			return
		}
		if !ok {
			blocks, from = cy.Default, cy.Key+" (its default)"
		}
		n := min(c.NumLayers, cy.Repeat*len(blocks))
		if n == 0 {
			return
		}
		c.Kinds = make([]string, n)
		for i := range c.Kinds {
			c.Kinds[i] = cy.Other
			if blocks[i%len(blocks)] == cy.Match {
				c.Kinds[i] = cy.Kind
			}
		}
		c.NumLayers, c.KindsFrom = n, from
	}
}
