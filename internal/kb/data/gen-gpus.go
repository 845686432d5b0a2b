//go:build ignore

// gen-gpus builds gpus.json, the GPU table embedded by package kb: every
// NVIDIA GPU device id of the pci.ids database (https://pci-ids.ucw.cz, the
// file pciutils, hwdata and Debian's pci.ids package ship) whose chip is
// known below, with the compute capability of that chip from NVIDIA's CUDA
// GPUs list (developer.nvidia.com/cuda-gpus), plus product names as NVIDIA
// and nvidia-smi spell them for lookups by name.
//
// Run from the repository root:
//
//	go run internal/kb/data/gen-gpus.go /usr/share/misc/pci.ids > internal/kb/data/gpus.json
//
// Debian 12's pci.ids (2023.04.10) predates Blackwell; the committed table was
// built from pciutils' pciids repository, Version 2026.08.22.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
)

const cudaGPUs = "developer.nvidia.com/cuda-gpus"

// chipCapability maps an NVIDIA chip, as pci.ids names it before the product
// in brackets, to its compute capability (NVIDIA's CUDA GPUs list gives it
// per product; every product of one chip shares it).
var chipCapability = map[string]string{
	"GV100": "7.0",                                                                 // V100, TITAN V, Quadro GV100
	"TU102": "7.5", "TU104": "7.5", "TU106": "7.5", "TU116": "7.5", "TU117": "7.5", // T4, Quadro RTX, RTX 20, GTX 16
	"GA100": "8.0",                                                                 // A100, A30, A800
	"GA102": "8.6", "GA103": "8.6", "GA104": "8.6", "GA106": "8.6", "GA107": "8.6", // A40, A10, A16, A2, RTX A-series, RTX 30
	"AD102": "8.9", "AD103": "8.9", "AD104": "8.9", "AD106": "8.9", "AD107": "8.9", // L40(S), L4, L20, RTX Ada, RTX 40
	"GH100": "9.0",                   // H100, H200, H800, H20, GH200
	"GB100": "10.0", "GB102": "10.0", // B200, B100, GB200
	"GB110": "10.3",                                                                     // B300, GB300
	"GB10B": "11.0",                                                                     // Jetson AGX Thor (10.1 until CUDA 13.0 renamed sm_101 to sm_110)
	"GB202": "12.0", "GB203": "12.0", "GB205": "12.0", "GB206": "12.0", "GB207": "12.0", // RTX PRO Blackwell, RTX 50
	"GB20B": "12.1", // GB10 (DGX Spark), N1X
}

// names are product names for lookups by name (nvidia-smi and
// /proc/driver/nvidia print "NVIDIA H200", "Tesla T4", "NVIDIA A100-SXM4-80GB"),
// with their compute capability from NVIDIA's CUDA GPUs list. A name matches
// a device name whose leading words it is (after "NVIDIA", "Tesla" and
// "GeForce" are dropped); the longest match wins.
var names = []struct{ name, cc string }{
	// Data centre.
	{"V100", "7.0"}, {"V100S", "7.0"}, {"T4", "7.5"}, {"T4G", "7.5"},
	{"A100", "8.0"}, {"A800", "8.0"}, {"A30", "8.0"}, {"A40", "8.6"}, {"A10", "8.6"}, {"A10G", "8.6"}, {"A10M", "8.6"},
	{"A16", "8.6"}, {"A2", "8.6"},
	{"L4", "8.9"}, {"L2", "8.9"}, {"L20", "8.9"}, {"L40", "8.9"}, {"L40S", "8.9"}, {"L40G", "8.9"},
	{"H100", "9.0"}, {"H800", "9.0"}, {"H200", "9.0"}, {"H20", "9.0"}, {"GH200", "9.0"},
	{"B100", "10.0"}, {"B200", "10.0"}, {"GB200", "10.0"}, {"B300", "10.3"}, {"GB300", "10.3"},
	{"GB10", "12.1"}, {"Jetson AGX Thor", "11.0"}, {"Jetson Thor", "11.0"}, {"Thor", "11.0"},
	// Workstation.
	{"Quadro GV100", "7.0"}, {"TITAN V", "7.0"}, {"TITAN RTX", "7.5"},
	{"Quadro RTX 8000", "7.5"}, {"Quadro RTX 6000", "7.5"}, {"Quadro RTX 5000", "7.5"}, {"Quadro RTX 4000", "7.5"},
	{"RTX A6000", "8.6"}, {"RTX A5500", "8.6"}, {"RTX A5000", "8.6"}, {"RTX A4500", "8.6"}, {"RTX A4000", "8.6"},
	{"RTX A2000", "8.6"}, {"RTX A1000", "8.6"}, {"RTX A400", "8.6"},
	{"RTX 6000 Ada", "8.9"}, {"RTX 5880 Ada", "8.9"}, {"RTX 5000 Ada", "8.9"}, {"RTX 4500 Ada", "8.9"},
	{"RTX 4000 Ada", "8.9"}, {"RTX 4000 SFF Ada", "8.9"}, {"RTX 2000 Ada", "8.9"}, {"RTX 2000E Ada", "8.9"},
	{"RTX PRO 6000 Blackwell", "12.0"}, {"RTX PRO 5000 Blackwell", "12.0"}, {"RTX PRO 4500 Blackwell", "12.0"},
	{"RTX PRO 4000 Blackwell", "12.0"}, {"RTX PRO 2000 Blackwell", "12.0"}, {"RTX PRO 1000 Blackwell", "12.0"},
	{"RTX PRO 500 Blackwell", "12.0"},
	// GeForce.
	{"RTX 2060", "7.5"}, {"RTX 2070", "7.5"}, {"RTX 2080", "7.5"}, {"GTX 1650", "7.5"}, {"GTX 1660", "7.5"},
	{"RTX 3050", "8.6"}, {"RTX 3060", "8.6"}, {"RTX 3070", "8.6"}, {"RTX 3080", "8.6"}, {"RTX 3090", "8.6"},
	{"RTX 4060", "8.9"}, {"RTX 4070", "8.9"}, {"RTX 4080", "8.9"}, {"RTX 4090", "8.9"},
	{"RTX 5050", "12.0"}, {"RTX 5060", "12.0"}, {"RTX 5070", "12.0"}, {"RTX 5080", "12.0"}, {"RTX 5090", "12.0"},
}

