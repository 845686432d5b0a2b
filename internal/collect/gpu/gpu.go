// Package gpu collects the NVIDIA driver and devices from /proc/driver/nvidia,
// /sys/bus/pci and, on the live host, nvidia-smi.
package gpu

import (
	"context"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect reads the GPU facts; overrides (--gpu) replace detected devices.
func Collect(ctx context.Context, src source.Source, overrides []string, timeout time.Duration) (facts.GPU, []string) {
	return facts.GPU{}, nil // TODO(helper): implement
}
