package kb

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// LoadingData is data/loading.json: how packages choose the native code they load,
// and which NVIDIA wheel ships each CUDA library torch needs.
type LoadingData struct {
	Packages struct {
		Source string        `json:"source"`
		Rows   []PackageLoad `json:"rows"`
	} `json:"packages"`
	ArchSpecificModules struct {
		Source string `json:"source"`
		Rule   string `json:"rule"`
		// Packages dispatch to arch-specific modules by the GPU they run on.
		Packages []string `json:"packages"`
	} `json:"arch_specific_modules"`
	CUDALibraries struct {
		Source string        `json:"source"`
		Rows   []CUDALibrary `json:"rows"`
	} `json:"cuda_libraries"`
}

// PackageLoad is one package's rule for the native library it loads.
type PackageLoad struct {
	Name string `json:"name"` // distribution name
	// Rule: "one-library-per-cuda": the package ships one library per CUDA
	// version (Library's first group, "128" for 12.8) and loads one of them.
	Rule        string `json:"rule"`
	Library     string `json:"library"`
	OverrideEnv string `json:"override_env,omitempty"`
	// "loaded-on-demand": the package loads the libraries Library matches (by base
	// name) only when asked for them, not at import.
	// "load-failure-caught": its import loads the libraries Library matches (by
	// base name) inside a try and only warns when that fails: the import works,
	// their operators are unavailable.
	// Majors: for "module-gated-by-major", the GPU majors on which the package uses
	// the module Library matches; elsewhere it never launches its kernels.
	Majors []int  `json:"majors,omitempty"`
	Import string `json:"import,omitempty"` // the module the live probe imports
	Smoke  string `json:"smoke,omitempty"`  // a tiny kernel the live probe may run
	Source string `json:"source"`
	re     *rowRegexp
}

// rowRegexp is a rule's Library, compiled on its first Match: most runs
// match no library against most rules, and compiling them all when the
// table loads cost every doctor run (issue 17). TestLoadingRulesCompile
// compiles every one.
type rowRegexp struct {
	once sync.Once
	expr string
	re   *regexp.Regexp
}

func (r *rowRegexp) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// Match returns the CUDA version a library's base name stands for ("128"), or ok false.
func (p *PackageLoad) Match(base string) (cuda string, ok bool) {
	if p.re == nil {
		return "", false
	}
	m := p.re.get().FindStringSubmatch(base)
	if m == nil {
		return "", false
	}
	if len(m) < 2 {
		return "", true
	}
	return m[1], true
}

// CUDALibrary maps a library's soname prefix to where torch looks for it and the
// wheel that ships it: nvidia-<wheel>-cu12, nvidia-<wheel> / -cu13, or the
// cuda-toolkit meta-package's extra.
type CUDALibrary struct {
	Prefix       string `json:"prefix"`
	Folder       string `json:"folder"`
	Wheel        string `json:"wheel"`
	ToolkitExtra string `json:"toolkit_extra,omitempty"`
}

var loadingOnce = sync.OnceValue(func() *LoadingData {
	d := loadingTable() // generated into tables_gen.go
	for i := range d.Packages.Rows {
		d.Packages.Rows[i].re = &rowRegexp{expr: d.Packages.Rows[i].Library}
	}
	return &d
})

// Loading returns data/loading.json.
func Loading() *LoadingData { return loadingOnce() }

// distSeparators folds a distribution name's separators as PEP 503 does.
// One Replacer for all calls: building one per call cost 9 MB on an
// environment of 5,000 distributions.
var distSeparators = strings.NewReplacer("_", "-", ".", "-")

// PackageLoadRule returns the rule for a distribution (any spelling), or nil.
func (d *LoadingData) PackageLoadRule(dist string) *PackageLoad {
	n := strings.ToLower(distSeparators.Replace(dist))
	for i := range d.Packages.Rows {
		if d.Packages.Rows[i].Name == n {
			return &d.Packages.Rows[i]
		}
	}
	return nil
}

// CUDALibraryFor returns the row whose prefix the soname starts with (the longest
// such prefix: libcusparseLt before libcusparse), or nil.
func (d *LoadingData) CUDALibraryFor(soname string) *CUDALibrary {
	var best *CUDALibrary
	for i := range d.CUDALibraries.Rows {
		r := &d.CUDALibraries.Rows[i]
		rest, ok := strings.CutPrefix(soname, r.Prefix)
		if !ok || !(strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "_")) {
			continue
		}
		if best == nil || len(r.Prefix) > len(best.Prefix) {
			best = r
		}
	}
	return best
}

// DispatchesByArch says whether a distribution picks its arch-specific modules by the
// GPU it runs on (so a module for another GPU is expected, not broken).
func (d *LoadingData) DispatchesByArch(dist string) bool {
	n := strings.ToLower(distSeparators.Replace(dist))
	for _, p := range d.ArchSpecificModules.Packages {
		if p == n {
			return true
		}
	}
	return false
}

// GatedOff says whether dist uses the module named name (its folder and file:
// "sm90/common_ops.abi3.so") only on other GPU majors than major (a
// "module-gated-by-major" rule): its kernels are never launched there.
func (d *LoadingData) GatedOff(dist, name string, major int) bool {
	for _, r := range d.PackageLoadRules(dist) {
		if r.Rule != "module-gated-by-major" {
			continue
		}
		if _, ok := r.Match(name); ok && !slices.Contains(r.Majors, major) {
			return true
		}
	}
	return false
}

// LoadedOnDemand returns the "loaded-on-demand" rule under which dist loads the
// library named base only when asked (onnxruntime-gpu's execution providers), never
// at import, or nil.
func (d *LoadingData) LoadedOnDemand(dist, base string) *PackageLoad {
	for _, r := range d.PackageLoadRules(dist) {
		if r.Rule != "loaded-on-demand" {
			continue
		}
		if _, ok := r.Match(base); ok {
			return r
		}
	}
	return nil
}

// LoadFailureCaught returns the "load-failure-caught" rule under which dist's
// import survives a failed load of the library named base, or nil.
func (d *LoadingData) LoadFailureCaught(dist, base string) *PackageLoad {
	for _, r := range d.PackageLoadRules(dist) {
		if r.Rule != "load-failure-caught" {
			continue
		}
		if _, ok := r.Match(base); ok {
			return r
		}
	}
	return nil
}

// PackageLoadRules returns every rule for a distribution (any spelling).
func (d *LoadingData) PackageLoadRules(dist string) []*PackageLoad {
	n := strings.ToLower(distSeparators.Replace(dist))
	var out []*PackageLoad
	for i := range d.Packages.Rows {
		if d.Packages.Rows[i].Name == n {
			out = append(out, &d.Packages.Rows[i])
		}
	}
	return out
}
