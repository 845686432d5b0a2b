package explain

import (
	"github.com/fastpath-dev/fastpath/internal/finding"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// explainText explains text (a real log of the corpus, or lines of one)
// without facts and returns the first finding's detail and fixes as text.
func explainText(t *testing.T, text string) (detail, fixes string) {
	t.Helper()
	s, err := Default().Scan(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(s, nil)
	if len(fs) == 0 {
		t.Fatalf("no finding for %q", text)
	}
	return fs[0].Detail, fixText(fs[0].Fixes)
}

func corpusLog(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDroppedGPUTarget: nvcc rejects an old target with the words it uses
// for a new one. torch's NCCL build asking CUDA 11 for compute_30
// (pytorch/pytorch#49528) needs the target list changed, not a newer nvcc;
// compute_61 with no nvcc release in the log may be either (CUDA 7.5 or
// 13.0), and the log's nvcc decides when it states one.
func TestDroppedGPUTarget(t *testing.T) {
	detail, fixes := explainText(t, corpusLog(t, "pytorch-49528-nccl-compute-30-new-nvcc.log"))
	if !strings.Contains(detail, "too new for compute_30") || strings.Contains(detail, "older than the GPU target") {
		t.Errorf("compute_30 detail: %s", detail)
	}
	if !strings.Contains(fixes, "Take sm_30 (3.0) out of the build's target list") || strings.Contains(fixes, "apt-get") || strings.Contains(fixes, "docker pull") {
		t.Errorf("compute_30 fixes install a compiler or keep the target:\n%s", fixes)
	}

	const sm61 = "nvcc fatal   : Unsupported gpu architecture 'compute_61'\n"
	detail, fixes = explainText(t, sm61)
	if !strings.Contains(detail, "either it is older") || !strings.Contains(detail, "CUDA 13.0 or newer") {
		t.Errorf("compute_61, no nvcc in the log: %s", detail)
	}
	if !strings.Contains(fixes, "install nvcc 12.9") || !strings.Contains(fixes, "If the nvcc is CUDA 13.0 or newer: take sm_61") || strings.Contains(fixes, "13-0") || strings.Contains(fixes, "13.0.") {
		t.Errorf("compute_61 fixes must name an nvcc that still targets it and the target list:\n%s", fixes)
	}

	detail, fixes = explainText(t, "Cuda compilation tools, release 13.0, V13.0.88\n"+sm61)
	if !strings.Contains(detail, "CUDA 13.0 removed sm_61") || strings.Contains(fixes, "apt-get") {
		t.Errorf("compute_61 with nvcc 13.0: %s\n%s", detail, fixes)
	}
	detail, _ = explainText(t, "Cuda compilation tools, release 7.5, V7.5.17\n"+sm61)
	if !strings.Contains(detail, "older than the GPU target") {
		t.Errorf("compute_61 with nvcc 7.5 is an nvcc too old: %s", detail)
	}
}

// TestNoCUDA10RuntimeWheel: PyPI has no nvidia-cuda-runtime-cu10
// (iSEE-Laboratory/LLMDet#32 asks for libcudart.so.10.1): the fix must not
// install it.
func TestNoCUDA10RuntimeWheel(t *testing.T) {
	_, fixes := explainText(t, corpusLog(t, "llmdet-32-libcudart-10.1-mmcv.log"))
	if strings.Contains(fixes, "cu10") || strings.Contains(fixes, "$ ") || !strings.Contains(fixes, "No NVIDIA wheel ships the CUDA 10 runtime") {
		t.Errorf("CUDA 10 runtime fixes:\n%s", fixes)
	}
	_, fixes = explainText(t, corpusLog(t, "rsbuilding-19-libcudart-11.0.log"))
	if !strings.Contains(fixes, "nvidia-cuda-runtime-cu11") {
		t.Errorf("CUDA 11 runtime has a wheel:\n%s", fixes)
	}
}

// TestKernelPackageFromFrames: xformers' own frames name it
// (vllm-project/vllm#5311), and its fix names it.
func TestKernelPackageFromFrames(t *testing.T) {
	detail, fixes := explainText(t, corpusLog(t, "vllm-5311-xformers-no-kernel-image.log"))
	if !strings.Contains(detail, "came from xformers") || !strings.Contains(fixes, "Rebuild xformers for this GPU") {
		t.Errorf("xformers frames: %s\n%s", detail, fixes)
	}
}

// TestGCCTooOldForTorch: torch's headers refuse gcc 8 (deepspeedai/DeepSpeed#7143):
// the fix is a newer g++, never the "newest nvcc accepts" one; on a
// machine whose g++ is new enough, the build is pointed at it.
func TestGCCTooOldForTorch(t *testing.T) {
	log := corpusLog(t, "deepspeed-7143-gcc-too-old.log")
	_, fixes := explainText(t, log)
	if !strings.Contains(fixes, "Install g++ 9 or newer") {
		t.Errorf("no facts:\n%s", fixes)
	}
	s, err := Default().Scan(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(s, seedFacts(t))
	if len(fs) == 0 || fs[0].ID != "host-compiler-unsupported" {
		t.Fatalf("seed machine: %v", ids(fs))
	}
	if got := fixText(fs[0].Fixes); !strings.Contains(got, "Point the build at g++ 13") || !strings.Contains(got, "export CXX=/usr/bin/g++") {
		t.Errorf("seed machine (g++ 13):\n%s", got)
	}
}

// TestDevelImageExists: nvidia/cuda has no -devel-ubuntu24.04 image before
// CUDA 12.5; the 11.8 compiler fix of facebookresearch/3detr#59 (sm_89,
// nvcc 11.5) names the ubuntu22.04 one, 12.8's the ubuntu24.04 one.
func TestDevelImageExists(t *testing.T) {
	_, fixes := explainText(t, corpusLog(t, "3detr-59-compute-89.log"))
	if strings.Contains(fixes, "11.8.0-devel-ubuntu24.04") || !strings.Contains(fixes, "nvidia/cuda:11.8.0-devel-ubuntu22.04") {
		t.Errorf("CUDA 11.8 image:\n%s", fixes)
	}
	_, fixes = explainText(t, corpusLog(t, "whispercpp-3030-compute-120.log"))
	if !strings.Contains(fixes, "nvidia/cuda:12.8.1-devel-ubuntu24.04") {
		t.Errorf("CUDA 12.8 image:\n%s", fixes)
	}
}

// TestCMakeRetry: a CMake project built by hand (ggml-org/whisper.cpp#3030)
// is not retried with pip, and its cache is cleared first.
func TestCMakeRetry(t *testing.T) {
	_, fixes := explainText(t, corpusLog(t, "whispercpp-3030-compute-120.log"))
	if strings.Contains(fixes, "pip install") || !strings.Contains(fixes, "CMakeCache.txt") {
		t.Errorf("CMake retry:\n%s", fixes)
	}
}

// TestPythonHeadersTheArchiveHas: zhanghang1989/PyTorch-Encoding#162
// compiled against a venv's Python 3.6 and found no Python.h. Only Ubuntu
// 18.04's archive has python3.6-dev (packages.ubuntu.com): on the seed
// machine (Ubuntu 24.04) and on Debian 12 apt-get install python3.6-dev
// fails, so the fix says where that Python's headers come from instead;
// where the archive has them (18.04; 3.12 on 24.04) apt installs them.
func TestPythonHeadersTheArchiveHas(t *testing.T) {
	s, err := Default().Scan(strings.NewReader(corpusLog(t, "pytorch-encoding-162-python-h-enclib-cpu.log")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, version string
		apt         bool
		has         string
	}{
		{"ubuntu", "24.04", false, "python3.12-dev"},
		{"ubuntu", "22.04", false, "python3.10-dev, python3.11-dev"},
		{"debian", "12", false, "python3.11-dev"},
		{"ubuntu", "18.04", true, ""},
	} {
		f := seedFacts(t)
		f.OS.ID, f.OS.VersionID = tc.id, tc.version
		fs := Findings(s, f)
		if len(fs) == 0 {
			t.Fatalf("%s %s: no finding", tc.id, tc.version)
		}
		got := fixText(fs[0].Fixes)
		if tc.apt {
			if !strings.Contains(got, "$ apt-get install -y python3.6-dev\n") {
				t.Errorf("%s %s has python3.6-dev in its archive:\n%s", tc.id, tc.version, got)
			}
			continue
		}
		if strings.Contains(got, "apt-get") || !strings.Contains(got, "has no python3.6-dev (it has "+tc.has+")") ||
			!strings.Contains(got, "deadsnakes") || !strings.Contains(got, "pyenv") || !strings.Contains(got, "conda install python=3.6") {
			t.Errorf("%s %s: no python3.6-dev in its archive, want where the headers come from:\n%s", tc.id, tc.version, got)
		}
	}
	// The distro's own Python (the seed machine's venv is Python 3.12 on
	// Ubuntu 24.04): its -dev package, with apt.
	s, err = Default().Scan(strings.NewReader("/root/venv/lib/python3.12/site-packages/torch/include/torch/csrc/python_headers.h:12:10: fatal error: Python.h: No such file or directory\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fs := Findings(s, seedFacts(t)); len(fs) == 0 || !strings.Contains(fixText(fs[0].Fixes), "$ apt-get install -y python3.12-dev\n") {
		t.Errorf("Python 3.12 on Ubuntu 24.04: %v", fs)
	}
}

// TestWindowsInterpreterName: on Windows the interpreter is python (or
// py), never python3: python.org's installer and conda install python.exe
// and no python3.exe (python3 on a stock Windows is the Microsoft Store's
// alias, which opens the Store). IAHispano/Applio#1006 (torch for an
// RTX 5090) and facebookresearch/DepthContrast#35 (CUDA_HOME) are Windows
// logs.
func TestWindowsInterpreterName(t *testing.T) {
	_, fixes := explainText(t, corpusLog(t, "applio-1006-sm120-windows.log"))
	if strings.Contains(fixes, "python3") || !strings.Contains(fixes, "$ python -m pip install --force-reinstall torch==2.11.0 ") {
		t.Errorf("Applio#1006 (Windows):\n%s", fixes)
	}
	_, fixes = explainText(t, corpusLog(t, "depthcontrast-35-cuda-home-windows.log"))
	if strings.Contains(fixes, "python3") || !strings.Contains(fixes, "python -m pip install --no-build-isolation") ||
		!strings.Contains(fixes, `python -c "import torch; print(torch.version.cuda)"`) {
		t.Errorf("DepthContrast#35 (Windows):\n%s", fixes)
	}
	// A Linux log keeps python3.
	_, fixes = explainText(t, corpusLog(t, "pytorch-encoding-297-cuda-home-colon.log"))
	if strings.Contains(fixes, "python -m") {
		t.Errorf("Linux log:\n%s", fixes)
	}
}

// TestOldGXXTheArchiveHas: CUDA 8's nvcc accepts gcc 5 at most
// (caffe2/caffe2#442), and only Ubuntu 18.04's archive has g++-5
// (packages.ubuntu.com): on Ubuntu 24.04 apt-get install g++-5 fails, so
// the fix says which OS has it; CUDA 10's gcc 8 (tkDNN#134) likewise.
func TestOldGXXTheArchiveHas(t *testing.T) {
	for _, tc := range []struct {
		log, distro, gxx, where string
	}{
		{"caffe2-442-gcc-later-than-5.log", "24.04", "g++-5", "(ubuntu 18.04)"},
		{"tkdnn-134-gcc-cmake.log", "24.04", "g++-8", "(ubuntu 18.04, ubuntu 20.04)"},
		{"caffe2-442-gcc-later-than-5.log", "18.04", "g++-5", ""},
	} {
		s, err := Default().Scan(strings.NewReader(corpusLog(t, tc.log)))
		if err != nil {
			t.Fatal(err)
		}
		f := seedFacts(t)
		f.OS.VersionID = tc.distro
		fs := Findings(s, f)
		if len(fs) == 0 {
			t.Fatalf("%s: no finding", tc.log)
		}
		got := fixText(fs[0].Fixes)
		if tc.where == "" {
			if !strings.Contains(got, "$ apt-get install -y "+tc.gxx+"\n") {
				t.Errorf("%s on ubuntu %s, whose archive has %s:\n%s", tc.log, tc.distro, tc.gxx, got)
			}
			continue
		}
		if strings.Contains(got, "apt-get install") || !strings.Contains(got, "has no "+tc.gxx+" (it has g++-9 to g++-14)") || !strings.Contains(got, tc.where) {
			t.Errorf("%s on ubuntu %s, whose archive lacks %s:\n%s", tc.log, tc.distro, tc.gxx, got)
		}
	}
}

// vllmCustomOpTail is the end of a vLLM traceback through its compiled ops, in
// the shape vLLM's own source gives it (vllm/model_executor/layers/layernorm.py's
// forward_cuda calls vllm/_custom_ops.py's fused_add_rms_norm, which calls
// torch.ops._C.fused_add_rms_norm through torch/_ops.py). Constructed: no public
// log of this exact kind was found (see the corpus for the real ones).
const vllmCustomOpTail = `  File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/layernorm.py", line 190, in forward_cuda
    ops.fused_add_rms_norm(
  File "/usr/local/lib/python3.12/dist-packages/vllm/_custom_ops.py", line 328, in fused_add_rms_norm
    torch.ops._C.fused_add_rms_norm(input, residual, weight, epsilon)
  File "/usr/local/lib/python3.12/dist-packages/torch/_ops.py", line 1158, in __call__
    return self._op(*args, **(kwargs or {}))
RuntimeError: CUDA error: no kernel image is available for execution on the device
`

// TestVLLMCompiledOpsNoKernelImage: a kernel of vllm._C without code for the GPU
// is vLLM's, and the cure is vLLM's build for the GPU, not torch's; a failure in
// torch's own call inside vLLM's Python (nim-deploy#61) stays torch's.
func TestVLLMCompiledOpsNoKernelImage(t *testing.T) {
	s, err := Default().Scan(strings.NewReader(vllmCustomOpTail))
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(s, nil)
	if len(fs) == 0 || fs[0].ID != "extension-arch-unsupported" {
		t.Fatalf("findings %v, want extension-arch-unsupported first", ids(fs))
	}
	fixes := fixText(fs[0].Fixes)
	if !strings.Contains(fs[0].Detail, "came from vllm") || !strings.Contains(fixes, "vllm._C") || !strings.Contains(fixes, vllmDocs) ||
		strings.Contains(fixes, "--no-binary vllm") {
		t.Errorf("detail %s\nfixes:\n%s", fs[0].Detail, fixes)
	}
	// The GPU known (as doctor's facts give it): the build names it.
	f := seedFacts(t)
	if len(f.GPU.Devices) == 0 {
		t.Fatal("the seed facts have no GPU")
	}
	f.GPU.Devices[0].Capability = "12.0"
	fs = Findings(s, f)
	if len(fs) == 0 || fs[0].ID != "extension-arch-unsupported" {
		t.Fatalf("12.0: findings %v", ids(fs))
	}
	got := fixText(fs[0].Fixes)
	for _, want := range []string{"export TORCH_CUDA_ARCH_LIST=12.0", "use_existing_torch.py", "requirements/build.txt", "--no-build-isolation -e ."} {
		if !strings.Contains(got, want) {
			t.Errorf("12.0: fixes lack %q:\n%s", want, got)
		}
	}
	// 7.0: vLLM still builds it, but only with CUDA 12 (CUDA 13 dropped sm_70).
	if got := fixText(newEnv(f, s).vllmArchFixes("7.0")); !strings.Contains(got, "needs torch and nvcc of CUDA 12") || !strings.Contains(got, "TORCH_CUDA_ARCH_LIST=7.0") {
		t.Errorf("7.0: %s", got)
	}
	// Older than vLLM's oldest target (6.1: torch cu128 lacks it too, so the
	// seed's diagnosis would blame torch first): no vLLM build can help.
	if got := fixText(newEnv(f, s).vllmArchFixes("6.1")); !strings.Contains(got, "No vLLM build has code for compute capability 6.1") || strings.Contains(got, "git clone") {
		t.Errorf("6.1: %s", got)
	}
	detail, _ := explainText(t, corpusLog(t, "nim-deploy-61-vllm-layernorm-torch-op.log"))
	if !strings.Contains(detail, "torch") || strings.Contains(detail, "came from vllm") {
		t.Errorf("nim-deploy#61: %s", detail)
	}
}

// TestFlashinferNoKernelImage: flashinfer's own header in the CUDA error names
// it (flashinfer-ai/flashinfer#920), for the caller's repeats of the error too;
// its kernels come from several builds with their own architecture lists, so
// the fix names the package and what to install, with no rebuild command.
func TestFlashinferNoKernelImage(t *testing.T) {
	detail, fixes := explainText(t, corpusLog(t, "flashinfer-920-norm-cuh-no-kernel-image.log"))
	if !strings.Contains(detail, "flashinfer-python's own source") {
		t.Errorf("detail: %s", detail)
	}
	if !strings.Contains(fixes, "Install a flashinfer-python release") || strings.Contains(fixes, "$ ") || strings.Contains(fixes, "torch build") {
		t.Errorf("fixes:\n%s", fixes)
	}
}

// TestDeepSpeedRetry: DeepSpeed stops on CUDA_HOME (or torch) before it
// builds any op; every fix ends with the step that retries what failed.
// pip install deepspeed (LlamaChinese/Llama-Chinese#168, setup.py asserts
// CUDA_HOME): install it again; import deepspeed at run time
// (thinhlpg/vixtts-demo#12): the import, nothing to reinstall; the message
// alone (deepspeedai/DeepSpeed#2337): run again what failed, by hand; torch
// not yet installed when deepspeed's setup.py ran (kyegomez/RT-2#10):
// torch, then deepspeed.
func TestDeepSpeedRetry(t *testing.T) {
	last := func(name string) (string, finding.Fix) {
		t.Helper()
		s, err := Default().Scan(strings.NewReader(corpusLog(t, name)))
		if err != nil {
			t.Fatal(err)
		}
		fs := Findings(s, nil)
		if len(fs) == 0 || len(fs[0].Fixes) == 0 {
			t.Fatalf("%s: no fix: %v", name, ids(fs))
		}
		return fixText(fs[0].Fixes), fs[0].Fixes[len(fs[0].Fixes)-1]
	}
	for _, tc := range []struct {
		log, title, cmd string
	}{
		{"llama-chinese-168-deepspeed-pip-cuda-home.log", "Then build deepspeed", "pip install --no-build-isolation deepspeed"},
		{"chattts-enhanced-3-deepspeed-pip-cuda-home.log", "Then build deepspeed", "pip install --no-build-isolation deepspeed"},
		{"vixtts-demo-12-deepspeed-missing-cuda.log", "Then run the program again", "-c 'import deepspeed'"},
		{"deepspeed-2337-assert-cuda-home.log", "Then run again", ""},
		{"rt-2-10-deepspeed-pip-no-torch.log", "Then install deepspeed again", "pip install --no-build-isolation deepspeed"},
	} {
		all, f := last(tc.log)
		cmds := strings.Join(f.Commands, "\n")
		if !strings.HasPrefix(f.Title, tc.title) || tc.cmd == "" && len(f.Commands) != 0 || !strings.Contains(cmds, tc.cmd) {
			t.Errorf("%s: the last fix is not the retry %q / %q:\n%s", tc.log, tc.title, tc.cmd, all)
		}
	}
	// torch first, then deepspeed.
	all, _ := last("rt-2-10-deepspeed-pip-no-torch.log")
	if i, j := strings.Index(all, "install torch"), strings.Index(all, "--no-build-isolation deepspeed"); i < 0 || j < i {
		t.Errorf("RT-2#10: torch must come before deepspeed:\n%s", all)
	}
}

func TestCxxRuntimeSymbolIsNotTorch(t *testing.T) {
	const so = "ImportError: ./anaconda3/envs/vmamba/lib/python3.8/site-packages/selective_scan_cuda_oflex.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
	for _, sym := range []string{"_ZNSt15__exception_ptr13exception_ptr9_M_addrefEv", "_ZSt28__throw_bad_array_new_lengthv", "_ZTVNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEEE"} {
		s, err := Default().Scan(strings.NewReader(so + sym + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		if fs := Findings(s, nil); len(fs) != 0 {
			t.Errorf("%s: %v", sym, ids(fs))
		}
	}
	s, err := Default().Scan(strings.NewReader(so + "_ZN3c104cuda9SetDeviceEi\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := Findings(s, nil)
	if len(fs) == 0 || fs[0].ID != "extension-abi-mismatch" {
		t.Fatalf("a torch symbol is an ABI mismatch: %v", ids(fs))
	}
	if got := fs[0].Title + fixText(fs[0].Fixes); strings.Contains(got, "mamba-ssm") || !strings.Contains(got, "selective_scan_cuda_oflex") {
		t.Errorf("VMamba's module named as mamba-ssm:\n%s", got)
	}
	_, fixes := explainText(t, corpusLog(t, "mamba-788-selective-scan-setdevice-ab.log"))
	if !strings.Contains(fixes, "--no-deps mamba-ssm") {
		t.Errorf("mamba-ssm's own selective_scan_cuda:\n%s", fixes)
	}
}

func TestSM120TorchForTheDriver(t *testing.T) {
	for _, log := range []string{"pytorch-167244-sm120-cu124-nightly.log", "direct3d-s2-32-sm120-torch-sm90.log"} {
		_, fixes := explainText(t, corpusLog(t, log))
		if !strings.Contains(fixes, "whl/cu128") || strings.Contains(fixes, "cu130") || !strings.Contains(fixes, "needs NVIDIA driver 525.60.13 or newer") {
			t.Errorf("%s: driver unknown:\n%s", log, fixes)
		}
	}
	warn := corpusLog(t, "direct3d-s2-32-sm120-torch-sm90.log")
	for prefix, want := range map[string]string{
		"| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0 |\n":   "whl/cu130",
		"| NVIDIA-SMI 570.124.06   Driver Version: 570.124.06   CUDA Version: 12.8 |\n": "whl/cu128",
		"Nvidia driver version: 570.124.06\n":                                           "whl/cu128",
		"Nvidia driver version: 580.65.06\n":                                            "whl/cu130",
	} {
		_, fixes := explainText(t, prefix+warn)
		if !strings.Contains(fixes, want) || strings.Contains(fixes, "needs NVIDIA driver") {
			t.Errorf("%q: want %s:\n%s", prefix, want, fixes)
		}
	}
}

func TestFlashAttnOnAnOlderGPU(t *testing.T) {
	_, fixes := explainText(t, corpusLog(t, "raylight-68-flash-attn-ampere-quadro-rtx5000.log"))
	if !strings.Contains(fixes, "older than compute capability 8.0") || !strings.Contains(fixes, `attn_implementation="sdpa"`) || !strings.Contains(fixes, "If it is newer") {
		t.Errorf("GPU unknown:\n%s", fixes)
	}
	_, fixes = explainText(t, "Device 0: Tesla T4, compute capability 7.5, VMM: yes\n"+corpusLog(t, "raylight-68-flash-attn-ampere-quadro-rtx5000.log"))
	if !strings.Contains(fixes, "No flash-attn build runs on compute capability 7.5") || strings.Contains(fixes, "ebuild") {
		t.Errorf("a 7.5 GPU:\n%s", fixes)
	}
	_, fixes = explainText(t, "Device 0: NVIDIA GeForce RTX 5090, compute capability 12.0, VMM: yes\n"+corpusLog(t, "raylight-68-flash-attn-ampere-quadro-rtx5000.log"))
	if !strings.Contains(fixes, "Rebuild flash-attn for this GPU (compute capability 12.0)") || strings.Contains(fixes, "sdpa") {
		t.Errorf("a 12.0 GPU:\n%s", fixes)
	}
}

func TestNVCCOtherWordings(t *testing.T) {
	detail, fixes := explainText(t, corpusLog(t, "brushedit-17-msvc-unsupported-vs-version.log"))
	if !strings.Contains(detail, "MSVC") || !strings.Contains(fixes, "Visual Studio this nvcc accepts (between 2017 and 2022)") ||
		strings.Contains(fixes, "g++") || strings.Contains(fixes, "install torch's CUDA release") {
		t.Errorf("MSVC:\n%s\n%s", detail, fixes)
	}
	_, fixes = explainText(t, corpusLog(t, "butterfly-23-value-sm-30-not-defined-cuda-11.2.log"))
	if !strings.Contains(fixes, "Take sm_30 (3.0) out of the build's target list") || strings.Contains(fixes, "docker") {
		t.Errorf("sm_30 on CUDA 11.2:\n%s", fixes)
	}
	_, fixes = explainText(t, corpusLog(t, "featgraph-12-value-sm-80-not-defined-cuda-10.1.log"))
	if !strings.Contains(fixes, "sm_80 needs nvcc 11.0 or newer") {
		t.Errorf("sm_80 on CUDA 10.1:\n%s", fixes)
	}
	// A placeholder or a typo is no GPU target (pytorch-mask-rcnn#38).
	s, err := Default().Scan(strings.NewReader("nvcc fatal   : Value '[sm_61]' is not defined for option 'gpu-architecture'\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fs := Findings(s, nil); len(fs) != 0 {
		t.Errorf("[sm_61]: %v", ids(fs))
	}
}

func TestCompilerFixesForALogThatNamesNoOS(t *testing.T) {
	_, fixes := explainText(t, corpusLog(t, "zonos-194-uv-causal-conv1d-no-nvcc.log"))
	apt, img := strings.Index(fixes, "Install the CUDA 12.4 compiler"), strings.Index(fixes, "Rebuild the image FROM")
	if apt < 0 || img < 0 || apt > img || !strings.Contains(fixes, "cuda-nvcc-12-4") {
		t.Errorf("Zonos#194:\n%s", fixes)
	}
}
