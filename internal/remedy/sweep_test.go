package remedy

import (
	"slices"
	"strings"
	"testing"
)

// TestExportHomePipLinks: pointing builds at an nvcc from NVIDIA's pip wheels also
// makes the links those wheels lack (lib64, libcudart.so), as the pip route does;
// a toolkit folder gets the exports only. cli's TestNetworkDoctorPipNVCCFixBuilds
// builds a real extension with exactly these commands.
func TestExportHomePipLinks(t *testing.T) {
	pip := ExportHome("/opt/venv/lib/python3.12/site-packages/nvidia/cu13", "13.0.88")
	if !slices.ContainsFunc(pip.Commands, func(c string) bool { return strings.Contains(c, "libcudart.so.13") }) ||
		!slices.ContainsFunc(pip.Commands, func(c string) bool { return strings.Contains(c, "lib64") }) {
		t.Errorf("pip nvcc: %q lacks the lib64 and libcudart.so links", pip.Commands)
	}
	for _, home := range []string{"/usr/local/cuda-13.0", "/opt/conda/envs/x", "/opt/venv/lib/python3.12/site-packages/nvidia/cu13x"} {
		if r := ExportHome(home, "13.0.88"); len(r.Commands) != 2 {
			t.Errorf("%s: %q, want the two exports only", home, r.Commands)
		}
	}
	if r := ExportHome("/opt/venv/lib/python3.12/site-packages/nvidia/cu13", ""); len(r.Commands) != 2 {
		t.Errorf("unknown version: %q, want the two exports only", r.Commands)
	}
}
