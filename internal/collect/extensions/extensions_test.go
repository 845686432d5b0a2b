package extensions_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/collect/extensions"
	"github.com/fastpath-dev/fastpath/internal/collect/pyenv"
	"github.com/fastpath-dev/fastpath/internal/collect/torch"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
)

const (
	venvPrefix = "/root/venv"
	site       = "/root/venv/lib/python3.12/site-packages"
	torchLib   = site + "/torch/lib"
)

// machine writes a container like the seed's: Python 3.12 venv, torch
// 2.11.0+cu128 with nvidia-cuda-runtime-cu12 (libcudart.so.12), and what
// build adds.
func machine(t *testing.T, build func(tr *fixture.Tree)) (*fixture.Tree, string) {
	t.Helper()
	root := t.TempDir()
	tr := fixture.New(root)
	tr.OSRelease("ubuntu", "24.04", "Ubuntu 24.04.3 LTS")
	tr.PythonInstall("/usr", "3.12.3", true)
	tr.Venv(venvPrefix, "/usr", "3.12.3", fixture.VenvOptions{Pip: true})
	tr.Torch(site, "2.11.0+cu128", "12.8", "cp312")
	tr.PipCUDARuntimeCu12(site, "12.8.90")
	build(tr)
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	return tr, root
}

// countingSource records every path opened.
type countingSource struct {
	source.Source
	mu     sync.Mutex
	opened []string
}

func (s *countingSource) Open(name string) (source.File, error) {
	s.mu.Lock()
	s.opened = append(s.opened, name)
	s.mu.Unlock()
	return s.Source.Open(name)
}

