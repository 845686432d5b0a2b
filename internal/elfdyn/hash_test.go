package elfdyn

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// realHashLibraries are libraries of this machine with hash tables: libc
// and libstdc++ (.gnu.hash, versioned C and C++ names), the dynamic loader
// and LLVM (both .gnu.hash and .hash, the latter with tens of thousands of
// C++ symbols).
func realHashLibraries(t *testing.T) []string {
	var libs []string
	for _, pat := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6",
		"/lib64/ld-linux-x86-64.so.2", "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
		"/lib/aarch64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libstdc++.so.6"} {
		if p, err := filepath.EvalSymlinks(pat); err == nil && !slices.Contains(libs, p) {
			libs = append(libs, p)
		}
	}
	if len(libs) == 0 {
		t.Skip("no system libraries found to compare with")
	}
	return libs
}

// Every defined, exported symbol debug/elf lists is found through each hash
// table the library has; names it does not define (its undefined
// references, every defined name with a suffix) are not.
func TestHashLookupAgreesWithDebugELF(t *testing.T) {
	for _, p := range realHashLibraries(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			fh, err := os.Open(p)
			if err != nil {
				t.Skip(err)
			}
			defer fh.Close()
			st, _ := fh.Stat()
			ef, err := elf.NewFile(fh)
			if err != nil {
				t.Fatal(err)
			}
			syms, err := ef.DynamicSymbols()
			if err != nil {
				t.Fatal(err)
			}
			defined := map[string]bool{}
			var undefined []string
			for _, s := range syms {
				b := elf.ST_BIND(s.Info)
				if s.Section != elf.SHN_UNDEF && (b == elf.STB_GLOBAL || b == elf.STB_WEAK || b == 10) {
					defined[s.Name] = true
				} else if s.Section == elf.SHN_UNDEF {
					undefined = append(undefined, s.Name)
				}
			}
			var names, absent []string
			for n := range defined {
				names = append(names, n)
				if !defined[n+"_x"] {
					absent = append(absent, n+"_x")
				}
			}
			for _, n := range undefined {
				if !defined[n] {
					absent = append(absent, n)
				}
			}
			slices.Sort(names)
			f, err := Open(fh, st.Size())
			if err != nil {
				t.Fatal(err)
			}
			kinds := 0
			for _, gnu := range []bool{true, false} {
				h, err := f.hashTable(gnu)
				if err != nil {
					t.Fatal(err)
				}
				if h.gnu != gnu {
					continue // only one kind of table in this library
				}
				kinds++
				got, err := h.Defined(append(slices.Clone(names), absent...))
				if err != nil {
					t.Fatal(err)
				}
				var missed, wrong []string
				for i, n := range names {
					if !got[i] {
						missed = append(missed, n)
					}
				}
				for i, n := range absent {
					if got[len(names)+i] {
						wrong = append(wrong, n)
					}
				}
				if len(missed) > 0 || len(wrong) > 0 {
					t.Errorf("gnu=%v: %d of %d defined names not found (%q), %d absent found (%q)", gnu, len(missed), len(names), first(missed), len(wrong), first(wrong))
				}
			}
			if kinds == 0 || len(names) < 20 {
				t.Errorf("%d hash tables checked, %d names", kinds, len(names))
			}
		})
	}
}

func first(s []string) []string { return s[:min(3, len(s))] }

// patchSection sets the type and link of the section named name.
func patchSection(t testing.TB, b []byte, name string, typ elf.SectionType, link uint32) []byte {
	t.Helper()
	out := fixture.SetSectionType(b, name, typ, link)
	if bytes.Equal(out, b) {
		t.Fatalf("no section %s", name)
	}
	return out
}

// gnuHashedObject is a libtorch_cpu-like object whose .gnu.hash indexes defined.
func gnuHashedObject(t testing.TB, defined, undefined []string, nbuckets uint32) []byte {
	return fixture.GNUHashed(fixture.SharedObject{SOName: "libtorch_cpu.so", Needed: []string{"libc10.so"}, Defined: defined, Undefined: undefined}, nbuckets)
}

