package torch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// refHeaders is the reference reading of torch 2.11.0+cu130's libraries
// (every fatbin entry header; internal/fatbin/testdata/torch-2.11-cu130/READINGS.md).
const refHeaders = "../../fatbin/testdata/torch-2.11-cu130/fatbin-entry-headers.json.gz"

func refContainers(t testing.TB, lib string) []fixture.FatbinContainer {
	t.Helper()
	f, err := os.Open(refHeaders)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cs, err := fixture.ReadFatbinReference(f, lib)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// realTorch writes torch 2.11.0+cu130 whose libtorch_cuda.so and
// libtorch_cuda_linalg.so carry the whole real .nv_fatbin sections
// (444 and 99 containers; 297.8 MB sparse, payloads zero).
func realTorch(t testing.TB) (source.Source, *facts.PythonEnv) {
	t.Helper()
	tr := fixture.New(t.TempDir())
	tr.Torch(site, "2.11.0+cu130", "13.0", "cp312")
	lib := site + "/torch/lib/"
	tr.CUDALib(lib+"libtorch_cuda.so", refContainers(t, "libtorch_cuda.so"))
	tr.CUDALib(lib+"libtorch_cuda_linalg.so", refContainers(t, "libtorch_cuda_linalg.so"))
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(tr.Root, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src, venvEnv(site)
}

// TestArchsFromReferenceHeaders: the targets read from the real headers of
// libtorch_cuda.so are what torch.cuda.get_arch_list() printed on that
// machine; linalg (which lacks sm_75) is read and listed without changing them.
func TestArchsFromReferenceHeaders(t *testing.T) {
	src, env := realTorch(t)
	got, warns := Collect(src, env)
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	if got == nil {
		t.Fatal("no torch")
	}
	if want := []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"}; !slices.Equal(got.Archs, want) {
		t.Errorf("Archs = %v, want %v", got.Archs, want)
	}
	if got.PTX != nil {
		t.Errorf("PTX = %v; the library has none", got.PTX)
	}
	lib := site + "/torch/lib/"
	if want := []string{lib + "libtorch_cuda.so", lib + "libtorch_cuda_linalg.so"}; !slices.Equal(got.ArchLibs, want) {
		t.Errorf("ArchLibs = %v, want %v", got.ArchLibs, want)
	}
	if st, err := os.Stat(filepath.Join(strings.TrimSuffix(src.Info().Root, "/"), lib, "libtorch_cuda.so")); err != nil || st.Size() < 297_000_000 {
		t.Errorf("libtorch_cuda.so is not the real-sized image: %v %v", st, err)
	}
}

// BenchmarkCollectReferenceTorch walks the real 297.8 MB section of
// libtorch_cuda.so and linalg's through the collector (doctor's budget for
// everything is 100 ms).
func BenchmarkCollectReferenceTorch(b *testing.B) {
	src, env := realTorch(b)
	for b.Loop() {
		if got, _ := Collect(src, env); len(got.Archs) != 6 {
			b.Fatal(got.Archs)
		}
	}
}

func TestArchsAndABI(t *testing.T) {
	lib := site + "/torch/lib/"
	tests := []struct {
		name      string
		build     func(tr *fixture.Tree)
		archs     []string
		ptx       []string
		archLibs  []string
		abi       *bool
		abiFrom   string
		wantWarns []string
	}{
		{
			name:     "torch 2.11.0+cu126: Maxwell to Hopper, C++11 ABI from libc10.so",
			build:    func(tr *fixture.Tree) { tr.Torch(site, "2.11.0+cu126", "12.6", "cp312") },
			archs:    []string{"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"},
			archLibs: []string{lib + "libtorch_cuda.so"},
			abi:      ptr(true), abiFrom: lib + "libc10.so: std::__cxx11 in its dynamic symbol names",
		},
		{
			name:  "torch 2.5.1+cu124: TorchConfig.cmake states the old ABI; targets unknown",
			build: func(tr *fixture.Tree) { tr.Torch(site, "2.5.1+cu124", "12.4", "cp312") },
			abi:   ptr(false), abiFrom: site + "/torch/share/cmake/Torch/TorchConfig.cmake: -D_GLIBCXX_USE_CXX11_ABI=0",
		},
		{
			name: "no TorchConfig.cmake line, old-ABI names in libc10.so",
			build: func(tr *fixture.Tree) {
				tr.Torch(site, "2.11.0+cpu", "", "cp312")
				tr.DynSymLib(lib+"libc10.so", "_ZN3c1019UndefinedTensorImpl10_singletonE", fixture.C10SymbolPreCXX11ABI)
			},
			abi: ptr(false), abiFrom: lib + "libc10.so: old-ABI std::string (Ss) in its dynamic symbol names, no std::__cxx11",
		},
		{
			name: "libc10.so without string symbols: ABI unknown",
			build: func(tr *fixture.Tree) {
				tr.Torch(site, "2.11.0+cpu", "", "cp312")
				tr.DynSymLib(lib+"libc10.so", "_ZN3c1019UndefinedTensorImpl10_singletonE", "RKSs_not_mangled")
			},
		},
		{
			name: "PTX in every container counts, PTX in some does not",
			build: func(tr *fixture.Tree) {
				tr.Torch(site, "2.9.0+cu129", "12.9", "cp312")
				cs, err := fixture.TorchFatbinContainers(4, "sm_90", "sm_100", "sm_120", "compute_120", "sm_90a")
				if err != nil {
					t.Fatal(err)
				}
				h, _ := fixture.FatbinEntryHeader("compute_90")
				cs[1].Entries = append(cs[1].Entries, h)
				tr.CUDALib(lib+"libtorch_cuda.so", cs)
			},
			archs: []string{"sm_90", "sm_90a", "sm_100", "sm_120"}, ptx: []string{"compute_120"},
			archLibs: []string{lib + "libtorch_cuda.so"}, abi: ptr(true), abiFrom: lib + "libc10.so: std::__cxx11 in its dynamic symbol names",
		},
		{
			name: "broken libtorch_cuda.so and libc10.so warn; a non-ELF libc10_cuda.so does not",
			build: func(tr *fixture.Tree) {
				tr.Torch(site, "2.11.0+cu128", "12.8", "cp312")
				tr.File(lib+"libtorch_cuda.so", "\x7fELF truncated")
				tr.File(lib+"libc10.so", "\x7fELF\x02\x01\x01junk")
				tr.File(lib+"libc10_cuda.so", "not an ELF file at all")
			},
			wantWarns: []string{"libtorch_cuda.so: fatbin: bad ELF", "libc10.so: not a readable ELF file"},
		},
		{
			name: "a fatbin cut short: containers read before the error are not trusted",
			build: func(tr *fixture.Tree) {
				tr.Torch(site, "2.11.0+cu128", "12.8", "cp312")
				cs, _ := fixture.TorchFatbinContainers(2, "sm_80", "sm_90")
				sec, err := fixture.SparseFatbinSection(cs)
				if err != nil {
					t.Fatal(err)
				}
				sec.Size -= 70 // the last entry header runs past the section
				sec.Segs = sec.Segs[:len(sec.Segs)-1]
				sec.Segs = append(sec.Segs, fixture.ELFSeg{Off: sec.Size - 16, B: make([]byte, 16)})
				tr.SparseELF(lib+"libtorch_cuda_linalg.so", []fixture.ELFSection{sec})
			},
			archs:    []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"},
			archLibs: []string{lib + "libtorch_cuda.so"},
			abi:      ptr(true), abiFrom: lib + "libc10.so: std::__cxx11 in its dynamic symbol names",
			wantWarns: []string{"libtorch_cuda_linalg.so: fatbin:"},
		},
		{
			name: "torch/lib entries that are folders or dangling links",
			build: func(tr *fixture.Tree) {
				tr.Torch(site, "2.11.0+cu128", "12.8", "cp312")
				tr.Dir(lib + "libcuda_dir.so")
				tr.Symlink(lib+"libtorch_cuda_gone.so", "/nowhere/libtorch_cuda_gone.so")
			},
			archs:    []string{"sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"},
			archLibs: []string{lib + "libtorch_cuda.so"},
			abi:      ptr(true), abiFrom: lib + "libc10.so: std::__cxx11 in its dynamic symbol names",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := fixture.New(t.TempDir())
			tc.build(tr)
			if err := tr.Err(); err != nil {
				t.Fatal(err)
			}
			src, err := source.Root(tr.Root, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, warns := Collect(src, venvEnv(site))
			if got == nil {
				t.Fatal("no torch")
			}
			if !slices.Equal(got.Archs, tc.archs) || !slices.Equal(got.PTX, tc.ptx) || !slices.Equal(got.ArchLibs, tc.archLibs) {
				t.Errorf("Archs %v PTX %v ArchLibs %v; want %v %v %v", got.Archs, got.PTX, got.ArchLibs, tc.archs, tc.ptx, tc.archLibs)
			}
			if (got.CXX11ABI == nil) != (tc.abi == nil) || (got.CXX11ABI != nil && *got.CXX11ABI != *tc.abi) || got.CXX11ABIFrom != tc.abiFrom {
				t.Errorf("CXX11ABI %v from %q; want %v from %q", deref(got.CXX11ABI), got.CXX11ABIFrom, deref(tc.abi), tc.abiFrom)
			}
			if len(warns) != len(tc.wantWarns) {
				t.Fatalf("warnings %q, want %q", warns, tc.wantWarns)
			}
			for i, w := range tc.wantWarns {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %q lacks %q", warns[i], w)
				}
			}
		})
	}
}

func ptr(b bool) *bool { return &b }

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}
