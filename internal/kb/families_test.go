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
