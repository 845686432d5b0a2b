package modelread

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// The layer layouts are data: each family's "layers" in the knowledge
// base's families.json names one of the rules below and its parameters
// (the fields, defaults and kinds of the family's configuration class).
// A family whose class works like an existing one is added in the data
// alone; a new kind of derivation adds a rule here.

// familyRule is mt's layout rule; ok is false for a model_type the
// knowledge base does not hold.
func familyRule(mt string) (*kb.LayerRule, bool) {
	f, ok := kb.Families().Families[mt]
	if !ok || f.Layers == nil {
		return nil, false
	}
	return f.Layers, true
}

// familyNested: the family keeps its language model's layers in
// text_config (qwen3_5, qwen3_5_moe).
func familyNested(mt string) bool { return kb.Families().Families[mt].Nested }

// KnownModelTypes lists the families with a layout, sorted.
func KnownModelTypes() []string {
	var out []string
	for mt, f := range kb.Families().Families {
		if f.Layers != nil {
			out = append(out, mt)
		}
	}
	sort.Strings(out)
	return out
}

// applyLayout derives c.Kinds (and KindsFrom, Notes) with rule.
func applyLayout(r *reader, c *Config, rule *kb.LayerRule) error {
	if rule.AnyLength {
		for _, key := range rule.Lists {
			list, ok, err := r.strings(key)
			if err != nil {
				return err
			}
			if ok {
				if len(list) == 0 {
					return fmt.Errorf("%s is empty", key)
				}
				c.Kinds, c.KindsFrom = remap(list), key
				noteCountMismatch(r, c)
				return nil
			}
		}
		return applyRule(r, c, rule, -1)
	}
	n, err := r.layers()
	if err != nil {
		return err
	}
	for _, key := range rule.Lists {
		if ok, err := fromList(r, c, key, n, rule.Strict); ok || err != nil {
			return err
		}
	}
	return applyRule(r, c, rule, n)
}

// applyRule applies rule to n layers (n < 0: the rule sets the count).
func applyRule(r *reader, c *Config, rule *kb.LayerRule, n int) error {
	switch rule.Rule {
	case "uniform":
		c.Kinds = repeat(rule.Kind, n)
		c.KindsFrom = rule.From
		if c.KindsFrom == "" {
			c.KindsFrom = "num_hidden_layers (every layer " + rule.Kind + ")"
		}
	case "interval":
		interval := rule.Default
		if rule.Key != "" {
			v, err := r.int(rule.Key, rule.Default)
			if err != nil {
				return err
			}
			interval = v
		}
		if interval <= 0 {
			return fmt.Errorf("%s: %d; it must be at least 1", rule.Key, interval)
		}
		c.Kinds = make([]string, n)
		for i := range c.Kinds {
			c.Kinds[i] = rule.Other
			if (i+rule.Base)%interval == 0 && !(rule.SkipFirst && i == 0) {
				c.Kinds[i] = rule.Match
			}
		}
		c.KindsFrom = rule.From
		if rule.Key != "" {
			c.KindsFrom = fmt.Sprintf("%s (%d)", rule.Key, interval)
		}
	case "period":
		p, o, err := period(r, rule)
		if err != nil {
			return err
		}
		if n < len(rule.Prefix) {
			return fmt.Errorf("num_hidden_layers: %d; %s needs at least %d", n, c.ModelType, len(rule.Prefix))
		}
		kinds := append([]string{}, rule.Prefix...)
		for i := 0; i < n-len(rule.Prefix); i++ {
			k := rule.Other
			if i%p == o {
				k = rule.Match
			}
			kinds = append(kinds, k)
		}
		c.Kinds, c.KindsFrom = kinds, fmt.Sprintf("%s %d, %s %d", rule.Key, p, rule.OffsetKey, o)
	case "indices":
		return indicesRule(r, c, rule, n)
	case "pattern":
		return patternRule(r, c, rule)
	case "default":
		def := rule.DefaultList()
		if n > len(def) {
			return fmt.Errorf("no %s, and the default pattern has %d layers, num_hidden_layers is %d", rule.Lists[0], len(def), n)
		}
		c.Kinds, c.KindsFrom = def[:n], rule.From
	case "one_indexed_sets":
		done, err := oneIndexedSets(r, c, rule, n)
		if done || err != nil {
			return err
		}
		if rule.Then == nil {
			return fmt.Errorf("no %s", rule.Object)
		}
		return applyRule(r, c, rule.Then, n)
	default:
		return fmt.Errorf("fastpath's knowledge base names layout rule %q, which this build does not know", rule.Rule)
	}
	return nil
}

