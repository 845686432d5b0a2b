package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// bnbLibs is bitsandbytes 0.50.2's CUDA libraries as its real wheel ships them
// (each needs its own CUDA major's runtime); only libcudart.so.13 is present.
func bnbLibs(f *facts.Facts) {
	for _, v := range []string{"118", "121", "124", "126", "128", "130", "132"} {
		rt, found := "libcudart.so.12", ""
		if v == "118" {
			rt = "libcudart.so.11.0"
		}
		if strings.HasPrefix(v, "13") {
			rt, found = "libcudart.so.13", extSite+"/nvidia/cu13/lib/libcudart.so.13"
		}
		f.Extensions = append(f.Extensions, facts.Extension{
			Dist: "bitsandbytes", Version: "0.50.2", Path: extSite + "/bitsandbytes/libbitsandbytes_cuda" + v + ".so",
			SASS: []string{"sm_75", "sm_80", "sm_90"}, Containers: 1, TargetSets: [][]string{{"sm_75", "sm_80", "sm_90"}},
			CUDARuntime: rt, CUDARuntimeFound: found,
		})
	}
}

func sevTitles(fds []finding.Finding, sev finding.Severity) []string {
	var out []string
	for _, fd := range fds {
		if fd.Severity == sev {
			out = append(out, string(fd.ID)+": "+fd.Title)
		}
	}
	return out
}

// TestBitsandbytesLoadsOneLibrary: under torch cu130 bitsandbytes loads
// libbitsandbytes_cuda130.so only (cextension.py): the cuda12x libraries needing a
// missing libcudart.so.12 are never opened and raise nothing. BNB_CUDA_VERSION=121
// makes it load the cuda121 one, whose runtime is missing: then it is an error.
func TestBitsandbytesLoadsOneLibrary(t *testing.T) {
	f := healthy()
	bnbLibs(f)
	if errs := sevTitles(Run(f), finding.Error); len(errs) != 0 {
		t.Errorf("errors for libraries bitsandbytes never loads: %q", errs)
	}
	f.Env = append(f.Env, facts.EnvVar{Name: "BNB_CUDA_VERSION", Value: "121"})
	fds := Run(f)
	fd := expectFinding(t, fds, finding.ExtensionCUDAMismatch, finding.Error)
	if fd != nil && (!strings.Contains(strings.Join(fd.Evidence, "\n"), "libbitsandbytes_cuda121.so") || strings.Contains(strings.Join(fd.Evidence, "\n"), "cuda118")) {
		t.Errorf("override: evidence %q", fd.Evidence)
	}
	// torch 12.9 (no such library): the highest lower 12.x one, 12.8, is loaded.
	g := healthy()
	bnbLibs(g)
	g.Torch.CUDA, g.Torch.Version = "12.9", "2.11.0+cu129"
	c := newJudgement(g)
	var loaded []string
	for _, e := range c.loaded() {
		loaded = append(loaded, e.Path[strings.LastIndex(e.Path, "/")+1:])
	}
	if !slices.Equal(loaded, []string{"libbitsandbytes_cuda128.so"}) {
		t.Errorf("torch 12.9 loads %v", loaded)
	}
}

