package explain

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// missingCaseFixes are the steps for findings fixes.go has no case for: ninja missing, a
// CPU-only torch, a GPU held by other processes. Each is built from the
// log's captures and facts; what they do not say stays a manual step.
func (e *env) missingCaseFixes(id finding.ID, caps map[string]string) []finding.Fix {
	switch id {
	case finding.MissingNinja:
		return []finding.Fix{fix(remedy.Ninja(e.rctx()))}
	case finding.TorchCPUOnly:
		if caps["conda_build"] != "" || caps["conda_spec_build"] != "" {
			// conda's own CPU build: conda replaces it (pytorch/pytorch#32369).
			return []finding.Fix{fix(remedy.CondaTorchCUDA())}
		}
		// xformers names the CUDA build it wants: "built for 2.1.2+cu121".
		built := caps["built_torch"]
		if base, local, ok := strings.Cut(built, "+cu"); ok && cudaOfTag(local) != "" {
			r := remedy.TorchInstall(e.rctx(), base, cudaOfTag(local), true)
			if remedy.TorchBuildExists(base, cudaOfTag(local)) {
				r.Title = fmt.Sprintf("Replace the CPU-only torch with torch %s built for CUDA %s, the build the extension was made for", base, cudaOfTag(local))
			}
			return []finding.Fix{fix(r)}
		}
		if dc := caps["driver_cuda"]; dc != "" && dc[0] >= '0' && dc[0] <= '9' {
			// The log's nvidia-smi says the newest CUDA the driver runs.
			for _, b := range kb.CUDA().TorchWheels.Rows {
				if kb.CompareDotted(b.CUDA, dc) <= 0 {
					r := remedy.TorchInstall(e.rctx(), e.torchBase(), b.CUDA, true)
					r.Title = fmt.Sprintf("Replace the CPU-only torch with torch %s built for CUDA %s, which this driver (CUDA %s at most) runs", e.torchBase(), b.CUDA, dc) + e.pythonNote(e.torchBase())
					return []finding.Fix{e.pythonGate(fix(r), e.torchBase())}
				}
			}
		}
		title := "Replace the CPU-only torch with a CUDA build (manual: the log does not say which CUDA; pick the newest the driver runs, `nvidia-smi` prints it, from https://download.pytorch.org/whl/cuXYZ)"
		if lf := e.log; lf == nil || (lf.GPU == nil && lf.Driver == nil && lf.DriverCUDA == nil && lf.Capability == nil) {
			// Nothing in the log shows an NVIDIA GPU: a CPU-only torch is
			// the right one on a machine without one.
			title += "; that is for a machine with an NVIDIA GPU: without one, torch's CPU build is the right one and the program has to run on the CPU (its device option, no .cuda() calls)"
		}
		return []finding.Fix{{Title: title, Commands: []string{}}}
	case finding.GPUBusy:
		r := remedy.GPUProcesses()
		r.Title = "See which processes hold the GPU, then stop them or run on a free GPU (CUDA_VISIBLE_DEVICES)"
		return []finding.Fix{fix(r)}
	}
	return nil
}
