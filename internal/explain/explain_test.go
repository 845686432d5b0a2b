package explain

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/collect"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/source"
)

func scanFile(t *testing.T, name string) *Scan {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata/logs", name))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	s, err := Default().Scan(fh)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(fs []Finding) []finding.ID {
	out := []finding.ID{}
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

// seedFacts are the facts of the seed container: torch 2.11.0+cu128 in
// /root/venv, no nvcc anywhere, g++ 13, Ubuntu 24.04, Blackwell GPUs.
func seedFacts(t *testing.T) *facts.Facts {
	t.Helper()
	dir := t.TempDir()
	if err := fixture.Seed(dir); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(dir, source.Env{"PATH": "/root/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	f := collect.Collect(context.Background(), src, collect.Options{GPUs: []string{"12.0"}})
	f.OS.MemTotal, f.OS.MemAvail, f.OS.CPUs = 64<<30, 40<<30, 32
	return f
}

// Each realistic log gives its findings, the most likely root cause first,
// and each finding cites the lines that show it.
func TestExplainLogs(t *testing.T) {
	for _, tc := range []struct {
		log   string
		want  []finding.ID
		lines map[finding.ID][]int // lines each finding must cite (a subset)
		title map[finding.ID]string
	}{
		{"causal-conv1d-no-nvcc.log", []finding.ID{finding.NoCUDACompiler},
			map[finding.ID][]int{finding.NoCUDACompiler: {21, 39}}, map[finding.ID]string{finding.NoCUDACompiler: "causal-conv1d"}},
		{"flash-attn-build-isolation.log", []finding.ID{finding.BuildIsolationHidesTorch},
			map[finding.ID][]int{finding.BuildIsolationHidesTorch: {31}}, map[finding.ID]string{finding.BuildIsolationHidesTorch: "flash-attn"}},
		{"causal-conv1d-undefined-symbol.log", []finding.ID{finding.ExtensionABIMismatch, finding.FastPathFallback},
			map[finding.ID][]int{finding.ExtensionABIMismatch: {24}, finding.FastPathFallback: {13, 14}},
			map[finding.ID]string{finding.ExtensionABIMismatch: "c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::__cxx11::basic_string"}},
		{"torch-import-undefined-symbol.log", []finding.ID{finding.ExtensionABIMismatch}, map[finding.ID][]int{finding.ExtensionABIMismatch: {11}},
			map[finding.ID]string{finding.ExtensionABIMismatch: "torch's libtorch_cuda.so needs ncclCommWindowRegister"}},
		{"torch-sm120-no-kernel-image.log", []finding.ID{finding.TorchArchUnsupported},
			map[finding.ID][]int{finding.TorchArchUnsupported: {3, 10}}, map[finding.ID]string{finding.TorchArchUnsupported: "sm_120"}},
		{"causal-conv1d-no-kernel-image.log", []finding.ID{finding.ExtensionArchUnsupported},
			map[finding.ID][]int{finding.ExtensionArchUnsupported: {19}}, nil},
		{"mamba-gcc-unsupported.log", []finding.ID{finding.HostCompilerUnsupported},
			map[finding.ID][]int{finding.HostCompilerUnsupported: {31, 32}}, map[finding.ID]string{finding.HostCompilerUnsupported: "gcc 13 at most"}},
		{"flash-attn-cuda-mismatch.log", []finding.ID{finding.NVCCTorchCUDAMismatch},
			map[finding.ID][]int{finding.NVCCTorchCUDAMismatch: {35}}, map[finding.ID]string{finding.NVCCTorchCUDAMismatch: "nvcc is CUDA 12.4 but torch was built with CUDA 13.0"}},
		{"nvcc-compute-120.log", []finding.ID{finding.NVCCCannotTargetGPU},
			map[finding.ID][]int{finding.NVCCCannotTargetGPU: {15}}, map[finding.ID]string{finding.NVCCCannotTargetGPU: "compute_120"}},
		{"torch-driver-too-old.log", []finding.ID{finding.DriverTooOld},
			map[finding.ID][]int{finding.DriverTooOld: {4}}, map[finding.ID]string{finding.DriverTooOld: "CUDA 12.8 at most"}},
		{"cuda-insufficient-driver.log", []finding.ID{finding.DriverTooOld}, map[finding.ID][]int{finding.DriverTooOld: {9}}, nil},
		{"python-h-missing.log", []finding.ID{finding.MissingPythonHeaders}, map[finding.ID][]int{finding.MissingPythonHeaders: {20}}, nil},
		{"flash-attn-cicc-oom.log", []finding.ID{finding.BuildOutOfMemory},
			map[finding.ID][]int{finding.BuildOutOfMemory: {15, 18}}, map[finding.ID]string{finding.BuildOutOfMemory: "cicc"}},
		{"cc1plus-oom.log", []finding.ID{finding.BuildOutOfMemory}, map[finding.ID][]int{finding.BuildOutOfMemory: {7}}, map[finding.ID]string{finding.BuildOutOfMemory: "cc1plus"}},
		{"libcudart-missing.log", []finding.ID{finding.ExtensionCUDAMismatch}, map[finding.ID][]int{finding.ExtensionCUDAMismatch: {4}}, map[finding.ID]string{finding.ExtensionCUDAMismatch: "libcudart.so.11.0"}},
		{"qwen3-5-legacy-fallback.log", []finding.ID{finding.FastPathFallback}, map[finding.ID][]int{finding.FastPathFallback: {3}},
			map[finding.ID]string{finding.FastPathFallback: "flash-linear-attention causal-conv1d"}},
		{"transformers-5.17-fallback.log", []finding.ID{finding.FastPathFallback}, map[finding.ID][]int{finding.FastPathFallback: {4, 5, 6, 7}},
			map[finding.ID]string{finding.FastPathFallback: "causal_conv1d_fn, chunk_gated_delta_rule, causal_conv1d_update, fused_recurrent_gated_delta_rule"}},
		{"mamba-legacy-fallback.log", []finding.ID{finding.FastPathFallback}, map[finding.ID][]int{finding.FastPathFallback: {3}},
			map[finding.ID]string{finding.FastPathFallback: "mamba-ssm causal-conv1d"}},
		{"flash-attn-cuda-home-unset.log", []finding.ID{finding.NoCUDACompiler}, map[finding.ID][]int{finding.NoCUDACompiler: {11, 24}},
			map[finding.ID]string{finding.NoCUDACompiler: "flash-attn"}},
		{"cuda-home-invalid.log", []finding.ID{finding.CUDAHomeInvalid}, map[finding.ID][]int{finding.CUDAHomeInvalid: {15}},
			map[finding.ID]string{finding.CUDAHomeInvalid: "/usr/local/cuda-12.4"}},
		{"cuda-home-invalid-ninja.log", []finding.ID{finding.CUDAHomeInvalid}, map[finding.ID][]int{finding.CUDAHomeInvalid: {8}},
			map[finding.ID]string{finding.CUDAHomeInvalid: "/opt/cuda has no bin/nvcc"}},
		{"runtime-no-torch.log", []finding.ID{finding.TorchMissing}, map[finding.ID][]int{finding.TorchMissing: {5}}, nil},
		// The fallback warning comes first in the log, but it is the
		// consequence: the failed build is the root cause.
		{"seed-story.log", []finding.ID{finding.NoCUDACompiler, finding.FastPathFallback},
			map[finding.ID][]int{finding.NoCUDACompiler: {11, 15}, finding.FastPathFallback: {1, 2}}, nil},
		// The messages of real threads (ggml-org/llama.cpp#7822,
		// lyulyul/shine-cluster#30, RaleLee/Co-GAT#2 and YoungSeng/SRD-VC#16)
		// in the shape their logs have.
		{"libcuda-container.log", []finding.ID{finding.CUDADriverNotVisible}, map[finding.ID][]int{finding.CUDADriverNotVisible: {2}}, nil},
		{"nvml-driver-library-mismatch.log", []finding.ID{finding.DriverLibraryMismatch}, map[finding.ID][]int{finding.DriverLibraryMismatch: {4}}, nil},
		{"cudnn-version-incompatibility.log", []finding.ID{finding.CuDNNVersionMismatch}, map[finding.ID][]int{finding.CuDNNVersionMismatch: {11}},
			map[finding.ID]string{finding.CuDNNVersionMismatch: "cuDNN 8.5.0 but loaded cuDNN 8.3.3"}},
		// Triton's launcher link, in the shape of JIA-Lab-research/Seg-Zero#63:
		// ld's line, then the gcc command triton's build.py ran (the evidence).
		{"triton-lcuda.log", []finding.ID{finding.LibcudaNotLinkable}, map[finding.ID][]int{finding.LibcudaNotLinkable: {3}}, nil},
		{"healthy-training.log", []finding.ID{}, nil, nil},
	} {
		t.Run(tc.log, func(t *testing.T) {
			s := scanFile(t, tc.log)
			got := Findings(s, nil)
			if !slices.Equal(ids(got), tc.want) {
				t.Fatalf("ids = %v, want %v", ids(got), tc.want)
			}
			for _, f := range got {
				for _, l := range tc.lines[f.ID] {
					if !slices.Contains(f.Lines, l) {
						t.Errorf("%s: lines %v, want %d among them", f.ID, f.Lines, l)
					}
				}
				if want := tc.title[f.ID]; want != "" && !strings.Contains(f.Title+" "+strings.Join(f.Evidence, " "), want) {
					t.Errorf("%s: title %q / evidence %q lack %q", f.ID, f.Title, f.Evidence, want)
				}
				if strings.Contains(f.Title, "?") || strings.Contains(f.Title, "{") {
					t.Errorf("%s: unfilled title %q", f.ID, f.Title)
				}
				if len(f.Evidence) == 0 || !strings.HasPrefix(f.Evidence[0], "line ") {
					t.Errorf("%s: evidence %q should quote the log's lines", f.ID, f.Evidence)
				}
				if len(f.Fixes) == 0 {
					t.Errorf("%s: no fixes", f.ID)
				}
			}
		})
	}
}

// Every signature of the table is exercised by a realistic log: the
// source text of each must match its own pattern, and some test log must
// hit it.
func TestEverySignatureCovered(t *testing.T) {
	hit := map[string]bool{}
	entries, err := os.ReadDir("testdata/logs")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		for _, h := range scanFile(t, e.Name()).Hits {
			hit[h.Signature.Name] = true
		}
	}
	// The real logs of the corpus count too.
	for _, c := range loadCorpus(t) {
		b, err := os.ReadFile(filepath.Join("testdata/corpus", c.File))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Default().Scan(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range s.Hits {
			hit[h.Signature.Name] = true
		}
	}
	m := Default()
	for _, sig := range kb.Signatures().Signatures {
		if !hit[sig.Name] {
			t.Errorf("signature %s: no test log exercises it", sig.Name)
		}
		first, _, _ := strings.Cut(sig.Origin.Text, "\n")
		s, err := m.Scan(strings.NewReader(sig.Origin.Text))
		if err != nil {
			t.Fatal(err)
		}
		matched := false
		for _, h := range s.Hits {
			matched = matched || h.Signature.Name == sig.Name
		}
		if !matched && sig.Context == nil {
			t.Errorf("signature %s: its own source text %q does not match it", sig.Name, first)
		}
		if sig.Origin.From == "" {
			t.Errorf("signature %s: no source", sig.Name)
		}
		if !slices.Contains(kb.Signatures().Precedence.Order, sig.Finding) {
			t.Errorf("signature %s: finding %s has no precedence", sig.Name, sig.Finding)
		}
	}
}

// The NameError means no nvcc: with the seed's facts the fixes install the
// compiler matching torch's CUDA 12.8 (the diagnosis's own fixes) and then
// retry the build without isolation.
func TestFixesFromSeedFacts(t *testing.T) {
	f := seedFacts(t)
	fs := Findings(scanFile(t, "causal-conv1d-no-nvcc.log"), f)
	if len(fs) != 1 || fs[0].ID != finding.NoCUDACompiler {
		t.Fatalf("ids = %v", ids(fs))
	}
	all := flatten(fs[0])
	for _, want := range []string{
		"apt-get install -y --no-install-recommends cuda-nvcc-12-8",
		"export CUDA_HOME=/usr/local/cuda-12.8",
		"/root/venv/bin/python3 -m pip install --no-build-isolation causal-conv1d",
		"this environment's diagnosis agrees",
		"the build saw torch 2.11.0+cu128",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}

	// Out of memory: MAX_JOBS from the facts' 40 GiB available -> 4 jobs.
	fs = Findings(scanFile(t, "flash-attn-cicc-oom.log"), f)
	// flash-attn's own guidance is 9 GB a job (its setup.py), and its own
	// FLASH_ATTN_CUDA_ARCHS (not TORCH_CUDA_ARCH_LIST) picks the targets.
	if all := flatten(fs[0]); !strings.Contains(all, "MAX_JOBS=4 FLASH_ATTENTION_FORCE_BUILD=TRUE FLASH_ATTN_CUDA_ARCHS=120 /root/venv/bin/python3 -m pip install flash-attn --no-build-isolation") ||
		!strings.Contains(all, "40.0 GiB available memory (machine) / 9 GiB a job") {
		t.Errorf("oom fixes:\n%s", all)
	}
	// Build isolation: the env's own pip, no isolation.
	fs = Findings(scanFile(t, "flash-attn-build-isolation.log"), f)
	if all := flatten(fs[0]); !strings.Contains(all, "/root/venv/bin/python3 -m pip install --no-build-isolation flash-attn") {
		t.Errorf("isolation fixes:\n%s", all)
	}
	// sm_120 on the seed's torch cu128: torch for CUDA 12.8 or 13.0 has it;
	// the fix names a build with sm_120.
	fs = Findings(scanFile(t, "torch-sm120-no-kernel-image.log"), f)
	if all := flatten(fs[0]); !strings.Contains(all, "torch==2.11.0 --index-url https://download.pytorch.org/whl/cu1") || !strings.Contains(all, "sm_120") {
		t.Errorf("torch arch fixes:\n%s", all)
	}
	// gcc 13 at most: the seed is Ubuntu, so apt. mamba-ssm builds with
	// setuptools (the log says so), where torch's extension builder passes
	// -ccbin $CC: CC/CXX, never CUDAHOSTCXX (which only CMake reads).
	fs = Findings(scanFile(t, "mamba-gcc-unsupported.log"), f)
	if all := flatten(fs[0]); !strings.Contains(all, "apt-get install -y g++-13") || !strings.Contains(all, "export CXX=/usr/bin/g++-13") ||
		!strings.Contains(all, "export CC=/usr/bin/gcc-13") || strings.Contains(all, "CUDAHOSTCXX") {
		t.Errorf("gcc fixes:\n%s", all)
	}
	// Driver too old for torch cu130: the driver's CUDA 12.8 -> torch cu128.
	fs = Findings(scanFile(t, "torch-driver-too-old.log"), f)
	if all := flatten(fs[0]); !strings.Contains(all, "--index-url https://download.pytorch.org/whl/cu128") {
		t.Errorf("driver fixes:\n%s", all)
	}
	// nvcc 12.4 cannot target sm_120: CUDA 12.8 is the first that can.
	fs = Findings(scanFile(t, "nvcc-compute-120.log"), f)
	if all := flatten(fs[0]); !strings.Contains(all, "sm_120 needs nvcc 12.8 or newer") || !strings.Contains(all, "cuda-nvcc-12-8") {
		t.Errorf("target fixes:\n%s", all)
	}
	// The undefined symbol: rebuild causal-conv1d against the installed torch.
	fs = Findings(scanFile(t, "causal-conv1d-undefined-symbol.log"), f)
	if all := flatten(fs[0]); !strings.Contains(all, "--no-build-isolation --no-cache-dir --force-reinstall --no-deps causal-conv1d") || !strings.Contains(all, "torch 2.11.0+cu128") {
		t.Errorf("abi fixes:\n%s", all)
	}
	// No kernel image, from causal-conv1d's frame: rebuild it for sm_120.
	fs = Findings(scanFile(t, "causal-conv1d-no-kernel-image.log"), f)
	// causal-conv1d's setup.py passes its own -gencode list (torch then
	// ignores TORCH_CUDA_ARCH_LIST): its own sdist, narrowed to sm_120.
	if all := flatten(fs[0]); strings.Contains(all, "TORCH_CUDA_ARCH_LIST") || !strings.Contains(all, `"$FASTPATH_SDIST_DIR"/causal_conv1d-1.7.0/setup.py 120`) {
		t.Errorf("extension arch fixes:\n%s", all)
	}
	// libcudart.so.11.0 from mamba-ssm's module: torch is CUDA 12 -> rebuild.
	fs = Findings(scanFile(t, "libcudart-missing.log"), f)
	if all := flatten(fs[0]); !strings.Contains(all, "nvidia-cuda-runtime-cu11") {
		t.Errorf("runtime fixes:\n%s", all)
	}
}

func flatten(f Finding) string {
	var b strings.Builder
	b.WriteString(f.Title + "\n" + f.Detail + "\n")
	for _, e := range f.Evidence {
		b.WriteString("ev: " + e + "\n")
	}
	for _, x := range f.Fixes {
		b.WriteString("fix: " + x.Title + "\n")
		for _, c := range x.Commands {
			b.WriteString("  $ " + c + "\n")
		}
	}
	return b.String()
}
