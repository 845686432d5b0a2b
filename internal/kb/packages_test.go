package kb

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPackagesOneList: packages.json is the one list. Every other table
// that names a package (function sets, attention implementations, wheels,
// build profiles) names one of its entries, and each entry is complete.
func TestPackagesOneList(t *testing.T) {
	d := Packages()
	pep503 := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, p := range d.Packages {
		if !pep503.MatchString(p.Name) {
			t.Errorf("%q is not a PEP 503 normalised name", p.Name)
		}
		if seen[p.Name] {
			t.Errorf("%s is listed twice", p.Name)
		}
		seen[p.Name] = true
		if p.Source == "" {
			t.Errorf("%s has no source", p.Name)
		}
		if p.Metrics && !p.Compare {
			t.Errorf("%s: a version the metrics carry is one fleet compares too", p.Name)
		}
		if k := p.Kernel; k != nil && (k.Import == "" || k.Install == "" || len(k.Dists) == 0) {
			t.Errorf("%s: incomplete kernel facts %+v", p.Name, k)
		}
	}
	f := Families()
	for set, fns := range f.FunctionSets {
		for _, fn := range fns {
			if _, ok := f.Packages[fn.Package]; !ok {
				t.Errorf("function set %s: %s names %q, no kernel package of packages.json", set, fn.Name, fn.Package)
			}
		}
	}
	for name, a := range f.AttnImpls {
		if _, ok := f.Packages[a.Package]; !ok {
			t.Errorf("attention implementation %s names %q, no kernel package of packages.json", name, a.Package)
		}
	}
	for name := range Wheels().Packages {
		if !seen[name] {
			t.Errorf("wheels.json names %q, not in packages.json", name)
		}
	}
	for name, w := range Wheels().Packages {
		for _, p := range d.Packages {
			if p.Name == name && p.Repo != w.Repo {
				t.Errorf("%s: packages.json repo %q, wheels.json repo %q", name, p.Repo, w.Repo)
			}
		}
	}
	for name := range Builds().Packages {
		if !seen[name] {
			t.Errorf("builds.json names %q, not in packages.json", name)
		}
	}
}

// TestPackageConsumers: what fleet, prom, explain and the families read
// from the one list.
func TestPackageConsumers(t *testing.T) {
	compared, metrics := ComparedPackages(), MetricPackages()
	for _, want := range []string{"torch", "triton", "transformers", "flash-attn", "causal-conv1d", "mamba-ssm", "flash-linear-attention", "fla-core", "xformers", "vllm", "deepspeed"} {
		if !slices.Contains(compared, want) {
			t.Errorf("fleet compares no %s: %v", want, compared)
		}
	}
	if slices.Contains(metrics, "vllm") || !slices.Contains(metrics, "causal-conv1d") {
		t.Errorf("metrics: %v", metrics)
	}
	for _, want := range []string{"causal-conv1d", "flash-linear-attention", "mamba-ssm", "flash-attn", "flash-attn-3"} {
		if _, ok := Families().Packages[want]; !ok {
			t.Errorf("no kernel package %s", want)
		}
	}
	for name, dist := range map[string]string{"causal_conv1d_cuda": "causal-conv1d", "fla": "flash-linear-attention", "flash_attn_2_cuda": "flash-attn",
		"flash_attn_interface": "flash-attn-3", "mamba": "mamba-ssm", "selective_scan_cuda": "mamba-ssm"} {
		if got := ModuleDists()[name]; got != dist {
			t.Errorf("module %s -> %q, want %s", name, got, dist)
		}
	}
	if got := NativeKernelPackages(); slices.Contains(got, "flash-linear-attention") || !slices.Contains(got, "causal-conv1d") {
		t.Errorf("native kernel packages: %v", got)
	}
	for fn, dist := range map[string]string{"causal_conv1d_update": "causal-conv1d", "selective_state_update": "mamba-ssm",
		"mamba_chunk_scan_combined": "mamba-ssm", "chunk_gated_delta_rule": "flash-linear-attention", "selective_scan_unknown": "mamba-ssm", "torch_chunk": ""} {
		if got := DistOfFunction(fn); got != dist {
			t.Errorf("DistOfFunction(%s) = %q, want %q", fn, got, dist)
		}
	}
	for line, dist := range map[string]string{
		"CUDA error (/build/source/flash-attn/flash_fwd_launch_template.h:184)": "flash-attn",
		"csrc/selective_scan/selective_scan_fwd_kernel.cuh(12): error":          "mamba-ssm",
		"xformers/csrc/attention.cpp":                                           "xformers",
		"torch/csrc/autograd/engine.cpp":                                        "",
	} {
		if got := DistOfSourceLine(line); got != dist {
			t.Errorf("DistOfSourceLine(%q) = %q, want %q", line, got, dist)
		}
	}
	text := "To install follow https://github.com/fla-org/flash-linear-attention#installation and https://github.com/Dao-AILab/causal-conv1d"
	if got := DistsOfRepoLinks(text); !slices.Equal(got, []string{"flash-linear-attention", "causal-conv1d"}) {
		t.Errorf("DistsOfRepoLinks = %v (want the links' order)", got)
	}
}

// TestEnvVars: the recorded variables, each group with its source, no
// name twice, and the kernel packages' force-build knobs covered by a
// prefix.
func TestEnvVars(t *testing.T) {
	d := EnvVars()
	seen := map[string]bool{}
	for _, g := range d.Groups {
		if g.Source == "" || len(g.Names) == 0 {
			t.Errorf("group %v: no source or names", g.Names)
		}
		for _, n := range g.Names {
			if seen[n] {
				t.Errorf("%s listed twice", n)
			}
			seen[n] = true
		}
	}
	for _, want := range []string{"CUDA_HOME", "TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "USE_HUB_KERNELS", "FLASH_ATTN_CUDA_ARCHS"} {
		if !seen[want] {
			t.Errorf("%s is not recorded", want)
		}
	}
	for name, w := range Wheels().Packages {
		if w.ForceBuildEnv == "" {
			continue
		}
		covered := false
		for _, p := range d.Prefixes.Names {
			covered = covered || strings.HasPrefix(w.ForceBuildEnv, p)
		}
		if !covered {
			t.Errorf("%s's %s is not recorded (add a prefix to envvars.json)", name, w.ForceBuildEnv)
		}
	}
}
