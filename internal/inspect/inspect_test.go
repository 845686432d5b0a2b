package inspect

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// realBin is a binary built by nvcc 13.0 (internal/fatbin/testdata/real/README.md).
func realBin(name string) string {
	return filepath.Join("..", "fatbin", "testdata", "real", "nvcc-13.0", name)
}

// TestVerdicts judges real nvcc output for GPUs across the compatibility rules. The
// container layouts are cuobjdump's (the .list-*.txt beside each file):
//
//	arch_specific.so     {sm_90a sm_100a sm_120f} x2
//	sm80_sm90_ptx90.so   {sm_80 sm_90} {sm_80 sm_90 compute_90}
//	axpy.fatbin, rdc.o   {sm_80 compute_90}
//	axpy.sm_90.cubin     a bare sm_90 cubin
//	plain.so             {sm_75} {sm_75 compute_75}
//	cmode_size.so        {sm_80} {sm_80 compute_90}, zstd; cmode_speed.so the same, PTX LZ4
//	compressed.so        {sm_80 sm_90} x2, zstd
func TestVerdicts(t *testing.T) {
	tests := []struct {
		file, gpu string
		verdict   string
		targets   []string
		native    int
		family    int
		jit       int
		none      int
	}{
		// Native SASS in every container; the highest SM that runs is named.
		{"sm80_sm90_ptx90.so", "9.0", VerdictNative, []string{"sm_90"}, 2, 0, 0, 0},
		{"sm80_sm90_ptx90.so", "8.6", VerdictNative, []string{"sm_80"}, 2, 0, 0, 0},
		{"axpy.sm_90.cubin", "9.0", VerdictNative, []string{"sm_90"}, 1, 0, 0, 0},
		{"plain.so", "7.5", VerdictNative, []string{"sm_75"}, 2, 0, 0, 0},
		// `a` runs only on exactly its capability.
		{"arch_specific.so", "9.0", VerdictNative, []string{"sm_90a"}, 2, 0, 0, 0},
		{"arch_specific.so", "10.0", VerdictNative, []string{"sm_100a"}, 2, 0, 0, 0},
		{"arch_specific.so", "10.3", VerdictNoKernel, []string{}, 0, 0, 0, 1}, // and 1 kernel-less
		// `f` runs on later minors of its major: sm_120f on 12.1 is family, on 12.0 native.
		{"arch_specific.so", "12.1", VerdictFamily, []string{"sm_120f"}, 0, 2, 0, 0},
		{"arch_specific.so", "12.0", VerdictNative, []string{"sm_120f"}, 2, 0, 0, 0},
		// PTX JITs across majors; SASS does not.
		{"axpy.fatbin", "12.0", VerdictPTXJIT, []string{"compute_90"}, 0, 0, 1, 0},
		{"rdc.o", "10.0", VerdictPTXJIT, []string{"compute_90"}, 0, 0, 1, 0},
		{"axpy.fatbin", "8.0", VerdictNative, []string{"sm_80"}, 1, 0, 0, 0},
		// The first container of these nvcc builds defines no kernel (cuobjdump -symbols:
		// no ENTRY) and holds SASS only: with no code for the GPU it launches nothing,
		// so the kernels' PTX decides (it counts as kernel_less, not none).
		{"sm80_sm90_ptx90.so", "12.0", VerdictPTXJIT, []string{"compute_90"}, 0, 0, 1, 0},
		{"plain.so", "9.0", VerdictPTXJIT, []string{"compute_75"}, 0, 0, 1, 0},
		// The same with compressed cubins, which are decompressed for the scan:
		// cmode_size.so (--compress-mode=size: zstd) {sm_80} {sm_80 compute_90} said
		// no-kernel-image on 9.0 while its kernel-less sm_80 cubin was not opened.
		// compressed.so (-Xfatbin=-compress-all) {sm_80 sm_90} x2 has no code for
		// 12.0 in its kernels' container either.
		{"cmode_size.so", "9.0", VerdictPTXJIT, []string{"compute_90"}, 0, 0, 1, 0},
		{"cmode_size.so", "12.1", VerdictPTXJIT, []string{"compute_90"}, 0, 0, 1, 0},
		{"cmode_speed.so", "9.0", VerdictPTXJIT, []string{"compute_90"}, 0, 0, 1, 0},
		{"cmode_size.so", "7.5", VerdictNoKernel, []string{}, 0, 0, 0, 1},  // and 1 kernel-less
		{"compressed.so", "12.0", VerdictNoKernel, []string{}, 0, 0, 0, 1}, // and 1 kernel-less
		// Older than every target.
		{"axpy.fatbin", "7.5", VerdictNoKernel, []string{}, 0, 0, 0, 1},
		{"axpy.sm_90.cubin", "12.0", VerdictNoKernel, []string{}, 0, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.file+"@"+tc.gpu, func(t *testing.T) {
			r := Read(realBin(tc.file))
			if r.Error != "" {
				t.Fatal(r.Error)
			}
			cc, err := cudaarch.ParseCapability(tc.gpu)
			if err != nil {
				t.Fatal(err)
			}
			r.Judge([]cudaarch.Capability{cc})
			if len(r.Verdicts) != 1 {
				t.Fatalf("%d verdicts", len(r.Verdicts))
			}
			v := r.Verdicts[0]
			if v.GPU != tc.gpu || v.Verdict != tc.verdict || !slices.Equal(v.Targets, tc.targets) ||
				v.Native != tc.native || v.Family != tc.family || v.PTXJIT != tc.jit || v.None != tc.none ||
				v.Containers != tc.native+tc.family+tc.jit+tc.none+v.KernelLess {
				t.Errorf("verdict %+v\nwant %s %v native %d family %d jit %d none %d", v, tc.verdict, tc.targets, tc.native, tc.family, tc.jit, tc.none)
			}
			if r.NoKernelImage() != (tc.verdict == VerdictNoKernel) {
				t.Errorf("NoKernelImage() = %v", r.NoKernelImage())
			}
			if tc.verdict == VerdictNoKernel && !strings.Contains(v.Detail, NoKernelImage) {
				t.Errorf("detail %q does not quote the runtime's error", v.Detail)
			}
		})
	}
}

