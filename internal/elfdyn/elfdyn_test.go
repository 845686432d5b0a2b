package elfdyn

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

func open(t testing.TB, b []byte) *File {
	t.Helper()
	f, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func split(t testing.TB, f *File) (defined, undefined []string) {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for s := range syms.All() {
		if s.Defined {
			defined = append(defined, s.Name)
		} else {
			undefined = append(undefined, s.Name)
		}
	}
	return defined, undefined
}

func TestSharedObject(t *testing.T) {
	so := fixture.SharedObject{
		SOName:    "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
		Needed:    []string{"libc10.so", "libtorch_cpu.so", "libcudart.so.12", "libstdc++.so.6"},
		RunPath:   "$ORIGIN/../nvidia/cuda_runtime/lib",
		Defined:   []string{"PyInit_flash_attn_2_cuda"},
		Undefined: []string{"_ZN3c105ErrorC1ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE", "cudaLaunchKernel"},
		Sections:  []fixture.NamedSection{{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_80", "compute_90"})}},
	}
	f := open(t, so.Bytes())
	if !slices.Equal(f.Needed, so.Needed) || f.SOName != so.SOName || f.RunPath != so.RunPath || f.RPath != "" {
		t.Errorf("dynamic: needed %q soname %q runpath %q rpath %q", f.Needed, f.SOName, f.RunPath, f.RPath)
	}
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_DYN {
		t.Errorf("header: %v %v %v", f.Machine, f.Class, f.Type)
	}
	if s, ok := f.Section(".nv_fatbin"); !ok || s.Size != uint64(len(so.Sections[0].Data)) {
		t.Errorf(".nv_fatbin: %+v %v", s, ok)
	}
	def, undef := split(t, f)
	if !slices.Equal(def, so.Defined) || !slices.Equal(undef, so.Undefined) {
		t.Errorf("defined %q undefined %q", def, undef)
	}
}

// Real libraries of this machine: every dynamic symbol and DT_NEEDED entry
// debug/elf reads (slowly, allocating per symbol), elfdyn reads too.
func TestRealLibrariesAgreeWithDebugELF(t *testing.T) {
	var libs []string
	for _, pat := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
		"/usr/lib64/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libstdc++.so.6"} {
		if p, err := filepath.EvalSymlinks(pat); err == nil {
			libs = append(libs, p)
		}
	}
	if len(libs) == 0 {
		t.Skip("no system libc/libstdc++ found to compare with")
	}
	for _, p := range libs {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Skip(err)
			}
			ef, err := elf.NewFile(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := ef.DynamicSymbols()
			needed, _ := ef.ImportedLibraries()
			f := open(t, b)
			if !slices.Equal(f.Needed, needed) {
				t.Errorf("needed %q, debug/elf %q", f.Needed, needed)
			}
			if so, _ := ef.DynString(elf.DT_SONAME); len(so) == 1 && f.SOName != so[0] {
				t.Errorf("soname %q, debug/elf %q", f.SOName, so[0])
			}
			var wantDef, wantUndef []string
			for _, s := range want {
				if s.Name == "" {
					continue
				}
				if s.Section == elf.SHN_UNDEF {
					wantUndef = append(wantUndef, s.Name)
				} else {
					wantDef = append(wantDef, s.Name)
				}
			}
			def, undef := split(t, f)
			if !slices.Equal(def, wantDef) || !slices.Equal(undef, wantUndef) {
				t.Errorf("%d defined, %d undefined; debug/elf %d, %d", len(def), len(undef), len(wantDef), len(wantUndef))
			}
			if len(def) < 100 {
				t.Errorf("only %d defined symbols in %s", len(def), p)
			}
		})
	}
}

// sparse is a reader of size bytes: head, then zeros.
type sparse struct {
	head []byte
	size int64
}

