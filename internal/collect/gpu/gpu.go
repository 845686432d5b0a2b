// Package gpu collects the NVIDIA driver and devices from /proc/driver/nvidia,
// /sys/bus/pci and, on the live host, nvidia-smi.
package gpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/lazyregexp"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Where the loaded kernel driver and the PCI bus describe the GPUs.
const (
	procVersion = "/proc/driver/nvidia/version"
	procGPUs    = "/proc/driver/nvidia/gpus"
	sysPCI      = "/sys/bus/pci/devices"
)

// Names in GPU.Sources and Driver.From.
const (
	fromProc   = "/proc/driver/nvidia"
	fromSysPCI = "/sys/bus/pci"
	fromSMI    = "nvidia-smi"
)

// capFromSMI is the CapabilityFrom of a capability nvidia-smi reported. A
// device it did not describe keeps an empty capability: looking its PCI id
// or name up in the GPU table is a judgement, which diagnose.Complete makes.
const capFromSMI = "nvidia-smi"

// smiGPUFields is what is asked of nvidia-smi --query-gpu; drivers before
// compute_cap existed (R510) refuse the whole query, so it is asked again
// without it.
var smiGPUFields = []string{"index", "name", "uuid", "pci.bus_id", "pci.device_id", "compute_cap", "memory.total", "memory.used", "driver_version"}

const smiAppFields = "pid,process_name,gpu_uuid,used_memory"

// maxTextFile caps what is read of one /proc or /sys text file (they are a
// few hundred bytes).
const maxTextFile = 64 << 10

// maxDevices caps how many GPU folders are read: a malformed tree must not
// make fastpath read without end. Real hosts have at most a few dozen.
const maxDevices = 1024

// nvidiaSMIPlaces are where the driver installs nvidia-smi when PATH misses
// it (container images often add /usr/local/nvidia/bin only to some shells).
var nvidiaSMIPlaces = []string{"/usr/bin/nvidia-smi", "/usr/local/nvidia/bin/nvidia-smi"}

// Collect reads the GPU facts; overrides (--gpu) replace detected devices.
// timeout bounds each nvidia-smi run (0 means 10 s).
func Collect(ctx context.Context, src source.Source, overrides []string, timeout time.Duration) (facts.GPU, []string) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	c := collector{src: src, byBus: map[string]*device{}}
	// nvidia-smi takes tens of milliseconds, the longest part of a warm
	// doctor (docs/speed.md): it starts before the driver's files are read,
	// and its answers are applied after them, as when it ran after them.
	var smi *smiRun
	if src.Info().Live {
		smi = c.startNvidiaSMI(ctx, timeout)
	}
	c.readDriverVersion()
	c.readProcGPUs()
	c.readSysPCI()
	if smi != nil {
		c.applyNvidiaSMI(smi)
	}
	g := facts.GPU{Driver: c.driver, Devices: c.devices(), Processes: c.procs}
	for _, s := range []string{fromProc, fromSysPCI, fromSMI} {
		if c.sources[s] {
			g.Sources = append(g.Sources, s)
		}
	}
	if len(overrides) > 0 {
		devs, err := OverrideDevices(overrides)
		if err != nil {
			c.warn("%v; the detected GPUs are used", err)
		} else {
			g.Devices, g.Overridden = devs, true
		}
	}
	return g, c.warns
}

// device is one GPU as the sources describe it, merged by bus id.
type device struct {
	facts.Device
	smiIndex int  // -1 unless nvidia-smi listed it
	inProc   bool // listed in /proc/driver/nvidia/gpus
	inSMI    bool
}

type collector struct {
	src     source.Source
	driver  *facts.Driver
	byBus   map[string]*device
	procs   []facts.GPUProcess
	sources map[string]bool
	warns   []string
}

func (c *collector) warn(format string, args ...any) {
	c.warns = append(c.warns, "gpu: "+fmt.Sprintf(format, args...))
}

func (c *collector) read(what string) {
	if c.sources == nil {
		c.sources = map[string]bool{}
	}
	c.sources[what] = true
}

func (c *collector) dev(bus string) *device {
	d, ok := c.byBus[bus]
	if !ok {
		d = &device{Device: facts.Device{BusID: bus}, smiIndex: -1}
		c.byBus[bus] = d
	}
	return d
}

func (c *collector) setDriver(version, from string) {
	if c.driver != nil || version == "" {
		return
	}
	// Driver.CUDA is left to diagnose.Complete: it is the KB's judgement of
	// the version, and a saved facts file must not freeze it.
	c.driver = &facts.Driver{Version: version, From: from}
}

