package gpu

import (
	"context"
	"encoding/xml"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fixture"
	"github.com/fastpath-dev/fastpath/internal/source"
	"github.com/google/go-cmp/cmp"
)

// The command lines Collect runs, as LiveSource keys them.
var (
	queryGPU     = "nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,pci.device_id,compute_cap,memory.total,memory.used,driver_version --format=csv,noheader,nounits"
	queryGPUOld  = "nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,pci.device_id,memory.total,memory.used,driver_version --format=csv,noheader,nounits"
	queryApps    = "nvidia-smi --query-compute-apps=pid,process_name,gpu_uuid,used_memory --format=csv,noheader,nounits"
	h200UUID     = "GPU-460edc79-ca17-fbda-a022-009231a64a51"
	h200SMIQuery = "0, NVIDIA H200, GPU-460edc79-ca17-fbda-a022-009231a64a51, 00000000:00:06.0, 0x233510DE, 9.0, 143771, 0, 580.159.04\n"
)

// smiLog is the part of `nvidia-smi -q -x` the H200 test checks against.
type smiLog struct {
	DriverVersion string `xml:"driver_version"`
	CUDAVersion   string `xml:"cuda_version"`
	GPUs          []struct {
		ID          string `xml:"id,attr"`
		ProductName string `xml:"product_name"`
		UUID        string `xml:"uuid"`
		PCI         struct {
			DeviceID string `xml:"pci_device_id"`
			BusID    string `xml:"pci_bus_id"`
		} `xml:"pci"`
		FB struct {
			Total string `xml:"total"`
			Used  string `xml:"used"`
		} `xml:"fb_memory_usage"`
	} `xml:"gpu"`
}

func mib(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.TrimSuffix(s, " MiB"), 10, 64)
	if err != nil {
		t.Fatalf("memory %q: %v", s, err)
	}
	return n
}

func h200Tree(t *testing.T) *fixture.Tree {
	t.Helper()
	tr := fixture.New(t.TempDir())
	tr.NvidiaDriver("580.159.04", []fixture.GPU{{BusID: "0000:00:06.0", PCIDevice: "0x2335", Name: "NVIDIA H200", UUID: h200UUID}})
	tr.Exec("/usr/bin/nvidia-smi", "\x7fELF fixture nvidia-smi\n")
	if tr.Err() != nil {
		t.Fatal(tr.Err())
	}
	return tr
}

func rootOf(t *testing.T, tr *fixture.Tree, env source.Env) source.Source {
	t.Helper()
	src, err := source.Root(tr.Root, env)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func live(t *testing.T, tr *fixture.Tree, programs map[string]fixture.Program) *fixture.LiveSource {
	return fixture.NewLiveSource(rootOf(t, tr, source.Env{"PATH": "/usr/local/bin:/usr/bin:/bin"}), programs)
}

// TestH200Reference reads the H200 machine as its files and nvidia-smi's CSV
// describe it, and checks the facts against that machine's `nvidia-smi -q -x`.
func TestH200Reference(t *testing.T) {
	raw, err := os.ReadFile("testdata/h200-nvidia-smi-q-x.xml")
	if err != nil {
		t.Fatal(err)
	}
	var ref smiLog
	if err := xml.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.GPUs) != 1 {
		t.Fatalf("reference has %d GPUs", len(ref.GPUs))
	}
	rg := ref.GPUs[0]
	src := live(t, h200Tree(t), map[string]fixture.Program{queryGPU: {Stdout: h200SMIQuery}, queryApps: {Stdout: ""}})
	g, warns := Collect(context.Background(), src, nil, 0)
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	want := facts.GPU{
		Driver: &facts.Driver{Version: ref.DriverVersion, From: "/proc/driver/nvidia/version", CUDA: ref.CUDAVersion},
		Devices: []facts.Device{{
			Index: 0, Name: rg.ProductName, UUID: rg.UUID, BusID: "0000:00:06.0",
			PCIDevice: "0x" + strings.ToLower(rg.PCI.DeviceID[:4]), Capability: "9.0", CapabilityFrom: "nvidia-smi",
			MemoryTotalMiB: mib(t, rg.FB.Total), MemoryUsedMiB: mib(t, rg.FB.Used),
		}},
		Sources: []string{"/proc/driver/nvidia", "/sys/bus/pci", "nvidia-smi"},
	}
	checkObservedThenJudged(t, want, g, false)
	if NormalizeBusID(rg.PCI.BusID) != g.Devices[0].BusID || NormalizeBusID(rg.ID) != g.Devices[0].BusID {
		t.Errorf("bus id %s does not match the reference's %s", g.Devices[0].BusID, rg.PCI.BusID)
	}
	// The two queries run at the same time: compare them in sorted order.
	calls := src.Calls()
	slices.Sort(calls)
	if diff := cmp.Diff([]string{"/usr/bin/nvidia-smi " + strings.TrimPrefix(queryApps, "nvidia-smi "), "/usr/bin/nvidia-smi " + strings.TrimPrefix(queryGPU, "nvidia-smi ")}, calls); diff != "" {
		t.Errorf("programs run (-want +got):\n%s", diff)
	}
}

