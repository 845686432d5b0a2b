package fatbin

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// libtorch_cuda.so's .nv_fatbin sits at this file offset (reference README).
const libtorchFatbinOff = 0x457f2e0

func readGzipLines(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "torch-2.11-cu130", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func targetCounts(f *File) map[string]int {
	n := map[string]int{}
	for _, e := range f.Entries {
		n[e.Target().String()]++
	}
	return n
}

func targetNames(ts []cudaarch.Target) []string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return s
}

// TestLibtorchCUDAListELF rebuilds libtorch_cuda.so's 297.8 MB .nv_fatbin from its
// real entry headers (payloads zero) and checks the listing against cuobjdump's, line
// for line, and the counts against the reference README.
func TestLibtorchCUDAListELF(t *testing.T) {
	rows := rowsOf(loadRef(t, "fatbin-entry-headers.json.gz"), "libtorch_cuda.so")
	img, placed := refELF(t, rows, etDyn, ".nv_fatbin", libtorchFatbinOff)
	f, err := NewFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != KindHostELF || !slices.Equal(f.Sections, []string{".nv_fatbin"}) {
		t.Errorf("kind %v sections %v", f.Kind, f.Sections)
	}

	var got bytes.Buffer
	if err := ListELF(&got, f, ListBase("/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so")); err != nil {
		t.Fatal(err)
	}
	want := readGzipLines(t, "cuobjdump-list-elf-libtorch_cuda.txt.gz")
	gotLines := strings.Split(strings.TrimSuffix(got.String(), "\n"), "\n")
	if len(want) != 2789 || len(gotLines) != len(want) {
		t.Fatalf("listing has %d lines, cuobjdump's %d (want 2789)", len(gotLines), len(want))
	}
	for i := range want {
		if gotLines[i] != want[i] {
			t.Fatalf("line %d: got %q, cuobjdump printed %q", i+1, gotLines[i], want[i])
		}
	}
	var ptx bytes.Buffer
	if err := ListPTX(&ptx, f, "libtorch_cuda"); err != nil || ptx.Len() != 0 {
		t.Errorf("ListPTX printed %q, %v; the library has no PTX", ptx.String(), err)
	}

	if len(f.Containers) != 444 || len(f.Entries) != 2789 {
		t.Errorf("%d containers, %d entries; want 444, 2789", len(f.Containers), len(f.Entries))
	}
	// torch.cuda.get_arch_list() on that machine.
	if got := targetNames(f.CommonSASS()); !slices.Equal(got, []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}) {
		t.Errorf("SASS in every container = %v", got)
	}
	wantCounts := map[string]int{
		"sm_75": 444, "sm_80": 444, "sm_86": 444, "sm_90": 444, "sm_100": 444, "sm_120": 444,
		"sm_100a": 59, "sm_103a": 59, "sm_90a": 4, "sm_89": 1, "sm_120a": 1, "sm_121a": 1,
	}
	if got := targetCounts(f); fmt.Sprint(got) != fmt.Sprint(wantCounts) {
		t.Errorf("per-target counts = %v\nwant %v", got, wantCounts)
	}
	for i, e := range f.Entries {
		if e.Offset != placed[i].off {
			t.Fatalf("entry %d at %#x, placed at %#x", i, e.Offset, placed[i].off)
		}
		if e.Kind != cudaarch.SASS || e.Compression != CompressionZstd || e.CodeVersion != (cudaarch.Version{Major: 1, Minor: 8}) {
			t.Fatalf("entry %d: kind %v compression %v code version %v; want sass zstd 1.8", i, e.Kind, e.Compression, e.CodeVersion)
		}
		if e.CompressedSize == 0 || e.CompressedSize > e.PayloadSize || e.UncompressedSize <= e.CompressedSize {
			t.Fatalf("entry %d sizes: compressed %d padded %d uncompressed %d", i, e.CompressedSize, e.PayloadSize, e.UncompressedSize)
		}
	}
	sass, ptxT := f.Targets()
	if !slices.Equal(sass, []string{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103a", "sm_120", "sm_120a", "sm_121a"}) || ptxT != nil {
		t.Errorf("Targets() = %v, %v", sass, ptxT)
	}
}

