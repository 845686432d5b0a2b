package diagnose

import (
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

const extSite = "/opt/torch/.venv/lib/python3.12/site-packages"

// withExt is the healthy H200 facts with one installed extension: a
// flash-attn build for torch 2.11 cu130 that has sm_80 and sm_90 SASS,
// links torch and needs libcudart.so.13 from torch's nvidia wheels.
func withExt(mutate func(e *facts.Extension)) func(f *facts.Facts) {
	return func(f *facts.Facts) {
		e := facts.Extension{
			Dist: "flash_attn", Version: "2.8.3", Path: extSite + "/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
			Needed:     []string{"libc10.so", "libtorch.so", "libtorch_cpu.so", "libtorch_python.so", "libcudart.so.13", "libc10_cuda.so", "libtorch_cuda.so"},
			LinksTorch: true, SASS: []string{"sm_80", "sm_90"}, Containers: 72, CommonSASS: []string{"sm_80", "sm_90"},
			TargetSets:  [][]string{{"sm_80", "sm_90"}},
			CUDARuntime: "libcudart.so.13", CUDARuntimeFound: extSite + "/nvidia/cu13/lib/libcudart.so.13",
		}
		mutate(&e)
		f.Extensions = append(f.Extensions, e)
	}
}

func TestExtensionFiresAndDoesNotFire(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(f *facts.Facts)
		id     finding.ID
		sev    finding.Severity
	}{
		{"sm_80 only on a 9.0 GPU", withExt(func(e *facts.Extension) {
			e.SASS, e.CommonSASS, e.TargetSets = []string{"sm_80"}, []string{"sm_80"}, [][]string{{"sm_80"}}
		}), finding.ExtensionArchUnsupported, finding.Error},
		{"sm_80 + compute_80 PTX on a 9.0 GPU", withExt(func(e *facts.Extension) {
			e.SASS, e.PTX, e.TargetSets = []string{"sm_80"}, []string{"compute_80"}, [][]string{{"sm_80", "compute_80"}}
		}), finding.ExtensionArchUnsupported, ""},
		{"sm_90a only on a 9.0 GPU", withExt(func(e *facts.Extension) {
			e.SASS, e.TargetSets = []string{"sm_90a"}, [][]string{{"sm_90a"}}
		}), finding.ExtensionArchUnsupported, ""},
		{"sm_90a only on a Blackwell 10.0 GPU", withExt(func(e *facts.Extension) {
			e.SASS, e.TargetSets = []string{"sm_90a"}, [][]string{{"sm_90a"}}
		}), finding.ExtensionArchUnsupported, finding.Error},
		{"one container of two has nothing for 9.0", withExt(func(e *facts.Extension) {
			e.TargetSets = [][]string{{"sm_80", "sm_90"}, {"sm_75"}}
		}), finding.ExtensionArchUnsupported, finding.Error},
		// A container for a subset of what runs is a per-GPU kernel (vllm 0.33.0's
		// Turing-only {sm_75} beside {sm_75 ... sm_120}): not an error.
		{"a container for an older GPU among targets that run", withExt(func(e *facts.Extension) {
			e.TargetSets = [][]string{{"sm_80", "sm_90"}, {"sm_80"}}
		}), finding.ExtensionArchUnsupported, ""},
		{"facts without target sets: judged on all targets", withExt(func(e *facts.Extension) {
			e.TargetSets = nil
		}), finding.ExtensionArchUnsupported, ""},
		{"no CUDA code at all is not an arch problem", withExt(func(e *facts.Extension) {
			e.SASS, e.CommonSASS, e.TargetSets, e.Containers = nil, nil, nil, 0
		}), finding.ExtensionArchUnsupported, ""},
		{"healthy extension", withExt(func(e *facts.Extension) {}), finding.ExtensionArchUnsupported, ""},

		{"missing torch symbols", withExt(func(e *facts.Extension) {
			e.MissingSymbols, e.MissingCount = []string{"at::Tensor::print() const"}, 1
		}), finding.ExtensionABIMismatch, finding.Error},
		{"missing symbols but no torch (torch-missing covers it)", func(f *facts.Facts) {
			withExt(func(e *facts.Extension) { e.MissingSymbols, e.MissingCount = []string{"x"}, 1 })(f)
			f.Torch = nil
		}, finding.ExtensionABIMismatch, ""},
		{"nothing missing", withExt(func(e *facts.Extension) {}), finding.ExtensionABIMismatch, ""},

		{"libcudart.so.11 nowhere", withExt(func(e *facts.Extension) {
			e.CUDARuntime, e.CUDARuntimeFound = "libcudart.so.11", ""
		}), finding.ExtensionCUDAMismatch, finding.Error},
		{"libcudart.so.13 nowhere", withExt(func(e *facts.Extension) { e.CUDARuntimeFound = "" }), finding.ExtensionCUDAMismatch, finding.Error},
		{"libcudart.so.12 found, torch cu130", withExt(func(e *facts.Extension) {
			e.CUDARuntime, e.CUDARuntimeFound = "libcudart.so.12", "/usr/local/cuda-12.8/lib64/libcudart.so.12"
		}), finding.ExtensionCUDAMismatch, finding.Warning},
		{"libcudart.so.13 found, torch cu130", withExt(func(e *facts.Extension) {}), finding.ExtensionCUDAMismatch, ""},
		{"libcudart.so.12 found, CPU torch", func(f *facts.Facts) {
			withExt(func(e *facts.Extension) {
				e.CUDARuntime, e.CUDARuntimeFound = "libcudart.so.12", "/usr/lib/x86_64-linux-gnu/libcudart.so.12"
			})(f)
			f.Torch.CUDA, f.Torch.Version = "", "2.11.0+cpu"
			f.GPU.Devices = nil
		}, finding.ExtensionCUDAMismatch, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := healthy()
			tc.mutate(f)
			if strings.Contains(tc.name, "Blackwell") {
				f.GPU.Devices[0].Capability = "10.0"
			}
			fd := expectFinding(t, Run(f), tc.id, tc.sev)
			if fd == nil {
				return
			}
			if fd.Title == "" || fd.Detail == "" || len(fd.Evidence) == 0 || len(fd.Fixes) == 0 {
				t.Errorf("finding lacks title, detail, evidence or fixes: %+v", fd)
			}
			if !strings.Contains(strings.Join(fd.Evidence, "\n"), "flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so") {
				t.Errorf("evidence does not name the file: %q", fd.Evidence)
			}
		})
	}
}

