package diagnose

import (
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
)

// TestCompleteRejudges: Complete replaces the KB verdicts an older fastpath
// saved, fills the ones fresh facts lack, and keeps observations.
func TestCompleteRejudges(t *testing.T) {
	f := &facts.Facts{GPU: facts.GPU{
		Driver: &facts.Driver{Version: "580.159.04", From: "/proc/driver/nvidia/version", CUDA: "11.0"},
		Devices: []facts.Device{
			{Index: 0, PCIDevice: "0x2335", Capability: "5.0", CapabilityFrom: facts.CapabilityFromPCITable},  // stale verdict
			{Index: 1, Name: "NVIDIA H100 80GB HBM3"},                                                         // fresh: no verdict yet
			{Index: 2, PCIDevice: "0x2335", Capability: "9.0", CapabilityFrom: "nvidia-smi"},                  // observed
			{Index: 3, Capability: "12.0", CapabilityFrom: "--gpu"},                                           // the user's flag
			{Index: 4, PCIDevice: "0xffff", Capability: "8.0", CapabilityFrom: facts.CapabilityFromNameTable}, // no longer in any table
		},
	}}
	for range 2 { // idempotent
		Complete(f)
		if got := f.GPU.Driver.CUDA; got != "13.0" {
			t.Errorf("driver.cuda %q, want 13.0", got)
		}
		want := []struct{ cc, from string }{
			{"9.0", facts.CapabilityFromPCITable}, {"9.0", facts.CapabilityFromNameTable},
			{"9.0", "nvidia-smi"}, {"12.0", "--gpu"}, {"", ""},
		}
		for i, w := range want {
			if d := f.GPU.Devices[i]; d.Capability != w.cc || d.CapabilityFrom != w.from {
				t.Errorf("device %d: %q from %q, want %q from %q", i, d.Capability, d.CapabilityFrom, w.cc, w.from)
			}
		}
	}
	if name := f.GPU.Devices[0].Name; name == "" {
		t.Error("device 0: the PCI table's name was not filled in")
	}
	Complete(nil) // no panic
	Complete(&facts.Facts{})
}
