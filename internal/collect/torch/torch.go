// Package torch reads the facts of the torch installed in an environment.
package torch

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/collect/toolchain/sitedist"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect returns the torch of env, or nil when there is none. The first
// SitePath entry holding torch/version.py is the torch Python imports.
// torch/version.py is read as text; torch itself is never imported.
// CXX11ABI comes from TorchConfig.cmake or libc10.so's symbol names, Archs
// and PTX from the fatbin headers of the CUDA libraries in torch/lib.
func Collect(src source.Source, env *facts.PythonEnv) (*facts.Torch, []string) {
	var warns []string
	site, ok := Locate(src, env)
	if !ok {
		return nil, nil
	}
	loc := path.Join(site, "torch")
	vpy := path.Join(loc, "version.py")
	t := &facts.Torch{Location: loc}
	data, err := source.ReadFile(src, vpy, versionPyCap)
	var v VersionPy
	if err != nil {
		warns = append(warns, fmt.Sprintf("torch: cannot read %s: %v", vpy, err))
	} else {
		var problems []string
		v, problems = ParseVersionPy(data)
		for _, p := range problems {
			warns = append(warns, fmt.Sprintf("torch: %s: %s", vpy, p))
		}
	}
	t.Version, t.CUDA, t.HIP, t.GitVer = v.Version, v.CUDA, v.HIP, v.GitVersion
	if t.Version != "" {
		t.BuildFrom = "torch/version.py"
	} else {
		// The dist-info still names the version, and PyTorch's own wheels
		// name their build in its local part (+cu128, +cpu, +rocm6.4);
		// a version without one leaves the build unknown, never guessed.
		if d, ok, _ := sitedist.Find(src, site, "torch"); ok && d.Version != "" {
			t.Version = d.Version
			warns = append(warns, fmt.Sprintf("torch: version %s taken from %s instead", d.Version, d.MetadataDir))
			if cuda, hip, ok := BuildFromLocalTag(d.Version); ok {
				t.CUDA, t.HIP = cuda, hip
				t.BuildFrom = "the +" + localTag(d.Version) + " tag of " + d.Version
			}
		}
	}
	if source.IsDir(src, path.Join(loc, "lib")) {
		t.Lib = path.Join(loc, "lib")
	}
	if source.IsDir(src, path.Join(loc, "share", "cmake")) {
		t.CMake = path.Join(loc, "share", "cmake")
	}
	if nv := path.Join(loc, "bin", "nvcc"); source.Exists(src, nv) {
		t.BundledNV = nv
	}
	// The two binary readers touch different fields and files.
	var abiWarns []string
	var wg sync.WaitGroup
	wg.Go(func() { abiWarns = collectCXX11ABI(src, t) })
	wg.Go(func() { collectLibraries(src, env, t) })
	warns = append(warns, collectArchs(src, t)...)
	wg.Wait()
	return t, append(warns, abiWarns...)
}

// Locate returns the site-packages folder of the torch env imports: the
// first SitePath entry holding torch/version.py. It only stats, so
// collectors that need no more than torch's folder need not wait for Collect.
func Locate(src source.Source, env *facts.PythonEnv) (site string, ok bool) {
	if env == nil {
		return "", false
	}
	for _, site := range env.SitePath {
		if !path.IsAbs(site) {
			continue
		}
		if _, err := src.Stat(path.Join(site, "torch", "version.py")); err == nil {
			return site, true
		}
	}
	return "", false
}

// BuildFromLocalTag reads the build from a PyTorch wheel's local version
// tag: +cu128 -> CUDA 12.8, +cu92 -> 9.2, +rocm6.4 -> HIP 6.4, +cpu -> CPU.
// ok is false when the version has no such tag.
func BuildFromLocalTag(version string) (cuda, hip string, ok bool) {
	tag := localTag(version)
	switch {
	case tag == "cpu" || strings.HasPrefix(tag, "cpu."):
		return "", "", true
	case strings.HasPrefix(tag, "rocm"):
		return "", strings.TrimPrefix(tag, "rocm"), tag != "rocm"
	case strings.HasPrefix(tag, "cu"):
		digits := strings.TrimPrefix(tag, "cu")
		if n, err := strconv.Atoi(digits); err == nil && len(digits) >= 2 && len(digits) <= 3 {
			return fmt.Sprintf("%d.%d", n/10, n%10), "", true
		}
	}
	return "", "", false
}

func localTag(version string) string {
	_, tag, _ := strings.Cut(version, "+")
	return strings.ToLower(tag)
}
