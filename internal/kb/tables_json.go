//go:build kbjson

package kb

// Under the kbjson build tag the tables doctor reads are decoded from the
// embedded JSON, as they were before tables_gen.go: gentables runs this
// way (go generate ./internal/kb), so it works while tables_gen.go is stale
// or does not compile.

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

var (
	//go:embed data/cuda.json
	cudaJSON []byte
	//go:embed data/envvars.json
	envvarsJSON []byte
	//go:embed data/packages.json
	packagesJSON []byte
	//go:embed data/loading.json
	loadingJSON []byte
	//go:embed data/gpus.json
	gpusJSON []byte
	//go:embed data/families.json
	familiesJSON []byte
	//go:embed data/signatures.json
	signaturesJSON []byte
	//go:embed data/builds.json
	buildsJSON []byte
	//go:embed data/wheels.json
	wheelsJSON []byte
	//go:embed data/measurements.json
	measurementsJSON []byte
)

func decodeTable[T any](file string, b []byte) T {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		panic(fmt.Sprintf("kb: data/%s: %v", file, err))
	}
	return v
}

func cudaTable() CUDAData         { return decodeTable[CUDAData]("cuda.json", cudaJSON) }
func envvarsTable() EnvVarsData   { return decodeTable[EnvVarsData]("envvars.json", envvarsJSON) }
func packagesTable() PackagesData { return decodeTable[PackagesData]("packages.json", packagesJSON) }
func loadingTable() LoadingData   { return decodeTable[LoadingData]("loading.json", loadingJSON) }
func gpusTable() gpuTable         { return decodeTable[gpuTable]("gpus.json", gpusJSON) }
func familiesTable() FamiliesData { return decodeTable[FamiliesData]("families.json", familiesJSON) }
func signaturesTable() SignaturesData {
	return decodeTable[SignaturesData]("signatures.json", signaturesJSON)
}
func buildsTable() BuildsData { return decodeTable[BuildsData]("builds.json", buildsJSON) }
func wheelsTable() WheelsData { return decodeTable[WheelsData]("wheels.json", wheelsJSON) }
func measurementsTable() MeasurementsData {
	return decodeTable[MeasurementsData]("measurements.json", measurementsJSON)
}

// GeneratedTable is one table gentables writes: the function that returns
// it, its data file, and its value decoded from the JSON.
type GeneratedTable struct {
	Func, File string
	Value      any // a pointer to the table
}

// GeneratorTables are the tables tables_gen.go holds, decoded from JSON.
func GeneratorTables() []GeneratedTable {
	cuda, env, pkgs, loading, gpus := cudaTable(), envvarsTable(), packagesTable(), loadingTable(), gpusTable()
	fam, sig, builds, wheels, meas := familiesTable(), signaturesTable(), buildsTable(), wheelsTable(), measurementsTable()
	return []GeneratedTable{
		{"cudaTable", "cuda.json", &cuda},
		{"envvarsTable", "envvars.json", &env},
		{"packagesTable", "packages.json", &pkgs},
		{"loadingTable", "loading.json", &loading},
		{"gpusTable", "gpus.json", &gpus},
		{"familiesTable", "families.json", &fam},
		{"signaturesTable", "signatures.json", &sig},
		{"buildsTable", "builds.json", &builds},
		{"wheelsTable", "wheels.json", &wheels},
		{"measurementsTable", "measurements.json", &meas},
	}
}
