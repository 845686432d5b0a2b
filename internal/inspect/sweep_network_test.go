package inspect

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/testenv"
)

// pypiFile is one file on PyPI, by project, file name and sha256 (testenv.Sdist
// downloads it once into the test cache and checks the digest).
type pypiFile struct {
	project, file, sha256 string
}

func (p pypiFile) fetch(t *testing.T) string {
	t.Helper()
	return testenv.Sdist(t, p.project, p.file, p.sha256)
}

// The smallest wheels with device code from the session-8 sweep of real CUDA wheels
// (pip download --no-deps --only-binary :all: --platform manylinux_2_28_x86_64
// --python-version 3.12), https://pypi.org/project/<project>/<version>/#files.
var (
	torchaudioWheel = pypiFile{"torchaudio", "torchaudio-2.11.1-py3-none-manylinux_2_28_x86_64.whl",
		"0173b5b51e1368aa88de3cbe4e98508b5e9df4d8d59356c4e1fbc830c96191ef"}
	torchaoWheel = pypiFile{"torchao", "torchao-0.18.0-cp310-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
		"6540b148e40ba81cbd4de86392225a076a1591146e9cebb099b3b234ba9feebe"}
	torchvisionWheel = pypiFile{"torchvision", "torchvision-0.29.2-py3-none-manylinux_2_28_x86_64.whl",
		"0875f7a23bd298813240f716c56df44ce72ddb45146589442a38edd0e1f59637"}
	jaxCUDA13Wheel = pypiFile{"jax-cuda13-plugin", "jax_cuda13_plugin-0.12.0.1-cp312-cp312-manylinux_2_27_x86_64.whl",
		"6028faf179e7aa7cc64100ed3c7c7b1b11346f5aa05d5e9e33e8fe60c5289fa1"}
	// spconv-cu126 2.3.8: 606 containers in core_cc, 411 with sm_80 SASS and 195 with
	// SASS up to sm_75 and compute_52 PTX.
	spconvWheel = pypiFile{"spconv-cu126", "spconv_cu126-2.3.8-cp312-cp312-manylinux_2_28_x86_64.whl",
		"88002b375d33561ac956e29e00dade16cad11d0e3413630a8ef35e92ddfda6e1"}
	// catboost 1.2.10: its first container (evaluator.cu) was built with
	// --generate-line-info, so every entry records its source file name; every
	// container holds compute_35 PTX, which cuobjdump 13.x refuses to list.
	catboostWheel = pypiFile{"catboost", "catboost-1.2.10-cp312-cp312-manylinux2014_x86_64.whl",
		"b28f763776e62f50da90dddf73b36399583295032667a7e46fc5c1f2593eb80f"}
)

// oracleCuobjdump installs NVIDIA's pip cuobjdump (cuobjdumpOracle) into a temporary
// folder and returns its path.
func oracleCuobjdump(t *testing.T) string {
	t.Helper()
	testenv.Python3(t)
	dir := testenv.Wheels(t, cuobjdumpOracle)
	path := filepath.Join(t.TempDir(), "cuobjdump")
	if err := unzipMember(t, glob1(t, dir, "nvidia_cuda_cuobjdump-13.5.37-*.whl"), "nvidia/cu13/bin/cuobjdump", path); err != nil {
		t.Fatal(err)
	}
	return path
}

// unzipELF extracts every member of the wheel that starts with the ELF magic below to
// and returns their paths, in the wheel's order.
func unzipELF(t *testing.T, whl, to string) []string {
	t.Helper()
	return unzipWhere(t, whl, to, func(f *zip.File) bool {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var magic [4]byte
		_, err = io.ReadFull(rc, magic[:])
		return err == nil && string(magic[:]) == "\x7fELF"
	})
}

