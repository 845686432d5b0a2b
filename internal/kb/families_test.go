package kb

import "testing"

// Every family's kinds name function sets that exist, every function names a
// package that exists, and every family records what it was checked against.
func TestFamiliesConsistent(t *testing.T) {
	d := Families()
	want := []string{"qwen3_next", "qwen3_5", "qwen3_5_moe", "mamba", "falcon_mamba", "mamba2", "bamba", "granitemoehybrid",
		"nemotron_h", "zamba", "zamba2", "falcon_h1", "jamba", "lfm2", "lfm2_moe", "kimi_linear", "minimax"}
	for _, name := range want {
		f, ok := d.Families[name]
		if !ok {
			t.Errorf("family %s missing", name)
			continue
		}
		if len(f.Checked) == 0 || f.Layout == "" || len(f.Kinds) == 0 {
			t.Errorf("%s: incomplete entry %+v", name, f)
		}
		for kind, k := range f.Kinds {
			for _, s := range append(append([]string{}, k.Sets...), k.SetsFrom515...) {
				if _, ok := d.FunctionSets[s]; !ok {
					t.Errorf("%s/%s: unknown function set %q", name, kind, s)
				}
			}
			if k.Without == "" {
				t.Errorf("%s/%s: no 'without'", name, kind)
			}
		}
	}
	for set, fns := range d.FunctionSets {
		for _, fn := range fns {
			if _, ok := d.Packages[fn.Package]; !ok {
				t.Errorf("set %s: %s names unknown package %q", set, fn.Name, fn.Package)
			}
		}
	}
	for name, a := range d.AttnImpls {
		if _, ok := d.Packages[a.Package]; !ok {
			t.Errorf("attn %s: unknown package %q", name, a.Package)
		}
	}
	for _, s := range d.Slowdowns {
		if s.Source == "" {
			t.Errorf("slowdown without a source: %s", s.Text)
		}
	}
}

// TestFamiliesComplete: every family carries what adding one needs in the
// data alone: its layer kinds' function sets, a layout rule, the configs
// the network oracle checks it with (the defaults first, and at least one
// non-default layout), and the transformers releases it was checked in.
func TestFamiliesComplete(t *testing.T) {
	d := Families()
	for mt, f := range d.Families {
		if f.Layers == nil || f.Layers.Rule == "" {
			t.Errorf("%s: no layers rule", mt)
		}
		if len(f.OracleVariants) < 2 || len(f.OracleVariants[0]) != 0 {
			t.Errorf("%s: oracle_variants %v: want {} then at least one layout", mt, f.OracleVariants)
		}
		if len(f.Checked) == 0 || f.Layout == "" || len(f.Kinds) == 0 {
			t.Errorf("%s: incomplete %+v", mt, f)
		}
		for kind, k := range f.Kinds {
			for _, s := range append(append([]string{}, k.Sets...), k.SetsFrom515...) {
				if _, ok := d.FunctionSets[s]; !ok {
					t.Errorf("%s %s: no function set %q", mt, kind, s)
				}
			}
		}
	}
}

// The config reading is complete and unambiguous: a text-only model_type
// belongs to one family and is no family itself, every wrapper default
// names a model_type fastpath judges, and the keys and the legacy table are
// there (the parser reads nothing without them).
func TestConfigReadingConsistent(t *testing.T) {
	d := Families()
	cr := d.ConfigReading
	if len(cr.TextConfigKeys) == 0 || len(cr.LayerCountKeys) == 0 || cr.LayerCountKeys[0] != "num_hidden_layers" || len(cr.LegacyLayerTypes) == 0 || cr.Source == "" {
		t.Fatalf("config_reading incomplete: %+v", cr)
	}
	owner := map[string]string{}
	for name, f := range d.Families {
		for _, mt := range f.TextModelTypes {
			if o, dup := owner[mt]; dup {
				t.Errorf("%s is the text model_type of both %s and %s", mt, o, name)
			}
			if _, fam := d.Families[mt]; fam {
				t.Errorf("%s (text model_type of %s) is a family itself", mt, name)
			}
			owner[mt] = name
		}
	}
	for w, text := range cr.TextDefaults {
		if d.FamilyOf(text) == "" {
			t.Errorf("text_defaults: %s -> %s, which is no family", w, text)
		}
	}
	for k := range cr.TextConfigKeysOnly {
		found := false
		for _, key := range cr.TextConfigKeys {
			found = found || key == k
		}
		if !found {
			t.Errorf("text_config_keys_only names %s, which is not a text_config_keys entry", k)
		}
	}
	for from, to := range cr.LegacyLayerTypes {
		if _, chained := cr.LegacyLayerTypes[to]; chained || from == to {
			t.Errorf("legacy_layer_types: %s -> %s is not a final name", from, to)
		}
	}
}

// TestOwnLayoutsAreNotFamilies: config_reading.own_layouts applies only to
// model_types without a family (a family's own rule would shadow it), and
// each entry names one derivation, its source and usable parameters.
func TestOwnLayoutsAreNotFamilies(t *testing.T) {
	d := Families()
	if len(d.ConfigReading.OwnLayouts) == 0 {
		t.Fatal("no own_layouts")
	}
	for mt, o := range d.ConfigReading.OwnLayouts {
		if f := d.FamilyOf(mt); f != "" {
			t.Errorf("own_layouts[%s]: %s is judged as family %s, whose layers rule applies instead", mt, mt, f)
		}
		parts := 0
		if o.Count != nil {
			parts++
			if o.Count.Key == "" || o.Count.PerUnit < 1 || o.Count.Default < 1 {
				t.Errorf("own_layouts[%s].count: %+v", mt, *o.Count)
			}
		}
		if o.Pairs != nil {
			parts++
			if o.Pairs.List == "" || o.Pairs.Marker == "" {
				t.Errorf("own_layouts[%s].pairs: %+v", mt, *o.Pairs)
			}
		}
		if o.Cycle != nil {
			parts++
			if o.Cycle.Key == "" || len(o.Cycle.Default) == 0 || o.Cycle.Repeat < 1 || o.Cycle.Kind == "" || o.Cycle.Other == "" {
				t.Errorf("own_layouts[%s].cycle: %+v", mt, *o.Cycle)
			}
		}
		if parts != 1 || o.Source == "" {
			t.Errorf("own_layouts[%s]: %d derivations, source %q; want one and a source", mt, parts, o.Source)
		}
	}
}
