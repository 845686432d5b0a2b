package fatbin

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		if got := string(nameBase([]byte(in))); got != want {
			t.Errorf("nameBase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEntryNames: the names are read from the entry headers and kept as cuobjdump
// lists them.
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
		if e.Name != "axpy" {
			t.Errorf("entry %s: name %q, want axpy (from the path of axpy.cu)", e.Target(), e.Name)
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

// TestEntryNameHostile: a name is read only from inside its entry's header, and what
// is kept of it is capped (maxNameBase), so 2^18 entries with 4 KB names cannot hold
// a gigabyte; a name that points outside the header is no name.
func TestEntryNameHostile(t *testing.T) {
	entry := func(nameOff, nameLen uint32, name string) []byte {
		h := make([]byte, 64+len(name))
		binary.LittleEndian.PutUint16(h[0:], rawKindELF)
		binary.LittleEndian.PutUint32(h[4:], uint32(len(h)))
		binary.LittleEndian.PutUint32(h[28:], 90)
		binary.LittleEndian.PutUint32(h[32:], nameOff)
		binary.LittleEndian.PutUint32(h[36:], nameLen)
		copy(h[64:], name)
		return h
	}
	long := strings.Repeat("a", 3000) + ".cu"
	entries := [][]byte{
		entry(64, uint32(len(long)), long), // kept: capped
		entry(64, 5000, "b.cu"),            // runs past its header: no name
		entry(1<<31, 4, "c.cu"),            // starts past its header: no name
		entry(16, 4, "d.cu"),               // inside the fixed fields: no name
		entry(64, 4, "e.cu"),               // plain
		entry(64, 0, "f.cu"),               // no length: no name
	}
	var body []byte
	for _, e := range entries {
		body = append(body, e...)
	}
	c := make([]byte, 16)
	binary.LittleEndian.PutUint32(c[0:], Magic)
	binary.LittleEndian.PutUint16(c[4:], 1)
	binary.LittleEndian.PutUint16(c[6:], 16)
	binary.LittleEndian.PutUint64(c[8:], uint64(len(body)))
	data := append(c, body...)
	f, err := Walk(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range f.Entries {
		got = append(got, e.Name)
	}
	want := []string{strings.Repeat("a", maxNameBase), "", "", "", "e", ""}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}

// TestContainerKernels reads kernels from the symbol tables of nvcc 13.0's builds
// (cuobjdump -symbols agrees: the first container of a build linked by nvcc has no
// ENTRY symbol; the kernels' own holds axpy and scale).
func TestContainerKernels(t *testing.T) {
	for _, tc := range []struct {
		file       string
		container  int
		has, known bool
	}{
		{"plain.so", 0, false, true},
		{"plain.so", 1, true, true},
		{"sm80_sm90_ptx90.so", 0, false, true},
		{"sm80_sm90_ptx90.so", 1, true, true},
		{"lineinfo.so", 0, true, true},
		// Compressed cubins are decompressed: zstd (-Xfatbin=-compress-all and
		// --compress-mode=size); --compress-mode=speed leaves these small cubins plain.
		{"compressed.so", 0, false, true},
		{"compressed.so", 1, true, true},
		{"cmode_size.so", 0, false, true},
		{"cmode_size.so", 1, true, true},
		{"cmode_speed.so", 0, false, true},
		{"cmode_speed.so", 1, true, true},
		// cuDNN 9.28.0.42's kernel-less container: six LZ4-compressed cubins (CUDA 12.9).
		{"../cudnn-9.28.0.42/cnn-first.fatbin", 0, false, true},
		// cuBLASLt 12.9.3.13: LZ4 and zstd cubins in one container, no kernel.
		{"../cublas-12.9.3.13/lt-mixed-codecs.fatbin", 0, false, true},
		{"plain.so", 2, false, false}, // no such container
		{"axpy.sm_90.cubin", 0, false, false},
	} {
		path := filepath.Join("testdata", "real", "nvcc-13.0", tc.file)
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		r, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		has, known := f.ContainerKernels(r, tc.container, nil)
		r.Close()
		if has != tc.has || known != tc.known {
			t.Errorf("%s container %d: has %v known %v, want %v %v", tc.file, tc.container, has, known, tc.has, tc.known)
		}
	}
}
