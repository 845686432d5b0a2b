package kb

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var capabilityForm = regexp.MustCompile(`^[1-9][0-9]?\.[0-9]$`)

func TestGPUTableLoads(t *testing.T) {
	if err := GPUTableError(); err != nil {
		t.Fatal(err)
	}
	var tab gpuTable
	if err := json.Unmarshal(readData(t, "gpus.json"), &tab); err != nil {
		t.Fatal(err)
	}
	if len(tab.Devices) < 300 {
		t.Errorf("only %d devices in the table", len(tab.Devices))
	}
	seen := map[string]bool{}
	for _, d := range append(tab.Devices, tab.Names...) {
		if d.Source == "" || d.Name == "" {
			t.Errorf("entry without source or name: %+v", d)
		}
		if !strings.Contains(d.Source, "developer.nvidia.com/cuda-gpus") {
			t.Errorf("%+v: capability without its source", d)
		}
		if !capabilityForm.MatchString(d.Capability) {
			t.Errorf("%+v: capability not M.m", d)
		}
		if d.PCIDevice != "" {
			if NormalizePCIDevice(d.PCIDevice) != d.PCIDevice {
				t.Errorf("%+v: id not in normal form", d)
			}
			if seen[d.PCIDevice] {
				t.Errorf("%s listed twice", d.PCIDevice)
			}
			seen[d.PCIDevice] = true
		}
	}
}

func TestGPUByPCIDevice(t *testing.T) {
	tests := []struct {
		id, name, cc string
	}{
		{"0x2335", "H200 SXM 141GB", "9.0"},
		{"0x233510DE", "H200 SXM 141GB", "9.0"}, // nvidia-smi's pci.device_id
		{"2335", "H200 SXM 141GB", "9.0"},
		{"0x233b", "H200 NVL", "9.0"},
		{"0x20b0", "A100 SXM4 40GB", "8.0"},
		{"0x20B2", "A100 SXM4 80GB", "8.0"},
		{"0x2330", "H100 SXM5 80GB", "9.0"},
		{"0x2331", "H100 PCIe", "9.0"},
		{"0x2342", "GH200 120GB / 480GB", "9.0"},
		{"0x2901", "B200", "10.0"},
		{"0x3182", "B300 SXM6 AC", "10.3"},
		{"0x2bb1", "RTX PRO 6000 Blackwell Workstation Edition", "12.0"},
		{"0x2bb5", "RTX PRO 6000 Blackwell Server Edition", "12.0"},
		{"0x2bb4", "RTX PRO 6000 Blackwell Max-Q Workstation Edition", "12.0"},
		{"0x2b85", "GeForce RTX 5090", "12.0"},
		{"0x2e12", "GB10", "12.1"},
		{"0x2b00", "Jetson AGX Thor", "11.0"},
		{"0x1db1", "Tesla V100 SXM2 16GB", "7.0"},
		{"0x1eb8", "Tesla T4", "7.5"},
		{"0x2236", "A10", "8.6"},
		{"0x2235", "A40", "8.6"},
		{"0x20b7", "A30 PCIe", "8.0"},
		{"0x25b6", "A2 / A16", "8.6"},
		{"0x27b8", "L4", "8.9"},
		{"0x26b9", "L40S", "8.9"},
		{"0x26b1", "RTX 6000 Ada Generation", "8.9"},
		{"0x2230", "RTX A6000", "8.6"},
		{"0x2684", "GeForce RTX 4090", "8.9"},
		{"0x2329", "H20", "9.0"},
	}
	for _, tt := range tests {
		m, ok := GPUByPCIDevice(tt.id)
		if !ok || m.Name != tt.name || m.Capability != tt.cc {
			t.Errorf("GPUByPCIDevice(%q) = %+v, %v; want %s %s", tt.id, m, ok, tt.name, tt.cc)
		}
	}
	for _, id := range []string{"", "0x22e8" /* GB202 audio */, "0x1af1" /* NVSwitch */, "zzzz", "0x12345", "0x0000"} {
		if m, ok := GPUByPCIDevice(id); ok {
			t.Errorf("GPUByPCIDevice(%q) = %+v, want none", id, m)
		}
	}
}