// checkObservedThenJudged checks that the collector's facts hold want's
// observations and none of its KB judgements (driver.cuda, a capability from
// the GPU table: a saved facts file must not freeze them), and that
// diagnose.Complete then judges them to want.
func checkObservedThenJudged(t *testing.T, want, got facts.GPU, nameFromTable bool) {
	t.Helper()
	observed := facts.Facts{GPU: cloneGPU(want)}
	observed.ClearJudgements()
	for i := range observed.GPU.Devices {
		if nameFromTable {
			observed.GPU.Devices[i].Name = ""
		}
	}
	if diff := cmp.Diff(observed.GPU, got); diff != "" {
		t.Errorf("observed GPU facts (-want +got):\n%s", diff)
	}
	judged := facts.Facts{GPU: cloneGPU(got)}
	diagnose.Complete(&judged)
	if diff := cmp.Diff(want, judged.GPU); diff != "" {
		t.Errorf("GPU facts after diagnose.Complete (-want +got):\n%s", diff)
	}
}

func cloneGPU(g facts.GPU) facts.GPU {
	if g.Driver != nil {
		d := *g.Driver
		g.Driver = &d
	}
	g.Devices = slices.Clone(g.Devices)
	return g
}

func TestCollect(t *testing.T) {
	h200Files := facts.Device{Index: 0, Name: "NVIDIA H200", UUID: h200UUID, BusID: "0000:00:06.0", PCIDevice: "0x2335", Capability: "9.0", CapabilityFrom: "pci-table"}
	h200Driver := &facts.Driver{Version: "580.159.04", From: "/proc/driver/nvidia/version", CUDA: "13.0"}
	fileSources := []string{"/proc/driver/nvidia", "/sys/bus/pci"}
	exitErr := errors.New("exit status 9")
	tests := []struct {
		name      string
		tree      func(t *testing.T) *fixture.Tree
		live      bool
		programs  map[string]fixture.Program
		overrides []string
		want      facts.GPU
		warns     []string // substrings, one per warning, in order
		calls     int
		// nameFromTable: the device's name is the GPU table's, a
		// judgement that the collector leaves to diagnose.Complete.
		nameFromTable bool
	}{
		{
			name: "root: files only, capability from the PCI table",
			tree: h200Tree,
			want: facts.GPU{Driver: h200Driver, Devices: []facts.Device{h200Files}, Sources: fileSources},
		},
		{
			name: "live without nvidia-smi",
			tree: func(t *testing.T) *fixture.Tree {
				tr := h200Tree(t)
				os.Remove(tr.Host("/usr/bin/nvidia-smi"))
				return tr
			},
			live:  true,
			want:  facts.GPU{Driver: h200Driver, Devices: []facts.Device{h200Files}, Sources: fileSources},
			warns: []string{"nvidia-smi not found on PATH"},
		},
		{
			name:     "nvidia-smi cannot reach the driver",
			tree:     h200Tree,
			live:     true,
			programs: map[string]fixture.Program{queryGPU: {Stdout: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n", Err: exitErr}},
			want:     facts.GPU{Driver: h200Driver, Devices: []facts.Device{h200Files}, Sources: fileSources},
			warns:    []string{"/usr/bin/nvidia-smi --query-gpu failed: exit status 9: NVIDIA-SMI has failed because it couldn't communicate"},
			calls:    2, // the process query starts alongside the device query
		},
		{
			name:     "nvidia-smi hangs past the timeout",
			tree:     h200Tree,
			live:     true,
			programs: map[string]fixture.Program{queryGPU: {Hang: true}},
			want:     facts.GPU{Driver: h200Driver, Devices: []facts.Device{h200Files}, Sources: fileSources},
			warns:    []string{"context deadline exceeded"},
			calls:    2, // both queries run at once; the timeout bounds them together
		},
		{
			name: "driver without compute_cap: asked again without it",
			tree: func(t *testing.T) *fixture.Tree {
				tr := fixture.New(t.TempDir())
				tr.File("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.82.01  Wed Oct 27 21:21:55 UTC 2021\nGCC version:  gcc version 9.3.0 (Ubuntu 9.3.0-17ubuntu1~20.04) \n")
				tr.Exec("/usr/bin/nvidia-smi", "")
				return tr
			},
			live: true,
			programs: map[string]fixture.Program{
				queryGPU:    {Stdout: "Field \"compute_cap\" is not a valid field to query.\n\n", Err: exitErr},
				queryGPUOld: {Stdout: "0, Tesla V100-SXM2-32GB, GPU-8f6c0a3e-2b8f-3c3e-9d2a-6b0e2c7a1f10, 00000000:1B:00.0, 0x1DB510DE, 32510, 4, 470.82.01\n"},
				queryApps:   {Stdout: "31337, python, GPU-8f6c0a3e-2b8f-3c3e-9d2a-6b0e2c7a1f10, [N/A]\n"},
			},
			want: facts.GPU{
				Driver: &facts.Driver{Version: "470.82.01", From: "/proc/driver/nvidia/version", CUDA: "11.4"},
				Devices: []facts.Device{{Index: 0, Name: "Tesla V100-SXM2-32GB", UUID: "GPU-8f6c0a3e-2b8f-3c3e-9d2a-6b0e2c7a1f10", BusID: "0000:1b:00.0",
					PCIDevice: "0x1db5", Capability: "7.0", CapabilityFrom: "pci-table", MemoryTotalMiB: 32510, MemoryUsedMiB: 4}},
				Processes: []facts.GPUProcess{{PID: 31337, Name: "python", GPUUUID: "GPU-8f6c0a3e-2b8f-3c3e-9d2a-6b0e2c7a1f10"}},
				Sources:   []string{"/proc/driver/nvidia", "nvidia-smi"},
			},
			calls: 3,
		},
		{
			name: "eight GPUs: files and nvidia-smi merged by bus id; a vfio GPU only sysfs shows is left out",
			tree: func(t *testing.T) *fixture.Tree {
				tr := fixture.New(t.TempDir())
				var gpus []fixture.GPU
				for i, bus := range []string{"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"} {
					gpus = append(gpus, fixture.GPU{BusID: "0000:" + bus + ":00.0", PCIDevice: "0x2bb5", Name: "NVIDIA RTX PRO 6000 Blackwell Server Edition",
						UUID: "GPU-0000000" + strconv.Itoa(i) + "-aaaa-bbbb-cccc-ddddeeeeffff"})
				}
				tr.NvidiaDriver("580.95.05", gpus)
				tr.File("/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 09:38:05 UTC 2025\nGCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04) \n")
				// A ninth board, passed through to a VM: on the bus, not driven.
				tr.File("/sys/bus/pci/devices/0000:e1:00.0/vendor", "0x10de\n").File("/sys/bus/pci/devices/0000:e1:00.0/device", "0x2bb5\n").File("/sys/bus/pci/devices/0000:e1:00.0/class", "0x030200\n")
				// Its audio function and a NIC: not GPUs.
				tr.File("/sys/bus/pci/devices/0000:18:00.1/vendor", "0x10de\n").File("/sys/bus/pci/devices/0000:18:00.1/device", "0x22e8\n").File("/sys/bus/pci/devices/0000:18:00.1/class", "0x040300\n")
				tr.File("/sys/bus/pci/devices/0000:19:00.0/vendor", "0x15b3\n").File("/sys/bus/pci/devices/0000:19:00.0/device", "0x1021\n").File("/sys/bus/pci/devices/0000:19:00.0/class", "0x020000\n")
				tr.Exec("/usr/local/nvidia/bin/nvidia-smi", "")
				return tr
			},
			live: true,
			programs: func() map[string]fixture.Program {
				var b strings.Builder
				for i, bus := range []string{"18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"} {
					b.WriteString(strconv.Itoa(i) + ", NVIDIA RTX PRO 6000 Blackwell Server Edition, GPU-0000000" + strconv.Itoa(i) + "-aaaa-bbbb-cccc-ddddeeeeffff, 00000000:" + bus + ":00.0, 0x2BB510DE, 12.0, 97887, " + strconv.Itoa(i*1000) + ", 580.95.05\n")
				}
				return map[string]fixture.Program{queryGPU: {Stdout: b.String()}, queryApps: {Stdout: "4242, /root/venv/bin/python3, GPU-00000001-aaaa-bbbb-cccc-ddddeeeeffff, 1000\n"}}
			}(),
			want: func() facts.GPU {
				g := facts.GPU{Driver: &facts.Driver{Version: "580.95.05", From: "/proc/driver/nvidia/version", CUDA: "13.0"},
					Processes: []facts.GPUProcess{{PID: 4242, Name: "/root/venv/bin/python3", GPUUUID: "GPU-00000001-aaaa-bbbb-cccc-ddddeeeeffff", UsedMiB: 1000}},
					Sources:   []string{"/proc/driver/nvidia", "/sys/bus/pci", "nvidia-smi"}}
				for i, bus := range []string{"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"} {
					g.Devices = append(g.Devices, facts.Device{Index: i, Name: "NVIDIA RTX PRO 6000 Blackwell Server Edition",
						UUID: "GPU-0000000" + strconv.Itoa(i) + "-aaaa-bbbb-cccc-ddddeeeeffff", BusID: "0000:" + bus + ":00.0", PCIDevice: "0x2bb5",
						Capability: "12.0", CapabilityFrom: "nvidia-smi", MemoryTotalMiB: 97887, MemoryUsedMiB: int64(i * 1000)})
				}
				return g
			}(),
			calls: 2,
		},
		{
			name: "rootfs with /sys but no driver: the PCI table names the GPU",
			tree: func(t *testing.T) *fixture.Tree {
				tr := fixture.New(t.TempDir())
				tr.File("/sys/bus/pci/devices/0000:c1:00.0/vendor", "0x10de\n").File("/sys/bus/pci/devices/0000:c1:00.0/device", "0x2901\n").File("/sys/bus/pci/devices/0000:c1:00.0/class", "0x030200\n")
				return tr
			},
			want: facts.GPU{Devices: []facts.Device{{Index: 0, Name: "B200", BusID: "0000:c1:00.0", PCIDevice: "0x2901", Capability: "10.0", CapabilityFrom: "pci-table"}},
				Sources: []string{"/sys/bus/pci"}},
			nameFromTable: true,
		},
		{
			name: "driver files only, unknown id: capability from the product name",
			tree: func(t *testing.T) *fixture.Tree {
				tr := fixture.New(t.TempDir())
				tr.NvidiaDriver("575.57.08", []fixture.GPU{{BusID: "0000:01:00.0", PCIDevice: "0x2bff", Name: "NVIDIA GeForce RTX 5090", UUID: "GPU-5090"}})
				return tr
			},
			want: facts.GPU{Driver: &facts.Driver{Version: "575.57.08", From: "/proc/driver/nvidia/version", CUDA: "12.9"},
				Devices: []facts.Device{{Index: 0, Name: "NVIDIA GeForce RTX 5090", UUID: "GPU-5090", BusID: "0000:01:00.0", PCIDevice: "0x2bff", Capability: "12.0", CapabilityFrom: "name-table"}},
				Sources: fileSources},
		},
		{
			name:      "--gpu replaces the detected devices",
			tree:      h200Tree,
			overrides: []string{"sm_120", "12.0"},
			want: facts.GPU{Driver: h200Driver, Overridden: true, Sources: fileSources,
				Devices: []facts.Device{{Index: 0, Capability: "12.0", CapabilityFrom: "--gpu"}, {Index: 1, Capability: "12.0", CapabilityFrom: "--gpu"}}},
		},
		{
			name:      "a bad --gpu keeps the detected devices",
			tree:      h200Tree,
			overrides: []string{"hopper"},
			want:      facts.GPU{Driver: h200Driver, Devices: []facts.Device{h200Files}, Sources: fileSources},
			warns:     []string{`--gpu "hopper": not a compute capability`},
		},
		{
			name: "no NVIDIA driver, live, no nvidia-smi: nothing, silently",
			tree: func(t *testing.T) *fixture.Tree {
				return fixture.New(t.TempDir()).Dir("/proc").Dir("/sys/bus/pci/devices")
			},
			live: true,
			want: facts.GPU{Devices: []facts.Device{}},
		},
		{
			name: "broken driver files: warnings, no crash",
			tree: func(t *testing.T) *fixture.Tree {
				tr := fixture.New(t.TempDir())
				tr.File("/proc/driver/nvidia/version", "\x00\x01garbage\n")
				tr.Dir("/proc/driver/nvidia/gpus/0000:00:05.0/information") // a folder, not a file
				tr.Symlink("/proc/driver/nvidia/gpus/0000:00:07.0", "/nowhere")
				tr.File("/proc/driver/nvidia/gpus/0000:00:08.0/information", "Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-????????-????-????-????-????????????\nBus Location: \t ??\n")
				tr.Symlink("/sys/bus/pci/devices/loop", "loop")
				return tr
			},
			want: facts.GPU{Devices: []facts.Device{{Index: 0, Name: "NVIDIA H100 80GB HBM3", BusID: "0000:00:08.0", Capability: "9.0", CapabilityFrom: "name-table"}},
				Sources: []string{"/proc/driver/nvidia"}},
			warns: []string{"/proc/driver/nvidia/version: no driver version", "0000:00:05.0/information: read", "0000:00:07.0/information"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.tree(t)
			var src source.Source = rootOf(t, tr, nil)
			var ls *fixture.LiveSource
			if tt.live {
				ls = live(t, tr, tt.programs)
				src = ls
			}
			g, warns := Collect(context.Background(), src, tt.overrides, time.Millisecond*50)
			if tt.want.Devices == nil {
				tt.want.Devices = []facts.Device{}
			}
			checkObservedThenJudged(t, tt.want, g, tt.nameFromTable)
			if len(warns) != len(tt.warns) {
				t.Fatalf("warnings %q, want %d like %q", warns, len(tt.warns), tt.warns)
			}
			for i, w := range tt.warns {
				if !strings.Contains(warns[i], w) || !strings.HasPrefix(warns[i], "gpu: ") {
					t.Errorf("warning %q, want one with %q", warns[i], w)
				}
			}
			if ls != nil && len(ls.Calls()) != tt.calls {
				t.Errorf("ran %q, want %d runs", ls.Calls(), tt.calls)
			}
		})
	}
}

func TestParseDriverVersion(t *testing.T) {
	tests := []struct{ text, want string }{
		{"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22-I3-AM02-24-3)  Wed Jul 30 03:04:51 UTC 2025\nGCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04) \n", "580.159.04"},
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 09:38:05 UTC 2025\nGCC version:  gcc version 13.3.0\n", "580.95.05"},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build  (dvs-builder@U16-I2-C03-12-4)  Tue Sep 23 09:08:28 UTC 2025\n", "580.95.05"},
		{"NVRM version: NVIDIA UNIX aarch64 Kernel Module  570.26  Sat Jan 25 01:02:03 UTC 2025\n", "570.26"},
		{"NVRM version: NVIDIA UNIX ppc64le Kernel Module  418.87.01  Wed Sep 25 07:07:32 UTC 2019\n", "418.87.01"},
		{"GCC version:  gcc version 13.3.0\n", ""},
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ParseDriverVersion(tt.text); got != tt.want {
			t.Errorf("ParseDriverVersion(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestNormalizeBusID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"00000000:00:06.0", "0000:00:06.0"},
		{"0000:00:06.0", "0000:00:06.0"},
		{"00000000:1B:00.0", "0000:1b:00.0"},
		{"0000C2B2:00:00.0", "c2b2:00:00.0"}, // Hyper-V's large domains
		{"1b:00.0", "0000:1b:00.0"},
		{" 0000:18:00.0\n", "0000:18:00.0"},
		{"0000:18:00.8", ""},
		{"0000:18:20.0", ""},
		{"0000:18:00", ""},
		{"000000000:18:00.0", ""},
		{"GPU-1234", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := NormalizeBusID(tt.in); got != tt.want {
			t.Errorf("NormalizeBusID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseQueryGPU(t *testing.T) {
	gpus, bad := ParseQueryGPU(h200SMIQuery+"1, NVIDIA H200, [N/A], 00000000:00:07.0, 0x233510DE, [N/A], [Insufficient Permissions], [N/A], 580.159.04\nnot, csv\n", smiGPUFields)
	want := []SMIGPU{
		{Index: 0, Name: "NVIDIA H200", UUID: h200UUID, BusID: "00000000:00:06.0", PCIDevice: "0x2335", Capability: "9.0", MemoryTotalMiB: 143771, DriverVersion: "580.159.04"},
		{Index: 1, Name: "NVIDIA H200", BusID: "00000000:00:07.0", PCIDevice: "0x2335", DriverVersion: "580.159.04"},
	}
	if diff := cmp.Diff(want, gpus); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"not, csv"}, bad); diff != "" {
		t.Errorf("bad lines (-want +got):\n%s", diff)
	}
}

func TestParseQueryApps(t *testing.T) {
	out := "2231417, /opt/torch/.venv/bin/python3, GPU-460edc79-ca17-fbda-a022-009231a64a51, 81920\n" +
		"77, python -c import a,b, GPU-460edc79-ca17-fbda-a022-009231a64a51, 512\n" +
		"12, [Insufficient Permissions], GPU-460edc79-ca17-fbda-a022-009231a64a51, [N/A]\n" +
		"x, y, z, 1\n" +
		"No running processes found\n"
	procs, bad := ParseQueryApps(out)
	want := []facts.GPUProcess{
		{PID: 2231417, Name: "/opt/torch/.venv/bin/python3", GPUUUID: h200UUID, UsedMiB: 81920},
		{PID: 77, Name: "python -c import a,b", GPUUUID: h200UUID, UsedMiB: 512},
		{PID: 12, GPUUUID: h200UUID},
	}
	if diff := cmp.Diff(want, procs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"x, y, z, 1"}, bad); diff != "" {
		t.Errorf("bad lines (-want +got):\n%s", diff)
	}
}

// FuzzParseGPUText feeds junk to every text parser of the driver's files and
// nvidia-smi's output: none may panic.
func FuzzParseGPUText(f *testing.F) {
	f.Add(h200SMIQuery)
	f.Add("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build\n")
	f.Add("Model: \t\t NVIDIA H200\nGPU UUID: \t GPU-460edc79\nBus Location: \t 0000:00:06.0\n")
	f.Add("77, python -c import a,b, GPU-1, 512\n")
	f.Fuzz(func(t *testing.T, s string) {
		ParseQueryGPU(s, smiGPUFields)
		ParseQueryApps(s)
		ParseInformation(s)
		ParseDriverVersion(s)
		if b := NormalizeBusID(s); b != "" && NormalizeBusID(b) != b {
			t.Errorf("NormalizeBusID(%q) = %q, not stable", s, b)
		}
	})
}