func (s *countingSource) openedUnder(dir string) []string {
	var out []string
	for _, p := range s.opened {
		if strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// collectExtensions runs the Python and torch collectors and then this one,
// as collect.Collect does.
func collectExtensions(t testing.TB, root string, env source.Env) ([]facts.Extension, []string, *countingSource) {
	t.Helper()
	base, err := source.Root(root, env)
	if err != nil {
		t.Fatal(err)
	}
	src := &countingSource{Source: base}
	ctx := context.Background()
	py, _ := pyenv.Collect(ctx, src, venvPrefix+"/bin/python3")
	if py.Selected == nil {
		t.Fatal("no environment selected")
	}
	tf, _ := torch.Collect(src, py.Selected)
	// Count only this collector's reads: the torch collector reads torch/lib
	// (its targets and ABI) on every run, by design.
	src.mu.Lock()
	src.opened = nil
	src.mu.Unlock()
	exts, warns := extensions.Collect(ctx, src, py.Selected, tf)
	return exts, warns, src
}

func byDist(exts []facts.Extension, dist string) []facts.Extension {
	var out []facts.Extension
	for _, e := range exts {
		if e.Dist == dist {
			out = append(out, e)
		}
	}
	return out
}

// Synthetic torch libraries: libtorch_cpu.so needs libc10.so; what each
// defines decides what resolves.
func fakeTorch(tr *fixture.Tree, cpu, c10 []string) { fakeTorchLibs(tr, cpu, c10, false) }

// fakeTorchLibs: with hashed, libc10.so and libtorch_cpu.so carry a
// .gnu.hash as real ones do, and lookups go through it.
func fakeTorchLibs(tr *fixture.Tree, cpu, c10 []string, hashed bool) {
	lay := func(so fixture.SharedObject) string {
		if hashed {
			so.Defined = slices.Clone(so.Defined)
			return string(fixture.GNUHashed(so, uint32(len(so.Defined)/4+1)))
		}
		return string(so.Bytes())
	}
	tr.File(torchLib+"/libc10.so", lay(fixture.SharedObject{SOName: "libc10.so", Needed: []string{"libc.so.6"}, Defined: c10}))
	tr.File(torchLib+"/libtorch_cpu.so", lay(fixture.SharedObject{SOName: "libtorch_cpu.so", Needed: []string{"libc10.so", "libgomp.so.1"}, Defined: cpu}))
	tr.File(torchLib+"/libtorch.so", string(fixture.SharedObject{SOName: "libtorch.so", Needed: []string{"libtorch_cpu.so", "libtorch_cuda.so"}}.Bytes()))
	// A CPU torch: libtorch.so's libtorch_cuda.so is absent.
	tr.Remove(torchLib + "/libtorch_cuda.so")
}

const (
	symTensorPrint = "_ZNK2at6Tensor5printEv"                                                                   // at::Tensor::print() const
	symErrorCtor   = "_ZN3c105ErrorC1ENS_14SourceLocationENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE" // c10::Error::Error(...)
	symTypeMeta    = "_ZN6caffe28TypeMeta21_typeMetaDataInstanceIfEEN6caffe26detail12TypeMetaDataEv"            // caffe2 type meta
	symEmpty       = "_ZN2at4_ops5empty4callEN3c108ArrayRefINS2_6SymIntEEESt8optionalINS2_10ScalarTypeEES6_INS2_6LayoutEES6_INS2_6DeviceEES6_IbES6_INS2_12MemoryFormatEE"
	symVtable      = "_ZTVN3c1011VariableVersion14VersionCounterE"
)

func TestTorchSymbol(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{symTensorPrint, true}, {symErrorCtor, true}, {symTypeMeta, true}, {symEmpty, true}, {symVtable, true},
		{"_ZN5torch3jit6tracer9getTracerEv", true},
		{"_ZNKSt6vectorIiSaIiEE2atEm", false},                                          // std::vector<int>::at: not torch's
		{"_ZN7my_ext7forwardERKN2at6TensorE", false},                                   // the module's own function taking at::Tensor
		{"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm", false}, // libstdc++
		{"cudaLaunchKernel", false},
		{"PyInit__C", false},
		{"_Z", false},
	} {
		if got := extensions.TorchSymbol(tc.name); got != tc.want {
			t.Errorf("TorchSymbol(%s) = %t, want %t", tc.name, got, tc.want)
		}
	}
	if got := extensions.Demangle(symTensorPrint); got != "at::Tensor::print() const" {
		t.Errorf("demangled %q", got)
	}
}

func TestABICheck(t *testing.T) {
	for _, hashed := range []bool{false, true} {
		t.Run(fmt.Sprintf("hashed=%t", hashed), func(t *testing.T) { testABICheck(t, hashed) })
	}
}

func testABICheck(t *testing.T, hashed bool) {
	_, root := machine(t, func(tr *fixture.Tree) {
		fakeTorchLibs(tr, []string{symEmpty, symTypeMeta}, []string{symErrorCtor, symVtable}, hashed)
		tr.ExtensionDist(site, fixture.Dist{Name: "fake-kernels", Version: "0.3.0+cu12torch2.6cxx11abiTRUE", Tag: "cp312-cp312-linux_x86_64"},
			map[string][]byte{
				// Needs print(), which this torch lacks; libc10 comes through libtorch_cpu's own DT_NEEDED.
				"fake_kernels/_C.cpython-312-x86_64-linux-gnu.so": fixture.SharedObject{
					Needed:    []string{"libtorch_cpu.so", "libstdc++.so.6", "libc.so.6"},
					Undefined: []string{symEmpty, symErrorCtor, symTensorPrint, symVtable, "_ZNKSt6vectorIiSaIiEE2atEm", "PyFloat_FromDouble"},
					Defined:   []string{"PyInit__C"},
				}.Bytes(),
				// Everything resolves.
				"fake_kernels/_ok.cpython-312-x86_64-linux-gnu.so": fixture.SharedObject{
					Needed:    []string{"libc10.so", "libtorch_cpu.so"},
					Undefined: []string{symEmpty, symTypeMeta, symErrorCtor},
				}.Bytes(),
				// Needs c10's symbol but only links libtorch.so whose libtorch_cuda.so
				// is absent (a CPU torch): still resolves through libtorch_cpu -> libc10.
				"fake_kernels/_thin.cpython-312-x86_64-linux-gnu.so": fixture.SharedObject{
					Needed:    []string{"libtorch.so"},
					Undefined: []string{symErrorCtor, symTensorPrint},
				}.Bytes(),
			})
	})
	exts, warns, _ := collectExtensions(t, root, nil)
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	got := map[string]facts.Extension{}
	for _, e := range byDist(exts, "fake-kernels") {
		got[path.Base(e.Path)] = e
	}
	if len(got) != 3 {
		t.Fatalf("extensions: %+v", exts)
	}
	c := got["_C.cpython-312-x86_64-linux-gnu.so"]
	if !c.LinksTorch || c.MissingCount != 1 || !slices.Equal(c.MissingSymbols, []string{"at::Tensor::print() const"}) {
		t.Errorf("_C: links %t missing %d %q", c.LinksTorch, c.MissingCount, c.MissingSymbols)
	}
	if ok := got["_ok.cpython-312-x86_64-linux-gnu.so"]; !ok.LinksTorch || ok.MissingCount != 0 {
		t.Errorf("_ok: %+v", ok)
	}
	if thin := got["_thin.cpython-312-x86_64-linux-gnu.so"]; thin.MissingCount != 1 || thin.MissingSymbols[0] != "at::Tensor::print() const" {
		t.Errorf("_thin: %+v", thin)
	}
}

// Torch's libraries are read only when some extension links torch, and
// never torch's or NVIDIA's own distributions.
func TestNoTorchReadsWithoutTorchExtensions(t *testing.T) {
	_, root := machine(t, func(tr *fixture.Tree) {
		fakeTorch(tr, []string{symEmpty}, []string{symErrorCtor})
		tr.Dist(site, fixture.Dist{Name: "MarkupSafe", Version: "3.0.3", Files: []string{"markupsafe/_speedups.cpython-312-x86_64-linux-gnu.so"}})
		tr.Dist(site, fixture.Dist{Name: "nvidia-cublas-cu12", Version: "12.8.4.1", Files: []string{"nvidia/cublas/lib/libcublas.so.12"}})
	})
	exts, warns, src := collectExtensions(t, root, nil)
	if len(exts) != 0 || len(warns) != 0 {
		t.Errorf("extensions %+v warnings %q", exts, warns)
	}
	if o := src.openedUnder(torchLib); len(o) != 0 {
		t.Errorf("torch libraries opened: %q", o)
	}
	if o := src.openedUnder(site + "/nvidia"); len(o) != 0 {
		t.Errorf("nvidia wheels opened: %q", o)
	}
	if o := src.openedUnder(site + "/markupsafe"); len(o) != 1 {
		t.Errorf("markupsafe's module opened %d times", len(o))
	}
}

func TestCUDARuntimeSearch(t *testing.T) {
	need := func(soname string) []byte {
		return fixture.SharedObject{Needed: []string{soname, "libc.so.6"}}.Bytes()
	}
	tests := []struct {
		name  string
		build func(tr *fixture.Tree)
		env   source.Env
		want  string // where libcudart.so.N is found, "" nowhere
	}{
		{"cu12 from torch's nvidia wheel", func(tr *fixture.Tree) {}, nil, site + "/nvidia/cuda_runtime/lib/libcudart.so.12"},
		{"cu11 nowhere", func(tr *fixture.Tree) {}, nil, ""},
		{"cu11 through ld.so.conf.d", func(tr *fixture.Tree) {
			tr.File("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")
			tr.File("/etc/ld.so.conf.d/cuda-11.conf", "# CUDA 11\n/opt/cuda-11.8/lib64\n")
			tr.File("/opt/cuda-11.8/lib64/libcudart.so.11.8.89", "\x7fELF")
			tr.Symlink("/opt/cuda-11.8/lib64/libcudart.so.11", "libcudart.so.11.8.89")
		}, nil, "/opt/cuda-11.8/lib64/libcudart.so.11"},
		{"cu11 through LD_LIBRARY_PATH", func(tr *fixture.Tree) {
			tr.File("/opt/rt/libcudart.so.11", "\x7fELF")
		}, source.Env{"LD_LIBRARY_PATH": "relative/ignored:/opt/rt"}, "/opt/rt/libcudart.so.11"},
		{"cu11 in a toolkit's lib64", func(tr *fixture.Tree) {
			tr.File("/usr/local/cuda-11.8/targets/x86_64-linux/lib/libcudart.so.11", "\x7fELF")
			tr.Symlink("/usr/local/cuda-11.8/lib64", "targets/x86_64-linux/lib")
		}, nil, "/usr/local/cuda-11.8/lib64/libcudart.so.11"},
		{"cu13 from the cu13 wheels", func(tr *fixture.Tree) {
			tr.File(site+"/nvidia/cu13/lib/libcudart.so.13", "\x7fELF")
		}, nil, site + "/nvidia/cu13/lib/libcudart.so.13"},
		{"cu11 through the module's RUNPATH", func(tr *fixture.Tree) {
			tr.File(site+"/rtmod.libs/libcudart.so.11", "\x7fELF")
		}, nil, site + "/rtmod.libs/libcudart.so.11"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			soname := "libcudart.so.11"
			if strings.HasPrefix(tc.name, "cu12") {
				soname = "libcudart.so.12"
			} else if strings.HasPrefix(tc.name, "cu13") {
				soname = "libcudart.so.13"
			}
			_, root := machine(t, func(tr *fixture.Tree) {
				tc.build(tr)
				so := need(soname)
				if strings.Contains(tc.name, "RUNPATH") {
					so = fixture.SharedObject{Needed: []string{soname}, RunPath: "$ORIGIN/../rtmod.libs"}.Bytes()
				}
				tr.ExtensionDist(site, fixture.Dist{Name: "rtmod", Version: "1.0"}, map[string][]byte{"rtmod/_rt.so": so})
			})
			exts, warns, _ := collectExtensions(t, root, tc.env)
			if len(exts) != 1 || len(warns) != 0 {
				t.Fatalf("extensions %+v warnings %q", exts, warns)
			}
			if e := exts[0]; e.CUDARuntime != soname || e.CUDARuntimeFound != tc.want {
				t.Errorf("runtime %q found %q, want %q", e.CUDARuntime, e.CUDARuntimeFound, tc.want)
			}
		})
	}
}

