package cudaarch

import (
	"os"
	"reflect"
	"testing"
)

// TestGeneratedTablesCurrent: tables_gen.go's tables equal data/*.json
// decoded (strictly), row for row. It fails while tables_gen.go is stale:
// run go generate ./internal/cudaarch.
func TestGeneratedTablesCurrent(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if want := decodeTargets(read("data/nvcc-targets.json")); !reflect.DeepEqual(targetsTable(), want) {
		t.Error("tables_gen.go differs from data/nvcc-targets.json: run go generate ./internal/cudaarch")
	}
	if want := decodePTXISA(read("data/ptx-isa.json")); !reflect.DeepEqual(ptxISATable(), want) {
		t.Error("tables_gen.go differs from data/ptx-isa.json: run go generate ./internal/cudaarch")
	}
}

// BenchmarkTables compares the generated tables with decoding their JSON,
// what every doctor run paid before.
func BenchmarkTables(b *testing.B) {
	targets, err := os.ReadFile("data/nvcc-targets.json")
	if err != nil {
		b.Fatal(err)
	}
	isa, err := os.ReadFile("data/ptx-isa.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("generated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = targetsTable(), ptxISATable()
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = decodeTargets(targets), decodePTXISA(isa)
		}
	})
}