// TestOtherArchContainers: containers holding only arch-specific SASS for other GPUs,
// beside containers that run, are the library's kernels for those GPUs (it launches
// them only there) and make no no-kernel-image verdict. The input is real:
// onnxruntime-gpu 1.31.1's CUDA provider, one container of each of its four layouts
// (internal/fatbin/testdata/real/README.md), which `inspect --gpu 9.0` judged
// no-kernel-image for its {sm_120a} container: onnxruntime-gpu on an H100.
func TestOtherArchContainers(t *testing.T) {
	path := filepath.Join("..", "fatbin", "testdata", "real", "onnxruntime-gpu-1.31.1", "providers-cuda-layouts.fatbin")
	tests := []struct {
		gpu                             string
		verdict                         string
		native, none, kernelLess, other int
		otherTargets                    string
	}{
		{"9.0", VerdictNative, 3, 0, 0, 1, "(sm_120a)"},
		{"12.0", VerdictNative, 3, 0, 0, 1, "(sm_90a)"},
		// Nothing runs on 10.0: the arch-specific containers count as none (the two
		// others define no kernel). On 8.0 and 7.5 only those two run, so no kernel
		// runs there either (in the whole library, other {sm_75 ...} containers
		// hold kernels).
		{"10.0", VerdictNoKernel, 0, 2, 2, 0, ""},
		{"8.0", VerdictNoKernel, 2, 2, 0, 0, ""},
		{"7.5", VerdictNoKernel, 1, 2, 1, 0, ""},
	}
	for _, tc := range tests {
		v := judgeOne(t, path, tc.gpu)
		if v.Verdict != tc.verdict || v.Native != tc.native || v.None != tc.none || v.KernelLess != tc.kernelLess || v.OtherArch != tc.other ||
			v.Containers != 4 || !strings.Contains(v.Detail, tc.otherTargets) {
			t.Errorf("%s: %+v\nwant %s native %d none %d kernel_less %d other_arch %d", tc.gpu, v, tc.verdict, tc.native, tc.none, tc.kernelLess, tc.other)
		}
	}
}