// TestNetworkSmallWheelsAgainstCuobjdump holds `inspect --cuobjdump` to NVIDIA's
// cuobjdump on every ELF file of the four smallest wheels with device code of the
// session-8 sweep, and the verdicts on their files to NVIDIA's compatibility rules
// (SASS runs on its major at the same or a higher minor, `a` only on its exact
// capability, PTX JIT-compiles on any later one), read off cuobjdump's listings.
func TestNetworkSmallWheelsAgainstCuobjdump(t *testing.T) {
	cuobjdump := oracleCuobjdump(t)
	type verdict struct{ gpu, verdict string }
	tests := []struct {
		wheel    pypiFile
		withCode int                  // ELF files cuobjdump lists code in
		verdicts map[string][]verdict // by path in the wheel
	}{
		{torchaudioWheel, 2, map[string][]verdict{
			// sm_75 sm_80 sm_86 sm_90 sm_100 sm_120, compute_120 in every container.
			"torchaudio/lib/libtorchaudio.so": {{"7.0", VerdictNoKernel}, {"8.9", VerdictNative}, {"10.3", VerdictNative}, {"12.1", VerdictNative}},
		}},
		{torchaoWheel, 2, map[string][]verdict{
			// sm_90a only: the Hopper CUTLASS kernels, exactly 9.0.
			"torchao/_C_cutlass_90a.abi3.so": {{"8.0", VerdictNoKernel}, {"9.0", VerdictNative}, {"10.0", VerdictNoKernel}, {"12.0", VerdictNoKernel}},
			// sm_100 and compute_120: Blackwell datacenter natively, consumer Blackwell by JIT.
			"torchao/_C_mxfp8.cpython-310-x86_64-linux-gnu.so": {{"9.0", VerdictNoKernel}, {"10.0", VerdictNative}, {"10.3", VerdictNative}, {"12.0", VerdictPTXJIT}, {"11.0", VerdictNoKernel}},
		}},
		{torchvisionWheel, 2, map[string][]verdict{
			// libnvjpeg (CUDA 13): sm_75 ... sm_121, compute_121.
			"torchvision.libs/libnvjpeg.4a0b5c81.so.13": {{"7.0", VerdictNoKernel}, {"11.0", VerdictNative}, {"12.1", VerdictNative}},
		}},
		{jaxCUDA13Wheel, 3, map[string][]verdict{
			// sm_75 sm_80 sm_90 sm_100 sm_110 sm_120, compute_120.
			"jax_cuda13_plugin/_solver.so": {{"7.0", VerdictNoKernel}, {"8.6", VerdictNative}, {"10.3", VerdictNative}, {"11.0", VerdictNative}, {"12.1", VerdictNative}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.wheel.project, func(t *testing.T) {
			dir := t.TempDir()
			files := unzipELF(t, tc.wheel.fetch(t), dir)
			withCode := 0
			judged := map[string]bool{}
			for _, f := range files {
				rel := filepath.ToSlash(strings.TrimPrefix(f, dir+string(filepath.Separator)))
				wantOut, wantErr := runCuobjdump(cuobjdump, f)
				r := Read(f)
				var gotOut, gotErr bytes.Buffer
				if err := Cuobjdump(&gotOut, &gotErr, r, "/", false); err != nil {
					t.Errorf("%s: %v", rel, err)
				}
				if gotOut.String() != wantOut || gotErr.String() != wantErr {
					t.Errorf("%s: inspect --cuobjdump differs from cuobjdump:\nfastpath:\n%.1500s%.500s\ncuobjdump:\n%.1500s%.500s", rel, gotOut.String(), gotErr.String(), wantOut, wantErr)
				}
				if !strings.Contains(wantErr, "does not contain device code") {
					withCode++
				}
				want, ok := tc.verdicts[rel]
				if !ok {
					continue
				}
				judged[rel] = true
				for _, w := range want {
					cc, err := cudaarch.ParseCapability(w.gpu)
					if err != nil {
						t.Fatal(err)
					}
					if v := Judge(r.Fat, cc); v.Verdict != w.verdict {
						t.Errorf("%s on %s: %s (%s), want %s", rel, w.gpu, v.Verdict, v.Detail, w.verdict)
					}
				}
			}
			if withCode != tc.withCode {
				t.Errorf("%d ELF files with device code, want %d", withCode, tc.withCode)
			}
			for rel := range tc.verdicts {
				if !judged[rel] {
					t.Errorf("%s is not in the wheel", rel)
				}
			}
		})
	}
}

// TestNetworkVerdictDetailNamesJITTargets: a file whose containers run partly from
// SASS and partly through PTX names, in its ptx-jit detail, the PTX the JIT ones run
// from, not the SASS of the others (spconv-cu126 2.3.8 on 8.0 said "(sm_80, compute_52)").
func TestNetworkVerdictDetailNamesJITTargets(t *testing.T) {
	so := filepath.Join(t.TempDir(), "core_cc.so")
	if err := unzipMember(t, spconvWheel.fetch(t), "spconv/core_cc.cpython-312-x86_64-linux-gnu.so", so); err != nil {
		t.Fatal(err)
	}
	r := Read(so)
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	v := Judge(r.Fat, cudaarch.Capability{Major: 8, Minor: 0})
	if v.Verdict != VerdictPTXJIT || v.Native != 411 || v.PTXJIT != 195 {
		t.Fatalf("verdict %s, native %d, ptx-jit %d; want ptx-jit, 411, 195", v.Verdict, v.Native, v.PTXJIT)
	}
	if want := "195 of 606 fatbin(s) run only through PTX JIT (compute_52)"; !strings.HasPrefix(v.Detail, want) {
		t.Errorf("detail %q, want it to start %q", v.Detail, want)
	}
	if strings.Join(v.Targets, " ") != "sm_80 compute_52" {
		t.Errorf("targets %v, want every target that runs: [sm_80 compute_52]", v.Targets)
	}
}

// TestNetworkNamedEntriesCatboost: entries built with -lineinfo record their source
// file name, and cuobjdump lists them by it ("evaluator.sm_61.cubin", no number).
// cuobjdump 13.5 refuses catboost's library outright ("Support for 'sm_35' has been
// removed"), so the listing is compared on a copy whose compute_35 PTX entries say
// compute_52 instead (their header's arch field, nothing else, changed).
func TestNetworkNamedEntriesCatboost(t *testing.T) {
	cuobjdump := oracleCuobjdump(t)
	dir := t.TempDir()
	so := filepath.Join(dir, "_catboost.so")
	if err := unzipMember(t, catboostWheel.fetch(t), "catboost/_catboost.so", so); err != nil {
		t.Fatal(err)
	}
	out, errOut := runCuobjdump(cuobjdump, so)
	if out != "" || !strings.Contains(errOut, "Support for 'sm_35' has been removed") {
		t.Errorf("cuobjdump lists catboost now (the docs say it refuses):\n%.500s%.500s", out, errOut)
	}
	r := Read(so)
	if r.Error != "" || r.Fatbins != 76 || strings.Join(r.PTX, " ") != "compute_35 compute_50 compute_60 compute_70 compute_90" {
		t.Fatalf("read %d fatbins, ptx %v, error %q", r.Fatbins, r.PTX, r.Error)
	}

	patched := filepath.Join(dir, "_catboost_52.so")
	if err := os.Rename(so, patched); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(patched, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range r.Fat.Entries {
		if e.Kind == cudaarch.PTX && e.SM == 35 {
			var sm [4]byte
			binary.LittleEndian.PutUint32(sm[:], 52)
			if _, err := w.WriteAt(sm[:], e.Offset+28); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n != 76 {
		t.Fatalf("patched %d compute_35 entries, want 76", n)
	}
	wantOut, wantErr := runCuobjdump(cuobjdump, patched)
	var gotOut, gotErr bytes.Buffer
	if err := Cuobjdump(&gotOut, &gotErr, Read(patched), "/", false); err != nil {
		t.Fatal(err)
	}
	if gotOut.String() != wantOut || gotErr.String() != wantErr {
		t.Errorf("inspect --cuobjdump differs from cuobjdump:\n%s", firstDiff(gotOut.String()+gotErr.String(), wantOut+wantErr))
	}
	for _, line := range []string{"ELF file    1: evaluator.sm_61.cubin\n", "ELF file    7: _catboost_52.7.sm_61.cubin\n", "PTX file    1: evaluator.sm_52.ptx\n"} {
		if !strings.Contains(gotOut.String(), line) {
			t.Errorf("listing lacks %q", line)
		}
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: fastpath %q, cuobjdump %q", i+1, a, b)
		}
	}
	return "identical"
}

// Libraries of the session-11 sweep that ship kernels per GPU beside code for every
// GPU (https://pypi.org/project/<project>/<version>/#files).
var (
	vllmWheel = pypiFile{"vllm", "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl",
		"4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa"}
	onnxruntimeGPUWheel = pypiFile{"onnxruntime-gpu", "onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl",
		"05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7"}
	cudnnWheel = pypiFile{"nvidia-cudnn-cu12", "nvidia_cudnn_cu12-9.28.0.42-py3-none-manylinux_2_27_x86_64.whl",
		"9ff58b7f36dacd0a93e89f8f2957b52466889217963701daa15e577317cfa375"}
	cublasWheel = pypiFile{"nvidia-cublas-cu12", "nvidia_cublas_cu12-12.9.3.13-py3-none-manylinux_2_27_x86_64.whl",
		"d7d51055f161b317c7105ddaae90e71eda059026074ffef93cf7cde2886bfe72"}
)

// TestNetworkPerGPUKernels judges whole real libraries that hold, beside containers
// for every GPU, containers for some GPUs alone (arch-specific, newer, or a
// narrower build: other_arch): each runs on the GPUs it is built for, with no
// no-kernel-image verdict there, and fails where nothing with kernels runs. Until
// session 11 inspect said no-kernel-image for each of them on nearly every GPU
// (vllm on an H100, cuDNN on everything but Turing, cuBLASLt from 7.0 to 10.0,
// onnxruntime-gpu on 8.0, 9.0, 12.0). The other_arch counts are read on the same
// files with cuobjdump 13.5's listings (scripts/sweep-wheels.sh).
func TestNetworkPerGPUKernels(t *testing.T) {
	type want struct {
		gpu, verdict string
		otherArch    bool // some containers counted as other_arch
	}
	tests := []struct {
		wheel pypiFile
		lib   string
		want  []want
	}{
		{vllmWheel, "vllm/_C_stable_libtorch.abi3.so", []want{{"7.5", VerdictNative, true}, {"8.0", VerdictNative, true},
			{"9.0", VerdictPTXJIT, true}, {"10.0", VerdictPTXJIT, true}, {"12.0", VerdictPTXJIT, true}, {"7.0", VerdictNoKernel, false}}},
		{onnxruntimeGPUWheel, "onnxruntime/capi/libonnxruntime_providers_cuda.so", []want{{"7.5", VerdictNative, true},
			{"8.0", VerdictNative, true}, {"9.0", VerdictNative, true}, {"12.0", VerdictNative, true},
			{"10.0", VerdictNoKernel, false}, {"12.1", VerdictNoKernel, false}}},
		{cudnnWheel, "nvidia/cudnn/lib/libcudnn_cnn.so.9", []want{{"7.5", VerdictNative, false}, {"8.0", VerdictNative, true},
			{"9.0", VerdictNative, true}, {"10.0", VerdictNative, true}, {"12.0", VerdictNative, true}, {"12.1", VerdictFamily, true},
			{"7.0", VerdictNoKernel, false}, {"11.0", VerdictNoKernel, false}}},
		{cublasWheel, "nvidia/cublas/lib/libcublasLt.so.12", []want{{"8.0", VerdictNative, true}, {"9.0", VerdictNative, true},
			{"12.0", VerdictNative, true}, {"12.1", VerdictFamily, true}, {"11.0", VerdictNoKernel, true}}},
	}
	for _, tc := range tests {
		t.Run(tc.wheel.project, func(t *testing.T) {
			so := filepath.Join(t.TempDir(), filepath.Base(tc.lib))
			if err := unzipMember(t, tc.wheel.fetch(t), tc.lib, so); err != nil {
				t.Fatal(err)
			}
			var gpus []cudaarch.Capability
			for _, w := range tc.want {
				cc, err := cudaarch.ParseCapability(w.gpu)
				if err != nil {
					t.Fatal(err)
				}
				gpus = append(gpus, cc)
			}
			r := Read(so)
			if r.Error != "" {
				t.Fatal(r.Error)
			}
			r.Judge(gpus)
			for i, w := range tc.want {
				v := r.Verdicts[i]
				if v.Verdict != w.verdict || (v.OtherArch > 0) != w.otherArch {
					t.Errorf("%s on %s: %s, other_arch %d (%s); want %s, other_arch > 0: %v", tc.lib, w.gpu, v.Verdict, v.OtherArch, v.Detail, w.verdict, w.otherArch)
				}
			}
		})
	}
}
