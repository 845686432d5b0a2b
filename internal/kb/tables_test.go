package kb

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
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
		{"families.json", familiesTable(), decodeAs[FamiliesData]},
		{"signatures.json", signaturesTable(), decodeAs[SignaturesData]},
		{"builds.json", buildsTable(), decodeAs[BuildsData]},
		{"wheels.json", wheelsTable(), decodeAs[WheelsData]},
		{"measurements.json", measurementsTable(), decodeAs[MeasurementsData]},
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
		{"families.json", func() any { return familiesTable() }, decodeAs[FamiliesData]},
		{"signatures.json", func() any { return signaturesTable() }, decodeAs[SignaturesData]},
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

// TestLoadingRulesCompile: every rule's Library compiles (they compile on
// first use, so a bad one would otherwise wait for a matching run).
func TestLoadingRulesCompile(t *testing.T) {
	for _, r := range Loading().Packages.Rows {
		if _, err := regexp.Compile(r.Library); err != nil {
			t.Errorf("%s: %v", r.Name, err)
		}
		if r.re == nil || r.re.expr != r.Library {
			t.Errorf("%s: no regexp for its Library", r.Name)
		}
	}
}

// TestExpandIsTheReplacer: Expand fills placeholders as the
// strings.Replacer it replaced did, on templates of placeholders, their
// pieces and other braces.
func TestExpandIsTheReplacer(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 8))
	pieces := []string{"{M}", "{m}", "{p}", "{", "}", "M", "m", "p", "{x}", "{{M}}", "cu", ".", "-", "é"}
	for _, cuda := range []string{"12.8", "13.0.1", "12", "", "12.8.93.1", "a.b"} {
		for range 2000 {
			var tmpl strings.Builder
			for range r.IntN(8) {
				tmpl.WriteString(pieces[r.IntN(len(pieces))])
			}
			parts := append(strings.Split(cuda, "."), "0", "0")
			want := strings.NewReplacer("{M}", parts[0], "{m}", parts[1], "{p}", parts[2]).Replace(tmpl.String())
			if got := Expand(tmpl.String(), cuda); got != want {
				t.Fatalf("Expand(%q, %q) = %q, the Replacer says %q", tmpl.String(), cuda, got, want)
			}
		}
	}
}