// TestPerGPUPlainContainers: a container of plain SASS for one older GPU beside
// containers that run is a per-GPU kernel the library picks by capability, not a
// failure: three real containers of vllm 0.33.0's _C_stable_libtorch.abi3.so
// (internal/fatbin/testdata/real/README.md), where {sm_75} holds its Turing-only
// Marlin kernels. inspect said no-kernel-image for vllm on every GPU but 7.5.
func TestPerGPUPlainContainers(t *testing.T) {
	path := filepath.Join("..", "fatbin", "testdata", "real", "vllm-0.33.0", "c-stable-layouts.fatbin")
	tests := []struct {
		gpu                                  string
		verdict                              string
		native, jit, none, kernelLess, other int
	}{
		{"7.5", VerdictNative, 3, 0, 0, 0, 0},
		{"8.0", VerdictNative, 2, 0, 0, 0, 1},
		{"8.6", VerdictNative, 2, 0, 0, 0, 1},
		{"9.0", VerdictPTXJIT, 1, 1, 0, 0, 1},
		{"12.0", VerdictPTXJIT, 1, 1, 0, 0, 1},
		// Nothing runs on 7.0: its first container defines no kernel, the others fail.
		{"7.0", VerdictNoKernel, 0, 0, 2, 1, 0},
	}
	for _, tc := range tests {
		v := judgeOne(t, path, tc.gpu)
		if v.Verdict != tc.verdict || v.Native != tc.native || v.PTXJIT != tc.jit || v.None != tc.none || v.KernelLess != tc.kernelLess || v.OtherArch != tc.other {
			t.Errorf("%s: %+v\nwant %s native %d jit %d none %d kernel_less %d other_arch %d", tc.gpu, v, tc.verdict, tc.native, tc.jit, tc.none, tc.kernelLess, tc.other)
		}
		if tc.other > 0 && !strings.Contains(v.Detail, "code for other GPUs only (sm_75)") {
			t.Errorf("%s: detail %q does not name the other GPUs' targets", tc.gpu, v.Detail)
		}
	}
	// Judge alone (no kernel scan) counts the same container apart.
	r := Read(path)
	if v := Judge(r.Fat, cudaarch.Capability{Major: 9}); v.Verdict != VerdictPTXJIT || v.OtherArch != 1 {
		t.Errorf("Judge on 9.0: %+v", v)
	}
}

// TestJSONShape checks the DESIGN contract's keys and spellings on a real file.
func TestJSONShape(t *testing.T) {
	var files []*File
	Walk([]string{realBin("arch_specific.so"), realBin("sm80_sm90_ptx90.so")}, func(f *File) {
		f.Judge([]cudaarch.Capability{{Major: 12, Minor: 1}})
		files = append(files, f)
	})
	b, err := json.Marshal(Report{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"files": []any{
		map[string]any{
			"path": realBin("arch_specific.so"), "kind": "elf", "fatbins": 2.0, "entries": 6.0,
			"sass": []any{"sm_90a", "sm_100a", "sm_120f"}, "ptx": []any{}, "common_sass": []any{"sm_90a", "sm_100a", "sm_120f"},
			"verdicts": []any{map[string]any{"gpu": "12.1", "verdict": "family", "targets": []any{"sm_120f"},
				"containers": 2.0, "native": 0.0, "family": 2.0, "ptx_jit": 0.0, "none": 0.0, "kernel_less": 0.0, "other_arch": 0.0,
				"detail": "every fatbin has SASS for 12.1; 2 through a family target (sm_120f)"}},
		},
		map[string]any{
			"path": realBin("sm80_sm90_ptx90.so"), "kind": "elf", "fatbins": 2.0, "entries": 5.0,
			"sass": []any{"sm_80", "sm_90"}, "ptx": []any{"compute_90"}, "common_sass": []any{"sm_80", "sm_90"},
			"verdicts": []any{map[string]any{"gpu": "12.1", "verdict": "ptx-jit", "targets": []any{"compute_90"},
				"containers": 2.0, "native": 0.0, "family": 0.0, "ptx_jit": 1.0, "none": 0.0, "kernel_less": 1.0, "other_arch": 0.0,
				"detail": "1 of 2 fatbin(s) run only through PTX JIT (compute_90): the driver compiles them at first use, slowly, and needs to know their PTX ISA (9.0: a driver for CUDA 13.0 or newer); 1 more fatbin(s) without kernels have no code for 12.1 either, which launches nothing from them"}},
		},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("JSON (-want +got):\n%s\n%s", d, b)
	}
}

// judgeOne reads path and gives its verdict for the GPU gpu ("9.0").
func judgeOne(t *testing.T, path, gpu string) Verdict {
	t.Helper()
	r := Read(path)
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	cc, err := cudaarch.ParseCapability(gpu)
	if err != nil {
		t.Fatal(err)
	}
	r.Judge([]cudaarch.Capability{cc})
	return r.Verdicts[0]
}
