package kb

import (
	"sort"
	"strings"
	"sync"
)

// PackagesData is data/packages.json: the one list of the Python
// distributions fastpath names, with the facts each consumer needs (fleet's
// comparison, the prom and nfd outputs, the model families, explain).
type PackagesData struct {
	Source   string        `json:"source"`
	Packages []PackageFact `json:"packages"`
}

// PackageFact is one distribution (its PEP 503 name) and what fastpath
// knows of it.
type PackageFact struct {
	Name string `json:"name"`
	// Compare: fleet diff and the remote report compare its version.
	Compare bool `json:"compare,omitempty"`
	// Metrics: the prom and nfd outputs carry its version.
	Metrics bool `json:"metrics,omitempty"`
	// Kernel is set for a kernel package transformers resolves functions
	// from; families.json's function_sets name it by Name.
	Kernel *KernelPackage `json:"kernel,omitempty"`
	// ExtensionModules are the compiled modules its setup.py declares;
	// Aliases other spellings logs use for it. With Kernel.Import they map
	// a module name in a log back to the distribution.
	ExtensionModules []string `json:"extension_modules,omitempty"`
	Aliases          []string `json:"aliases,omitempty"`
	// FunctionPrefixes name its functions in transformers' legacy
	// fallback warning ("selective_state_update" -> mamba-ssm).
	FunctionPrefixes []string `json:"function_prefixes,omitempty"`
	// SourceMarkers are file names and paths only its own sources print.
	SourceMarkers []string `json:"source_markers,omitempty"`
	// OpFrames are its source files (paths under site-packages) that only wrap
	// its compiled ops (vllm/_custom_ops.py: one torch.ops._C call a function):
	// a CUDA error raised below a traceback frame in one is its own kernel's.
	OpFrames []string `json:"op_frames,omitempty"`
	// PinsTorch: each wheel of it requires one exact torch release, so an
	// extension of it built for another torch is cured by installing that
	// torch (pip does, given the package again), not by a rebuild: a
	// reinstall gets the same wheel back.
	PinsTorch bool `json:"pins_torch,omitempty"`
	// TorchPins are, for a PinsTorch package, the newest release of it
	// whose wheels require exactly that torch release ("2.3.0" ->
	// "0.0.26.post1"), read from the wheels' METADATA (TorchPinsSource).
	TorchPins       map[string]string `json:"torch_pins,omitempty"`
	TorchPinsSource string            `json:"torch_pins_source,omitempty"`
	// Repo is its GitHub repository (owner/name), as install hints link it.
	Repo   string `json:"repo,omitempty"`
	Source string `json:"source"`
}

var (
	packagesOnce sync.Once
	packagesData PackagesData
)

// Packages returns data/packages.json (generated into tables_gen.go).
func Packages() *PackagesData {
	packagesOnce.Do(func() { packagesData = packagesTable() })
	return &packagesData
}

// ComparedPackages are the distributions compared between machines, in
// the data's order.
func ComparedPackages() []string {
	var out []string
	for _, p := range Packages().Packages {
		if p.Compare {
			out = append(out, p.Name)
		}
	}
	return out
}

// MetricPackages are the distributions whose versions the prom and nfd
// outputs carry, in the data's order.
func MetricPackages() []string {
	var out []string
	for _, p := range Packages().Packages {
		if p.Metrics {
			out = append(out, p.Name)
		}
	}
	return out
}

// KernelPackages are the kernel packages by name (families.json's
// function sets and attention implementations name them).
func KernelPackages() map[string]KernelPackage {
	out := map[string]KernelPackage{}
	for _, p := range Packages().Packages {
		if p.Kernel != nil {
			out[p.Name] = *p.Kernel
		}
	}
	return out
}

// ModuleDists maps every import, extension module and alias name of a
// package to its distribution name.
func ModuleDists() map[string]string {
	out := map[string]string{}
	for _, p := range Packages().Packages {
		if p.Kernel != nil && p.Kernel.Import != "" {
			out[p.Kernel.Import] = p.Name
		}
		for _, m := range p.ExtensionModules {
			out[m] = p.Name
		}
		for _, a := range p.Aliases {
			out[a] = p.Name
		}
	}
	return out
}

// PackageNamed is the listed package whose name, import name or alias is
// name (compared as pip does: case, "-", "_" and "." alike); "" when none.
func PackageNamed(name string) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(s)) }
	want := norm(name)
	if want == "" {
		return ""
	}
	for _, p := range Packages().Packages {
		if norm(p.Name) == want || (p.Kernel != nil && norm(p.Kernel.Import) == want) {
			return p.Name
		}
		for _, a := range p.Aliases {
			if norm(a) == want {
				return p.Name
			}
		}
	}
	return ""
}

