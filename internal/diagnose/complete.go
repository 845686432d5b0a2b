package diagnose

import (
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// Complete fills the fields of f that are judgements of its observations
// against the knowledge base rather than observations: the driver's newest
// CUDA (driver.cuda, from the driver version) and a GPU's compute capability
// and name where nothing observed them (capability_from pci-table or
// name-table, from the GPU table). Collectors leave these fields empty; a
// facts file saved by an older fastpath may hold them, and Complete replaces
// what it held, so saved facts are judged by today's KB. It is idempotent;
// Run and RunWithModels call it, and callers that judge facts before Run
// (model verdicts read the capability) call it first.
func Complete(f *facts.Facts) {
	if f == nil {
		return
	}
	f.ClearJudgements()
	if d := f.GPU.Driver; d != nil && d.Version != "" {
		d.CUDA = kb.DriverMaxCUDA(d.Version)
	}
	for i := range f.GPU.Devices {
		completeDevice(&f.GPU.Devices[i])
	}
}

// completeDevice judges one device's capability from the GPU table: by PCI
// device id first (exact), then by product name. A capability that was
// observed (nvidia-smi, --gpu, or a hand-written file that names no source)
// is kept.
func completeDevice(d *facts.Device) {
	if d.Capability != "" || d.CapabilityFrom != "" {
		return // observed; ClearJudgements emptied the table's verdicts
	}
	if d.PCIDevice != "" {
		if m, ok := kb.GPUByPCIDevice(d.PCIDevice); ok {
			if d.Name == "" {
				d.Name = m.Name
			}
			d.Capability, d.CapabilityFrom = m.Capability, facts.CapabilityFromPCITable
			return
		}
	}
	if d.Name != "" {
		if m, ok := kb.GPUByName(d.Name); ok {
			d.Capability, d.CapabilityFrom = m.Capability, facts.CapabilityFromNameTable
		}
	}
}
