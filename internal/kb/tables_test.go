package kb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func readData(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("data", file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGeneratedTablesCurrent: every table tables_gen.go holds equals its
// JSON file decoded, field for field (nil and empty told apart), so a run
// that reads the generated literals sees exactly the JSON. It fails while
// tables_gen.go is stale: run go generate ./internal/kb.
func TestGeneratedTablesCurrent(t *testing.T) {
	for _, c := range []struct {
		file      string
		generated any
		decoded   func([]byte) (any, error)
	}{
		{"cuda.json", cudaTable(), decodeAs[CUDAData]},
		{"envvars.json", envvarsTable(), decodeAs[EnvVarsData]},
		{"packages.json", packagesTable(), decodeAs[PackagesData]},
		{"loading.json", loadingTable(), decodeAs[LoadingData]},
		{"gpus.json", gpusTable(), decodeAs[gpuTable]},
	} {
		want, err := c.decoded(readData(t, c.file))
		if err != nil {
			t.Fatalf("data/%s: %v", c.file, err)
		}
		if !reflect.DeepEqual(c.generated, want) {
			t.Errorf("tables_gen.go differs from data/%s: run go generate ./internal/kb", c.file)
		}
	}
	// The comparison itself: a changed row is seen.
	changed := cudaTable()
	changed.DriverMinimums.Rows[0].Driver += "0"
	if reflect.DeepEqual(changed, cudaTable()) {
		t.Error("a changed row compares equal: the generated tables share their rows between calls")
	}
}

// decodeAs decodes as the accessors did before tables_gen.go, and as
// tables_json.go (the kbjson build) still does.
func decodeAs[T any](b []byte) (any, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}

// BenchmarkTables compares building each table from its generated literal
// with decoding its JSON, the cost every doctor run paid before.
func BenchmarkTables(b *testing.B) {
	for _, c := range []struct {
		file string
		gen  func() any
		dec  func([]byte) (any, error)
	}{
		{"cuda.json", func() any { return cudaTable() }, decodeAs[CUDAData]},
		{"envvars.json", func() any { return envvarsTable() }, decodeAs[EnvVarsData]},
		{"packages.json", func() any { return packagesTable() }, decodeAs[PackagesData]},
		{"loading.json", func() any { return loadingTable() }, decodeAs[LoadingData]},
		{"gpus.json", func() any { return gpusTable() }, decodeAs[gpuTable]},
	} {
		data, err := os.ReadFile(filepath.Join("data", c.file))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.file+"/generated", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.gen()
			}
		})
		b.Run(c.file+"/json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.dec(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