// TestLibtorchCUDALinalg: the other library of the reading; no listing was taken, but
// its containers must walk exactly, and it lacks sm_75 (torch builds it without).
func TestLibtorchCUDALinalg(t *testing.T) {
	rows := rowsOf(loadRef(t, "fatbin-entry-headers.json.gz"), "libtorch_cuda_linalg.so")
	img, placed := refELF(t, rows, etDyn, ".nv_fatbin", 0x7d9000)
	f, err := NewFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Containers) != 99 || len(f.Entries) != len(placed) || len(placed) != 495 {
		t.Fatalf("%d containers %d entries, want 99 and 495", len(f.Containers), len(f.Entries))
	}
	if got := targetNames(f.CommonSASS()); !slices.Equal(got, []string{"sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}) {
		t.Errorf("SASS in every container = %v", got)
	}
}

// TestWalkReadsHeadersOnly walks the 297.8 MB section and checks it allocated a few
// MB at most: payloads are never read.
func TestWalkReadsHeadersOnly(t *testing.T) {
	rows := rowsOf(loadRef(t, "fatbin-entry-headers.json.gz"), "libtorch_cuda.so")
	img, _ := refELF(t, rows, etDyn, ".nv_fatbin", libtorchFatbinOff)
	reads := &countingReader{r: img}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := NewFile(reads)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("walking allocated %d bytes", alloc)
	}
	if got := reads.bytes.Load(); got > 1<<20 {
		t.Errorf("walking read %d bytes of a %d-byte file", got, img.size)
	}
	if len(f.Entries) != 2789 {
		t.Errorf("%d entries", len(f.Entries))
	}
}

// countingReader counts the bytes read through it. The walk prefetches
// large sections with parallel ReadAt calls (as io.ReaderAt allows), so the
// count is atomic.
type countingReader struct {
	r     *sparseReader
	bytes atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.bytes.Add(int64(n))
	return n, err
}
func (c *countingReader) Size() int64 { return c.r.size }

// TestOpenSparseFile goes through Open on a real (sparse) file.
func TestOpenSparseFile(t *testing.T) {
	rows := rowsOf(loadRef(t, "fatbin-entry-headers.json.gz"), "libtorch_cuda.so")
	img, _ := refELF(t, rows, etDyn, ".nv_fatbin", libtorchFatbinOff)
	path := filepath.Join(t.TempDir(), "libtorch_cuda.so")
	writeSparseFile(t, path, img)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.Containers) != 444 || len(f.Entries) != 2789 {
		t.Errorf("%d containers, %d entries", len(f.Containers), len(f.Entries))
	}
}

// smallKernel is what testdata/torch-2.11-cu130/READINGS.md says each small-kernel build holds,
// per container, as target/compression.
type smallKernel struct {
	file       string
	section    string
	etype      uint16
	containers [][]string
	listELF    []string // derived from the rules (no cuobjdump listing was taken for these)
	listPTX    []string
}