// readDriverVersion reads the loaded kernel module's version. A missing file
// is the ordinary state of a machine without the driver: no warning.
func (c *collector) readDriverVersion() {
	b, err := source.ReadFile(c.src, procVersion, maxTextFile)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warn("%s: %v", procVersion, err)
		}
		return
	}
	c.read(fromProc)
	v := ParseDriverVersion(string(b))
	if v == "" {
		c.warn("%s: no driver version in %q", procVersion, firstLine(string(b)))
		return
	}
	c.setDriver(v, procVersion)
}

var kernelModuleVersion = lazyregexp.New(`Kernel Module(?:\s+for\s+\S+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)\b`)

// ParseDriverVersion reads the version from /proc/driver/nvidia/version,
// whose NVRM line reads (proprietary and open modules):
//
//	NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue Sep 23 ...
//	NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ...
func ParseDriverVersion(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "NVRM version:") {
			continue
		}
		if m := kernelModuleVersion.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	return ""
}

// readProcGPUs reads /proc/driver/nvidia/gpus/<bus>/information: the devices
// the loaded driver drives (in a container, the ones it was given).
func (c *collector) readProcGPUs() {
	ents, err := c.src.ReadDir(procGPUs)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warn("%s: %v", procGPUs, err)
		}
		return
	}
	for i, e := range ents {
		if i >= maxDevices {
			c.warn("%s: more than %d entries; the rest are ignored", procGPUs, maxDevices)
			break
		}
		p := path.Join(procGPUs, e.Name(), "information")
		b, err := source.ReadFile(c.src, p, maxTextFile)
		if err != nil {
			c.warn("%s: %v", p, err)
			continue
		}
		c.read(fromProc)
		info := ParseInformation(string(b))
		bus := NormalizeBusID(info.BusID)
		if bus == "" {
			bus = NormalizeBusID(e.Name()) // the folder is named after the bus id
		}
		if bus == "" {
			c.warn("%s: no bus location", p)
			continue
		}
		d := c.dev(bus)
		d.inProc = true
		if info.Model != "" {
			d.Name = info.Model
		}
		if info.UUID != "" {
			d.UUID = info.UUID
		}
	}
}

// Information is what /proc/driver/nvidia/gpus/<bus>/information says.
type Information struct {
	Model, UUID, BusID string
}

// ParseInformation reads the "Key: \t value" lines of an information file.
// Fields the driver could not read are printed as ?s; those are left empty.
func ParseInformation(text string) Information {
	var info Information
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.Contains(v, "?") {
			v = ""
		}
		switch strings.TrimSpace(k) {
		case "Model":
			info.Model = v
		case "GPU UUID":
			info.UUID = v
		case "Bus Location":
			info.BusID = v
		}
	}
	return info
}

// readSysPCI reads the PCI ids of NVIDIA display controllers (class 0x03xxxx,
// vendor 0x10de) from sysfs.
func (c *collector) readSysPCI() {
	ents, err := c.src.ReadDir(sysPCI)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.warn("%s: %v", sysPCI, err)
		}
		return
	}
	n := 0
	for _, e := range ents {
		dir := path.Join(sysPCI, e.Name())
		if strings.TrimSpace(c.sysValue(dir, "vendor")) != "0x10de" || !strings.HasPrefix(c.sysValue(dir, "class"), "0x03") {
			continue
		}
		bus := NormalizeBusID(e.Name())
		id := facts.NormalizePCIDevice(c.sysValue(dir, "device"))
		if bus == "" || id == "" {
			c.warn("%s: unreadable NVIDIA device entry", dir)
			continue
		}
		if n++; n > maxDevices {
			c.warn("%s: more than %d NVIDIA devices; the rest are ignored", sysPCI, maxDevices)
			break
		}
		c.read(fromSysPCI)
		c.dev(bus).PCIDevice = id
	}
}

func (c *collector) sysValue(dir, name string) string {
	b, err := source.ReadFile(c.src, path.Join(dir, name), maxTextFile)
	if err != nil {
		return ""
	}
	return strings.ToLower(strings.TrimSpace(string(b)))
}

// findNvidiaSMI looks nvidia-smi up on the source's PATH, then where the
// driver installs it.
func (c *collector) findNvidiaSMI() (string, bool) {
	if p, ok := source.LookPath(c.src, c.src.Env().Get("PATH"), "nvidia-smi"); ok {
		return p, true
	}
	for _, p := range nvidiaSMIPlaces {
		if source.IsExecutable(c.src, p) {
			return p, true
		}
	}
	return "", false
}

// smiRun is nvidia-smi's two queries, running.
type smiRun struct {
	path string // "" when nvidia-smi was not found
	gpus chan smiResult
	apps chan smiResult
}