// notGPU marks the other PCI functions of NVIDIA boards (audio, USB, switches).
var notGPU = regexp.MustCompile(`(?i)audio|usb|ucsi|nvswitch|bridge|pcie host|root port|smbus`)

var deviceLine = regexp.MustCompile(`^\t([0-9a-f]{4})  (\S+)(?: \[(.*)\])?(.*)$`)

type device struct {
	PCIDevice  string `json:"pci_device"`
	Name       string `json:"name"`
	Chip       string `json:"chip"`
	Capability string `json:"capability"`
	Source     string `json:"source"`
}

type product struct {
	Name       string `json:"name"`
	Capability string `json:"capability"`
	Source     string `json:"source"`
}

// chipOf finds the chip of a pci.ids chip word: GB20B and GB10B are chips of
// their own; GA102GL, AD104GLM, TU116M, TU104B are variants of a chip.
func chipOf(word string) (string, bool) {
	if _, ok := chipCapability[word]; ok {
		return word, true
	}
	for _, suffix := range []string{"GLM", "GL", "M", "B"} {
		if base, ok := strings.CutSuffix(word, suffix); ok {
			if _, ok := chipCapability[base]; ok {
				return base, true
			}
		}
	}
	return "", false
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run gen-gpus.go PATH/pci.ids > gpus.json")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	version := "unknown"
	var devs []device
	inNVIDIA := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "#\tVersion: "); ok {
			version = strings.TrimSpace(v)
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] != '\t' {
			inNVIDIA = strings.HasPrefix(line, "10de  ")
			continue
		}
		if !inNVIDIA || strings.HasPrefix(line, "\t\t") {
			continue
		}
		m := deviceLine.FindStringSubmatch(line)
		if m == nil || notGPU.MatchString(line) {
			continue
		}
		chip, ok := chipOf(m[2])
		if !ok {
			continue
		}
		name := m[3]
		if name == "" {
			name = strings.TrimSpace(m[2] + m[4])
		}
		devs = append(devs, device{PCIDevice: "0x" + m[1], Name: name, Chip: m[2], Capability: chipCapability[chip]})
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if len(devs) == 0 {
		fmt.Fprintln(os.Stderr, "no NVIDIA GPUs found: is this pci.ids?")
		os.Exit(1)
	}
	for i := range devs {
		chip, _ := chipOf(devs[i].Chip)
		devs[i].Source = fmt.Sprintf("pci.ids %s (id, name); %s (%s: %s)", version, cudaGPUs, chip, devs[i].Capability)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].PCIDevice < devs[j].PCIDevice })
	var prods []product
	for _, n := range names {
		prods = append(prods, product{Name: n.name, Capability: n.cc, Source: cudaGPUs})
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	// One entry a line keeps diffs of a regenerated table readable.
	fmt.Fprintf(w, "{\n\"generated_by\": \"internal/kb/data/gen-gpus.go\",\n\"pci_ids_version\": %q,\n\"devices\": [\n", version)
	for i, d := range devs {
		b, _ := json.Marshal(d)
		fmt.Fprintf(w, "%s%s\n", b, comma(i, len(devs)))
	}
	fmt.Fprint(w, "],\n\"names\": [\n")
	for i, p := range prods {
		b, _ := json.Marshal(p)
		fmt.Fprintf(w, "%s%s\n", b, comma(i, len(prods)))
	}
	fmt.Fprint(w, "]\n}\n")
}

func comma(i, n int) string {
	if i < n-1 {
		return ","
	}
	return ""
}
