package torch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// libc10.so with a .gnu.hash: the ABI is read from one lookup of
// torchCheckFail under each spelling; without either, from the names.
func TestCXX11ABIFromHashTable(t *testing.T) {
	filler := []string{"_ZN3c1019UndefinedTensorImpl10_singletonE", "_ZN3c1010TensorImplD2Ev", "_ZN3c104warnERKNS_7WarningE"}
	tests := []struct {
		name    string
		defined []string
		want    *bool
		from    string
	}{
		{"C++11 ABI", append([]string{fixture.C10SymbolCXX11ABI}, filler...), ptr(true), "std::__cxx11 in its dynamic symbol names"},
		{"old ABI", append([]string{fixture.C10SymbolPreCXX11ABI}, filler...), ptr(false), "old-ABI std::string (Ss) in its dynamic symbol names, no std::__cxx11"},
		// No torchCheckFail (another torch): the whole string table is read.
		{"names only", append([]string{"_ZN3c105ErrorC1ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"}, filler...), ptr(true), "std::__cxx11 in its dynamic symbol names"},
		{"neither", filler, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			lib := filepath.Join(root, "torch", "lib")
			if err := os.MkdirAll(lib, 0o755); err != nil {
				t.Fatal(err)
			}
			b := fixture.GNUHashed(fixture.SharedObject{SOName: "libc10.so", Defined: tc.defined, Undefined: []string{"malloc"}}, 4)
			if err := os.WriteFile(filepath.Join(lib, "libc10.so"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := source.Root(root, nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := &facts.Torch{Lib: "/torch/lib"}
			if w := collectCXX11ABI(src, tr); len(w) > 0 {
				t.Fatal(w)
			}
			if (tr.CXX11ABI == nil) != (tc.want == nil) || (tc.want != nil && *tr.CXX11ABI != *tc.want) {
				t.Fatalf("ABI %v, want %v", deref(tr.CXX11ABI), deref(tc.want))
			}
			if tc.want != nil && tr.CXX11ABIFrom != "/torch/lib/libc10.so: "+tc.from {
				t.Errorf("from %q", tr.CXX11ABIFrom)
			}
		})
	}
}
