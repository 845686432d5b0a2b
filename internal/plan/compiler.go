package plan

import (
	"fmt"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/remedy"
)

// compilerRoutes are the ways to a compiler (remedy.CompilerRoutes), with
// DiskFree's check of the environment the pip route writes to.
func (p *planner) compilerRoutes() []remedy.Remedy {
	c := p.rctx()
	routes := remedy.CompilerRoutes(c)
	for i := range routes {
		if routes[i].ID == "compiler/pip" && len(routes[i].Commands) > 0 {
			routes[i].Preconditions = append(routes[i].Preconditions, p.diskCheck(int64(routes[i].Cost.DiskMiB)<<20)...)
		}
	}
	return routes
}

// compilerChecks: can nvcc cuda build for the GPUs here, with the gcc here?
func (p *planner) compilerChecks(cuda string) []Precondition {
	return remedy.CompilerChecks(p.rctx(), cuda)
}

// compilerSteps are the options for no-cuda-compiler.
func (p *planner) compilerSteps(id finding.ID) []Step {
	var out []Step
	for _, r := range p.compilerRoutes() {
		s := fromRemedy(r, id, fmt.Sprintf("%s/%s", id, strings.TrimPrefix(r.ID, "compiler/")), "")
		if r.ID == "compiler/pip" && len(r.Commands) > 0 {
			s.Verification = "package names from NVIDIA's published wheels; pip resolves the version"
		}
		out = append(out, s)
	}
	return out
}

// diskCheck: is there need bytes free where the environment lives?
func (p *planner) diskCheck(need int64) []Precondition {
	if need <= 0 {
		return nil
	}
	name := fmt.Sprintf("free disk (about %.1f GiB)", float64(need)/float64(gib))
	site := remedy.FromFacts(p.f).SitePackages.Value
	if p.o.DiskFree == nil || site == "" {
		return []Precondition{{Check: name, OK: true, Unknown: true, Detail: "unknown: free space is read only on the live host"}}
	}
	free, err := p.o.DiskFree(site)
	if err != nil {
		return []Precondition{{Check: name, OK: true, Unknown: true, Detail: err.Error()}}
	}
	return []Precondition{{Check: name, OK: free >= need, Detail: fmt.Sprintf("%.1f GiB free on %s", float64(free)/float64(gib), site)}}
}