// TestArchSpecificKernelsOfOtherGPUs: sgl-kernel 0.3.21's common_ops mixes
// containers for every GPU with sm_90a/sm_100a-only ones; vllm's _flashmla_C holds
// only sm_90a and sm_100f. On a 12.0 GPU the first runs (its arch-specific kernels are
// dispatched elsewhere) and the second is info; on 9.0 both run. On 10.3 the first's
// generic container has nothing (sm_100a does not run there): a true error; the
// second runs from sm_100f.
func TestArchSpecificKernelsOfOtherGPUs(t *testing.T) {
	for _, tc := range []struct {
		gpu        string
		errs, info int
	}{{"12.0", 0, 1}, {"9.0", 0, 0}, {"8.0", 0, 1}, {"10.3", 1, 0}} {
		f := healthy()
		f.GPU.Devices[0].Capability = tc.gpu
		f.Extensions = append(f.Extensions,
			facts.Extension{Dist: "sgl-kernel", Version: "0.3.21", Path: extSite + "/sgl_kernel/sm100/common_ops.abi3.so",
				SASS: []string{"sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a", "sm_120a"}, Containers: 74,
				TargetSets: [][]string{{"sm_80", "sm_89", "sm_90", "sm_100a", "sm_120a"}, {"sm_90a"}, {"sm_100a"}}},
			facts.Extension{Dist: "vllm", Version: "0.33.0", Path: extSite + "/vllm/_flashmla_C.abi3.so",
				SASS: []string{"sm_90a", "sm_100f"}, Containers: 53, TargetSets: [][]string{{"sm_90a"}, {"sm_100f"}}},
		)
		fds := Run(f)
		var errs, info int
		for _, fd := range fds {
			if fd.ID == finding.ExtensionArchUnsupported {
				switch fd.Severity {
				case finding.Error:
					errs++
				case finding.Info:
					info++
				}
			}
		}
		if errs != tc.errs || info != tc.info {
			t.Errorf("GPU %s: %d errors, %d infos, want %d, %d: %q", tc.gpu, errs, info, tc.errs, tc.info, sevTitles(fds, finding.Error))
		}
	}
}

