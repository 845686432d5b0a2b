package facts

import (
	"fmt"
	"strings"
)

// Summary describes the devices in one line, alike ones counted together:
// "8 × NVIDIA H200, compute capability 9.0". "" when there are none.
func (g GPU) Summary() string {
	counts := map[string]int{}
	var order []string
	for _, d := range g.Devices {
		name, cc := d.Name, d.Capability
		if name == "" {
			name = "GPU"
		}
		if cc == "" {
			cc = "unknown"
		}
		k := fmt.Sprintf("%s, compute capability %s", name, cc)
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d × %s", counts[k], k))
	}
	return strings.Join(parts, "; ")
}
