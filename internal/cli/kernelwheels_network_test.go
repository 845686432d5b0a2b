package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// kernelWheels are real kernel packages from PyPI, installed side by side as
// `pip install --no-deps` would (no torch: doctor reads their files, not torch).
var kernelWheels = []struct{ project, file, sha string }{
	{"vllm", "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl", "4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa"},
	{"flashinfer-python", "flashinfer_python-0.7.4-py3-none-any.whl", "a051a62e09a2738e8b0de47a1944fd2f0f3eff01b728b662141ea660cb09dd32"},
	{"flashinfer-cubin", "flashinfer_cubin-0.6.13-py3-none-any.whl", "41e4848c2d09d220e8394489b2fb6cfec6b6ad09f897b5ab8b39fc23055f6c24"},
	{"sgl-kernel", "sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl", "57dfb3a2a3cd759f499c32e2bad5f6489b7c58f7f9a84ee00c53ec92d303aaab"},
	{"xformers", "xformers-0.0.35-py39-none-manylinux_2_28_x86_64.whl", "ccc73c7db9890224ab05f5fb60e2034f9e6c8672a10be0cf00e95cbbae3eda7c"},
	{"bitsandbytes", "bitsandbytes-0.50.2-py3-none-manylinux_2_24_x86_64.whl", "55348a9a4a21bfd99cf8c7b32fe67b4030ae5c2a05738e03c1747f65fa6ec283"},
	{"torchao", torchaoWheelFile, torchaoWheelSHA256},
}

// TestNetworkKernelWheelsEveryGPU runs doctor and `inspect DIR --gpu CC` over the
// real wheels for every current GPU generation. Every error must be true:
//   - torch-missing and extension-cuda-mismatch (libcudart.so.12/13): torch and
//     the NVIDIA runtime wheels are not installed;
//   - on 7.5 (T4) sgl-kernel 0.3.21: sgl_kernel/load_utils.py loads
//     sm100/common_ops on every GPU but 9.0, and its code starts at sm_80.
//
// Before: doctor also said "vllm 0.33.0 has no code for" a 7.5 GPU (its FA2 module,
// sm_80, which vllm uses only from 8.0 up), and inspect said no-kernel-image for
// each of flashinfer-cubin's 15,970 per-GPU cubins and vllm's per-GPU modules
// (_deepselect_C {sm_100f}, _vllm_fa3_C {sm_90a}, ...) and exited 1 on every GPU.
func TestNetworkKernelWheelsEveryGPU(t *testing.T) {
	var whls []string
	for _, w := range kernelWheels {
		whls = append(whls, testenv.Sdist(t, w.project, w.file, w.sha))
	}
	root := venvRoot(t, whls...)
	site := filepath.Join(root, "root", "venv", "lib", "python3.12", "site-packages")
	for _, gpu := range []string{"7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"} {
		t.Run(gpu, func(t *testing.T) {
			doc := runJSON(t, "doctor", "--root", root, "--env", "VIRTUAL_ENV=/root/venv", "--env", "PATH=/root/venv/bin:/usr/bin:/bin", "--gpu", gpu)
			var archErrs []string
			for _, f := range doc["findings"].([]any) {
				f := f.(map[string]any)
				id, _ := f["id"].(string)
				title, _ := f["title"].(string)
				sev, _ := f["severity"].(string)
				if sev != "error" && sev != "warning" {
					continue
				}
				switch id {
				case "torch-missing", "no-cuda-compiler", "host-compiler-unsupported", "missing-python-headers", "missing-ninja":
				case "extension-cuda-mismatch":
					if !strings.Contains(title, "needs libcudart.so.1") {
						t.Errorf("%s: %s", id, title)
					}
				case "extension-arch-unsupported":
					archErrs = append(archErrs, title)
				default:
					t.Errorf("%s %s: %s", sev, id, title)
				}
			}
			var want []string
			if gpu == "7.5" {
				want = []string{"sgl-kernel 0.3.21 has no code for GPU (compute capability 7.5)"}
			}
			if !slices.Equal(archErrs, want) {
				t.Errorf("extension-arch-unsupported: %q, want %q", archErrs, want)
			}

			// inspect: per-GPU files are other-gpu, and the exit status follows.
			for _, dir := range []string{"flashinfer_cubin", "vllm", "torchao", "sgl_kernel"} {
				var out, errb bytes.Buffer
				code := Main([]string{"inspect", filepath.Join(site, dir), "--gpu", gpu, "--format", "json"}, strings.NewReader(""), &out, &errb)
				var rep struct {
					Files []struct {
						Path     string
						Dist     string
						Verdicts []struct{ Verdict, Detail string }
					}
				}
				if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
					t.Fatalf("inspect %s: %v\n%s", dir, err, errb.String())
				}
				other, noKernel := 0, []string{}
				for _, f := range rep.Files {
					if f.Dist == "" {
						t.Errorf("%s: no dist", f.Path)
					}
					for _, v := range f.Verdicts {
						switch v.Verdict {
						case "other-gpu":
							other++
						case "no-kernel-image":
							noKernel = append(noKernel, filepath.Base(f.Path))
						}
					}
				}
				wantNo := []string{}
				if dir == "sgl_kernel" && gpu == "7.5" {
					wantNo = []string{"common_ops.abi3.so"} // sm100/common_ops: true, as doctor says
				}
				if !slices.Equal(noKernel, wantNo) {
					t.Errorf("inspect %s on %s: no-kernel-image %q, want %q", dir, gpu, noKernel, wantNo)
				}
				if wantCode := map[bool]ExitCode{true: ExitFindings, false: ExitOK}[len(wantNo) > 0]; code != wantCode {
					t.Errorf("inspect %s on %s: exit %d, want %d", dir, gpu, code, wantCode)
				}
				if dir == "flashinfer_cubin" && other == 0 {
					t.Errorf("inspect %s on %s: no other-gpu verdict", dir, gpu)
				}
			}
		})
	}
}