func (s sparse) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), s.size-off)
	clear(p[:n])
	if off < int64(len(s.head)) {
		copy(p, s.head[off:])
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// setSectionSize rewrites the size field of the section named name.
func setSectionSize(t *testing.T, b []byte, name string, size uint64) []byte {
	t.Helper()
	b = bytes.Clone(b)
	le := binary.LittleEndian
	shoff, shnum, shstrndx := le.Uint64(b[40:]), int(le.Uint16(b[60:])), int(le.Uint16(b[62:]))
	strOff := le.Uint64(b[shoff+uint64(shstrndx)*64+24:])
	for i := range shnum {
		sh := b[shoff+uint64(i)*64:]
		n := strOff + uint64(le.Uint32(sh))
		if end := bytes.IndexByte(b[n:], 0); string(b[n:n+uint64(end)]) == name {
			le.PutUint64(sh[32:], size)
			return b
		}
	}
	t.Fatalf("no section %s", name)
	return nil
}

func TestHostileInput(t *testing.T) {
	good := fixture.SharedObject{SOName: "libx.so", Needed: []string{"libc10.so"}, Defined: []string{"a", "b"}, Undefined: []string{"c"}}.Bytes()
	tests := []struct {
		name string
		r    io.ReaderAt
		size int64
		want string // error substring from Open, or from Symbols when prefixed "symbols: "
	}{
		{"empty", bytes.NewReader(nil), 0, "not an ELF"},
		{"not ELF", strings.NewReader("#!/bin/sh\n"), 10, "not an ELF"},
		{"magic only", strings.NewReader("\x7fELF fixture shared object\n"), 27, "bad ELF"},
		{"dynsym past the end", bytes.NewReader(setSectionSize(t, good, ".dynsym", 1<<40)), int64(len(good)), "runs past the end"},
		{"dynamic past the end", bytes.NewReader(setSectionSize(t, good, ".dynamic", 1<<20)), int64(len(good)), "runs past the end"},
		// A 300 MB "file" that claims a 290 MB .dynsym: refused before anything is allocated.
		{"tables over the cap", sparse{setSectionSize(t, good, ".dynsym", 290<<20), 300 << 20}, 300 << 20, "symbols: exceed the"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Open(tc.r, tc.size)
			if sym, ok := strings.CutPrefix(tc.want, "symbols: "); ok {
				if err != nil {
					t.Fatal(err)
				}
				_, err = f.Symbols()
				tc.want = sym
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// Every truncation of a real-shaped file gives an error or a consistent
// result, never a panic.
func TestTruncations(t *testing.T) {
	b := fixture.SharedObject{SOName: "libtorch_cpu.so", Needed: []string{"libc10.so"}, Defined: []string{"_ZN2at6TensorC1Ev"},
		Sections: []fixture.NamedSection{{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_90"})}}}.Bytes()
	for n := 0; n < len(b); n++ {
		exercise(b[:n])
	}
}

// exercise runs everything a caller may run on b, read through a ReaderAt
// (Open) and in place (OpenBytes): both must see the same.
func exercise(b []byte) {
	checkHeadersAsDebugELF(b)
	read, errRead := describe(Open(bytes.NewReader(b), int64(len(b))))
	inPlace, errInPlace := describe(OpenBytes(b))
	if read != inPlace || fmt.Sprint(errRead) != fmt.Sprint(errInPlace) {
		panic(fmt.Sprintf("Open and OpenBytes differ:\n%s (%v)\n%s (%v)", read, errRead, inPlace, errInPlace))
	}
}

// checkHeadersAsDebugELF: wherever readHeaders answers itself (through a
// ReaderAt or in memory), debug/elf accepts the file and reads the same
// headers; elsewhere Open asks debug/elf, so its errors are debug/elf's.
func checkHeadersAsDebugELF(b []byte) {
	if len(b) < 4 || string(b[:4]) != elf.ELFMAG || CheckHeader(bytes.NewReader(b), int64(len(b))) != nil {
		return
	}
	direct, ok := readHeaders(bytes.NewReader(b), int64(len(b)), nil)
	inPlace, okInPlace := readHeaders(bytes.NewReader(b), int64(len(b)), b)
	if ok != okInPlace || fmt.Sprint(direct) != fmt.Sprint(inPlace) {
		panic(fmt.Sprintf("readHeaders through a ReaderAt and in memory differ: %v %v / %v %v", ok, direct, okInPlace, inPlace))
	}
	if !ok {
		return
	}
	var ef *elf.File
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		ef, err = elf.NewFile(io.NewSectionReader(bytes.NewReader(b), 0, int64(len(b))))
	}()
	if err != nil {
		panic(fmt.Sprintf("readHeaders read a file that debug/elf refuses (%v): %v", err, direct))
	}
	if want := headersOf(ef); fmt.Sprint(direct) != fmt.Sprint(want) {
		panic(fmt.Sprintf("readHeaders: %v\ndebug/elf:   %v", direct, want))
	}
}

// describe is what a caller can learn from an opened file, as text.
func describe(f *File, err error) (string, error) {
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) && !errors.Is(err, ErrNotELF) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			panic(fmt.Sprintf("unexpected error type %T: %v", err, err))
		}
		return "", err
	}
	out := fmt.Sprintf("%v %q %q %q %q %v\n", f.Sections, f.Needed, f.SOName, f.RPath, f.RunPath, f.Class)
	syms, err := f.Symbols()
	if err != nil {
		return out, err
	}
	for s := range syms.All() {
		out += fmt.Sprintf("%q %v %v %v %v\n", s.Name, s.Bind, s.Type, s.Defined, Exported(s))
	}
	return out, nil
}

func FuzzDynamic(f *testing.F) {
	for _, so := range fuzzSeeds() {
		f.Add(so)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		exercise(b)
	})
}

func fuzzSeeds() [][]byte {
	full := fixture.SharedObject{
		SOName: "_C.so", Needed: []string{"libc10.so", "libtorch_cpu.so", "libcudart.so.12"}, RunPath: "$ORIGIN",
		Defined: []string{"PyInit__C"}, Undefined: []string{"_ZNK2at6Tensor5printEv", "cudaMalloc"},
		Sections: []fixture.NamedSection{{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_80"})}},
	}.Bytes()
	return [][]byte{
		full,
		full[:len(full)/2],
		full[:70],
		fixture.SharedObject{}.Bytes(),
		fixture.ELF{Machine: elf.EM_X86_64, SOName: "libc.so.6", Versions: []string{"GLIBC_2.2.5", "GLIBC_2.39"}}.Bytes(),
	}
}

// TestWriteFuzzSeeds writes the seeds into testdata/fuzz/FuzzDynamic when
// FASTPATH_WRITE_SEEDS=1 (they are committed; this regenerates them).
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("FASTPATH_WRITE_SEEDS") != "1" {
		t.Skip("set FASTPATH_WRITE_SEEDS=1 to rewrite the committed fuzz seeds")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDynamic")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, b := range fuzzSeeds() {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// bigSymbolNames are n C++-sized mangled names, as libtorch_cpu.so defines.
func bigSymbolNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("_ZN2at6native%04dsome_operator_kernel_implERKNS_6TensorES3_N3c108ArrayRefIlEE%d", i%9999, i)
	}
	return names
}

// A library of n defined C++-sized symbols, as libtorch_cpu.so has.
func bigLibrary(n int) []byte {
	names := bigSymbolNames(n)
	sort.Strings(names)
	return fixture.SharedObject{SOName: "libtorch_cpu.so", Needed: []string{"libc10.so"}, Defined: names}.Bytes()
}

func BenchmarkSymbols150k(b *testing.B) {
	lib := bigLibrary(150_000)
	b.SetBytes(int64(len(lib)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(bytes.NewReader(lib), int64(len(lib)))
		if err != nil {
			b.Fatal(err)
		}
		syms, err := f.Symbols()
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for s := range syms.All() {
			if s.Defined {
				n++
			}
		}
		if n != 150_000 {
			b.Fatalf("%d symbols", n)
		}
	}
}

// The host's real libraries take the direct path (readHeaders answers),
// and read as debug/elf reads them.
func TestReadHeadersOnRealLibraries(t *testing.T) {
	for _, p := range realHashLibraries(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := readHeaders(bytes.NewReader(b), int64(len(b)), b); !ok {
			t.Errorf("%s: readHeaders left it to debug/elf", p)
		}
		checkHeadersAsDebugELF(b)
	}
}
