package modelread

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect/modelread/transformerstest"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

func gateKey(local, function, imp, how string, line int) string {
	return fmt.Sprintf("%s=%s from %q (%s) line %d", local, function, imp, how, line)
}

// TestNetworkTransformersGatesAST checks the Go scanner's gate table for
// EVERY model type of each release against an independent reading of the
// same files by Python's own parser (scripts/transformers-gates-ast.py, run
// with python3's ast module: nothing is imported). It proves the tokenizer
// and the gate patterns read what Python reads; it says nothing about
// runtime (see TestNetworkTransformersGatesRuntime).
func TestNetworkTransformersGatesAST(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PyPI")
	}
	py3 := testenv.Python3(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "..", "scripts", "transformers-gates-ast.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range transformerstest.OracleVersions(t) {
		t.Run(v, func(t *testing.T) {
			site := transformerstest.Source(t, v)
			var ast struct {
				Modules map[string][]struct {
					Local, Function, Import, How string
					Line                         int
				} `json:"modules"`
				Errors map[string]string `json:"errors"`
			}
			if err := json.Unmarshal([]byte(testenv.Run(t, nil, py3, script, site)), &ast); err != nil {
				t.Fatal(err)
			}
			types := transformerstest.ModelTypes(t, site)
			agree, withGates := 0, 0
			for _, mt := range types {
				p := filepath.Join(site, "transformers", "models", mt, "modeling_"+mt+".py")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				var want, got []string
				for _, g := range ast.Modules[mt] {
					want = append(want, gateKey(g.Local, g.Function, g.Import, g.How, g.Line))
				}
				m, err := scanModule(p, b)
				if err != nil {
					if _, bad := ast.Errors[mt]; !bad {
						t.Errorf("%s: fastpath cannot read a file Python parses: %v", mt, err)
					}
					continue
				}
				for _, g := range m.gates {
					got = append(got, gateKey(g.Local, g.Function, g.Import, g.How, g.Line))
				}
				sort.Strings(want)
				sort.Strings(got)
				if len(want) > 0 {
					withGates++
				}
				if strings.Join(want, "\n") == strings.Join(got, "\n") {
					agree++
					continue
				}
				t.Errorf("%s %s: ast reads\n  %s\nfastpath reads\n  %s", v, mt, strings.Join(want, "\n  "), strings.Join(got, "\n  "))
			}
			t.Logf("transformers %s: %d of %d model types agree with Python's ast (%d of them bind kernel functions)", v, agree, len(types), withGates)
		})
	}
}

// runtimeRecord is what scripts/transformers-gate-runtime.py writes.
type runtimeRecord struct {
	Mode         string                   `json:"mode"`
	Transformers string                   `json:"transformers"`
	Lazy         map[string]*string       `json:"lazy_load_kernel"`
	Modules      map[string]runtimeModule `json:"modules"`
	Dists        map[string]*string       `json:"dists"`
}

type runtimeModule struct {
	Error string `json:"error"`
	Gates []struct {
		Global         string `json:"global"`
		How            string `json:"how"`
		Kernel         string `json:"kernel"`
		Package        string `json:"package"`
		Implementation string `json:"implementation"`
		TorchFunction  string `json:"torch_function"`
		BoundToTorch   bool   `json:"bound_to_torch"`
	} `json:"gates"`
	NoneGlobals []string `json:"none_globals"`
}

// TestNetworkTransformersGatesRuntime compares the static gate table of
// transformers 5.17.0 (the GPU machine's release) with what importing each
// modeling module bound on that machine (internal/model/testdata/gates-runtime-5.17.0,
// recorded by scripts/device/models.sh): without kernel packages every gate
// must keep its torch function; with the fake kernel packages (see the
// script) every gate must bind the package's function of the same name.
// It proves the static table names the same functions and fallbacks the
// running code binds; not that the kernels work.
func TestNetworkTransformersGatesRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("needs PyPI")
	}
	recs := map[string]runtimeRecord{}
	for _, mode := range []string{"without", "with"} {
		b, err := os.ReadFile(filepath.Join(modelTestdata, "gates-runtime-5.17.0", "gates-"+mode+".json"))
		if os.IsNotExist(err) {
			t.Skip("no runtime recording committed yet (scripts/device/models.sh writes it on the GPU machine)")
		}
		if err != nil {
			t.Fatal(err)
		}
		var r runtimeRecord
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		recs[mode] = r
	}
	site := transformerstest.Source(t, recs["without"].Transformers)
	types := transformerstest.ModelTypes(t, site)
	agree, compared := 0, 0
	var disagree []string
	for _, mt := range types {
		p := filepath.Join(site, "transformers", "models", mt, "modeling_"+mt+".py")
		b, _ := os.ReadFile(p)
		m, err := scanModule(p, b)
		if err != nil {
			t.Errorf("%s: %v", mt, err)
			continue
		}
		var probs []string
		for _, mode := range []string{"without", "with"} {
			rm, ok := recs[mode].Modules[mt]
			if !ok {
				probs = append(probs, mode+": not recorded")
				continue
			}
			if rm.Error != "" {
				probs = append(probs, mode+": import failed on the GPU machine: "+rm.Error)
				continue
			}
			bound := map[string]string{}
			for _, g := range rm.Gates {
				if g.How == "hub-fallback" {
					// The implementation bound must be the torch function
					// itself, or the package's function of the kernel's name.
					root, _, _ := strings.Cut(g.Package, ".")
					implOK := strings.HasSuffix(g.Implementation, "."+g.TorchFunction)
					if !g.BoundToTorch {
						implOK = strings.HasPrefix(g.Implementation, root+".") && strings.HasSuffix(g.Implementation, "."+g.Kernel)
					}
					bound[g.Global] = fmt.Sprintf("%s/%s/%v/%v", g.Kernel, g.Package, g.BoundToTorch, implOK)
					compared++
				} else {
					bound[g.Global] = g.Implementation
				}
			}
			static := map[string]string{}
			for _, g := range m.gates {
				switch g.How {
				case "hub-fallback":
					static[g.Local] = fmt.Sprintf("%s/%s/%v/true", g.Function, g.Import, mode == "without")
				case "import", "import-if-available":
					if mode == "with" {
						static[g.Local] = g.Import + "." + g.Function
					}
				}
			}
			for k, v := range static {
				if bound[k] != v {
					probs = append(probs, fmt.Sprintf("%s: %s static %s, runtime %q", mode, k, v, bound[k]))
				}
			}
			for k, v := range bound {
				if _, ok := static[k]; !ok {
					probs = append(probs, fmt.Sprintf("%s: runtime binds %s=%s, the static reading has no such gate", mode, k, v))
				}
			}
		}
		if len(probs) == 0 {
			agree++
			continue
		}
		disagree = append(disagree, mt+": "+strings.Join(probs, "; "))
	}
	t.Logf("transformers %s: %d of %d model types agree with the runtime recording (%d bindings compared, with and without the packages)", recs["without"].Transformers, agree, len(types), compared)
	for _, d := range disagree {
		t.Errorf("%s", d)
	}
}

// seedWithSource writes the seed container (no causal-conv1d, fla 0.4.1,
// transformers 5.17.0 metadata) and puts transformers' real source for the
// given model types (and models/auto) into its site-packages.
