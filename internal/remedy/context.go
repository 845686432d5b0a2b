package remedy

import (
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// FromFacts is the Context of a machine's facts: every value FromMachine,
// except GPUs named with --gpu (FromFlag).
func FromFacts(f *facts.Facts) Context {
	var c Context
	if f == nil {
		return c
	}
	m := FromMachine
	c.Machine = true
	if t := f.Torch; t != nil {
		c.TorchVersion = Of(t.Version, m)
		if mm, _, _, ok := kb.MajorMinor(t.CUDA); ok {
			c.TorchCUDA = Of(mm, m)
		}
	}
	seen := map[string]bool{}
	for _, d := range f.GPU.Devices {
		if d.Capability == "" || seen[d.Capability] {
			continue
		}
		seen[d.Capability] = true
		from := m
		if d.CapabilityFrom == "--gpu" {
			from = FromFlag
		}
		c.GPUs = append(c.GPUs, Of(d.Capability, from))
		if !c.GPUName.Known() {
			c.GPUName = Of(d.Name, from)
		}
	}
	if d := f.GPU.Driver; d != nil {
		c.Driver = Of(d.Version, m)
	}
	sort.Slice(c.GPUs, func(i, j int) bool { return kb.CompareDotted(c.GPUs[i].Value, c.GPUs[j].Value) < 0 })
	if h := f.CUDA.TorchHome; h != nil && h.NVCC != "" {
		for _, n := range f.CUDA.Compilers {
			if n.Path == h.NVCC || n.Home == h.Path {
				if mm, _, _, ok := kb.MajorMinor(n.Version); ok {
					c.NVCC = Of(mm, m)
				}
			}
		}
	}
	if g := f.Toolchain.GXX; g != nil {
		c.GCC, c.HostCXX = Of(g.Version, m), Of(g.Path, m)
	}
	c.Platform = Of(Linux, m) // facts are read from Linux roots
	c.WSL = Of(strings.Contains(strings.ToLower(f.OS.Kernel), "microsoft"), m)
	if f.OS.ID != "" {
		c.Distro = Of(strings.TrimSpace(f.OS.ID+" "+f.OS.VersionID), m)
	}
	if f.OS.IDLike != "" {
		c.DistroLike = Of(f.OS.IDLike, m)
	}
	c.Arch = Of(f.OS.Arch, m)
	c.MemAvail, c.MemTotal, c.CPUs = Of(f.OS.MemAvail, m), Of(f.OS.MemTotal, m), Of(f.OS.CPUs, m)
	if py := f.Python.Selected; py != nil {
		c.Python = Of(py.Interpreter, m)
		c.PythonKind = Of(py.Kind, m)
		for _, d := range py.Distributions {
			if !d.Shadowed && strings.EqualFold(d.Name, "pip") {
				c.HasPip = true
			}
			if !d.Shadowed && strings.EqualFold(d.Name, "torch") {
				c.TorchInstaller = Of(strings.ToLower(strings.TrimSpace(d.Installer)), m)
			}
			if !d.Shadowed {
				if c.Installed == nil {
					c.Installed = map[string]string{}
				}
				c.Installed[canonicalDist(d.Name)] = d.Version
			}
		}
		c.SitePackages = Of(sitePackages(py), m)
		c.Conda = py.Kind == "conda"
	}
	for _, o := range f.Python.Others {
		if o.Kind == "conda" {
			c.Conda = true
		}
	}
	return c
}

// sitePackages is the environment's own site-packages ("" unknown).
func sitePackages(py *facts.PythonEnv) string {
	for _, p := range py.SitePath {
		if strings.HasPrefix(p, py.Prefix+"/") && (strings.HasSuffix(p, "/site-packages") || strings.HasSuffix(p, "/dist-packages")) {
			return p
		}
	}
	if len(py.SitePath) > 0 {
		return py.SitePath[0]
	}
	return ""
}