type smiResult struct {
	out    []byte
	err    error
	fields []string // the --query-gpu fields asked (without compute_cap on old drivers)
}

// startNvidiaSMI starts asking nvidia-smi for what the files do not say
// (capability, memory, processes). The process query runs alongside the
// device query: each nvidia-smi start costs tens of milliseconds.
func (c *collector) startNvidiaSMI(ctx context.Context, timeout time.Duration) *smiRun {
	smi, ok := c.findNvidiaSMI()
	if !ok {
		return &smiRun{}
	}
	r := &smiRun{path: smi, gpus: make(chan smiResult, 1), apps: make(chan smiResult, 1)}
	go func() {
		out, err := c.exec(ctx, timeout, smi, "--query-compute-apps="+smiAppFields, "--format=csv,noheader,nounits")
		r.apps <- smiResult{out: out, err: err}
	}()
	go func() {
		fields := smiGPUFields
		out, err := c.exec(ctx, timeout, smi, "--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits")
		if err != nil && bytes.Contains(out, []byte("compute_cap")) {
			fields = without(fields, "compute_cap")
			out, err = c.exec(ctx, timeout, smi, "--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits")
		}
		r.gpus <- smiResult{out: out, err: err, fields: fields}
	}()
	return r
}

// applyNvidiaSMI waits for nvidia-smi's answers and merges them into what
// the files said. Its failure is a warning: the files still stand.
func (c *collector) applyNvidiaSMI(r *smiRun) {
	smi := r.path
	if smi == "" {
		// Without a driver or an NVIDIA device there is nothing to miss.
		if c.driver != nil || len(c.byBus) > 0 {
			c.warn("nvidia-smi not found on PATH: devices are read from the driver's files only")
		}
		return
	}
	apps := r.apps
	g := <-r.gpus
	out, err, fields := g.out, g.err, g.fields
	if err != nil {
		c.warn("%s --query-gpu failed: %s", smi, execError(out, err))
		<-apps
		return
	}
	rows, bad := ParseQueryGPU(string(out), fields)
	for _, line := range bad {
		c.warn("nvidia-smi --query-gpu: unreadable line %q", line)
	}
	c.read(fromSMI)
	for _, r := range rows {
		bus := NormalizeBusID(r.BusID)
		if bus == "" {
			c.warn("nvidia-smi --query-gpu: GPU %d has no bus id", r.Index)
			continue
		}
		d := c.dev(bus)
		d.inSMI, d.smiIndex = true, r.Index
		if r.Name != "" {
			d.Name = r.Name
		}
		if r.UUID != "" {
			d.UUID = r.UUID
		}
		if r.PCIDevice != "" {
			d.PCIDevice = r.PCIDevice
		}
		if r.Capability != "" {
			d.Capability, d.CapabilityFrom = r.Capability, capFromSMI
		}
		d.MemoryTotalMiB, d.MemoryUsedMiB = r.MemoryTotalMiB, r.MemoryUsedMiB
		c.setDriver(r.DriverVersion, fromSMI)
	}
	a := <-apps
	out, err = a.out, a.err
	if err != nil {
		c.warn("%s --query-compute-apps failed: %s", smi, execError(out, err))
		return
	}
	procs, bad := ParseQueryApps(string(out))
	for _, line := range bad {
		c.warn("nvidia-smi --query-compute-apps: unreadable line %q", line)
	}
	c.procs = procs
}

func (c *collector) exec(ctx context.Context, timeout time.Duration, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := c.src.Exec(ctx, name, args...)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return out, err
}

// execError describes a failed run: nvidia-smi prints its reasons ("NVIDIA-SMI
// has failed because it couldn't communicate with the NVIDIA driver") on
// standard output, others on standard error.
func execError(out []byte, err error) string {
	msg := firstLine(string(out))
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		msg = firstLine(string(ee.Stderr))
	}
	if msg == "" {
		return err.Error()
	}
	return fmt.Sprintf("%v: %s", err, msg)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func without(fields []string, drop string) []string {
	var out []string
	for _, f := range fields {
		if f != drop {
			out = append(out, f)
		}
	}
	return out
}

// SMIGPU is one line of nvidia-smi --query-gpu.
type SMIGPU struct {
	Index          int
	Name           string
	UUID           string
	BusID          string
	PCIDevice      string // 0x2335
	Capability     string // 9.0
	MemoryTotalMiB int64
	MemoryUsedMiB  int64
	DriverVersion  string
}

