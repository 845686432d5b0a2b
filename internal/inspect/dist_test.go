package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// TestOtherGPUFiles: files of a package that picks its files by GPU (kb
// loading.json) with code for other GPUs only are other-gpu, not no-kernel-image,
// and only where the package is known (its dist-info RECORD lists the file). Before,
// `inspect site-packages/flashinfer_cubin --gpu 9.0` judged each of flashinfer-cubin
// 0.6.13's 15,970 per-GPU cubins no-kernel-image and exited 1. The cubin is real
// (testdata/real/flashinfer-cubin-0.6.13/README.md); the modules are built fatbins.
func TestOtherGPUFiles(t *testing.T) {
	cubin, err := os.ReadFile(filepath.Join("testdata", "real", "flashinfer-cubin-0.6.13", "gemm-sm100f.cubin"))
	if err != nil {
		t.Fatal(err)
	}
	layouts, err := os.ReadFile(filepath.Join("..", "fatbin", "testdata", "real", "onnxruntime-gpu-1.31.1", "providers-cuda-layouts.fatbin"))
	if err != nil {
		t.Fatal(err)
	}
	type want map[string]string // GPU -> verdict
	tests := []struct {
		name      string
		dist      string // "" : no dist-info
		rel       string // path in site-packages
		data      []byte
		verdicts  want
		otherArch int // on the first GPU of the case that is other-gpu
	}{
		{"flashinfer cubin", "flashinfer_cubin-0.6.13", "flashinfer_cubin/cubins/h/gemm/k_sm100f.cubin", cubin,
			want{"9.0": VerdictOtherGPU, "10.0": VerdictNative, "12.0": VerdictOtherGPU, "8.0": VerdictOtherGPU}, 1},
		// The same cubin where nothing says which package installed it: an error.
		{"cubin, no dist-info", "", "cubins/k_sm100f.cubin", cubin,
			want{"9.0": VerdictNoKernel, "10.0": VerdictNative}, 0},
		// A package that does not pick files by GPU: an error.
		{"cubin of another package", "somepkg-1.0", "somepkg/k.cubin", cubin,
			want{"9.0": VerdictNoKernel}, 0},
		// A module whose containers for this GPU are arch-specific SASS alone,
		// beside kernel-less ones (onnxruntime-gpu 1.31.1's real layouts, TestOtherArchContainers,
		// put in a package that picks its modules by GPU): on 10.0 nothing runs, both
		// {sm_90a} and {sm_120a} are other GPUs' code; on 7.5 plain containers lack code.
		{"arch-specific module", "vllm-0.33.0", "vllm/_flashmla_C.abi3.so", layouts,
			want{"10.0": VerdictOtherGPU, "9.0": VerdictNative, "7.5": VerdictNoKernel}, 2},
		// A module with plain targets for other GPUs only, loaded on every GPU
		// (sgl-kernel 0.3.21's sm100/common_ops lowest is sm_80): on 7.5 its
		// kernels fail, package or not.
		{"plain module", "sgl_kernel-0.3.21", "sgl_kernel/sm100/common_ops.abi3.so", fixture.FatbinSection([]string{"sm_80", "sm_90"}),
			want{"7.5": VerdictNoKernel, "9.0": VerdictNative}, 0},
		// A module the package uses only on other majors (sgl-kernel's
		// sm90/common_ops on 9.x alone; vllm's FA2 from 8.0 up).
		{"gated module", "sgl_kernel-0.3.21", "sgl_kernel/sm90/common_ops.abi3.so", fixture.FatbinSection([]string{"sm_90"}),
			want{"8.0": VerdictOtherGPU, "10.0": VerdictOtherGPU, "9.0": VerdictNative}, 1},
		{"vllm FA2 on Turing", "vllm-0.33.0", "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so", fixture.FatbinSection([]string{"sm_80", "compute_90"}),
			want{"7.5": VerdictOtherGPU, "8.0": VerdictNative}, 1},
		{"same module, no dist-info", "", "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so", fixture.FatbinSection([]string{"sm_80", "compute_90"}),
			want{"7.5": VerdictNoKernel}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			site := t.TempDir()
			p := filepath.Join(site, filepath.FromSlash(tc.rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			wantDist := ""
			if tc.dist != "" {
				di := filepath.Join(site, tc.dist+".dist-info")
				if err := os.MkdirAll(di, 0o755); err != nil {
					t.Fatal(err)
				}
				record := "other/file.py,sha256=x,1\n" + tc.rel + ",sha256=y,2\n" + tc.dist + ".dist-info/RECORD,,\n"
				if err := os.WriteFile(filepath.Join(di, "RECORD"), []byte(record), 0o644); err != nil {
					t.Fatal(err)
				}
				wantDist, _, _ = strings.Cut(tc.dist, "-")
			}
			var gpus []cudaarch.Capability
			for g := range tc.verdicts {
				cc, _ := cudaarch.ParseCapability(g)
				gpus = append(gpus, cc)
			}
			// Walked from the folder and named alone: the same dist and verdicts.
			for _, arg := range []string{site, p} {
				var files []*File
				Walk([]string{arg}, func(f *File) { files = append(files, f) })
				if len(files) != 1 {
					t.Fatalf("%s: %d files", arg, len(files))
				}
				f := files[0]
				if f.ResolveDist() != wantDist {
					t.Errorf("%s: dist %q, want %q", arg, f.Dist, wantDist)
				}
				f.Judge(gpus)
				for _, v := range f.Verdicts {
					if w := tc.verdicts[v.GPU]; v.Verdict != w {
						t.Errorf("%s on %s: %s (%s), want %s", arg, v.GPU, v.Verdict, v.Detail, w)
					}
					if v.Verdict == VerdictOtherGPU && (v.OtherArch != tc.otherArch || v.None != 0 || !strings.Contains(v.Detail, "other GPUs only")) {
						t.Errorf("%s on %s: other_arch %d none %d (%s), want other_arch %d none 0", arg, v.GPU, v.OtherArch, v.None, v.Detail, tc.otherArch)
					}
				}
				if got, w := f.NoKernelImage(), containsValue(tc.verdicts, VerdictNoKernel); got != w {
					t.Errorf("%s: NoKernelImage %v, want %v", arg, got, w)
				}
			}
		})
	}
}

func containsValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// TestDistLookedUpOnlyWhenNeeded: a file whose every container has code for the
// GPU is judged without reading a RECORD (on the H200, reading the 197 RECORDs of
// torch's venv took `inspect --cuobjdump libtorch_cuda_linalg.so` from 8 to 80 ms);
// one without code for the GPU, or ResolveDist, reads them.
func TestDistLookedUpOnlyWhenNeeded(t *testing.T) {
	site := t.TempDir()
	rel := "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so"
	p := filepath.Join(site, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, fixture.FatbinSection([]string{"sm_80", "compute_90"}), 0o644); err != nil {
		t.Fatal(err)
	}
	di := filepath.Join(site, "vllm-0.33.0.dist-info")
	if err := os.MkdirAll(di, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(di, "RECORD"), []byte(rel+",sha256=y,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	judged := func(gpu string) *File {
		cc, _ := cudaarch.ParseCapability(gpu)
		var f *File
		Walk([]string{p}, func(w *File) { f = w })
		f.Judge([]cudaarch.Capability{cc})
		return f
	}
	if f := judged("8.0"); f.Dist != "" || f.dists == nil {
		t.Errorf("8.0 runs natively: dist %q looked up (%v)", f.Dist, f.dists == nil)
	} else if got := f.ResolveDist(); got != "vllm" {
		t.Errorf("ResolveDist: %q, want vllm", got)
	}
	if f := judged("7.5"); f.Dist != "vllm" || f.Verdicts[0].Verdict != VerdictOtherGPU {
		t.Errorf("7.5 has no code: dist %q, verdict %s; want vllm, other-gpu", f.Dist, f.Verdicts[0].Verdict)
	}
}
