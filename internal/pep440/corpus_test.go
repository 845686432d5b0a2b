package pep440

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// corpus is testdata/corpus.json: Python packaging's answers (gen.py).
type corpus struct {
	Packaging string       `json:"packaging"`
	Versions  [][2]*string `json:"versions"`
	Order     [][]string   `json:"order"`
}

func loadCorpus(t *testing.T, path string) corpus {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(c.Versions) < 300 || len(c.Order) < 100 {
		t.Fatalf("%s: %d versions, %d order groups: too few to mean anything", path, len(c.Versions), len(c.Order))
	}
	return c
}

// TestCorpusNormalize: Parse accepts what packaging accepts, and String
// prints what str(Version) prints.
func TestCorpusNormalize(t *testing.T) {
	c := loadCorpus(t, filepath.Join("testdata", "corpus.json"))
	for _, e := range c.Versions {
		in, want := *e[0], e[1]
		v, err := Parse(in)
		switch {
		case want == nil && err == nil:
			t.Errorf("Parse(%q) = %q, packaging %s rejects it", in, v, c.Packaging)
		case want != nil && err != nil:
			t.Errorf("Parse(%q): %v, packaging %s reads %q", in, err, c.Packaging, *want)
		case want != nil && v.String() != *want:
			t.Errorf("Parse(%q).String() = %q, packaging %s: %q", in, v, c.Packaging, *want)
		}
		if want == nil && Normalize(in) != in {
			t.Errorf("Normalize(%q) = %q, want the input back", in, Normalize(in))
		}
	}
}

// TestCorpusOrder: Compare agrees with packaging's sort on every pair.
func TestCorpusOrder(t *testing.T) {
	c := loadCorpus(t, filepath.Join("testdata", "corpus.json"))
	type ranked struct {
		s    string
		v    Version
		rank int
	}
	var all []ranked
	for rank, group := range c.Order {
		for _, s := range group {
			v, err := Parse(s)
			if err != nil {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			all = append(all, ranked{s, v, rank})
		}
	}
	bad := 0
	for _, a := range all {
		for _, b := range all {
			if got, want := a.v.Compare(b.v), cmpInt(a.rank, b.rank); got != want {
				if bad++; bad <= 20 {
					t.Errorf("Compare(%q, %q) = %d, packaging %s: %d", a.s, b.s, got, c.Packaging, want)
				}
			}
		}
	}
}

// TestCorpusNetwork regenerates corpus.json with the real packaging (the
// pinned wheel from PyPI) and compares it with the committed one, so the
// answers the tests above check are packaging's, not hand-written.
func TestCorpusNetwork(t *testing.T) {
	dir := testenv.Wheels(t, "packaging==25.0")
	py := testenv.Python3(t)
	wheels, _ := filepath.Glob(filepath.Join(dir, "packaging-25.0-*.whl"))
	if len(wheels) != 1 {
		t.Fatalf("packaging 25.0 wheels in %s: %q", dir, wheels)
	}
	out := filepath.Join(t.TempDir(), "corpus.json")
	testenv.Run(t, []string{"PYTHONPATH=" + wheels[0], "PYTHONHASHSEED=0", "PYTHONNOUSERSITE=1"}, py, filepath.Join("testdata", "gen.py"), out)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("packaging's answers differ from testdata/corpus.json: regenerate it (testdata/gen.py) and see what changed; the new answers are in %s", out)
	}
}
