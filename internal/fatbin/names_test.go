package fatbin

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestNameBase: what cuobjdump 13.5 prints for an entry that records its source file
// name, read off cuobjdump with the 7-byte name in an nvcc 13.0 -lineinfo build
// (testdata/real/nvcc-13.0/lineinfo.so) patched to each input.
func TestNameBase(t *testing.T) {
	for in, want := range map[string]string{
		"axpy.cu": "axpy",
		"/src/catboost/catboost/libs/model/cuda/evaluator.cu": "evaluator",
		"my.kern.cu": "my.kern",
		"abc.d.e":    "abc.d",
		"noexten":    "noexten",
		".cuxxxx":    "",
		"dir/ab/":    "",
		"./x/.cu":    "",
		`a\b.cuu`:    `a\b`,
	} {
		if got := nameBase(in); got != want {
			t.Errorf("nameBase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEntryNames: the names are read from the entry headers, NUL and all trimmed.
func TestEntryNames(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "real", "nvcc-13.0", "lineinfo.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Entries) != 2 {
		t.Fatalf("%d entries, want 2", len(f.Entries))
	}
	for _, e := range f.Entries {
		if !bytes.HasSuffix([]byte(e.Name), []byte("/axpy.cu")) {
			t.Errorf("entry %s: name %q, want the path of axpy.cu", e.Target(), e.Name)
		}
	}
	plain, err := Open(filepath.Join("testdata", "real", "nvcc-13.0", "sm80_sm90_ptx90.so"))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, e := range plain.Entries {
		if e.Name != "" {
			t.Errorf("entry %s of a build without -lineinfo: name %q", e.Target(), e.Name)
		}
	}
}
