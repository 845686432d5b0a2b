package explain

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// missingCaseFixes are the steps for findings the fix helpers (fixes.go, the
// remedy package at merge time) have no case for yet: ninja missing, a
// CPU-only torch, a GPU held by other processes. Each is built from the
// log's captures and facts; what they do not say stays a manual step.
func (e *env) missingCaseFixes(id finding.ID, caps map[string]string) []finding.Fix {
	switch id {
	case finding.MissingNinja:
		return []finding.Fix{{
			Title:    "Install ninja into the environment that builds (torch's extension builder runs it from PATH)",
			Commands: []string{e.pip("ninja")},
		}}
	case finding.TorchCPUOnly:
		// xformers names the CUDA build it wants: "built for 2.1.2+cu121".
		built := caps["built_torch"]
		if base, local, ok := strings.Cut(built, "+cu"); ok && cudaOfTag(local) != "" {
			return []finding.Fix{{
				Title:    fmt.Sprintf("Replace the CPU-only torch with torch %s built for CUDA %s, the build the extension was made for", base, cudaOfTag(local)),
				Commands: []string{e.pip("--force-reinstall", "torch=="+base, "--index-url", torchIndex(cudaOfTag(local)))},
			}}
		}
		return []finding.Fix{{
			Title:    "Replace the CPU-only torch with a CUDA build (manual: the log does not say which CUDA; pick the newest the driver runs, `nvidia-smi` prints it, from https://download.pytorch.org/whl/cuXYZ)",
			Commands: []string{},
		}}
	case finding.GPUBusy:
		return []finding.Fix{{
			Title:    "See which processes hold the GPU, then stop them or run on a free GPU (CUDA_VISIBLE_DEVICES)",
			Commands: []string{"nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv"},
		}}
	}
	return nil
}
