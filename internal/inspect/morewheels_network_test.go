package inspect

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// Session 12's wheels: real kernel and CUDA-library wheels no other test read
// (https://pypi.org/project/<project>/<version>/#files), Linux x86_64 and, where
// published, aarch64.
var (
	fbgemmGPUGenAIWheel = pypiFile{"fbgemm-gpu-genai", "fbgemm_gpu_genai-1.9.0-cp312-cp312-manylinux_2_28_x86_64.whl",
		"a0c76013813c751c1e7ac209652a99ea6fe3950fb91b37f9e4d65699d1fc0eb0"}
	fbgemmGPUWheel = pypiFile{"fbgemm-gpu", "fbgemm_gpu-1.9.0-cp312-cp312-manylinux_2_28_x86_64.whl",
		"0b53e810daf3fad0845a85696273315fdbc4b4bb6e5d59c1de952b968220aa9a"}
	vllmFlashAttnWheel = pypiFile{"vllm-flash-attn", "vllm_flash_attn-2.6.2-cp312-cp312-manylinux1_x86_64.whl",
		"6d4ce39ff18c8aa21003e34fe3ac4a4580a0cbec671882ee1e8bf900b4538ced"}
	autoAWQKernelsWheel = pypiFile{"autoawq-kernels", "autoawq_kernels-0.0.9-cp312-cp312-manylinux2014_x86_64.whl",
		"4c41a71af1d5a75e52c9833b9c48237b04d3b0eee26d712fc1b074af9135afc8"}
	torchTensorRTWheel = pypiFile{"torch-tensorrt", "torch_tensorrt-2.14.0-cp312-cp312-manylinux_2_28_x86_64.whl",
		"2c03ae5f26a513fd5213a4e20d857b3cff13627b916e251987ca213ac873fa57"}
	cupy13Wheel = pypiFile{"cupy-cuda13x", "cupy_cuda13x-14.2.0-cp312-cp312-manylinux2014_x86_64.whl",
		"9aafadbe29db3d4285026044aafeb28f2a3de4bd0df70718ec6892b7d27a4ded"}
	cupy13ARMWheel = pypiFile{"cupy-cuda13x", "cupy_cuda13x-14.2.0-cp312-cp312-manylinux2014_aarch64.whl",
		"0a9b6538079c5151dcd99cf44b94cc3f1242315b7de0498b4619cef9b2a7c2c8"}
	jaxCUDA12Wheel = pypiFile{"jax-cuda12-plugin", "jax_cuda12_plugin-0.12.0.1-cp312-cp312-manylinux_2_27_x86_64.whl",
		"61dc67a8341ad6a0bb59631307914581ad16055f6c5635a2b7e57dfffb77e466"}
	jaxCUDA12ARMWheel = pypiFile{"jax-cuda12-plugin", "jax_cuda12_plugin-0.12.0.1-cp312-cp312-manylinux_2_27_aarch64.whl",
		"a881dbef416310f502eac637654f9a9dde7fe4b319de57a183875f886dd62ac7"}
	jaxCUDA12PJRTWheel = pypiFile{"jax-cuda12-pjrt", "jax_cuda12_pjrt-0.12.0.1-py3-none-manylinux_2_27_x86_64.whl",
		"5ec28e06198d094031c37590b4ea753ae8cde4879ab4b60baf40f0dffb673286"}
	jaxCUDA13PJRTWheel = pypiFile{"jax-cuda13-pjrt", "jax_cuda13_pjrt-0.12.0.1-py3-none-manylinux_2_27_x86_64.whl",
		"5899bb6177eda86ea532afb9a26794f2bdd04966f6a01f9028266b16c2b6cf90"}
	ctranslate2Wheel = pypiFile{"ctranslate2", "ctranslate2-4.8.5-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
		"86876e8b579ef61e4d1402002f7728fca40967fe79ac2ef71a65d1b8dc5a18ee"}
	xgboostWheel = pypiFile{"xgboost", "xgboost-3.4.1-py3-none-manylinux_2_28_x86_64.whl",
		"6adf2afa396da2ae8ed30295b50b99d4712eed9a6e0ce6cfe069290e4335e51f"}
	curandWheel = pypiFile{"nvidia-curand-cu12", "nvidia_curand_cu12-10.3.10.19-py3-none-manylinux_2_27_x86_64.whl",
		"49b274db4780d421bd2ccd362e1415c13887c53c214f0d4b761752b8f9f6aa1e"}
	nvjpegWheel = pypiFile{"nvidia-nvjpeg-cu12", "nvidia_nvjpeg_cu12-12.4.0.76-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
		"3888f10b32fbd58e80166c48e01073732d752fa5f167b7cb5b9615f1c6375a20"}
	cucimWheel = pypiFile{"cucim-cu12", "cucim_cu12-26.10.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
		"fd4caff89d9f99a7ea51386c71583c922abed0cd79ef35ee493563d780c100ad"}
	nvcompWheel = pypiFile{"nvidia-nvcomp-cu12", "nvidia_nvcomp_cu12-6.0.0.12-py3-none-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl",
		"9a05eb1c52bfaae108f971af142068ee591e91e10d125d8227b71f2e9deb054c"}
	spconv124Wheel = pypiFile{"spconv-cu124", "spconv_cu124-2.3.8-cp312-cp312-manylinux_2_28_x86_64.whl",
		"57b4afa27464d7c85e3d2543c802c609bdba2b6a393272e740b564bba870fedc"}
	cusparseLtWheel = pypiFile{"nvidia-cusparselt-cu12", "nvidia_cusparselt_cu12-0.8.1-py3-none-manylinux2014_x86_64.whl",
		"cd1b1dc9e1ad31ea3353c1f985e2bd6f9e7ae0e797d7e6ce879d7b2ace5e80e8"}
	ncclWheel = pypiFile{"nvidia-nccl-cu12", "nvidia_nccl_cu12-2.32.3-py3-none-manylinux_2_27_x86_64.whl",
		"bb94b2348e4861d5e8aa00b36c3d12d9bdf9c6369b82cbb723de0b582280a21c"}
	cufftWheel = pypiFile{"nvidia-cufft-cu12", "nvidia_cufft_cu12-11.4.1.4-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
		"c67884f2a7d276b4b80eb56a79322a95df592ae5e765cf1243693365ccab4e28"}
)