// ReleaseForTorch is the newest release of package name whose wheels
// require exactly torch release torch ("2.3.0"; a local tag is ignored),
// where the KB knows it.
func ReleaseForTorch(name, torch string) (string, bool) {
	base, _, _ := strings.Cut(torch, "+")
	for _, p := range Packages().Packages {
		if p.Name == name {
			v, ok := p.TorchPins[base]
			return v, ok
		}
	}
	return "", false
}

// PinsTorch reports whether every wheel of the package requires one exact
// torch release (packages.json pins_torch).
func PinsTorch(name string) bool {
	for _, p := range Packages().Packages {
		if p.Name == name {
			return p.PinsTorch
		}
	}
	return false
}

// NativeKernelPackages are the kernel packages that compile CUDA code when
// installed from source (they need nvcc), in the data's order.
func NativeKernelPackages() []string {
	var out []string
	for _, p := range Packages().Packages {
		if p.Kernel != nil && p.Kernel.Native {
			out = append(out, p.Name)
		}
	}
	return out
}

// DistOfFunction names the kernel package a function of transformers'
// fallback warning comes from: the KB's function sets first, then the
// packages' function prefixes; "" when none claims it.
func DistOfFunction(fn string) string {
	for _, set := range Families().FunctionSets {
		for _, f := range set {
			if f.Name == fn {
				return f.Package
			}
		}
	}
	for _, p := range Packages().Packages {
		for _, pre := range p.FunctionPrefixes {
			if strings.HasPrefix(fn, pre) {
				return p.Name
			}
		}
	}
	return ""
}

// DistOfSourceLine names the package whose own source file a log line
// names ("/build/source/flash-attn/flash_fwd_launch_template.h:184"); ""
// when the line names none. Packages are tried in the data's order.
func DistOfSourceLine(text string) string {
	text, _ = cutVendored(text)
	for _, p := range Packages().Packages {
		for _, m := range p.SourceMarkers {
			if strings.Contains(text, m) {
				return p.Name
			}
		}
	}
	return ""
}

// vendorDirs are the folders projects keep other projects' sources in
// (xformers' third_party/flash-attention, sgl-kernel's 3rdparty/flashinfer).
var vendorDirs = []string{"third_party/", "3rdparty/", "third-party/", "thirdparty/"}

// cutVendored removes from text every path inside a vendoring folder
// ("third_party/flash-attention/csrc/flash_attn/src/fmha_fwd_launch_template.h"):
// such a copy is built into the package that vendors it, not into the
// project's own distribution. It returns what is left and the paths cut.
func cutVendored(text string) (string, []string) {
	var cut []string
	for _, d := range vendorDirs {
		for {
			i := strings.Index(text, d)
			if i < 0 {
				break
			}
			end := i
			for end < len(text) && !strings.ContainsRune(" \t():\"'", rune(text[end])) {
				end++
			}
			cut = append(cut, text[i:end])
			text = text[:i] + text[end:]
		}
	}
	return text, cut
}

// VendoredSource returns the vendored copy of a package's source a log
// line names ("third_party/flash-attention/csrc/flash_attn/src/fmha_fwd_launch_template.h"),
// "" when it names none.
func VendoredSource(text string) string {
	_, cut := cutVendored(text)
	for _, c := range cut {
		for _, p := range Packages().Packages {
			for _, m := range p.SourceMarkers {
				if strings.Contains(c, m) {
					return c
				}
			}
		}
	}
	return ""
}

// DistOfOpFrame names the package one of whose op wrappers (OpFrames) a
// traceback frame's file is ("/usr/lib/python3/dist-packages/vllm/_custom_ops.py"
// is vllm's); "" when none.
func DistOfOpFrame(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	for _, p := range Packages().Packages {
		for _, m := range p.OpFrames {
			for _, dir := range []string{"site-packages/", "dist-packages/"} {
				if strings.HasSuffix(file, dir+m) {
					return p.Name
				}
			}
		}
	}
	return ""
}

// DistsOfRepoLinks names the packages whose GitHub repositories text links
// ("https://github.com/Dao-AILab/causal-conv1d"), in the order the links
// appear, each once. A repository shared by two packages
// (Dao-AILab/flash-attention) names the first in the data.
func DistsOfRepoLinks(text string) []string {
	type hit struct {
		at   int
		name string
	}
	var hits []hit
	seen := map[string]bool{}
	for _, p := range Packages().Packages {
		if p.Repo == "" || seen[p.Repo] {
			continue
		}
		seen[p.Repo] = true
		if at := strings.Index(text, "github.com/"+p.Repo); at >= 0 {
			hits = append(hits, hit{at, p.Name})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	out := make([]string, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.name)
	}
	return out
}