func TestSmallKernels(t *testing.T) {
	tests := []smallKernel{
		{ // no -gencode: nvcc 13.0's default sm_75 SASS + compute_75 PTX (PTX zstd by default)
			file: "plain.so", section: ".nv_fatbin", etype: etDyn,
			containers: [][]string{{"sm_75/none"}, {"sm_75/none", "compute_75/zstd/ptx9.0"}},
			listELF:    []string{"ELF file    1: plain.1.sm_75.cubin", "ELF file    2: plain.2.sm_75.cubin"},
			listPTX:    []string{"PTX file    1: plain.1.sm_75.ptx"},
		},
		{
			file: "sm80_sm90_ptx90.so", section: ".nv_fatbin", etype: etDyn,
			containers: [][]string{{"sm_80/none", "sm_90/none"}, {"sm_80/none", "sm_90/none", "compute_90/zstd/ptx9.0"}},
			listPTX:    []string{"PTX file    1: sm80_sm90_ptx90.1.sm_90.ptx"},
		},
		{ // sm_90a, sm_100a, sm_120f: the family target is listed plain
			file: "arch_specific.so", section: ".nv_fatbin", etype: etDyn,
			containers: [][]string{{"sm_90a/none", "sm_100a/none", "sm_120f/none"}, {"sm_90a/none", "sm_100a/none", "sm_120f/none"}},
			listELF: []string{
				"ELF file    1: arch_specific.1.sm_90a.cubin", "ELF file    2: arch_specific.2.sm_100a.cubin", "ELF file    3: arch_specific.3.sm_120.cubin",
				"ELF file    4: arch_specific.4.sm_90a.cubin", "ELF file    5: arch_specific.5.sm_100a.cubin", "ELF file    6: arch_specific.6.sm_120.cubin",
			},
		},
		{ // -Xfatbin=-compress-all
			file: "compressed.so", section: ".nv_fatbin", etype: etDyn,
			containers: [][]string{{"sm_90/zstd"}, {"sm_90/zstd"}},
		},
		{ // -Xfatbin=--compress=false, with compute_75 PTX (ISA 9.0, stored plain)
			file: "uncompressed.so", section: ".nv_fatbin", etype: etDyn,
			containers: [][]string{{"sm_90/none"}, {"sm_90/none", "compute_75/none/ptx9.0"}},
		},
		{
			file: "cmode_size.so", section: ".nv_fatbin", etype: etDyn,
			containers: [][]string{{"sm_90/zstd"}, {"sm_90/zstd", "compute_90/zstd/ptx9.0"}},
		},
		{ // --compress-mode=speed: the small cubins stay plain, the PTX gets the LZ4-class codec
			file: "cmode_speed.so", section: ".nv_fatbin", etype: etDyn,
			containers: [][]string{{"sm_90/none"}, {"sm_90/none", "compute_90/lz4/ptx9.0"}},
		},
		{ // -c -rdc=true: one fatbin in __nv_relfatbin
			file: "rdc.o", section: "__nv_relfatbin", etype: etRel,
			containers: [][]string{{"sm_90/zstd"}},
			listELF:    []string{"ELF file    1: rdc.1.sm_90.cubin"},
		},
	}
	all := loadRef(t, "small-kernels-fatbin-entry-headers.json")
	files := map[string]bool{}
	for _, r := range all {
		files[r.File] = true
	}
	if len(files) != len(tests) {
		t.Errorf("reference has %d small-kernel files, the table %d", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			rows := rowsOf(all, tt.file)
			if len(rows) == 0 || rows[0].Section != tt.section {
				t.Fatalf("no rows in %s", tt.section)
			}
			img, placed := refELF(t, rows, tt.etype, tt.section, 0x8e990)
			f, err := NewFile(img)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			for _, c := range f.Containers {
				var cs []string
				for _, e := range f.Entries[c.First : c.First+c.N] {
					s := e.Target().String() + "/" + e.Compression.String()
					if e.Kind == cudaarch.PTX {
						s += "/ptx" + e.PTXVersion.String()
					}
					cs = append(cs, s)
				}
				got = append(got, cs)
				if c.Section != tt.section {
					t.Errorf("container in %q", c.Section)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.containers) {
				t.Errorf("containers = %v\nwant %v", got, tt.containers)
			}
			for i, e := range f.Entries {
				if e.Offset != placed[i].off {
					t.Errorf("entry %d at %#x, placed at %#x", i, e.Offset, placed[i].off)
				}
			}
			base := ListBase(tt.file)
			for _, l := range []struct {
				fn   func(*bytes.Buffer) error
				want []string
			}{
				{func(b *bytes.Buffer) error { return ListELF(b, f, base) }, tt.listELF},
				{func(b *bytes.Buffer) error { return ListPTX(b, f, base) }, tt.listPTX},
			} {
				if l.want == nil {
					continue
				}
				var b bytes.Buffer
				if err := l.fn(&b); err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(l.want, "\n") + "\n"; b.String() != got {
					t.Errorf("listing:\n%s\nwant:\n%s", b.String(), got)
				}
			}
		})
	}
}

