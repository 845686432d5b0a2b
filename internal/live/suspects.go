package live

import (
	"path"
	"slices"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// maxSuspects bounds the extra imports one probe makes.
const maxSuspects = 32

// AddStaticSuspects adds to a the import of every module that a static error says
// will fail to import or has no code for the GPU (extension-* findings), so that
// --live checks each such verdict: a wrong one shows as static-live-disagree. Where
// the knowledge base knows a tiny kernel for the package (kb loading.json "smoke"),
// the probe runs it too. Packages already in a are not added twice. fds are the
// static findings (diagnose.Run(f)).
func (a *ProbeArgs) AddStaticSuspects(f *facts.Facts, fds []finding.Finding) {
	if f == nil || f.Python.Selected == nil {
		return
	}
	var errs []finding.Finding
	for _, fd := range fds {
		switch fd.ID {
		case finding.ExtensionArchUnsupported, finding.ExtensionABIMismatch, finding.ExtensionCUDAMismatch:
			if fd.Severity == finding.Error {
				errs = append(errs, fd)
			}
		}
	}
	have := map[string]bool{}
	for _, p := range a.Packages {
		have[p.Import] = true
	}
	for _, e := range f.Extensions {
		if !named(errs, e.Path) {
			continue
		}
		mod := moduleOf(f.Python.Selected, e)
		if mod == "" || have[mod] || len(a.Packages) >= maxSuspects+len(have) {
			continue
		}
		have[mod] = true
		p := ProbePackage{Name: e.Dist, Import: mod}
		if r := kb.Loading().PackageLoadRule(e.Dist); r != nil {
			p.Smoke = r.Smoke
		}
		a.Packages = append(a.Packages, p)
	}
}

// named says whether some finding's evidence names the file (its lines start with
// the path: "PATH: SASS ..." or "PATH needs ...").
func named(fds []finding.Finding, p string) bool {
	for _, fd := range fds {
		if slices.ContainsFunc(fd.Evidence, func(ev string) bool {
			return strings.HasPrefix(ev, p+":") || strings.HasPrefix(ev, p+" ")
		}) {
			return true
		}
	}
	return false
}

// moduleOf is the Python module whose import loads e: a Python extension module
// (name.cpython-312-x86_64-linux-gnu.so, name.abi3.so, _C.so) by its dotted name;
// a plain shared library (libbitsandbytes_cuda130.so) through its top-level package.
func moduleOf(py *facts.PythonEnv, e facts.Extension) string {
	var rel string
	for _, d := range py.Distributions {
		if d.Name == e.Dist && strings.HasPrefix(e.Path, d.Location+"/") {
			rel = strings.TrimPrefix(e.Path, d.Location+"/")
			break
		}
	}
	if rel == "" {
		return ""
	}
	dir, base := path.Split(rel)
	parts := strings.Split(strings.Trim(dir, "/"), "/")
	if dir == "" {
		parts = nil
	}
	for _, p := range parts {
		if !identifier(p) {
			return ""
		}
	}
	name, _, _ := strings.Cut(base, ".")
	isModule := strings.Contains(base, ".cpython-") || strings.Contains(base, ".abi3.") || strings.HasPrefix(base, "_") || len(parts) == 0
	if isModule && identifier(name) {
		return strings.Join(append(parts, name), ".")
	}
	if len(parts) > 0 {
		return parts[0]
	}
	return ""
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