func TestFatbinTargets(t *testing.T) {
	_, root := machine(t, func(tr *fixture.Tree) {
		tr.ExtensionDist(site, fixture.Dist{Name: "kern", Version: "1.0"}, map[string][]byte{
			"kern/_k.so": fixture.SharedObject{Needed: []string{"libcudart.so.12"}, Sections: []fixture.NamedSection{
				{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_80", "sm_90"}, []string{"sm_80", "compute_75"})}}}.Bytes(),
		})
	})
	exts, warns, _ := collectExtensions(t, root, nil)
	if len(exts) != 1 || len(warns) != 0 {
		t.Fatalf("extensions %+v warnings %q", exts, warns)
	}
	e := exts[0]
	if !slices.Equal(e.SASS, []string{"sm_80", "sm_90"}) || !slices.Equal(e.PTX, []string{"compute_75"}) || e.Containers != 2 ||
		!slices.Equal(e.CommonSASS, []string{"sm_80"}) || len(e.TargetSets) != 2 || e.Error != "" {
		t.Errorf("%+v", e)
	}
}

// Bad files: a non-ELF .so, a truncated one, a dangling link: warnings,
// never a crash, and the rest is still read.
func TestBadFiles(t *testing.T) {
	good := fixture.SharedObject{Needed: []string{"libcudart.so.12"}}.Bytes()
	_, root := machine(t, func(tr *fixture.Tree) {
		tr.ExtensionDist(site, fixture.Dist{Name: "junk", Version: "1.0"}, map[string][]byte{
			"junk/a.so": []byte("#!/bin/sh\necho not ELF\n"),
			"junk/b.so": good[:len(good)-40],
			"junk/c.so": good,
		})
		tr.Dist(site, fixture.Dist{Name: "linked", Version: "1.0", Files: []string{"linked/x.so"}})
		tr.Symlink(site+"/linked/x.so", "/nowhere/x.so")
	})
	exts, warns, _ := collectExtensions(t, root, nil)
	if len(exts) != 1 || path.Base(exts[0].Path) != "c.so" {
		t.Errorf("extensions: %+v", exts)
	}
	if len(warns) != 3 {
		t.Errorf("want 3 warnings, got %q", warns)
	}
}

// The scan reads every native file of every distribution up to a cap for
// the whole environment, and says where it stopped.
func TestFilesCap(t *testing.T) {
	_, root := machine(t, func(tr *fixture.Tree) {
		var a, b []string
		for i := range extensions.MaxFiles - 10 {
			a = append(a, fmt.Sprintf("aaa/m%04d.so", i))
		}
		for i := range 16 {
			b = append(b, fmt.Sprintf("zzz/m%02d.so", i))
		}
		tr.Dist(site, fixture.Dist{Name: "aaa", Version: "1.0", Files: a})
		tr.Dist(site, fixture.Dist{Name: "zzz", Version: "1.0", Files: b})
	})
	_, warns, src := collectExtensions(t, root, nil)
	if n := len(src.openedUnder(site + "/aaa")); n != extensions.MaxFiles-10 {
		t.Errorf("%d files of aaa opened, want all %d", n, extensions.MaxFiles-10)
	}
	if n := len(src.openedUnder(site + "/zzz")); n != 10 {
		t.Errorf("%d files of zzz opened, want the 10 left under the cap", n)
	}
	want := fmt.Sprintf("lists %d native files; only the first %d were read (zzz and after were not)", extensions.MaxFiles+6, extensions.MaxFiles)
	if len(warns) != 1 || !strings.Contains(warns[0], want) {
		t.Errorf("warnings %q, want %q", warns, want)
	}
}

// The fixture pairs through the whole pipeline: collect, then diagnose.
func TestFiresThroughThePipeline(t *testing.T) {
	arch := func(sets ...[]string) []byte {
		return fixture.SharedObject{Needed: []string{"libcudart.so.12"},
			Sections: []fixture.NamedSection{{Name: ".nv_fatbin", Data: fixture.FatbinSection(sets...)}}}.Bytes()
	}
	tests := []struct {
		name string
		so   []byte
		gpu  string
		id   finding.ID
		fire bool
	}{
		{"sm_80 only on a 9.0 GPU", arch([]string{"sm_80"}), "9.0", finding.ExtensionArchUnsupported, true},
		{"sm_80 + compute_75 PTX on a 9.0 GPU", arch([]string{"sm_80", "compute_75"}), "9.0", finding.ExtensionArchUnsupported, false},
		{"sm_80 on an 8.6 GPU", arch([]string{"sm_80"}), "8.6", finding.ExtensionArchUnsupported, false},
		{"one container of two lacks 9.0", arch([]string{"sm_90"}, []string{"sm_80"}), "9.0", finding.ExtensionArchUnsupported, true},
		{"libcudart.so.11 with torch cu128", fixture.SharedObject{Needed: []string{"libcudart.so.11"}}.Bytes(), "9.0", finding.ExtensionCUDAMismatch, true},
		{"libcudart.so.12 with torch cu128", fixture.SharedObject{Needed: []string{"libcudart.so.12"}}.Bytes(), "9.0", finding.ExtensionCUDAMismatch, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, root := machine(t, func(tr *fixture.Tree) {
				tr.ExtensionDist(site, fixture.Dist{Name: "kern", Version: "2.0.1"}, map[string][]byte{"kern/_C.cpython-312-x86_64-linux-gnu.so": tc.so})
			})
			src, err := source.Root(root, nil)
			if err != nil {
				t.Fatal(err)
			}
			f := collect.Collect(context.Background(), src, collect.Options{Python: venvPrefix + "/bin/python3", GPUs: []string{tc.gpu}})
			var got *finding.Finding
			for _, fd := range diagnose.Run(f) {
				if fd.ID == tc.id {
					got = &fd
				}
			}
			if tc.fire != (got != nil) {
				t.Fatalf("%s fired: %v (extensions %+v)", tc.id, got != nil, f.Extensions)
			}
			if got != nil && !strings.Contains(strings.Join(got.Evidence, "\n"), site+"/kern/_C.cpython-312-x86_64-linux-gnu.so") {
				t.Errorf("evidence does not name the file: %q", got.Evidence)
			}
		})
	}
}

// TestKernelLessContainersFailNothing: nvcc's default build links a container with
// no kernel beside the kernels' own. Real binaries of internal/fatbin/testdata/real
// (nvcc 13.0.88, src/build.sh): plain.so holds {sm_75} without kernels and {sm_75,
// compute_75} with axpy and scale; on an 8.6 GPU the kernels run through PTX and
// nothing is launched from the other container (`fastpath inspect --gpu 8.6`:
// ptx-jit, kernel_less 1). doctor said "has no code" there. sm80_sm90_ptx90.so's
// kernels have no code for 7.5 (its kernel-less container neither): that stays an
// error, as does arch_specific.so's on 8.6.
func TestKernelLessContainersFailNothing(t *testing.T) {
	real := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "fatbin", "testdata", "real", "nvcc-13.0", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		so, gpu    string
		fire       bool
		kernelLess [][]string
	}{
		{"plain.so", "8.6", false, [][]string{{"sm_75"}}},
		{"plain.so", "12.0", false, [][]string{{"sm_75"}}},
		{"plain.so", "7.5", false, [][]string{{"sm_75"}}},
		{"uncompressed.so", "9.0", false, [][]string{{"sm_75"}}},
		{"sm80_sm90_ptx90.so", "7.5", true, [][]string{{"sm_80", "sm_90"}}},
		{"sm80_sm90_ptx90.so", "12.0", false, [][]string{{"sm_80", "sm_90"}}},
		{"arch_specific.so", "8.6", true, nil},
		// Compressed cubins are decompressed for the scan. compressed.so
		// (-Xfatbin=-compress-all): its kernel-less container holds the kernels'
		// own set, {sm_80, sm_90}, so the set holds kernels; none for 12.0.
		{"compressed.so", "12.0", true, nil},
		// cmode_size.so (--compress-mode=size, zstd): {sm_80} without kernels beside
		// {sm_80, compute_90}; on 9.0 the kernels JIT from compute_90. doctor said
		// "has no code" there while the cubins were not opened.
		{"cmode_size.so", "9.0", false, [][]string{{"sm_80"}}},
		{"cmode_size.so", "7.5", true, [][]string{{"sm_80"}}},
	}
	for _, tc := range tests {
		t.Run(tc.so+"@"+tc.gpu, func(t *testing.T) {
			_, root := machine(t, func(tr *fixture.Tree) {
				tr.ExtensionDist(site, fixture.Dist{Name: "kern", Version: "2.0.1"}, map[string][]byte{"kern/_C.cpython-312-x86_64-linux-gnu.so": real(tc.so)})
			})
			src, err := source.Root(root, nil)
			if err != nil {
				t.Fatal(err)
			}
			f := collect.Collect(context.Background(), src, collect.Options{Python: venvPrefix + "/bin/python3", GPUs: []string{tc.gpu}})
			if len(f.Extensions) != 1 {
				t.Fatalf("extensions %+v", f.Extensions)
			}
			// The PTX ISA of the entry headers: nvcc 13.0 writes 9.0 (cuobjdump -ptx: ".version 9.0").
			wantISA := "9.0"
			if tc.so == "arch_specific.so" || tc.so == "compressed.so" {
				wantISA = "" // no PTX
			}
			if got := f.Extensions[0].PTXISA; got != wantISA {
				t.Errorf("ptx_isa %q, want %q", got, wantISA)
			}
			if got := f.Extensions[0].KernelLessSets; !slices.EqualFunc(got, tc.kernelLess, slices.Equal) {
				t.Errorf("kernel_less_sets %q, want %q (target sets %q)", got, tc.kernelLess, f.Extensions[0].TargetSets)
			}
			fired := false
			for _, fd := range diagnose.Run(f) {
				if fd.ID == finding.ExtensionArchUnsupported && fd.Severity == finding.Error {
					fired = true
					// The evidence tells the layouts without kernels apart.
					ev := strings.Join(fd.Evidence, "\n")
					if len(tc.kernelLess) > 0 && (!strings.Contains(ev, "1 distinct container layout defines no kernel") ||
						!strings.Contains(ev, "a container holds: "+strings.Join(tc.kernelLess[0], " ")+" (no kernels: nothing launched from it)")) {
						t.Errorf("evidence does not set the kernel-less layout apart:\n%s", ev)
					}
				}
			}
			if fired != tc.fire {
				t.Errorf("extension-arch-unsupported error: %v, want %v (target sets %q)", fired, tc.fire, f.Extensions[0].TargetSets)
			}
		})
	}
}

// BenchmarkABICheck150k: one extension with 300 torch references against a
// synthetic libtorch_cpu.so of 150,000 defined symbols (libtorch_cpu.so of
// torch 2.11 has that order), through Collect on a fixture tree.
func BenchmarkABICheck150k(b *testing.B) { benchABICheck(b, false) }

// BenchmarkABICheck150kHashed: the same through .gnu.hash lookups, as real
// torch libraries have them.
func BenchmarkABICheck150kHashed(b *testing.B) { benchABICheck(b, true) }

func benchABICheck(b *testing.B, hashed bool) {
	root := b.TempDir()
	tr := fixture.New(root)
	tr.PythonInstall("/usr", "3.12.3", true)
	tr.Venv(venvPrefix, "/usr", "3.12.3", fixture.VenvOptions{})
	tr.Torch(site, "2.11.0+cu128", "12.8", "cp312")
	defined := make([]string, 150_000)
	for i := range defined {
		defined[i] = fmt.Sprintf("_ZN2at6native%dop_kernel_implERKNS_6TensorES3_N3c108ArrayRefIlEE", i)
	}
	var undefined []string
	for i := 0; i < 300; i++ {
		undefined = append(undefined, defined[i*499])
	}
	undefined = append(undefined, symTensorPrint)
	fakeTorchLibs(tr, defined, []string{symErrorCtor}, hashed)
	tr.ExtensionDist(site, fixture.Dist{Name: "bench-kernels", Version: "1.0"}, map[string][]byte{
		"bench_kernels/_C.so": fixture.SharedObject{Needed: []string{"libc10.so", "libtorch_cpu.so"}, Undefined: undefined}.Bytes(),
	})
	if err := tr.Err(); err != nil {
		b.Fatal(err)
	}
	src, err := source.Root(root, nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	py, _ := pyenv.Collect(ctx, src, venvPrefix+"/bin/python3")
	tf, _ := torch.Collect(src, py.Selected)
	b.ReportAllocs()
	for b.Loop() {
		exts, _ := extensions.Collect(ctx, src, py.Selected, tf)
		if len(exts) != 1 || exts[0].MissingCount != 1 {
			b.Fatalf("%+v", exts)
		}
	}
}

// Reading a small library whole in one call is a fast path: the facts and
// warnings must be those of reading it a header at a time. Libraries of every
// kind (torch-linking with a missing symbol, fatbin, CUDA runtime only,
// truncated, not ELF) on both sides of the size limit.
func TestWholeFileReadsKeepFacts(t *testing.T) {
	good := fixture.SharedObject{Needed: []string{"libcudart.so.12"}}.Bytes()
	_, root := machine(t, func(tr *fixture.Tree) {
		fakeTorchLibs(tr, []string{"_ZN2at6native3addEv"}, []string{"_ZN3c1019UndefinedTensorImpl10_singletonE"}, true)
		sos := map[string][]byte{
			"mix/torchy.so": fixture.SharedObject{Needed: []string{"libc10.so", "libtorch_cpu.so"},
				Undefined: []string{"_ZN2at6native3addEv", "_ZNK2at6Tensor5printEv"}}.Bytes(),
			"mix/fat.so": fixture.SharedObject{Needed: []string{"libcudart.so.12"}, Sections: []fixture.NamedSection{
				{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_80", "sm_90"}, []string{"compute_90"})}}}.Bytes(),
			"mix/rt.so":    good,
			"mix/short.so": good[:len(good)-40],
			"mix/text.so":  []byte("not ELF\n"),
			"mix/big.so": fixture.SharedObject{Needed: []string{"libcudart.so.12"}, Sections: []fixture.NamedSection{
				{Name: ".nv_fatbin", Data: fixture.FatbinSection([]string{"sm_90"})}, {Name: ".pad", Data: make([]byte, 80<<10)}}}.Bytes(),
		}
		tr.ExtensionDist(site, fixture.Dist{Name: "mix", Version: "1.0", Tag: "cp312-cp312-linux_x86_64"}, sos)
	})
	whole, wholeWarns, _ := collectExtensions(t, root, nil)
	restore := extensions.ReadWholeUpTo(0)
	defer restore()
	parts, partsWarns, _ := collectExtensions(t, root, nil)
	if len(whole) < 4 {
		t.Fatalf("only %d extensions kept: %+v", len(whole), whole)
	}
	if fmt.Sprintf("%+v\n%q", whole, wholeWarns) != fmt.Sprintf("%+v\n%q", parts, partsWarns) {
		t.Errorf("read whole:\n%+v\n%q\nread a header at a time:\n%+v\n%q", whole, wholeWarns, parts, partsWarns)
	}
}

// TestEarlyReadsKeepFacts: reading libraries early, while the Python
// collector is still reading metadata (collect.Collect does), gives the same
// facts and warnings as reading them all afterwards; no library is read
// twice; and a file read early that the scan does not keep (here one no
// RECORD lists) adds no warning.
func TestEarlyReadsKeepFacts(t *testing.T) {
	good := fixture.SharedObject{Needed: []string{"libcudart.so.12"}}.Bytes()
	_, root := machine(t, func(tr *fixture.Tree) {
		fakeTorchLibs(tr, []string{"_ZN2at6native3addEv"}, []string{"_ZN3c1019UndefinedTensorImpl10_singletonE"}, true)
		for i := range 40 {
			tr.ExtensionDist(site, fixture.Dist{Name: fmt.Sprintf("mix%02d", i), Version: "1.0", Tag: "cp312-cp312-linux_x86_64"}, map[string][]byte{
				fmt.Sprintf("mix%02d/torchy.so", i): fixture.SharedObject{Needed: []string{"libc10.so", "libtorch_cpu.so"},
					Undefined: []string{"_ZN2at6native3addEv", "_ZNK2at6Tensor5printEv"}}.Bytes(),
				fmt.Sprintf("mix%02d/rt.so", i):    good,
				fmt.Sprintf("mix%02d/short.so", i): good[:len(good)-40],
				fmt.Sprintf("mix%02d/text.so", i):  []byte("not ELF\n"),
			})
		}
	})
	want, wantWarns, _ := collectExtensions(t, root, nil)
	if len(want) < 80 || len(wantWarns) < 40 {
		t.Fatalf("only %d extensions and %d warnings: the fixture is wrong", len(want), len(wantWarns))
	}

	base, err := source.Root(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	earlySrc, lateSrc := &countingSource{Source: base}, &countingSource{Source: base}
	early := extensions.NewEarly(ctx, earlySrc)
	py, _ := pyenv.CollectWith(ctx, base, venvPrefix+"/bin/python3", pyenv.Options{Native: early.Add})
	early.Add("ghost", "1.0", site, []string{"ghost/missing.so"})
	tf, _ := torch.Collect(base, py.Selected)
	got, gotWarns := extensions.CollectWith(ctx, lateSrc, py.Selected, tf, early)
	// Warnings come in the order the workers meet them; collect sorts them.
	slices.Sort(wantWarns)
	slices.Sort(gotWarns)
	if fmt.Sprintf("%+v\n%q", got, gotWarns) != fmt.Sprintf("%+v\n%q", want, wantWarns) {
		t.Errorf("with early reads:\n%+v\n%q\nwithout:\n%+v\n%q", got, gotWarns, want, wantWarns)
	}
	earlyRead := map[string]bool{}
	for _, p := range earlySrc.openedUnder(site) {
		earlyRead[p] = true
	}
	libs := 0
	for _, p := range lateSrc.openedUnder(site) {
		if strings.HasSuffix(p, ".so") && strings.Contains(p, "/mix") {
			libs++
			if earlyRead[p] {
				t.Errorf("%s read early and again", p)
			}
		}
	}
	for p := range earlyRead {
		if strings.Contains(p, "/mix") {
			libs++
		}
	}
	if libs != 160 {
		t.Errorf("%d libraries read, want each of the 160 once", libs)
	}
	if !earlyRead[site+"/ghost/missing.so"] {
		t.Logf("the ghost file was not read early (the scan stopped first)")
	}
}

// A torch whose own libraries are gone (torch/version.py and its dist-info left,
// torch/lib empty) breaks every extension, but not by their ABI: a module that
// links libtorch_cpu.so is not counted as missing torch's symbols (doctor said
// "was built for another torch: at least 140 symbols missing" for
// fbgemm-gpu-genai 1.9.0 beside such a torch 2.14.0), and a warning names the
// library. A library only some torch builds have (libtorch_cuda.so) still counts.
func TestABICheckTorchLibrariesGone(t *testing.T) {
	_, root := machine(t, func(tr *fixture.Tree) {
		tr.ExtensionDist(site, fixture.Dist{Name: "fake-kernels", Version: "0.3.0", Tag: "cp312-cp312-linux_x86_64"},
			map[string][]byte{
				"fake_kernels/_C.cpython-312-x86_64-linux-gnu.so": fixture.SharedObject{
					Needed:    []string{"libc10.so", "libtorch_cpu.so"},
					Undefined: []string{symEmpty, symErrorCtor},
				}.Bytes(),
				"fake_kernels/_cuda.cpython-312-x86_64-linux-gnu.so": fixture.SharedObject{
					Needed:    []string{"libtorch_cuda.so"},
					Undefined: []string{symTensorPrint},
				}.Bytes(),
			})
		tr.Remove(torchLib + "/libc10.so")
		tr.Remove(torchLib + "/libtorch_cpu.so")
		tr.Remove(torchLib + "/libtorch_cuda.so")
	})
	exts, warns, _ := collectExtensions(t, root, nil)
	got := map[string]facts.Extension{}
	for _, e := range byDist(exts, "fake-kernels") {
		got[path.Base(e.Path)] = e
	}
	if c := got["_C.cpython-312-x86_64-linux-gnu.so"]; !c.LinksTorch || c.MissingCount != 0 {
		t.Errorf("_C: links %t, missing %d %q; want its symbols unknown", c.LinksTorch, c.MissingCount, c.MissingSymbols)
	}
	if c := got["_cuda.cpython-312-x86_64-linux-gnu.so"]; c.MissingCount != 1 {
		t.Errorf("_cuda: missing %d, want 1 (libtorch_cuda.so is not in every torch)", c.MissingCount)
	}
	if len(warns) != 2 || !strings.Contains(warns[0]+warns[1], "libtorch_cpu.so, one of torch's own libraries, is missing") {
		t.Errorf("warnings: %q", warns)
	}
}