func TestListBase(t *testing.T) {
	for in, want := range map[string]string{
		"libtorch_cuda.so":                   "libtorch_cuda",
		"/x/y/libtorch_cuda_linalg.so":       "libtorch_cuda_linalg",
		"libggml-cuda.so.0.14.0":             "libggml-cuda.so.0.14",
		"rdc.o":                              "rdc",
		"a.out":                              "a",
		"mybinary":                           "mybinary",
		".hidden":                            ".hidden",
		"kernels.fatbin":                     "kernels",
		"_C.cpython-312-x86_64-linux-gnu.so": "_C.cpython-312-x86_64-linux-gnu",
	} {
		if got := ListBase(in); got != want {
			t.Errorf("ListBase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestListNumbering: the ELF and PTX counters are separate, numbers widen past 9999.
func TestListNumbering(t *testing.T) {
	f := &File{}
	for i := 0; i < 10001; i++ {
		f.Entries = append(f.Entries, Entry{Kind: cudaarch.SASS, SM: 90})
		if i%5000 == 0 {
			f.Entries = append(f.Entries, Entry{Kind: cudaarch.PTX, SM: 90, Variant: cudaarch.VariantArch})
		}
	}
	var elfOut, ptxOut bytes.Buffer
	ListELF(&elfOut, f, "x")
	ListPTX(&ptxOut, f, "x")
	lines := strings.Split(strings.TrimSuffix(elfOut.String(), "\n"), "\n")
	if len(lines) != 10001 || lines[0] != "ELF file    1: x.1.sm_90.cubin" || lines[9998] != "ELF file 9999: x.9999.sm_90.cubin" || lines[10000] != "ELF file 10001: x.10001.sm_90.cubin" {
		t.Errorf("ELF listing: %q ... %q", lines[0], lines[len(lines)-1])
	}
	if ptxOut.String() != "PTX file    1: x.1.sm_90a.ptx\nPTX file    2: x.2.sm_90a.ptx\nPTX file    3: x.3.sm_90a.ptx\n" {
		t.Errorf("PTX listing: %q", ptxOut.String())
	}
}

// TestRealListings checks every binary built by testdata/real/src/build.sh
// (one folder per nvcc release, e.g. testdata/real/nvcc-13.0/) against the
// cuobjdump listings recorded beside it in the same run (NAME.list-elf.txt,
// NAME.list-ptx.txt). A binary without its listings is an error.
func TestRealListings(t *testing.T) {
	var bins []string
	err := filepath.WalkDir(filepath.Join("testdata", "real"), func(p string, de os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() && de.Name() == "src" {
			return filepath.SkipDir
		}
		name := de.Name()
		if de.IsDir() || strings.HasSuffix(name, ".txt") || strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			return nil
		}
		bins = append(bins, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range bins {
		name := filepath.Base(path)
		t.Run(strings.TrimPrefix(path, "testdata/real/"), func(t *testing.T) {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, l := range []struct {
				suffix string
				fn     func(*bytes.Buffer, *File, string) error
			}{
				{".list-elf.txt", func(b *bytes.Buffer, f *File, s string) error { return ListELF(b, f, s) }},
				{".list-ptx.txt", func(b *bytes.Buffer, f *File, s string) error { return ListPTX(b, f, s) }},
			} {
				want, err := os.ReadFile(path + l.suffix)
				if os.IsNotExist(err) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := l.fn(&got, f, ListBase(name)); err != nil {
					t.Fatal(err)
				}
				if got.String() != string(want) {
					t.Errorf("%s differs from cuobjdump's:\n got: %.2000s\nwant: %.2000s", l.suffix, got.String(), want)
				}
			}
		})
	}
}
