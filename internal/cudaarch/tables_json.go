//go:build kbjson

package cudaarch

// Under the kbjson build tag the tables are decoded from the embedded JSON,
// as they were before tables_gen.go: gentables runs this way, so it works
// while tables_gen.go is stale or does not compile.

import "embed"

//go:embed data/*.json
var dataFS embed.FS

func readData(name string) []byte {
	b, err := dataFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}

func targetsTable() []TargetRelease { return decodeTargets(readData("data/nvcc-targets.json")) }
func ptxISATable() []PTXISARelease  { return decodePTXISA(readData("data/ptx-isa.json")) }

// GeneratedTable is one table gentables writes: the function that returns
// it, its data file, and its value decoded from the JSON.
type GeneratedTable struct {
	Func, File string
	Value      any // a pointer to the table
}

// GeneratorTables are the tables tables_gen.go holds, decoded from JSON.
func GeneratorTables() []GeneratedTable {
	targets, isa := targetsTable(), ptxISATable()
	return []GeneratedTable{
		{"targetsTable", "nvcc-targets.json", &targets},
		{"ptxISATable", "ptx-isa.json", &isa},
	}
}