// period reads a period/offset pair, refusing what Python's % would raise
// on (zero) or what no layer can match (negative).
func period(r *reader, rule *kb.LayerRule) (int, int, error) {
	p, err := r.int(rule.Key, rule.Default)
	if err != nil {
		return 0, 0, err
	}
	o, err := r.int(rule.OffsetKey, rule.OffsetDefault)
	if err != nil {
		return 0, 0, err
	}
	if p <= 0 {
		return 0, 0, fmt.Errorf("%s: %d; it must be at least 1", rule.Key, p)
	}
	if o < 0 {
		return 0, 0, fmt.Errorf("%s: %d; it must not be negative", rule.OffsetKey, o)
	}
	return p, o, nil
}

// indicesRule: the layers listed under rule.Key are rule.Match, the rest
// rule.Other; indices outside the model are ignored, as transformers does.
func indicesRule(r *reader, c *Config, rule *kb.LayerRule, n int) error {
	idx, ok, err := r.ints(rule.Key)
	if err != nil {
		return err
	}
	if !ok {
		switch rule.Absent {
		case "unknown":
			// Without the list the model cannot be built, so there is
			// nothing to count.
			c.NumLayers = n
			c.Notes = append(c.Notes, rule.AbsentNote)
			return nil
		case "all":
			idx = make([]int, n)
			for i := range idx {
				idx[i] = i
			}
		}
	}
	c.Kinds = repeat(rule.Other, n)
	for _, i := range idx {
		if i < 0 || i >= n {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: %d is not a layer of 0..%d: ignored, as transformers does", rule.Key, i, n-1))
			continue
		}
		c.Kinds[i] = rule.Match
	}
	c.KindsFrom = rule.Key
	return nil
}

// patternRule: one character of rule.Key per layer, else the class's
// default list; the list alone sets the layer count.
func patternRule(r *reader, c *Config, rule *kb.LayerRule) error {
	if v, ok := r.m[rule.Key]; ok && v != nil {
		p, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %s", rule.Key, jsonType(v))
		}
		if p == "" || len(p) > maxLayers {
			return fmt.Errorf("%s: %d characters", rule.Key, len(p))
		}
		for i, ch := range p {
			k, ok := rule.Pattern[string(ch)]
			if !ok {
				return fmt.Errorf("%s: %q at %d is none of %s", rule.Key, ch, i, patternChars(rule.Pattern))
			}
			c.Kinds = append(c.Kinds, k)
		}
		c.KindsFrom = rule.Key
		noteCountMismatch(r, c)
		return nil
	}
	c.Kinds, c.KindsFrom = append([]string{}, rule.DefaultKinds...), rule.From
	return nil
}

func patternChars(m map[string]string) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	// Letters first (M, E, then *, -): the order the class's docstring uses.
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	out := ""
	for i, k := range keys {
		switch {
		case i == 0:
		case i == len(keys)-1:
			out += " or "
		default:
			out += ", "
		}
		out += k
	}
	return out
}

// noteCountMismatch: a family whose list sets the layer count builds as
// many layers as the list has; num_hidden_layers is deprecated there.
func noteCountMismatch(r *reader, c *Config) {
	if n, err := r.int("num_hidden_layers", -1); err == nil && n >= 0 && n != len(c.Kinds) {
		c.Notes = append(c.Notes, fmt.Sprintf("num_hidden_layers is %d but %s gives %d layers: transformers uses the list", n, c.KindsFrom, len(c.Kinds)))
	}
}

// oneIndexedSets: rule.Object's 1-indexed layer lists, each of its kind;
// done is false when the object or one of its lists is absent.
func oneIndexedSets(r *reader, c *Config, rule *kb.LayerRule, n int) (done bool, err error) {
	v, ok := r.m[rule.Object]
	if !ok || v == nil {
		return false, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return false, fmt.Errorf("%s: want an object, got %s", rule.Object, jsonType(v))
	}
	lists := make([][]int, len(rule.Sets))
	all := true
	for i, set := range rule.Sets {
		idx, ok, err := intsOf(rule.Object+"."+set.Key, obj[set.Key])
		if err != nil {
			return false, err
		}
		lists[i], all = idx, all && ok
	}
	if !all {
		return false, nil
	}
	kinds := make([]string, n)
	for i, set := range rule.Sets {
		for _, l := range lists[i] {
			if l < 1 || l > n {
				return false, fmt.Errorf("%s.%s: layer %d is not in 1..%d (the list is 1-indexed)", rule.Object, set.Key, l, n)
			}
			kinds[l-1] = set.Kind
		}
	}
	var keys []string
	for _, set := range rule.Sets {
		keys = append(keys, set.Key)
	}
	for i, k := range kinds {
		if k == "" {
			what := "none of " + strings.Join(keys, ", ")
			if len(keys) == 2 {
				what = "neither " + keys[0] + " nor " + keys[1]
			}
			return false, fmt.Errorf("%s: layer %d (1-indexed) is in %s", rule.Object, i+1, what)
		}
	}
	c.Kinds, c.KindsFrom = kinds, rule.From
	return true, nil
}