func TestGNUHashFixture(t *testing.T) {
	var defined []string
	for i := range 500 {
		defined = append(defined, fmt.Sprintf("_ZN2at6native%dkernelERKNS_6TensorE", i))
	}
	undefined := []string{"_ZN3c105ErrorC1Ev", "malloc"}
	b := gnuHashedObject(t, slices.Clone(defined), undefined, 37)
	f := open(t, b)
	h, err := f.HashTable()
	if err != nil {
		t.Fatal(err)
	}
	if !h.gnu {
		t.Fatal("the .gnu.hash was not used")
	}
	names := append(slices.Clone(defined), append(undefined, "_ZN2at6native9999kernelERKNS_6TensorE", "")...)
	got, err := h.Defined(names)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		if want := i < len(defined); got[i] != want {
			t.Errorf("%q: found %v, want %v", n, got[i], want)
		}
	}
}

func TestNoHashTable(t *testing.T) {
	f := open(t, fixture.SharedObject{Defined: []string{"a"}}.Bytes())
	if _, err := f.HashTable(); !errors.Is(err, ErrNoHash) {
		t.Fatalf("error %v, want ErrNoHash", err)
	}
}

// Hostile tables give errors or plain "not found", never a panic, a hang
// or an allocation the file does not justify.
func TestHostileHashTables(t *testing.T) {
	good := gnuHashedObject(t, []string{"a", "b", "c"}, nil, 2)
	sec := func(b []byte) int {
		f := open(t, b)
		s, _ := f.Section(".gnu.hash")
		return int(s.Offset)
	}
	at := sec(good)
	le := binary.LittleEndian
	tests := []struct {
		name  string
		patch func(b []byte)
		want  string // error substring; "" means lookups succeed (finding nothing wrong)
	}{
		{"huge bucket count", func(b []byte) { le.PutUint32(b[at:], 0xffffffff) }, "do not fit"},
		{"huge bloom", func(b []byte) { le.PutUint32(b[at+8:], 0x80000000) }, "do not fit"},
		{"zero buckets", func(b []byte) { le.PutUint32(b[at:], 0) }, "do not fit"},
		{"bloom not a power of two", func(b []byte) { le.PutUint32(b[at:], 1); le.PutUint32(b[at+8:], 3) }, "power of two"},
		{"symoffset past the table", func(b []byte) { le.PutUint32(b[at+4:], 1000) }, "first hashed symbol"},
		{"bucket past the table", func(b []byte) { le.PutUint32(b[at+16+8:], 0xfffffff0); le.PutUint32(b[at+16+12:], 0xfffffff0) }, ""},
		{"endless chain", func(b []byte) {
			for i := at + 16 + 8 + 8; i+4 <= at+16+8+8+12; i += 4 {
				le.PutUint32(b[i:], le.Uint32(b[i:])&^1)
			}
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(good)
			tc.patch(b)
			f := open(t, b)
			h, err := f.HashTable()
			if err == nil {
				_, err = h.Defined([]string{"a", "b", "c", "d"})
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A 100 MB hash section is refused before anything is allocated.
	big := setSectionSize(t, good, ".gnu.hash", 100<<20)
	f, err := Open(sparse{big, 200 << 20}, 200<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.HashTable(); err == nil || !strings.Contains(err.Error(), "cap") {
		t.Fatalf("error %v, want the cap", err)
	}
}

// A SysV .hash whose chain loops back on itself ends the walk.
func TestSysVHashCycle(t *testing.T) {
	le := binary.LittleEndian
	var sec []byte
	sec = le.AppendUint32(sec, 1) // nbucket
	sec = le.AppendUint32(sec, 3) // nchain
	sec = le.AppendUint32(sec, 1) // bucket 0 -> symbol 1
	sec = le.AppendUint32(sec, 0)
	sec = le.AppendUint32(sec, 2) // 1 -> 2
	sec = le.AppendUint32(sec, 1) // 2 -> 1: a cycle
	so := fixture.SharedObject{Defined: []string{"a", "b"}, Sections: []fixture.NamedSection{{Name: ".hash", Data: sec}}}
	f := open(t, patchSection(t, so.Bytes(), ".hash", elf.SHT_HASH, 2))
	h, err := f.HashTable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Defined([]string{"a", "b", "z"})
	if err != nil || !slices.Equal(got, []bool{true, true, false}) {
		t.Fatalf("%v %v", got, err)
	}
}

// exerciseHash runs the lookups a caller may run on b.
func exerciseHash(b []byte) {
	f, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return
	}
	for _, gnu := range []bool{true, false} {
		h, err := f.hashTable(gnu)
		if err != nil {
			continue
		}
		_, _ = h.Defined([]string{"a", "b", "_ZN2at6TensorC1Ev", "", "PyInit__C"})
	}
}

func FuzzHashLookup(f *testing.F) {
	for _, b := range hashFuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { exerciseHash(b) })
}

func hashFuzzSeeds(t testing.TB) [][]byte {
	gnu := gnuHashedObject(t, []string{"a", "b", "_ZN2at6TensorC1Ev"}, []string{"malloc"}, 2)
	le := binary.LittleEndian
	var sec []byte
	for _, w := range []uint32{1, 3, 1, 0, 2, 0} {
		sec = le.AppendUint32(sec, w)
	}
	sysv := patchSection(t, fixture.SharedObject{Defined: []string{"a", "b"}, Sections: []fixture.NamedSection{{Name: ".hash", Data: sec}}}.Bytes(), ".hash", elf.SHT_HASH, 2)
	return [][]byte{gnu, sysv, gnu[:len(gnu)-100], sysv[:len(sysv)/2]}
}

// TestWriteHashFuzzSeeds writes the seeds into testdata/fuzz/FuzzHashLookup
// when FASTPATH_WRITE_SEEDS=1 (they are committed; this regenerates them).
func TestWriteHashFuzzSeeds(t *testing.T) {
	if os.Getenv("FASTPATH_WRITE_SEEDS") != "1" {
		t.Skip("set FASTPATH_WRITE_SEEDS=1 to rewrite the committed fuzz seeds")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzHashLookup")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, b := range hashFuzzSeeds(t) {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A libtorch_cpu-sized table (150,000 defined names), 2,000 or 40,000
// names asked: what the extension ABI check costs per torch library (the
// scale tree's 2,048 torch-linking extensions ask about 40,000 names).
func BenchmarkHashDefined150k(b *testing.B) {
	defined := bigSymbolNames(150_000)
	lib := gnuHashedObject(b, defined, nil, 32768)
	for _, n := range []int{2000, 40000} {
		b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
			wanted := make([]string, 0, n)
			for i := 0; len(wanted) < n; i = (i + 7919) % len(defined) {
				wanted = append(wanted, defined[i])
			}
			b.SetBytes(int64(len(lib)))
			b.ReportAllocs()
			for b.Loop() {
				f, err := Open(bytes.NewReader(lib), int64(len(lib)))
				if err != nil {
					b.Fatal(err)
				}
				h, err := f.HashTable()
				if err != nil {
					b.Fatal(err)
				}
				got, err := h.Defined(wanted)
				if err != nil || !got[0] || !got[len(got)-1] {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}

// gnuHash folds four bytes at a time; the table's own definition is one
// byte at a time (fixture.GNUHash, which writes the test objects). Every
// length up to a few words, and long names, must hash alike.
func TestGNUHashFoldsAsBytewise(t *testing.T) {
	names := []string{""}
	for n := 1; n <= 40; n++ {
		names = append(names, strings.Repeat("\xff", n), strings.Repeat("z", n)[:n-1]+"_")
	}
	names = append(names, bigSymbolNames(50)...)
	for _, s := range names {
		if got, want := gnuHash(s), fixture.GNUHash(s); got != want {
			t.Errorf("gnuHash(%q) = %#x, want %#x", s, got, want)
		}
	}
}

func BenchmarkGNUHash(b *testing.B) {
	names := bigSymbolNames(1000)
	b.Run("folded", func(b *testing.B) {
		for b.Loop() {
			for _, n := range names {
				gnuHash(n)
			}
		}
	})
	b.Run("bytewise", func(b *testing.B) {
		for b.Loop() {
			for _, n := range names {
				fixture.GNUHash(n)
			}
		}
	})
}