// ParseQueryGPU reads `nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits`
// output: one line per GPU, values separated by ", " in the order of fields.
// Lines that cannot be read are returned in bad.
func ParseQueryGPU(out string, fields []string) (gpus []SMIGPU, bad []string) {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		vals := strings.Split(line, ",")
		if len(vals) != len(fields) {
			bad = append(bad, firstLine(line))
			continue
		}
		g := SMIGPU{Index: -1}
		for i, f := range fields {
			v := smiValue(vals[i])
			switch f {
			case "index":
				if n, err := strconv.Atoi(v); err == nil && n >= 0 {
					g.Index = n
				}
			case "name":
				g.Name = v
			case "uuid":
				g.UUID = v
			case "pci.bus_id":
				g.BusID = v
			case "pci.device_id":
				g.PCIDevice = facts.NormalizePCIDevice(v)
			case "compute_cap":
				if cc, err := ParseCapability(v); err == nil && v != "" {
					g.Capability = cc
				}
			case "memory.total":
				g.MemoryTotalMiB = smiInt(v)
			case "memory.used":
				g.MemoryUsedMiB = smiInt(v)
			case "driver_version":
				g.DriverVersion = v
			}
		}
		if g.Index < 0 {
			bad = append(bad, firstLine(line))
			continue
		}
		gpus = append(gpus, g)
	}
	return gpus, bad
}

// ParseQueryApps reads `nvidia-smi --query-compute-apps=pid,process_name,gpu_uuid,used_memory
// --format=csv,noheader,nounits` output. A process name may hold commas: the
// fields around it are fixed.
func ParseQueryApps(out string) (procs []facts.GPUProcess, bad []string) {
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "No running") {
			continue
		}
		vals := strings.Split(line, ",")
		if len(vals) < 4 {
			bad = append(bad, firstLine(line))
			continue
		}
		pid, err := strconv.Atoi(smiValue(vals[0]))
		if err != nil || pid < 0 {
			bad = append(bad, firstLine(line))
			continue
		}
		n := len(vals)
		procs = append(procs, facts.GPUProcess{
			PID:     pid,
			Name:    smiValue(strings.Join(vals[1:n-2], ",")),
			GPUUUID: smiValue(vals[n-2]),
			UsedMiB: smiInt(smiValue(vals[n-1])),
		})
	}
	return procs, bad
}

// smiValue trims a CSV value and blanks nvidia-smi's placeholders
// ([N/A], [Not Supported], [Insufficient Permissions]).
func smiValue(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") || v == "N/A" {
		return ""
	}
	return v
}

func smiInt(v string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// NormalizeBusID writes a PCI address the way sysfs names it
// (0000:00:06.0): nvidia-smi prints an 8-digit domain in upper case
// (00000000:00:06.0), the driver a 4-digit one. "" when s is not one.
func NormalizeBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	domain := "0"
	if strings.Count(s, ":") == 2 {
		domain, s, _ = strings.Cut(s, ":")
	}
	bus, rest, ok1 := strings.Cut(s, ":")
	dev, fn, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || len(domain) > 8 || len(bus) != 2 || len(dev) != 2 || len(fn) != 1 {
		return ""
	}
	d, err1 := strconv.ParseUint(domain, 16, 32)
	b, err2 := strconv.ParseUint(bus, 16, 8)
	v, err3 := strconv.ParseUint(dev, 16, 8)
	f, err4 := strconv.ParseUint(fn, 8, 8)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || v > 0x1f {
		return ""
	}
	return fmt.Sprintf("%04x:%02x:%02x.%d", d, b, v, f)
}

// devices orders and completes the merged devices. The devices CUDA can
// use are those nvidia-smi or the driver lists; a device only sysfs shows (a
// container sees the host's whole PCI bus, a GPU may be bound to vfio-pci)
// counts only when nothing else describes the GPUs, as in a rootfs with a
// /sys but no driver.
func (c *collector) devices() []facts.Device {
	var list []*device
	anyDriver := false
	for _, d := range c.byBus {
		if d.inSMI || d.inProc {
			anyDriver = true
		}
	}
	for _, d := range c.byBus {
		if !anyDriver || d.inSMI || d.inProc {
			list = append(list, d)
		}
	}
	// nvidia-smi's order first (its index is CUDA's with
	// CUDA_DEVICE_ORDER=PCI_BUS_ID), then bus order, as nvidia-smi numbers.
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if (a.smiIndex >= 0) != (b.smiIndex >= 0) {
			return a.smiIndex >= 0
		}
		if a.smiIndex != b.smiIndex {
			return a.smiIndex < b.smiIndex
		}
		return a.BusID < b.BusID
	})
	out := make([]facts.Device, 0, len(list))
	for i, d := range list {
		fd := d.Device
		fd.Index = i
		if d.smiIndex >= 0 {
			fd.Index = d.smiIndex
		}
		out = append(out, fd)
	}
	return out
}
