package fatbin

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// TestRelocatableBesideExecutable reads a real -rdc shared object (nvcc 13.0,
// testdata/real/src/build.sh): .nv_fatbin {sm_80} is what the runtime loads and what
// cuobjdump lists; __nv_relfatbin {sm_80 compute_90} is kept aside, and All() lists
// both as `cuobjdump -all` does (the .all-list-*.txt recorded beside it).
func TestRelocatableBesideExecutable(t *testing.T) {
	path := filepath.Join("testdata", "real", "nvcc-13.0", "rdc_shared.so")
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Containers) != 1 || len(f.Entries) != 1 || f.Containers[0].Section != ExecutableSection {
		t.Fatalf("loaded code: %+v %+v", f.Containers, f.Entries)
	}
	if f.Relocatable == nil || len(f.Relocatable.Containers) != 1 || len(f.Relocatable.Entries) != 2 {
		t.Fatalf("relocatable code: %+v", f.Relocatable)
	}
	for i, e := range f.Relocatable.Entries {
		if e.Container != 0 || f.Relocatable.Containers[0].First != 0 {
			t.Errorf("relocatable entry %d not re-indexed: %+v", i, e)
		}
	}
	sass, ptx := f.Targets()
	if len(sass) != 1 || sass[0] != "sm_80" || len(ptx) != 0 {
		t.Errorf("loaded targets %v %v", sass, ptx)
	}
	all := f.All()
	for _, l := range []struct {
		file string
		fn   func(*bytes.Buffer, *File) error
	}{
		{"rdc_shared.so.all-list-elf.txt", func(b *bytes.Buffer, f *File) error { return ListELF(b, f, "rdc_shared") }},
		{"rdc_shared.so.all-list-ptx.txt", func(b *bytes.Buffer, f *File) error { return ListPTX(b, f, "rdc_shared") }},
	} {
		want, err := os.ReadFile(filepath.Join("testdata", "real", "nvcc-13.0", l.file))
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := l.fn(&got, all); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) {
			t.Errorf("%s: got %q want %q", l.file, got.String(), want)
		}
	}
	// An object with only relocatable code (rdc.o) lists it: nothing else is there.
	o, err := Open(filepath.Join("testdata", "real", "nvcc-13.0", "rdc.o"))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Relocatable != nil || len(o.Entries) != 2 || o.All() != o {
		t.Errorf("rdc.o: %d entries, relocatable %+v", len(o.Entries), o.Relocatable)
	}
}

// TestBareCubinVariants checks the target read from every real bare cubin against the
// file name's -arch (testdata/real/cubins/README.md): `a` comes from e_flags (ptxas
// 12.8) or .nv.compat (ptxas 13.0); `f` cubins read as plain, as cuobjdump lists them.
func TestBareCubinVariants(t *testing.T) {
	want := map[string]string{
		"nvcc13.0.sm_90.cubin": "sm_90", "nvcc13.0.sm_90a.cubin": "sm_90a",
		"nvcc13.0.sm_100.cubin": "sm_100", "nvcc13.0.sm_100a.cubin": "sm_100a", "nvcc13.0.sm_100f.cubin": "sm_100",
		"nvcc13.0.sm_103a.cubin": "sm_103a", "nvcc13.0.sm_120f.cubin": "sm_120", "nvcc13.0.sm_121a.cubin": "sm_121a",
		"ptxas12.8.sm_80.cubin": "sm_80", "ptxas12.8.sm_90.cubin": "sm_90", "ptxas12.8.sm_90a.cubin": "sm_90a",
		"ptxas12.8.sm_100a.cubin": "sm_100a", "ptxas12.8.sm_120a.cubin": "sm_120a",
	}
	for name, target := range want {
		f, err := Open(filepath.Join("testdata", "real", "cubins", name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		f.Close()
		if f.Kind != KindCubin || len(f.Entries) != 1 || f.Entries[0].Target().String() != target {
			t.Errorf("%s: %+v, want one %s entry", name, f.Entries, target)
		}
	}
	// sm_100a must not run on 10.3 (the false "native" the old reading gave).
	f, _ := Open(filepath.Join("testdata", "real", "cubins", "nvcc13.0.sm_100a.cubin"))
	if c := f.Entries[0].Target().RunsOn(cudaarch.Capability{Major: 10, Minor: 3}); c != cudaarch.None {
		t.Errorf("sm_100a cubin on 10.3: %v", c)
	}
}

// TestCubinArchFlags pins the e_flags readings of real cubins (README in testdata/real/cubins).
func TestCubinArchFlags(t *testing.T) {
	for flags, want := range map[uint32]bool{
		0x5a055a: false, 0x5a0d5a: true, // ptxas 12.8 sm_90, sm_90a (older layout)
		0x6006402: false, 0x600640a: true, 0x1000640c: true, 0xf006404: false, 0x600670a: true, // newer layout
		0x6005a04: false, // ptxas 13.0 sm_90 and sm_90a alike: .nv.compat tells
	} {
		if got := CubinArchSpecific(flags); got != want {
			t.Errorf("CubinArchSpecific(%#x) = %v, want %v", flags, got, want)
		}
	}
}
