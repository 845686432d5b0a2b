package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// checkNVCCTarget: the nvcc builds would use cannot generate code for the
// architectures torch asks it for: the GPUs' own capabilities, or
// TORCH_CUDA_ARCH_LIST when set (torch 2.11 cpp_extension._get_cuda_arch_flags).
// nvcc 12.4 stops with "nvcc fatal : Unsupported gpu architecture 'compute_120'".
func checkNVCCTarget(c *judgement) []finding.Finding {
	n := c.buildCompiler()
	if n == nil || n.Version == "" {
		return nil
	}
	ver, err := cudaarch.ParseVersion(majorMinor(n.Version))
	if err != nil {
		return nil
	}
	wanted, from := c.requestedArchs()
	var bad []cudaarch.Target
	for _, t := range wanted {
		if !cudaarch.CanTarget(ver, t) {
			bad = append(bad, t)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	var names, needs []string
	for _, t := range bad {
		names = append(names, t.String())
		needs = append(needs, releasesFor(t))
	}
	fd := finding.Finding{
		ID:       finding.NVCCCannotTargetGPU,
		Severity: c.buildSeverity(),
		Title:    fmt.Sprintf("nvcc %s cannot generate code for %s", ver, strings.Join(names, ", ")),
		Detail: fmt.Sprintf("Extension builds ask nvcc for %s (%s), and this nvcc does not know it: the build stops with "+
			"\"nvcc fatal : Unsupported gpu architecture 'compute_%d'\".", strings.Join(names, ", "), from, bad[0].SM),
		Evidence: append([]string{nvccEvidence(*n)}, needs...),
	}
	if d := c.f.GPU.Summary(); d != "" {
		fd.Evidence = append(fd.Evidence, "GPUs: "+d)
	}
	// Another compiler on this machine that can do it?
	for i := range c.f.CUDA.Compilers {
		o := &c.f.CUDA.Compilers[i]
		if o == n {
			continue
		}
		if ov, err := cudaarch.ParseVersion(majorMinor(o.Version)); err == nil && canAll(ov, bad) {
			fd.Fixes = append(fd.Fixes, exportHomeFix(o))
		}
	}
	if tv, err := cudaarch.ParseVersion(c.torchCUDA); err == nil && canAll(tv, bad) {
		fd.Fixes = append(fd.Fixes, c.compilerFixes()...)
	}
	if newest, ok := cudaarch.NewestTarget(ver); ok {
		list := fmt.Sprintf("%d.%d+PTX", newest.SM/10, newest.SM%10)
		fd.Fixes = append(fd.Fixes, finding.Fix{
			Title:    fmt.Sprintf("Or build PTX for %s that the driver JIT-compiles for the GPU (slower first launch; no arch-specific features)", newest),
			Commands: []string{remedy.ArchList(list)},
		})
	}
	return []finding.Finding{fd}
}

// buildCompiler is the nvcc extension builds use: torch's CUDA home's, else
// none (other findings say it is not discoverable).
func (c *judgement) buildCompiler() *facts.NVCC {
	if h := c.f.CUDA.TorchHome; h != nil && h.NVCC != "" {
		return c.compilerAt(h.NVCC)
	}
	return nil
}

// requestedArchs are the targets a torch extension build passes to nvcc.
func (c *judgement) requestedArchs() ([]cudaarch.Target, string) {
	seen := map[cudaarch.Target]bool{}
	var out []cudaarch.Target
	add := func(t cudaarch.Target) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if list := envValue(c, "TORCH_CUDA_ARCH_LIST"); list != "" {
		for _, a := range strings.FieldsFunc(list, func(r rune) bool { return r == ';' || r == ' ' || r == ',' }) {
			a = strings.TrimSuffix(a, "+PTX")
			variant := ""
			if strings.HasSuffix(a, "a") || strings.HasSuffix(a, "f") {
				variant, a = a[len(a)-1:], a[:len(a)-1]
			}
			if maj, min, ok := strings.Cut(a, "."); ok {
				if t, err := cudaarch.ParseTarget("sm_" + maj + min + variant); err == nil {
					add(t)
				}
			}
		}
		return out, "TORCH_CUDA_ARCH_LIST=" + list
	}
	for _, d := range c.gpus() {
		if cc, err := cudaarch.ParseCapability(d.Capability); err == nil {
			add(cudaarch.Target{Kind: cudaarch.SASS, SM: cc.SM()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SM < out[j].SM })
	return out, "the GPUs' compute capability, TORCH_CUDA_ARCH_LIST being unset"
}

func canAll(v cudaarch.Version, ts []cudaarch.Target) bool {
	for _, t := range ts {
		if !cudaarch.CanTarget(v, t) {
			return false
		}
	}
	return true
}

// releasesFor says which nvcc releases can target t ("sm_120: nvcc 12.8 and
// newer"; "sm_70: nvcc 11.0 to 12.9").
func releasesFor(t cudaarch.Target) string {
	var first, last cudaarch.Version
	found := false
	rels := cudaarch.TargetReleases()
	for _, r := range rels {
		if cudaarch.CanTarget(r.CUDA, t) {
			if !found {
				first, found = r.CUDA, true
			}
			last = r.CUDA
		}
	}
	switch {
	case !found:
		return fmt.Sprintf("%s: no nvcc release fastpath knows can target it", t)
	case last == rels[len(rels)-1].CUDA:
		return fmt.Sprintf("%s: nvcc %s and newer (nvcc --list-gpu-code; CUDA release notes)", t, first)
	}
	return fmt.Sprintf("%s: nvcc %s to %s only (later releases dropped it)", t, first, last)
}