// The fixes are exact commands through the environment's own pip.
func TestExtensionFixes(t *testing.T) {
	f := healthy()
	withExt(func(e *facts.Extension) {
		e.Version = "2.8.3+cu12torch2.6cxx11abiFALSE"
		e.SASS, e.CommonSASS, e.TargetSets = []string{"sm_80"}, []string{"sm_80"}, [][]string{{"sm_80"}}
		e.MissingCount = 14
		e.MissingSymbols = []string{"at::Tensor::print() const", "c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)"}
		e.CUDARuntime, e.CUDARuntimeFound = "libcudart.so.12", ""
	})(f)
	abi := true
	f.Torch.CXX11ABI = &abi
	got := Run(f)

	arch := find(got, finding.ExtensionArchUnsupported)
	// flash-attn's setup.py passes its own -gencode list: its own
	// FLASH_ATTN_CUDA_ARCHS picks the targets, TORCH_CUDA_ARCH_LIST would not.
	// Its setup.py imports wheel, packaging and setuptools, which this
	// environment lacks: a build without isolation needs them first.
	wantArch := []string{"/opt/torch/.venv/bin/python3 -m pip install packaging setuptools", "MAX_JOBS=1 FLASH_ATTENTION_FORCE_BUILD=TRUE FLASH_ATTN_CUDA_ARCHS=90 /opt/torch/.venv/bin/python3 -m pip install --no-build-isolation --no-binary flash_attn --no-cache-dir --force-reinstall --no-deps flash_attn==2.8.3"}
	if arch == nil || !slices.Equal(arch.Fixes[0].Commands, wantArch) {
		t.Fatalf("arch fix: %+v", arch)
	}
	if !strings.Contains(arch.Title, "NVIDIA H200 (compute capability 9.0)") || !slices.Contains(arch.Evidence, extSite+"/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so: SASS sm_80; PTX none (72 fatbin containers)") {
		t.Errorf("arch: %s %q", arch.Title, arch.Evidence)
	}

	abiF := find(got, finding.ExtensionABIMismatch)
	ev := strings.Join(abiF.Evidence, "\n")
	for _, want := range []string{"needs 14 symbols", "  missing: at::Tensor::print() const", "  ... and 12 more",
		"built for torch 2.6; torch 2.11.0+cu130 is installed", "cxx11abi=false; the installed torch uses cxx11abi=true"} {
		if !strings.Contains(ev, want) {
			t.Errorf("abi evidence lacks %q:\n%s", want, ev)
		}
	}
	if abiF.Fixes[1].Commands[0] != "/opt/torch/.venv/bin/python3 -m pip install --no-build-isolation --no-binary flash_attn --no-cache-dir --force-reinstall --no-deps flash_attn==2.8.3" {
		t.Errorf("abi rebuild: %q", abiF.Fixes[1].Commands)
	}

	cuda := find(got, finding.ExtensionCUDAMismatch)
	want := []string{"/opt/torch/.venv/bin/python3 -m pip install nvidia-cuda-runtime-cu12",
		"export LD_LIBRARY_PATH=" + extSite + "/nvidia/cuda_runtime/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"}
	if cuda == nil || cuda.Severity != finding.Error || len(cuda.Fixes) != 2 || !slices.Equal(cuda.Fixes[1].Commands, want) {
		t.Fatalf("cuda: %+v", cuda)
	}

	// Two modules of one distribution give one finding naming both.
	f.Extensions = append(f.Extensions, f.Extensions[0])
	f.Extensions[1].Path = extSite + "/flash_attn_3.so"
	n := 0
	for _, fd := range Run(f) {
		if fd.ID == finding.ExtensionArchUnsupported {
			n++
			if !strings.Contains(fd.Detail, "2 modules of flash_attn") {
				t.Errorf("detail: %s", fd.Detail)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d arch findings for one distribution", n)
	}
}
