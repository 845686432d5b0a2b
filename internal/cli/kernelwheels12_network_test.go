package cli

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

type pypiWheel struct{ project, file, sha string }

// torch214Wheel is PyPI's torch 2.14.0 (CUDA 13.0): the torch that fbgemm-gpu 1.9.0
// (fbgemm_gpu/__init__.py _fbgemm_torch_compat_table: "1.9" -> "2.14") and
// torch-tensorrt 2.14.0 (METADATA: torch<2.15.0,>=2.14.0) were built for.
var torch214Wheel = pypiWheel{"torch", "torch-2.14.0-cp312-cp312-manylinux_2_28_x86_64.whl",
	"fecffb58f51fd643d213acd68da21cc3fc19bea05a3bc64b4ee55128f47a4963"}

// session12Wheels are the real wheels of session 12 that doctor reads beside torch
// 2.14.0 (inspect's TestNetworkSession12WheelsAgainstCuobjdump holds their listings
// to cuobjdump): torch extensions built for it, two built for older torch, and
// CUDA packages that are no torch extension.
var session12Wheels = []pypiWheel{
	{"fbgemm-gpu-genai", "fbgemm_gpu_genai-1.9.0-cp312-cp312-manylinux_2_28_x86_64.whl", "a0c76013813c751c1e7ac209652a99ea6fe3950fb91b37f9e4d65699d1fc0eb0"},
	{"torch-tensorrt", "torch_tensorrt-2.14.0-cp312-cp312-manylinux_2_28_x86_64.whl", "2c03ae5f26a513fd5213a4e20d857b3cff13627b916e251987ca213ac873fa57"},
	{"autoawq-kernels", "autoawq_kernels-0.0.9-cp312-cp312-manylinux2014_x86_64.whl", "4c41a71af1d5a75e52c9833b9c48237b04d3b0eee26d712fc1b074af9135afc8"},
	{"vllm-flash-attn", "vllm_flash_attn-2.6.2-cp312-cp312-manylinux1_x86_64.whl", "6d4ce39ff18c8aa21003e34fe3ac4a4580a0cbec671882ee1e8bf900b4538ced"},
	{"spconv-cu124", "spconv_cu124-2.3.8-cp312-cp312-manylinux_2_28_x86_64.whl", "57b4afa27464d7c85e3d2543c802c609bdba2b6a393272e740b564bba870fedc"},
	{"cupy-cuda13x", "cupy_cuda13x-14.2.0-cp312-cp312-manylinux2014_x86_64.whl", "9aafadbe29db3d4285026044aafeb28f2a3de4bd0df70718ec6892b7d27a4ded"},
	{"ctranslate2", "ctranslate2-4.8.5-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", "86876e8b579ef61e4d1402002f7728fca40967fe79ac2ef71a65d1b8dc5a18ee"},
	{"xgboost", "xgboost-3.4.1-py3-none-manylinux_2_28_x86_64.whl", "6adf2afa396da2ae8ed30295b50b99d4712eed9a6e0ce6cfe069290e4335e51f"},
	{"jax-cuda12-plugin", "jax_cuda12_plugin-0.12.0.1-cp312-cp312-manylinux_2_27_x86_64.whl", "61dc67a8341ad6a0bb59631307914581ad16055f6c5635a2b7e57dfffb77e466"},
	{"jax-cuda12-pjrt", "jax_cuda12_pjrt-0.12.0.1-py3-none-manylinux_2_27_x86_64.whl", "5ec28e06198d094031c37590b4ea753ae8cde4879ab4b60baf40f0dffb673286"},
	{"cucim-cu12", "cucim_cu12-26.10.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", "fd4caff89d9f99a7ea51386c71583c922abed0cd79ef35ee493563d780c100ad"},
	{"nvidia-cusparselt-cu12", "nvidia_cusparselt_cu12-0.8.1-py3-none-manylinux2014_x86_64.whl", "cd1b1dc9e1ad31ea3353c1f985e2bd6f9e7ae0e797d7e6ce879d7b2ace5e80e8"},
	{"nvidia-nccl-cu12", "nvidia_nccl_cu12-2.32.3-py3-none-manylinux_2_27_x86_64.whl", "bb94b2348e4861d5e8aa00b36c3d12d9bdf9c6369b82cbb723de0b582280a21c"},
}

// fbgemm-gpu 1.9.0 installs into fbgemm_gpu/ as fbgemm-gpu-genai does: a root of its own.
var fbgemmGPU19Wheel = pypiWheel{"fbgemm-gpu", "fbgemm_gpu-1.9.0-cp312-cp312-manylinux_2_28_x86_64.whl",
	"0b53e810daf3fad0845a85696273315fdbc4b4bb6e5d59c1de952b968220aa9a"}

// torchLibRoot is a venv root holding torch 2.14.0's Python version file, its
// dist-info and the libraries its extensions link (not its Python code, nor the
// NVIDIA wheels it needs), with the wheels unpacked beside it.
func torchLibRoot(t *testing.T, wheels ...pypiWheel) string {
	t.Helper()
	var paths []string
	for _, w := range wheels {
		paths = append(paths, testenv.Sdist(t, w.project, w.file, w.sha))
	}
	root := venvRoot(t, paths...)
	site := filepath.Join(root, "root", "venv", "lib", "python3.12", "site-packages")
	unzipKeep(t, testenv.Sdist(t, torch214Wheel.project, torch214Wheel.file, torch214Wheel.sha), site, func(name string) bool {
		return name == "torch/version.py" || name == "torch/_C.cpython-312-x86_64-linux-gnu.so" || strings.HasPrefix(name, "torch-2.14.0.dist-info/") ||
			path.Dir(name) == "torch/lib" && (strings.HasPrefix(path.Base(name), "libtorch") || strings.HasPrefix(path.Base(name), "libc10"))
	})
	return root
}