// everyGPU is the capabilities each file is judged for: every generation since
// Turing, the Blackwell members (10.3 B300, 11.0 Thor, 12.1 GB10) included.
var everyGPU = []string{"7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"}

// TestNetworkSession12WheelsAgainstCuobjdump unpacks every ELF file of twenty-one
// real wheels and holds fastpath to NVIDIA's cuobjdump on each:
//   - `inspect --cuobjdump` prints exactly what cuobjdump --list-elf then --list-ptx
//     print (a file cuobjdump itself refuses, "Invalid ELF" part way, is named in
//     the table, and fastpath must still read it);
//   - every verdict agrees with the targets cuobjdump lists, by NVIDIA's rules
//     (cudaarch.Target.RunsOn): native or family only where a listed SASS target
//     runs, ptx-jit only where a listed target runs, other-gpu only where none
//     does, and where none does the verdict is no-kernel-image or other-gpu;
//   - the verdicts in the table, read off cuobjdump's listing and each package's
//     own loading code, stay what they are.
func TestNetworkSession12WheelsAgainstCuobjdump(t *testing.T) {
	cuobjdump := oracleCuobjdump(t)
	type verdicts map[string]string // by GPU
	tests := []struct {
		wheel    pypiFile
		withCode int                 // ELF files cuobjdump lists code in
		rejected []string            // files cuobjdump refuses part way ("Invalid ELF")
		want     map[string]verdicts // by path in the wheel
	}{
		{vllmFlashAttnWheel, 0, []string{"vllm_flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so"}, map[string]verdicts{
			// 64 containers {sm_80 sm_90}, no PTX (fastpath's listing; cuobjdump stops after
			// the first entry). vllm uses it only from 8.0 up (kb loading.json): other-gpu on
			// 7.5; Blackwell has no code, and vllm 0.5.4-0.6.1.post2 would launch it there.
			"vllm_flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so": {"7.5": VerdictOtherGPU, "8.0": VerdictNative, "8.9": VerdictNative,
				"9.0": VerdictNative, "10.0": VerdictNoKernel, "12.0": VerdictNoKernel},
		}},
		{fbgemmGPUGenAIWheel, 2, nil, map[string]verdicts{
			// 297 containers {sm_80 sm_90a sm_100f}: no Turing, no consumer Blackwell.
			"fbgemm_gpu/experimental/gen_ai/fbgemm_gpu_experimental_gen_ai.so": {"7.5": VerdictNoKernel, "8.0": VerdictNative, "8.9": VerdictNative,
				"9.0": VerdictNative, "10.0": VerdictNative, "10.3": VerdictFamily, "11.0": VerdictNoKernel, "12.0": VerdictNoKernel, "12.1": VerdictNoKernel},
		}},
		{fbgemmGPUWheel, 14, nil, map[string]verdicts{
			"fbgemm_gpu/fbgemm_gpu_py.so": {"7.5": VerdictNoKernel, "9.0": VerdictNative, "10.3": VerdictFamily, "12.0": VerdictNoKernel},
		}},
		{autoAWQKernelsWheel, 5, nil, map[string]verdicts{
			// Built for torch 2.6 / CUDA 12.4 up to sm_90, no PTX: nothing for Blackwell.
			"awq_ext.cpython-312-x86_64-linux-gnu.so":    {"7.5": VerdictNative, "8.6": VerdictNative, "9.0": VerdictNative, "10.0": VerdictNoKernel, "12.0": VerdictNoKernel},
			"awq_v2_ext.cpython-312-x86_64-linux-gnu.so": {"7.5": VerdictNoKernel, "8.0": VerdictNative, "8.9": VerdictNative, "12.0": VerdictNoKernel},
		}},
		{torchTensorRTWheel, 0, nil, nil},
		{cupy13Wheel, 3, nil, map[string]verdicts{
			"cupy/cuda/cub.cpython-312-x86_64-linux-gnu.so": {"7.5": VerdictNative, "10.3": VerdictFamily, "12.0": VerdictNative, "12.1": VerdictFamily},
		}},
		{cupy13ARMWheel, 3, nil, map[string]verdicts{
			"cupy/cuda/cub.cpython-312-aarch64-linux-gnu.so": {"7.5": VerdictNative, "11.0": VerdictNative, "12.1": VerdictFamily},
		}},
		{jaxCUDA12Wheel, 3, nil, map[string]verdicts{
			"jax_cuda12_plugin/_solver.so": {"7.5": VerdictNative, "9.0": VerdictNative, "12.1": VerdictNative},
		}},
		{jaxCUDA12ARMWheel, 3, nil, nil},
		{jaxCUDA12PJRTWheel, 1, nil, map[string]verdicts{
			"jax_plugins/xla_cuda12/xla_cuda_plugin.so": {"7.5": VerdictNative, "10.0": VerdictNative, "12.0": VerdictNative},
		}},
		{jaxCUDA13PJRTWheel, 1, nil, map[string]verdicts{
			// {sm_75 sm_80 sm_90 sm_100 sm_110 sm_120 compute_120} in all 52 containers.
			"jax_plugins/xla_cuda13/xla_cuda_plugin.so": {"7.5": VerdictNative, "10.3": VerdictNative, "11.0": VerdictNative, "12.1": VerdictNative},
		}},
		{ctranslate2Wheel, 1, nil, map[string]verdicts{
			// 34 containers {sm_53 ... sm_86, compute_86}: Hopper and Blackwell JIT compute_86.
			"ctranslate2.libs/libctranslate2-a7a60d30.so.4.8.5": {"7.5": VerdictNative, "8.9": VerdictNative, "9.0": VerdictPTXJIT, "10.0": VerdictPTXJIT, "12.0": VerdictPTXJIT},
		}},
		{xgboostWheel, 1, nil, map[string]verdicts{
			// 65 containers {sm_75 sm_80 sm_90 sm_100 sm_120 compute_120}: nothing runs on
			// Thor (11.0: sm_100 is another major, compute_120 is newer).
			"xgboost/lib/libxgboost.so": {"7.5": VerdictNative, "9.0": VerdictNative, "11.0": VerdictNoKernel, "12.1": VerdictNative},
		}},
		{curandWheel, 1, nil, map[string]verdicts{"nvidia/curand/lib/libcurand.so.10": {"7.5": VerdictNative, "12.0": VerdictNative}}},
		{nvjpegWheel, 1, nil, map[string]verdicts{"nvidia/nvjpeg/lib/libnvjpeg.so.12": {"7.5": VerdictNative, "12.0": VerdictNative}}},
		{cucimWheel, 1, nil, nil},
		{nvcompWheel, 0, nil, nil},
		{spconv124Wheel, 1, nil, map[string]verdicts{
			"spconv/core_cc.cpython-312-x86_64-linux-gnu.so": {"7.5": VerdictPTXJIT, "9.0": VerdictPTXJIT, "12.0": VerdictPTXJIT},
		}},
		{cusparseLtWheel, 1, nil, map[string]verdicts{
			// 761 containers, most for one GPU each ({sm_90a}, {sm_100}, {sm_120}), which
			// cuSPARSELt picks by capability; one {sm_52 sm_80 compute_52} JITs on 9.0 and
			// 14 {sm_80 sm_87 sm_90a compute_80} JIT on 12.x.
			"nvidia/cusparselt/lib/libcusparseLt.so.0": {"8.0": VerdictNative, "8.9": VerdictNative, "9.0": VerdictPTXJIT, "10.0": VerdictPTXJIT, "12.0": VerdictPTXJIT},
		}},
		{ncclWheel, 1, nil, map[string]verdicts{
			// 20 {sm_100f} containers beside 56 for every GPU from sm_60.
			"nvidia/nccl/lib/libnccl.so.2": {"7.5": VerdictNative, "9.0": VerdictNative, "10.3": VerdictFamily, "12.0": VerdictNative, "11.0": VerdictNoKernel},
		}},
		{cufftWheel, 2, nil, nil},
	}
	var gpus []cudaarch.Capability
	for _, g := range everyGPU {
		cc, err := cudaarch.ParseCapability(g)
		if err != nil {
			t.Fatal(err)
		}
		gpus = append(gpus, cc)
	}
	for _, tc := range tests {
		t.Run(strings.TrimSuffix(tc.wheel.file, ".whl"), func(t *testing.T) {
			// The whole wheel, its dist-info RECORD included: the verdicts of a package
			// that picks its modules by GPU (kb loading.json) need it.
			dir := t.TempDir()
			var files []string
			for _, f := range unzipWhere(t, tc.wheel.fetch(t), dir, func(*zip.File) bool { return true }) {
				if isELF(t, f) {
					files = append(files, f)
				}
			}
			// Verdicts as `inspect DIR --gpu ...` gives them (Walk resolves the dist).
			walked := map[string]*File{}
			Walk([]string{dir}, func(f *File) {
				f.Judge(gpus)
				walked[f.Path] = f
			})
			withCode, judged := 0, map[string]bool{}
			for _, f := range files {
				rel := filepath.ToSlash(strings.TrimPrefix(f, dir+string(filepath.Separator)))
				wantOut, wantErr := runCuobjdump(cuobjdump, f)
				if strings.Contains(wantErr, "does not contain device code") {
					if w := walked[f]; w != nil && w.HasCUDA() {
						t.Errorf("%s: cuobjdump finds no device code, fastpath %d entries", rel, w.Entries)
					}
					continue
				}
				r := Read(f)
				if strings.Contains(wantErr, "Invalid ELF") {
					if !slices.Contains(tc.rejected, rel) {
						t.Errorf("%s: cuobjdump refuses it (%s)", rel, lastLine(wantErr))
					}
					if !r.HasCUDA() || r.Error != "" {
						t.Errorf("%s: fastpath read %d entries (%s) where cuobjdump gave up", rel, r.Entries, r.Error)
					}
				} else {
					withCode++
					var gotOut, gotErr bytes.Buffer
					if err := Cuobjdump(&gotOut, &gotErr, r, "/", false); err != nil {
						t.Errorf("%s: %v", rel, err)
					}
					if gotOut.String() != wantOut || gotErr.String() != wantErr {
						t.Errorf("%s: inspect --cuobjdump differs from cuobjdump:\nfastpath:\n%.1500s%.500s\ncuobjdump:\n%.1500s%.500s", rel, gotOut.String(), gotErr.String(), wantOut, wantErr)
					}
				}
				w := walked[f]
				if w == nil {
					t.Errorf("%s: not listed by the folder walk", rel)
					continue
				}
				listed := listedTargets(t, wantOut)
				if slices.Contains(tc.rejected, rel) {
					listed = nil // cuobjdump's partial listing is no oracle
				}
				for _, v := range w.Verdicts {
					if listed != nil {
						checkAgainstListing(t, rel, v, listed)
					}
					if want, ok := tc.want[rel][v.GPU]; ok && v.Verdict != want {
						t.Errorf("%s on %s: %s (%s), want %s", rel, v.GPU, v.Verdict, v.Detail, want)
					}
				}
				judged[rel] = true
			}
			if withCode != tc.withCode {
				t.Errorf("%d ELF files cuobjdump lists device code in, want %d", withCode, tc.withCode)
			}
			for rel := range tc.want {
				if !judged[rel] {
					t.Errorf("%s: not in the wheel, or no device code", rel)
				}
			}
		})
	}
}

