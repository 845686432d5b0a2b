package kb

import (
	"slices"
	"testing"
)

// TestTorchReleaseCUDAAgrees: the CUDA builds torch_release_cuda lists for
// the release torch_wheels describes are exactly torch_wheels' rows, and
// every CUDA it names has a driver minimum (or a toolkit release) the KB
// knows, so a step on that index can be judged.
func TestTorchReleaseCUDAAgrees(t *testing.T) {
	d := CUDA()
	cudas, known := d.TorchReleaseCUDAs(d.TorchWheels.Release)
	if !known {
		t.Fatalf("torch_release_cuda lacks %s, the torch_wheels release", d.TorchWheels.Release)
	}
	var rows []string
	for _, r := range d.TorchWheels.Rows {
		rows = append(rows, r.CUDA)
	}
	slices.Sort(rows)
	got := slices.Clone(cudas)
	slices.Sort(got)
	if !slices.Equal(got, rows) {
		t.Errorf("torch %s: torch_release_cuda %v, torch_wheels %v", d.TorchWheels.Release, got, rows)
	}
	for rel, cs := range d.TorchReleaseCUDA.Rows {
		for _, c := range cs {
			if _, ok := d.ToolkitFull(c); !ok {
				if _, _, ok := d.DriverMinimum(c); !ok {
					t.Errorf("torch %s: CUDA %s is unknown to the KB", rel, c)
				}
			}
		}
	}
	if _, known := d.TorchReleaseCUDAs("1.9.0"); known {
		t.Error("1.9 is not in the table")
	}
	if cs, _ := d.TorchReleaseCUDAs("2.4.1+cu121"); !slices.Contains(cs, "12.4") || slices.Contains(cs, "12.6") {
		t.Errorf("2.4.1: %v", cs)
	}
}
