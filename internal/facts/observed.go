package facts

import (
	"strconv"
	"strings"
)

// NormalizePCIDevice spells a PCI device id as 0x2335 whether it was read as
// 0x2335, 2335 or nvidia-smi's 0x233510DE (vendor in the low half); "" when
// it is not one.
func NormalizePCIDevice(id string) string {
	s := strings.ToLower(strings.TrimSpace(id))
	s = strings.TrimPrefix(s, "0x")
	if len(s) == 8 && strings.HasSuffix(s, "10de") {
		s = s[:4]
	}
	if len(s) == 0 || len(s) > 4 {
		return ""
	}
	n, err := strconv.ParseUint(s, 16, 16)
	if err != nil {
		return ""
	}
	return "0x" + strconv.FormatUint(n|0x10000, 16)[1:]
}

// ClearJudgements empties the fields that are the knowledge base's
// judgements of the observations (Driver.CUDA, a capability from the GPU
// table), leaving observations only: what a saved facts file should hold.
// A facts file from an older fastpath may carry them; diagnose.Complete
// fills them again from today's KB.
func (f *Facts) ClearJudgements() {
	if d := f.GPU.Driver; d != nil && d.Version != "" {
		d.CUDA = ""
	}
	for i := range f.GPU.Devices {
		d := &f.GPU.Devices[i]
		if d.CapabilityFrom == CapabilityFromPCITable || d.CapabilityFrom == CapabilityFromNameTable {
			d.Capability, d.CapabilityFrom = "", ""
		}
	}
}
