package explain

import (
	"path"
	"slices"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// cudaLibraryName matches the file name of one of NVIDIA's CUDA libraries
// (the toolkit's or a pip nvidia-* wheel's), never an extension's.
var cudaLibraryName = lazyregexp.New(`^lib(?:nvJitLink|cublasLt|cublas|cusparseLt|cusparse|cufft|curand|cusolver|nvrtc|nccl|cupti|nvToolsExt|cufile|cudnn[A-Za-z_]*)\.so`)

// symbolProvider is the library a versioned symbol belongs to, as the
// loader words it: "undefined symbol: __nvJitLinkComplete_12_4, version
// libnvJitLink.so.12".
var symbolProvider = lazyregexp.New(`, version (lib[A-Za-z_]+\.so\.[0-9]+)`)

// torchCUDALibrary reports whether so, the module an undefined symbol
// stopped, is one of the CUDA libraries torch loads: a CUDA library by
// name, in pip's nvidia-* wheels or torch's own folder, or loaded while
// torch was being imported. Such a library was not built against another
// torch: another copy of a library it needs was found first
// (pytorch/pytorch#131312, #111469).
func torchCUDALibrary(so string, frames []string) bool {
	if so == "" || !cudaLibraryName.MatchString(path.Base(so)) {
		return false
	}
	if strings.Contains(so, "/nvidia/") || strings.Contains(so, "/torch/lib/") {
		return true
	}
	for _, f := range frames {
		if strings.Contains(f, "torch/__init__.py") {
			return true
		}
	}
	return false
}

// cudaWheel is the pip wheel (without its -cu suffix) and the folder under
// site-packages/nvidia/ that hold a CUDA library whose soname major is the
// CUDA major it belongs to; libraries whose soname major is not (cuFFT 11
// in CUDA 12, cuDNN, NCCL) have none here, so no wheel is named for them.
var cudaWheel = map[string][2]string{
	"nvJitLink": {"nvidia-nvjitlink", "nvjitlink"},
	"cublas":    {"nvidia-cublas", "cublas"},
	"cublasLt":  {"nvidia-cublas", "cublas"},
	"cusparse":  {"nvidia-cusparse", "cusparse"},
	"nvrtc":     {"nvidia-cuda-nvrtc", "cuda_nvrtc"},
	"cupti":     {"nvidia-cuda-cupti", "cuda_cupti"},
}

var libSoname = lazyregexp.New(`^lib([A-Za-z]+)\.so\.([0-9]+)`)

// wheelFor is the pip wheel that holds lib (libnvJitLink.so.12:
// nvidia-nvjitlink-cu12) and its folder under site-packages/nvidia, or ""
// when the soname does not say the CUDA major (or names CUDA 13, whose
// wheels fastpath does not name).
func wheelFor(lib string) (wheel, dir string) {
	m := libSoname.FindStringSubmatch(lib)
	if m == nil {
		return "", ""
	}
	w, ok := cudaWheel[m[1]]
	if !ok || (m[2] != "11" && m[2] != "12") || (m[1] == "nvJitLink" && m[2] != "12") {
		return "", ""
	}
	return w[0] + "-cu" + m[2], w[1]
}

// sitePackagesOf is the site-packages folder an absolute path of the log
// lies in ("" for a relative, elided or temporary build path, which a fix
// cannot name).
func sitePackagesOf(p string) string {
	i := strings.Index(p, "/site-packages/")
	if i < 0 || !strings.HasPrefix(p, "/") || strings.Contains(p, "pip-build-env") || strings.Contains(p, "/...") {
		return ""
	}
	return p[:i+len("/site-packages")]
}

// cudaLibraryCopyFixes: torch's CUDA library resolved against an older
// copy of a library it needs (caps: so, symbol, provider). The loader must
// find torch's own copy first (pytorch/pytorch#111469: the nvjitlink
// wheel's folder first on LD_LIBRARY_PATH), or the older wheel is
// upgraded: a CUDA library's later minor releases keep the symbols of the
// earlier ones.
func (e *env) cudaLibraryCopyFixes(caps map[string]string) []finding.Fix {
	provider := caps["provider"]
	if provider == "" {
		provider = "the library it needs"
	}
	wheel, dir := wheelFor(caps["provider"])
	title := "Let torch load its own " + provider
	if wheel != "" {
		title += " (the " + wheel + " wheel's)"
	}
	title += ": take the folder that holds the older copy (a CUDA toolkit's lib64, a conda environment's lib; echo $LD_LIBRARY_PATH) off LD_LIBRARY_PATH, or put torch's copy first"
	first := manual(title)
	if sp := sitePackagesOf(caps["so"]); sp != "" && dir != "" && caps["so_cut"] == "" {
		first.Commands = []string{remedy.LibraryPath(sp + "/nvidia/" + dir + "/lib")}
	}
	fixes := []finding.Fix{first}
	if wheel != "" {
		fixes = append(fixes, finding.Fix{
			Title:    "Or, when LD_LIBRARY_PATH holds no other CUDA: upgrade " + wheel + ", older than the " + path.Base(caps["so"]) + " that needs it (later releases of a CUDA 12 library keep the earlier releases' symbols)",
			Commands: []string{e.pip("--upgrade", wheel)},
		})
	}
	return fixes
}

// cudaLibraryMissingFixes: import torch found one of its CUDA libraries
// nowhere (caps: lib). The nvidia-* wheel that holds it is put back.
func (e *env) cudaLibraryMissingFixes(caps map[string]string) []finding.Fix {
	lib := caps["lib"]
	again := "Or reinstall torch with its dependencies (not --no-deps), from the index of its CUDA build: pip then installs every nvidia-* wheel it lists"
	if wheel, _ := wheelFor(lib); wheel != "" {
		return []finding.Fix{
			{Title: "Put back " + wheel + ", the wheel torch depends on for " + lib + " (`pip check` names every missing dependency)", Commands: []string{e.pip(wheel)}},
			manual(again),
		}
	}
	return []finding.Fix{manual("Put back the nvidia-* wheel torch depends on for " + lib + ": `pip check` names it"), manual(again)}
}

// torchForNVCC is the other way out of an nvcc/torch CUDA mismatch: keep
// the nvcc and install a torch built for its CUDA release, when
// download.pytorch.org has such builds (krrish94/chamferdist#26: nvcc 11.8
// kept, torch reinstalled from the cu118 index). With the log's torch
// release among them the command pins it; otherwise the fix names the index
// and the newest release it holds, to be chosen by hand.
func (e *env) torchForNVCC(nvcc, torchMM string) (finding.Fix, bool) {
	mm, _, _, ok := kb.MajorMinor(nvcc)
	if !ok || mm == torchMM {
		return finding.Fix{}, false
	}
	tag := "cu" + strings.ReplaceAll(mm, ".", "")
	index := "https://download.pytorch.org/whl/" + tag
	cuda := kb.CUDA()
	newest := ""
	for rel, cudas := range cuda.TorchReleaseCUDA.Rows {
		if slices.Contains(cudas, mm) && (newest == "" || kb.CompareDotted(newest, rel) < 0) {
			newest = rel
		}
	}
	if newest == "" {
		return finding.Fix{}, false
	}
	if base := e.scan.TorchVersion; base != "" {
		base, _, _ = strings.Cut(base, "+")
		if cudas, known := cuda.TorchReleaseCUDAs(base); known && slices.Contains(cudas, mm) {
			return finding.Fix{
				Title:    "Or keep nvcc " + mm + " and install the same torch " + base + " built for CUDA " + mm,
				Commands: []string{e.pip("--force-reinstall", "torch=="+base, "--index-url", index)},
			}, true
		}
	}
	return manual("Or keep nvcc " + mm + " and install a torch built for CUDA " + mm + " from " + index + " (torch " + newest + " is the newest release with such a build), with the torchvision and torchaudio of that release"), true
}
