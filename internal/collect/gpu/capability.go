package gpu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
)

// ParseCapability turns a --gpu value into a compute capability "M.m":
// "12.0", "9.0", "sm_120", "sm_90a", "compute_90", "120", "90".
func ParseCapability(s string) (string, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if maj, min, ok := strings.Cut(v, "."); ok {
		a, err1 := strconv.Atoi(maj)
		b, err2 := strconv.Atoi(min)
		if err1 == nil && err2 == nil && a > 0 && a < 100 && b >= 0 && b < 10 {
			return fmt.Sprintf("%d.%d", a, b), nil
		}
		return "", fmt.Errorf("--gpu %q: not a compute capability (want 12.0 or sm_120)", s)
	}
	v = strings.TrimPrefix(strings.TrimPrefix(v, "sm_"), "compute_")
	v = strings.TrimRight(v, "af")
	n, err := strconv.Atoi(v)
	if err != nil || n < 10 || n > 999 {
		return "", fmt.Errorf("--gpu %q: not a compute capability (want 12.0 or sm_120)", s)
	}
	return fmt.Sprintf("%d.%d", n/10, n%10), nil
}

// OverrideDevices makes the devices --gpu stands for.
func OverrideDevices(gpus []string) ([]facts.Device, error) {
	var devs []facts.Device
	for i, g := range gpus {
		cc, err := ParseCapability(g)
		if err != nil {
			return nil, err
		}
		devs = append(devs, facts.Device{Index: i, Capability: cc, CapabilityFrom: "--gpu"})
	}
	return devs, nil
}