// TestNetworkSession12KernelWheelsDoctor runs doctor over session 12's real wheels
// beside torch 2.14.0 for every current GPU generation. Every error must be true:
//   - torch-libraries-missing and extension-cuda-mismatch (libcudart.so.N): the
//     NVIDIA runtime wheels are not installed;
//   - extension-abi-mismatch only for autoawq-kernels 0.0.9 and vllm-flash-attn
//     2.6.2, built for torch 2.6 and 2.4 (fbgemm-gpu(-genai) 1.9.0 and
//     torch-tensorrt 2.14.0 resolve every torch symbol in torch 2.14.0);
//   - extension-arch-unsupported where cuobjdump lists no code for the GPU:
//     fbgemm-gpu(-genai) 1.9.0 {sm_80 sm_90a sm_100f} on 7.5 and 12.x,
//     autoawq-kernels 0.0.9 (awq_v2_ext from sm_80, nothing past sm_90) on 7.5,
//     10.0 and 12.x, vllm-flash-attn 2.6.2 {sm_80 sm_90} on 10.0 and 12.x;
//   - beside a torch without its libtorch_cpu.so, torch-libraries-missing names it
//     and fbgemm-gpu gets no ABI mismatch.
//
// Before: doctor also said "vllm-flash-attn 2.6.2 has no code for" a 7.5 GPU, where
// vllm (0.5.4 to 0.6.1.post2 install it on every GPU) never uses it (kb loading.json).
func TestNetworkSession12KernelWheelsDoctor(t *testing.T) {
	roots := []struct {
		name   string
		wheels []pypiWheel
		arch   map[string][]string // extension-arch-unsupported dists by GPU
		gone   string              // a library of torch's deleted from torch/lib
	}{
		{"kernels", session12Wheels, map[string][]string{
			"7.5":  {"autoawq_kernels", "fbgemm_gpu_genai"},
			"10.0": {"autoawq_kernels", "vllm-flash-attn"},
			"12.0": {"autoawq_kernels", "fbgemm_gpu_genai", "vllm-flash-attn"},
			"12.1": {"autoawq_kernels", "fbgemm_gpu_genai", "vllm-flash-attn"},
		}, ""},
		{"fbgemm-gpu", []pypiWheel{fbgemmGPU19Wheel}, map[string][]string{
			"7.5": {"fbgemm_gpu"}, "12.0": {"fbgemm_gpu"}, "12.1": {"fbgemm_gpu"},
		}, ""},
		// A broken torch: its own libtorch_cpu.so deleted. torch-libraries-missing
		// names it; fbgemm-gpu was not built for another torch (before: "fbgemm_gpu
		// 1.9.0 was built for another torch: at least 203 symbols missing").
		{"fbgemm-gpu-torch-broken", []pypiWheel{fbgemmGPU19Wheel}, map[string][]string{
			"7.5": {"fbgemm_gpu"}, "12.0": {"fbgemm_gpu"}, "12.1": {"fbgemm_gpu"},
		}, "libtorch_cpu.so"},
	}
	for _, r := range roots {
		t.Run(r.name, func(t *testing.T) {
			root := torchLibRoot(t, r.wheels...)
			if r.gone != "" {
				if err := os.Remove(filepath.Join(root, "root", "venv", "lib", "python3.12", "site-packages", "torch", "lib", r.gone)); err != nil {
					t.Fatal(err)
				}
			}
			for _, gpu := range []string{"7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0", "12.1"} {
				t.Run(gpu, func(t *testing.T) {
					doc := runJSON(t, "doctor", "--root", root, "--env", "VIRTUAL_ENV=/root/venv", "--env", "PATH=/root/venv/bin:/usr/bin:/bin", "--gpu", gpu)
					var arch, abi []string
					for _, f := range doc["findings"].([]any) {
						f := f.(map[string]any)
						id, _ := f["id"].(string)
						title, _ := f["title"].(string)
						sev, _ := f["severity"].(string)
						if sev != "error" && sev != "warning" {
							continue
						}
						dist, _, _ := strings.Cut(title, " ")
						switch id {
						case "no-cuda-compiler", "host-compiler-unsupported", "missing-python-headers", "missing-ninja":
						case "torch-libraries-missing":
							if !strings.Contains(title, "torch 2.14.0+cu130 cannot be imported") || !strings.Contains(title, r.gone) {
								t.Errorf("%s: %s", id, title)
							}
						case "extension-cuda-mismatch":
							if !strings.Contains(title, "needs libcudart.so.1") {
								t.Errorf("%s: %s", id, title)
							}
						case "extension-abi-mismatch":
							abi = append(abi, dist)
						case "extension-arch-unsupported":
							arch = append(arch, dist)
						default:
							t.Errorf("%s %s: %s", sev, id, title)
						}
					}
					slices.Sort(arch)
					slices.Sort(abi)
					if want := r.arch[gpu]; !slices.Equal(arch, want) {
						t.Errorf("extension-arch-unsupported: %q, want %q", arch, want)
					}
					wantABI := []string(nil)
					if r.name == "kernels" {
						wantABI = []string{"autoawq_kernels", "vllm-flash-attn"}
					}
					if !slices.Equal(abi, wantABI) {
						t.Errorf("extension-abi-mismatch: %q, want %q", abi, wantABI)
					}
				})
			}
		})
	}
}