func TestGPUByName(t *testing.T) {
	tests := []struct{ name, cc string }{
		{"NVIDIA H200", "9.0"},
		{"NVIDIA H200 NVL", "9.0"},
		{"NVIDIA H100 80GB HBM3", "9.0"},
		{"NVIDIA H20", "9.0"},
		{"NVIDIA GH200 480GB", "9.0"},
		{"NVIDIA A100-SXM4-80GB", "8.0"},
		{"NVIDIA A10G", "8.6"},
		{"NVIDIA A10", "8.6"},
		{"Tesla V100-SXM2-32GB", "7.0"},
		{"Tesla T4", "7.5"},
		{"NVIDIA L40S", "8.9"},
		{"NVIDIA B200", "10.0"},
		{"NVIDIA GB200", "10.0"},
		{"NVIDIA B300 SXM6 AC", "10.3"},
		{"NVIDIA GB10", "12.1"},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"},
		{"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "12.0"},
		{"NVIDIA RTX 6000 Ada Generation", "8.9"},
		{"Quadro RTX 6000", "7.5"},
		{"NVIDIA RTX A6000", "8.6"},
		{"NVIDIA GeForce RTX 5090", "12.0"},
		{"NVIDIA GeForce RTX 4090", "8.9"},
		{"NVIDIA GeForce RTX 3080 Ti", "8.6"},
	}
	for _, tt := range tests {
		m, ok := GPUByName(tt.name)
		if !ok || m.Capability != tt.cc {
			t.Errorf("GPUByName(%q) = %+v, %v; want %s", tt.name, m, ok, tt.cc)
		}
	}
	for _, n := range []string{"", "NVIDIA", "NVIDIA A1000000", "Tesla K80", "NVIDIA RTX 6000D", "AMD Instinct MI300X"} {
		if m, ok := GPUByName(n); ok {
			t.Errorf("GPUByName(%q) = %+v, want none", n, m)
		}
	}
}

func TestDriverMaxCUDA(t *testing.T) {
	tests := []struct{ driver, cuda string }{
		{"580.159.04", "13.0"}, // the H200 reference machine: nvidia-smi says 13.0
		{"580.95.05", "13.0"},
		{"580.65.06", "13.0"},
		{"580.65.05", "12.9"},
		{"575.57.08", "12.9"},
		{"570.26", "12.8"},
		{"570.195.03", "12.8"},
		{"565.57.01", "12.6"},
		{"550.54.14", "12.4"},
		{"550.54.13", "12.3"},
		{"535.104.05", "12.2"},
		{"525.60.13", "12.0"},
		{"520.61.05", "11.8"},
		{"470.82.01", "11.4"},
		{"450.36.06", "11.0"},
		{"440.33.01", ""},
		{"", ""},
		{"abc", ""},
		{"580.159.04.1", ""},
	}
	for _, tt := range tests {
		if got := DriverMaxCUDA(tt.driver); got != tt.cuda {
			t.Errorf("DriverMaxCUDA(%q) = %q, want %q", tt.driver, got, tt.cuda)
		}
	}
}

// TestDriverTableRows keeps DriverMaxCUDA and DriverMinimum on one table:
// every row's own driver maps back to its CUDA, the rows ascend, and each
// driver version parses.
func TestDriverTableRows(t *testing.T) {
	rows := CUDA().DriverMinimums.Rows
	if len(rows) < 10 {
		t.Fatalf("driver_minimums has %d rows", len(rows))
	}
	for i, r := range rows {
		if _, ok := driverVersionNumbers(r.Driver); !ok {
			t.Errorf("row %s: driver %q does not parse", r.CUDA, r.Driver)
		}
		if got := DriverMaxCUDA(r.Driver); got != r.CUDA {
			t.Errorf("DriverMaxCUDA(%s) = %q, want %s (its own row)", r.Driver, got, r.CUDA)
		}
		if full, _, ok := CUDA().DriverMinimum(r.CUDA); ok && full != r.Driver {
			t.Errorf("DriverMinimum(%s) = %s, want %s", r.CUDA, full, r.Driver)
		}
		if i > 0 && (CompareDotted(rows[i-1].CUDA, r.CUDA) >= 0 || CompareDotted(rows[i-1].Driver, r.Driver) >= 0) {
			t.Errorf("rows %s and %s are not ascending", rows[i-1].CUDA, r.CUDA)
		}
	}
}

// TestDriverMaxCUDAOnH200: what nvidia-smi printed on the project's H200
// (testdata/h200-2026-11-30/nvidia-smi-header.txt) is what DriverMaxCUDA
// answers from cuda.json.
func TestDriverMaxCUDAOnH200(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "h200-2026-11-30", "nvidia-smi-header.txt"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Driver Version: (\S+)\s+CUDA Version: (\S+)`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("no driver and CUDA version in the reading:\n%s", b)
	}
	if got := DriverMaxCUDA(m[1]); got != m[2] {
		t.Errorf("DriverMaxCUDA(%s) = %q; nvidia-smi said %s", m[1], got, m[2])
	}
	if g, ok := CUDA().GCCMaxFor("13.0"); !ok || g != 15 {
		t.Errorf("GCCMaxFor(13.0) = %d", g)
	}
	guard, err := os.ReadFile(filepath.Join("testdata", "h200-2026-11-30", "host_config-gnu-guard.txt"))
	if err != nil || !strings.Contains(string(guard), "#if __GNUC__ > 15") {
		t.Errorf("nvcc 13.0.88's host_config.h guard: %v %q", err, guard)
	}
}
