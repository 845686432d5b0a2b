package explain

import (
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

func fixText(fs []finding.Fix) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Title + "\n")
		for _, c := range f.Commands {
			b.WriteString("  $ " + c + "\n")
		}
	}
	return b.String()
}

// TestFixesFollowTheLog: a log from a cu130 build, explained on the seed
// machine (torch cu128): the compiler fixes are for the log's CUDA 13.0,
// not the machine's 12.8; without machine facts at all they still are.
func TestFixesFollowTheLog(t *testing.T) {
	caps := map[string]string{"pkg": "causal-conv1d"}
	for name, e := range map[string]*env{
		"seed machine": newEnv(seedFacts(t), &Scan{TorchVersion: "2.11.0+cu130"}),
		"log only":     newEnv(nil, &Scan{TorchVersion: "2.11.0+cu130"}),
	} {
		got := fixText(e.fixes(finding.NoCUDACompiler, caps))
		if !strings.Contains(got, "nvidia-cuda-nvcc==13.0.*") || !strings.Contains(got, "nvidia-cuda-cccl==13.0.*") || strings.Contains(got, "12-8") || strings.Contains(got, "12.8") {
			t.Errorf("%s: fixes are not for the log's CUDA 13.0:\n%s", name, got)
		}
	}
	// The machine's torch is used only where the log names none.
	e := newEnv(seedFacts(t), &Scan{})
	if got := fixText(e.fixes(finding.NoCUDACompiler, caps)); !strings.Contains(got, "cuda-nvcc-12-8") {
		t.Errorf("no torch in the log: the machine's 12.8 decides:\n%s", got)
	}
}

// TestNoPlaceholderWithoutPackage: a log that names no package gets manual
// fixes that say so, never a command with a stand-in name.
func TestNoPlaceholderWithoutPackage(t *testing.T) {
	e := newEnv(seedFacts(t), &Scan{})
	for _, id := range []finding.ID{finding.NoCUDACompiler, finding.BuildIsolationHidesTorch, finding.BuildOutOfMemory,
		finding.ExtensionABIMismatch, finding.ExtensionArchUnsupported, finding.HostCompilerUnsupported, finding.MissingPythonHeaders} {
		for _, f := range e.fixes(id, map[string]string{}) {
			for _, c := range f.Commands {
				if strings.Contains(c, "PACKAGE") || strings.Contains(c, "X.Y") || strings.HasSuffix(strings.TrimSpace(c), "--no-build-isolation") {
					t.Errorf("%s: command with a stand-in: %q", id, c)
				}
			}
		}
	}
}
