package remedy

import (
	"strings"
	"testing"
)

// On a V100 (sm_70) with nvcc 12.4, causal-conv1d 1.7.0's setup.py has
// no code for the GPU (sm_75 and up); 1.6.1's still builds sm_70. The
// answer says the stock build would not run, and builds 1.6.1 narrowed to
// sm_70 first.
func TestBuildFromSourceOlderReleaseForUncoveredGPU(t *testing.T) {
	c := h200()
	c.GPUs, c.GPUName = []Fact[string]{Of("7.0", FromMachine)}, Of("Tesla V100-SXM2-32GB", FromMachine)
	rs := BuildFromSource(c, "causal-conv1d", "causal-conv1d", "12.4")
	if len(rs) < 2 {
		t.Fatalf("want the 1.6.1 build before the stock one: %+v", rs)
	}
	first := rs[0]
	ids := map[string]bool{}
	for _, r := range rs {
		if ids[r.ID] {
			t.Errorf("two builds with the ID %s", r.ID)
		}
		ids[r.ID] = true
	}
	if first.ID != "build-narrowed/causal-conv1d@1.6.1" || !strings.Contains(first.Title, "1.6.1") || !strings.Contains(first.Title, "sm_70") {
		t.Errorf("first: %s %s", first.ID, first.Title)
	}
	if !strings.Contains(strings.Join(first.Commands, "\n"), "causal-conv1d==1.6.1") {
		t.Errorf("the narrowed build does not download 1.6.1: %q", first.Commands)
	}
	stock := rs[len(rs)-1]
	if strings.Contains(strings.Join(stock.Commands, "\n"), "==") {
		t.Errorf("the stock build should be the latest, unpinned: %q", stock.Commands)
	}
	var targets *Check
	for i, ch := range stock.Preconditions {
		if ch.Check == "targets" {
			targets = &stock.Preconditions[i]
		}
	}
	if targets == nil || targets.OK || !strings.Contains(targets.Detail, "1.6.2") {
		t.Errorf("the stock 1.7.0 build must say it has no code for sm_70 and name the older releases: %+v", targets)
	}
}

// Installed causal-conv1d 1.6.1 with nvcc 12.4 on an H200: its own
// setup.py's targets (sm_62 to sm_90), and the stock rebuild installs
// 1.6.1 again, not the latest.
func TestBuildFromSourceInstalledOlderRelease(t *testing.T) {
	c := h200()
	c.Machine = true
	c.Installed = map[string]string{"causal-conv1d": "1.6.1"}
	rs := BuildFromSource(c, "causal-conv1d", "causal-conv1d", "12.4")
	stock := rs[len(rs)-1]
	if cmds := strings.Join(stock.Commands, "\n"); !strings.Contains(cmds, "causal-conv1d==1.6.1") {
		t.Errorf("stock rebuild of the installed 1.6.1: %q", cmds)
	}
	if rs[0].ID != "build-narrowed/causal-conv1d" || !strings.Contains(rs[0].Title, "1.6.1") || !strings.Contains(rs[0].Title, "7 targets") {
		t.Errorf("narrowed: %s", rs[0].Title)
	}
	// Without the installed release: 1.7.0's 4 targets.
	c.Installed = nil
	rs = BuildFromSource(c, "causal-conv1d", "causal-conv1d", "12.4")
	if !strings.Contains(rs[0].Title, "1.7.0") || !strings.Contains(rs[0].Title, "4 targets") {
		t.Errorf("latest: %s", rs[0].Title)
	}
	// Older than every release read: targets unknown, no narrowing.
	c.Installed = map[string]string{"causal-conv1d": "1.0.0"}
	rs = BuildFromSource(c, "causal-conv1d", "causal-conv1d", "12.4")
	if len(rs) != 1 || !strings.Contains(strings.Join(rs[0].Commands, "\n"), "causal-conv1d==1.0.0") {
		t.Fatalf("1.0.0: %+v", rs)
	}
	for _, ch := range rs[0].Preconditions {
		if ch.Check == "targets" && !strings.Contains(ch.Detail, "not known") {
			t.Errorf("1.0.0's targets: %s", ch.Detail)
		}
	}
}

func targetsCheck(r Remedy) *Check {
	for i, ch := range r.Preconditions {
		if ch.Check == "targets" {
			return &r.Preconditions[i]
		}
	}
	return nil
}

// The packages profiled from their own setup.py this round: each build
// command carries the variable that build reads, spelled its way.
func TestBuildFromSourceOwnVariables(t *testing.T) {
	c := h200()
	for _, tc := range []struct{ pkg, want, not string }{
		{"torch-scatter", "FORCE_CUDA=1 ", "FORCE_CUDA=TRUE"},             // setup.py compares with '1'
		{"natten", "NATTEN_CUDA_ARCH=9.0 ", "TORCH_CUDA_ARCH_LIST"},       // capabilities, not sm numbers
		{"natten", "NATTEN_N_WORKERS=", "MAX_JOBS"},                       // cmake --build -j
		{"grouped-gemm", "TORCH_CUDA_ARCH_LIST=9.0 ", "FORCE"},            // torch's list, set: no device query
		{"causal-conv1d", "CAUSAL_CONV1D_FORCE_BUILD=TRUE", "FORCE_CUDA"}, // unchanged
	} {
		rs := BuildFromSource(c, tc.pkg, tc.pkg, "13.0")
		stock := rs[len(rs)-1]
		cmd := strings.Join(stock.Commands, "\n")
		if !strings.Contains(cmd, tc.want) || strings.Contains(cmd, tc.not) {
			t.Errorf("%s: want %q and no %q in %q", tc.pkg, tc.want, tc.not, cmd)
		}
		if ch := targetsCheck(stock); ch == nil || ch.Unknown {
			t.Errorf("%s: a profiled build's targets are known: %+v", tc.pkg, ch)
		}
	}
	// No GPU known: natten then builds no CUDA code at all; say so.
	c.GPUs = nil
	rs := BuildFromSource(c, "natten", "natten", "13.0")
	if ch := targetsCheck(rs[len(rs)-1]); ch == nil || ch.OK || !strings.Contains(ch.Detail, "NATTEN_CUDA_ARCH") {
		t.Errorf("natten without a GPU: %+v", ch)
	}
}

// A package fastpath has read no build of: TORCH_CUDA_ARCH_LIST is set,
// but never claimed to decide.
func TestBuildFromSourceUnprofiledIsUnknown(t *testing.T) {
	rs := BuildFromSource(h200(), "torch-cluster", "torch-cluster", "13.0")
	ch := targetsCheck(rs[len(rs)-1])
	if ch == nil || !ch.Unknown || !strings.Contains(ch.Detail, "unknown") {
		t.Fatalf("unprofiled torch-cluster: %+v", ch)
	}
}