// cuobjdumpName matches the target of a line of cuobjdump's listing:
// "ELF file    1: x.1.sm_90a.cubin", "PTX file    2: x.2.sm_120f.ptx".
var cuobjdumpName = regexp.MustCompile(`(?m)^(ELF|PTX) file +\d+: .*\.sm_(\d+[af]?)\.(cubin|ptx)$`)

// listedTargets reads the SASS and PTX targets cuobjdump's --list-elf and
// --list-ptx output names (its PTX lines say sm_XY for compute_XY).
func listedTargets(t *testing.T, listing string) []cudaarch.Target {
	t.Helper()
	var ts []cudaarch.Target
	for _, m := range cuobjdumpName.FindAllStringSubmatch(listing, -1) {
		name := "sm_" + m[2]
		if m[1] == "PTX" {
			name = "compute_" + m[2]
		}
		tg, err := cudaarch.ParseTarget(name)
		if err != nil {
			t.Fatalf("cuobjdump listed %q: %v", m[0], err)
		}
		ts = append(ts, tg)
	}
	return ts
}

// checkAgainstListing holds one verdict to the targets cuobjdump lists in the file,
// by NVIDIA's compatibility rules (the listing does not say which container holds
// which entry, so only what follows from the whole file is checked).
func checkAgainstListing(t *testing.T, rel string, v Verdict, listed []cudaarch.Target) {
	t.Helper()
	cc, err := cudaarch.ParseCapability(v.GPU)
	if err != nil {
		t.Fatal(err)
	}
	sassRuns, ptxRuns := false, false
	for _, tg := range listed {
		switch c := tg.RunsOn(cc); {
		case c >= cudaarch.Family:
			sassRuns = true
		case c == cudaarch.PTXJIT:
			ptxRuns = true
		}
	}
	switch v.Verdict {
	case VerdictNative, VerdictFamily:
		if !sassRuns && v.Containers > v.KernelLess {
			t.Errorf("%s on %s: %s, but no SASS cuobjdump lists runs there", rel, v.GPU, v.Verdict)
		}
	case VerdictPTXJIT:
		if !ptxRuns {
			t.Errorf("%s on %s: ptx-jit, but no PTX cuobjdump lists JIT-compiles there", rel, v.GPU)
		}
	case VerdictOtherGPU:
		if sassRuns || ptxRuns {
			t.Errorf("%s on %s: other-gpu, but cuobjdump lists code that runs there", rel, v.GPU)
		}
	}
	if !sassRuns && !ptxRuns && v.Verdict != VerdictNoKernel && v.Verdict != VerdictOtherGPU && v.Containers > v.KernelLess {
		t.Errorf("%s on %s: %s (%s), but nothing cuobjdump lists runs there", rel, v.GPU, v.Verdict, v.Detail)
	}
}

// isELF says whether the file starts with the ELF magic.
func isELF(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var magic [4]byte
	_, err = f.Read(magic[:])
	return err == nil && string(magic[:]) == "\x7fELF"
}
