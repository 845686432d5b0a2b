package live

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// TestBenchArgsFromKB: bench.py's families and functions come from the
// knowledge base: the Gated DeltaNet families and their linear_attention
// functions, each with its module and torch references.
func TestBenchArgsFromKB(t *testing.T) {
	a := BenchArgs{Config: "c.json"}.withKB()
	if !slices.Equal(a.Families, []string{"qwen3_5", "qwen3_5_moe", "qwen3_next"}) {
		t.Errorf("families %v", a.Families)
	}
	var names []string
	for _, f := range a.Functions {
		names = append(names, f.Name)
		if f.Module == "" || len(f.TorchRefs) == 0 {
			t.Errorf("%s: module %q, torch refs %v", f.Name, f.Module, f.TorchRefs)
		}
	}
	// bench.py's Gated DeltaNet routine builds arguments for these four.
	for _, want := range []string{"causal_conv1d_fn", "causal_conv1d_update", "chunk_gated_delta_rule", "fused_recurrent_gated_delta_rule"} {
		if !slices.Contains(names, want) {
			t.Errorf("functions %v lack %s", names, want)
		}
	}
	b, err := json.Marshal(a)
	if err != nil || !strings.Contains(string(b), `"torch_refs":["torch_chunk_gated_delta_rule","chunk_gated_delta_rule"]`) {
		t.Errorf("argument %s (%v)", b, err)
	}
	// A caller's own lists are kept.
	own := BenchArgs{Families: []string{"x"}, Functions: []BenchFunction{{Name: "f", Module: "m"}}}.withKB()
	if len(own.Families) != 1 || len(own.Functions) != 1 {
		t.Errorf("caller's lists replaced: %+v", own)
	}
}

// TestScriptsNameNoKBData: probe.py and bench.py receive every package,
// module and family from Go; none is written into them as a literal.
func TestScriptsNameNoKBData(t *testing.T) {
	var words []string
	d := kb.Families()
	for mt := range d.Families {
		words = append(words, mt)
	}
	for _, set := range d.FunctionSets {
		for _, f := range set {
			words = append(words, f.Module)
		}
	}
	for _, p := range d.Packages {
		words = append(words, p.Import)
	}
	for name, script := range map[string]string{"probe.py": ProbeScript, "bench.py": BenchScript} {
		for _, w := range words {
			for _, q := range []string{strconv.Quote(w), "'" + w + "'"} {
				if strings.Contains(script, q) {
					t.Errorf("%s writes %s: pass it from the knowledge base", name, q)
				}
			}
		}
	}
}

// TestTorchRefsOnH200: every family bench times names, among its torch
// references, attributes transformers 5.17.0's modeling module really has
// (read on the project's H200: kb testdata transformers-torch-refs.json).
func TestTorchRefsOnH200(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "kb", "testdata", "h200-2026-11-30", "transformers-torch-refs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var reading struct {
		Transformers string              `json:"transformers"`
		Modules      map[string][]string `json:"modules"`
	}
	if err := json.Unmarshal(b, &reading); err != nil {
		t.Fatal(err)
	}
	a := BenchArgs{}.withKB()
	for _, mt := range a.Families {
		attrs, ok := reading.Modules[mt]
		if !ok {
			t.Errorf("%s: not in the reading", mt)
			continue
		}
		for _, f := range a.Functions {
			if !slices.ContainsFunc(f.TorchRefs, func(r string) bool { return slices.Contains(attrs, r) }) {
				t.Errorf("%s in transformers %s: none of %s's torch references %v exists (module has %v)", mt, reading.Transformers, f.Name, f.TorchRefs, attrs)
			}
		}
	}
}