// TestVLLMPerGPUPlainContainers: vllm 0.33.0's wheel (vllm-0.33.0-cp38-abi3-
// manylinux_2_28_x86_64.whl) holds, beside containers for every GPU, plain-SASS ones
// for one GPU alone: {sm_75}, {sm_89 sm_120f} (the target sets below are what
// `fastpath facts` reads from its _C_stable_libtorch.abi3.so and
// _moe_C_stable_libtorch.abi3.so; cuobjdump 13.5 lists the same). doctor said "vllm
// 0.33.0 has no code for" every GPU from 8.0 to 12.0 (an error on an H100). vllm
// dispatches by capability (kb loading.json): with code for the GPU in the module,
// such containers fail nothing. On 7.0, where nothing runs, it stays an error.
func TestVLLMPerGPUPlainContainers(t *testing.T) {
	cStable := [][]string{{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}, {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_120"},
		{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100f", "sm_120"}, {"sm_90a", "sm_100f", "sm_120f"}, {"sm_80", "sm_120f", "compute_80"},
		{"sm_80", "sm_90", "sm_120f", "compute_80", "compute_90"}, {"sm_75"}, {"sm_89", "sm_120f"}, {"sm_75", "sm_80", "compute_80"}, {"sm_90a"},
		{"sm_120f"}, {"sm_100f"}, {"sm_75", "sm_80", "sm_89", "compute_89"}, {"sm_100f", "sm_120f"}, {"sm_80", "sm_86", "sm_89", "sm_90a", "sm_100f", "sm_120f"},
		{"sm_90a", "sm_100f"}, {"sm_80", "sm_90", "compute_80", "compute_90"}}
	moe := [][]string{{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"}, {"sm_80", "sm_120f", "compute_80"}, {"sm_75"}, {"sm_89", "sm_120f"}, {"sm_75", "sm_80", "compute_80"}}
	for _, tc := range []struct {
		gpu  string
		errs int
	}{{"7.5", 0}, {"8.0", 0}, {"8.6", 0}, {"8.9", 0}, {"9.0", 0}, {"10.0", 0}, {"10.3", 0}, {"12.0", 0}, {"12.1", 0}, {"7.0", 1}} {
		f := healthy()
		f.GPU.Devices[0].Capability = tc.gpu
		f.Extensions = append(f.Extensions,
			facts.Extension{Dist: "vllm", Version: "0.33.0", Path: extSite + "/vllm/_C_stable_libtorch.abi3.so",
				SASS: []string{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100f", "sm_120", "sm_120f"},
				PTX:  []string{"compute_80", "compute_89", "compute_90"}, Containers: 118, TargetSets: cStable},
			facts.Extension{Dist: "vllm", Version: "0.33.0", Path: extSite + "/vllm/_moe_C_stable_libtorch.abi3.so",
				SASS: []string{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120", "sm_120f"},
				PTX:  []string{"compute_80"}, Containers: 35, TargetSets: moe},
		)
		fds := Run(f)
		errs := 0
		for _, fd := range fds {
			if fd.ID == finding.ExtensionArchUnsupported && fd.Severity == finding.Error {
				errs++
			}
		}
		if errs != tc.errs {
			t.Errorf("GPU %s: %d extension-arch-unsupported errors, want %d: %q", tc.gpu, errs, tc.errs, sevTitles(fds, finding.Error))
		}
	}
}

// TestExtensionPTXNeedsNewerDriver: xformers 0.0.35's _C.so (its real wheel:
// xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl; every container {sm_75 sm_80
// sm_90a compute_80}, PTX ISA 8.7 in the entry headers, CUDA 12.8's) runs on a 12.0
// GPU only through PTX JIT. A driver for CUDA 12.8 compiles ISA 8.7; one for 12.6
// refuses it ("the provided PTX was compiled with an unsupported toolchain"). On 8.0
// its SASS runs and no PTX is compiled.
func TestExtensionPTXNeedsNewerDriver(t *testing.T) {
	for _, tc := range []struct {
		gpu, driver, driverCUDA string
		fire                    bool
	}{
		{"12.0", "560.35.03", "12.6", true},
		{"12.0", "570.172.08", "12.8", false},
		{"8.0", "560.35.03", "12.6", false},
		{"12.0", "", "", false}, // no driver read: nothing said
	} {
		f := healthy()
		f.GPU.Devices[0].Capability = tc.gpu
		f.GPU.Driver.Version, f.GPU.Driver.CUDA = tc.driver, tc.driverCUDA
		f.Extensions = append(f.Extensions, facts.Extension{Dist: "xformers", Version: "0.0.35", Path: extSite + "/xformers/_C.so",
			SASS: []string{"sm_75", "sm_80", "sm_90a"}, PTX: []string{"compute_80"}, Containers: 11, PTXISA: "8.7",
			TargetSets: [][]string{{"sm_75", "sm_80", "sm_90a", "compute_80"}}})
		var got *finding.Finding
		for _, fd := range Run(f) {
			if fd.ID == finding.ExtensionArchUnsupported && strings.Contains(fd.Title, "only through PTX") {
				got = &fd
			}
		}
		if (got != nil) != tc.fire {
			t.Errorf("GPU %s, driver %s (CUDA %q): fired %v, want %v", tc.gpu, tc.driver, tc.driverCUDA, got != nil, tc.fire)
			continue
		}
		if got != nil && (got.Severity != finding.Error || !strings.Contains(got.Detail, "PTX ISA 8.7 needs a driver for CUDA 12.8 or newer, and this one supports CUDA 12.6")) {
			t.Errorf("finding %+v", got)
		}
	}
}

// TestTorchLibrariesMissing names the wheel from torch's own Requires-Dist, in both
// spellings torch has used: cuda-toolkit[extra]==V (2.15, CUDA 13) and
// nvidia-X-cu12==V (2.11+cu128).
func TestTorchLibrariesMissing(t *testing.T) {
	for _, tc := range []struct {
		requires []string
		missing  []string
		want     string
	}{
		{[]string{`cuda-toolkit[cublas,cudart,cufft,cufile,cupti,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.2.2; platform_system == "Linux"`,
			`nvidia-cudnn-cu13==9.26.0.51; platform_system == "Linux"`, `nvidia-nccl-cu13==2.30.7; platform_system == "Linux"`},
			[]string{"libcublasLt.so.13", "libcudnn.so.9", "libcudart.so.13"},
			"pip install 'cuda-toolkit[cublas,cudart]==13.2.2' nvidia-cudnn-cu13==9.26.0.51"},
		{[]string{`nvidia-cublas-cu12==12.8.4.1; platform_system == "Linux" and platform_machine == "x86_64"`,
			`nvidia-cusparselt-cu12==0.6.3; platform_system == "Linux"`, `nvidia-cusparse-cu12==12.5.8.93; platform_system == "Linux"`},
			[]string{"libcusparseLt.so.0", "libcublas.so.12"},
			"pip install nvidia-cusparselt-cu12==0.6.3 nvidia-cublas-cu12==12.8.4.1"},
	} {
		f := healthy()
		f.Python.Selected.Distributions = append(f.Python.Selected.Distributions, facts.Distribution{Name: "torch", Version: f.Torch.Version, Requires: tc.requires})
		for _, m := range tc.missing {
			f.Torch.MissingLibraries = append(f.Torch.MissingLibraries, facts.MissingLibrary{Name: m,
				NeededBy: []string{f.Torch.Lib + "/libtorch_cuda.so"}, Searched: []string{f.Torch.Lib}})
		}
		fd := expectFinding(t, Run(f), finding.TorchLibrariesMissing, finding.Error)
		if fd == nil {
			continue
		}
		if len(fd.Fixes) == 0 || !strings.Contains(fd.Fixes[0].Commands[0], tc.want) {
			t.Errorf("fix %+v, want %q", fd.Fixes, tc.want)
		}
	}
	if fds := Run(healthy()); expectNo(fds, finding.TorchLibrariesMissing) != nil {
		t.Error("healthy torch: torch-libraries-missing")
	}
}

func expectNo(fds []finding.Finding, id finding.ID) *finding.Finding {
	for i := range fds {
		if fds[i].ID == id {
			return &fds[i]
		}
	}
	return nil
}

// TestDistinctMissingSymbols: the same symbols missing from four modules are
// counted once.
func TestDistinctMissingSymbols(t *testing.T) {
	f := healthy()
	for _, n := range []string{"a", "b", "c", "d"} {
		withExt(func(e *facts.Extension) {
			e.Path = extSite + "/pkg/" + n + ".so"
			e.MissingSymbols, e.MissingCount = []string{"at::x()", "at::y()"}, 2
		})(f)
	}
	fd := expectFinding(t, Run(f), finding.ExtensionABIMismatch, finding.Error)
	if fd != nil && !strings.Contains(fd.Title, ": 2 symbols missing") {
		t.Errorf("title %q", fd.Title)
	}
}

// TestVLLMFlashAttention2OnTuring: vllm 0.33.0's vllm_flash_attn/_vllm_fa2_C.abi3.so
// (its real wheel, vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl: 76 containers
// {sm_80 compute_80}) has no code for a T4 (7.5), and doctor said "vllm 0.33.0 has
// no code for GPU (compute capability 7.5)". vllm uses FlashAttention from 8.0 up
// (v1/attention/backends/flash_attn.py supports_compute_capability) and picks
// another backend on Turing: kb loading.json gates the module to majors 8-12. A
// module of the same targets that is not gated (the same path in another package)
// stays an error on 7.5.
func TestVLLMFlashAttention2OnTuring(t *testing.T) {
	for _, tc := range []struct {
		gpu, dist string
		errs      int
	}{{"7.5", "vllm", 0}, {"8.0", "vllm", 0}, {"8.9", "vllm", 0}, {"12.0", "vllm", 0}, {"7.5", "vllm-fork", 1}, {"7.0", "vllm-fork", 1}} {
		f := healthy()
		f.GPU.Devices[0].Capability = tc.gpu
		f.Extensions = append(f.Extensions, facts.Extension{Dist: tc.dist, Version: "0.33.0", Path: extSite + "/vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so",
			SASS: []string{"sm_80"}, PTX: []string{"compute_80"}, Containers: 76, TargetSets: [][]string{{"sm_80", "compute_80"}}})
		fds := Run(f)
		errs := 0
		for _, fd := range fds {
			if fd.ID == finding.ExtensionArchUnsupported && fd.Severity == finding.Error {
				errs++
			}
		}
		if errs != tc.errs {
			t.Errorf("%s on %s: %d extension-arch-unsupported errors, want %d: %q", tc.dist, tc.gpu, errs, tc.errs, sevTitles(fds, finding.Error))
		}
	}
}
