package torch

import (
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/collect/extensions"
	"github.com/fastpath-dev/fastpath/internal/elfdyn"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/kb"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// maxLibsRead bounds the libraries whose dynamic sections are read: torch 2.15's
// import closure is about 40 (its own 10, the nvidia wheels' 20, the system's).
const maxLibsRead = 256

// libReaders is how many libraries' dynamic sections are read at once.
const libReaders = 16

// collectLibraries resolves, statically, the shared libraries `import torch` loads:
// torch/_C*.so and torch/lib/libtorch_global_deps.so, then breadth-first their
// DT_NEEDED as the dynamic linker finds them: the needing library's RUNPATH (torch's
// wheels set $ORIGIN/../../nvidia/<lib>/lib for every nvidia wheel), LD_LIBRARY_PATH,
// the folders torch's own _preload_cuda_deps globs when the loader fails
// (<sys.path entry>/nvidia/<lib>/lib and nvidia/cu<major>/lib: torch/__init__.py,
// torch 2.15.0), ld.so.conf and the default folders.
//
// Only CUDA libraries and torch's own are judged: a libstdc++ not found in a bare
// --root says nothing about torch. libcuda.so.1 is the driver's and is judged by
// the driver checks. Libraries loaded later with dlopen (libtorch_cuda_linalg.so,
// libcaffe2_nvrtc.so) are not part of the import.
func collectLibraries(src source.Source, env *facts.PythonEnv, t *facts.Torch) {
	if t.Lib == "" {
		return
	}
	roots := source.Glob(src, path.Join(t.Location, "_C*.so"))
	if gd := path.Join(t.Lib, "libtorch_global_deps.so"); isFile(src, gd) {
		roots = append(roots, gd)
	}
	if len(roots) == 0 {
		return
	}
	ld, conf, defaults := extensions.LinkerDirs(src)
	var preload []string
	major, _, _ := strings.Cut(t.CUDA, ".")
	for _, site := range env.SitePath {
		if !path.IsAbs(site) {
			continue
		}
		for _, d := range source.Glob(src, path.Join(site, "nvidia", "*", "lib")) {
			// nvidia/cu13/lib is searched only for a CUDA 13 torch (_get_cuda_dep_paths).
			if folder := path.Base(path.Dir(d)); !isCUDAMajorFolder(folder) || folder == "cu"+major {
				preload = append(preload, d)
			}
		}
	}
	type lib struct {
		path             string
		needed, runpaths []string
	}
	missing := map[string]*facts.MissingLibrary{}
	var order []string
	seen := map[string]bool{}
	// Breadth-first, one level at a time: the libraries a level names are
	// found in order, then their dynamic sections are read side by side (on
	// a cold page cache each read waits on the disk: one after another they
	// were most of torch's cold time), then taken in the same order. The
	// result is the same as reading each library when it is found.
	var pending []string
	read := func(p string) {
		if seen[p] || len(seen) >= maxLibsRead {
			return
		}
		seen[p] = true
		pending = append(pending, p)
	}
	readPending := func() []lib {
		libs := make([]lib, len(pending))
		oks := make([]bool, len(pending))
		var wg sync.WaitGroup
		sem := make(chan struct{}, libReaders)
		for i, p := range pending {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				libs[i].path = p
				source.AcquireReader() // the descriptor budget (source/readers.go)
				libs[i].needed, libs[i].runpaths, oks[i] = dynamic(src, p)
				source.ReleaseReader()
			})
		}
		wg.Wait()
		pending = nil
		var level []lib
		for i, l := range libs {
			if oks[i] {
				t.LibrariesChecked++
				level = append(level, l)
			}
		}
		return level
	}
	resolveNeeded := func(l lib) {
		for _, n := range l.needed {
			if !judged(n) {
				continue
			}
			var searched []string
			found := ""
			for _, group := range [][]string{l.runpaths, ld, preload, conf, defaults} {
				for _, d := range group {
					if slices.Contains(searched, d) {
						continue
					}
					searched = append(searched, d)
					if p := path.Join(d, n); found == "" && isFile(src, p) {
						found = p
					}
				}
				if found != "" {
					break
				}
			}
			if found == "" && !strings.Contains(n, "/") {
				// torch's preloading globs the soname's stem (libcublasLt.so.*[0-9]),
				// so another minor of the same major is found too.
				found = globStem(src, n, preload)
			}
			if found != "" {
				read(found)
				continue
			}
			m := missing[n]
			if m == nil {
				m = &facts.MissingLibrary{Name: n, Searched: searched}
				missing[n] = m
				order = append(order, n)
			}
			if !slices.Contains(m.NeededBy, l.path) {
				m.NeededBy = append(m.NeededBy, l.path)
			}
		}
	}
	for _, r := range roots {
		read(r)
	}
	for level := readPending(); len(level) > 0; level = readPending() {
		for _, l := range level {
			resolveNeeded(l)
		}
	}
	for _, n := range order {
		t.MissingLibraries = append(t.MissingLibraries, *missing[n])
	}
}

// isCUDAMajorFolder says whether an nvidia/ folder is a CUDA 13+ wheel's cu<major>.
func isCUDAMajorFolder(name string) bool {
	rest, ok := strings.CutPrefix(name, "cu")
	if !ok || rest == "" {
		return false
	}
	for _, r := range rest {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// judged: torch's own libraries and the CUDA libraries of NVIDIA's wheels (kb
// loading.json cuda_libraries); not the C library, not libcuda.so.1 (the driver's).
func judged(needed string) bool {
	return extensions.IsTorchLibrary(needed) || kb.Loading().CUDALibraryFor(needed) != nil
}

// globStem finds libX.so.<major>.<more> for libX.so.<major> in dirs, as torch's
// _preload_cuda_deps glob "libX.so.*[0-9]" does: only versions (digits and dots)
// count, so a renamed libX.so.13.bak is not a library.
func globStem(src source.Source, soname string, dirs []string) string {
	for _, d := range dirs {
		for _, m := range source.Glob(src, path.Join(d, soname+".*")) {
			rest := strings.TrimPrefix(path.Base(m), soname+".")
			if rest != "" && strings.Trim(rest, "0123456789.") == "" && rest[len(rest)-1] != '.' {
				return m
			}
		}
	}
	return ""
}

func isFile(src source.Source, p string) bool {
	st, err := src.Stat(p)
	return err == nil && !st.IsDir()
}

// dynamic reads p's DT_NEEDED and RUNPATH/RPATH ($ORIGIN expanded).
func dynamic(src source.Source, p string) (needed, runpaths []string, ok bool) {
	f, err := src.Open(p)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil, false
	}
	ef, err := elfdyn.Open(f, st.Size())
	if err != nil {
		return nil, nil, false
	}
	origin := path.Dir(p)
	for _, rp := range []string{ef.RunPath, ef.RPath} {
		for _, d := range strings.Split(rp, ":") {
			if d != "" {
				runpaths = append(runpaths, path.Clean(strings.NewReplacer("$ORIGIN", origin, "${ORIGIN}", origin).Replace(d)))
			}
		}
	}
	return ef.Needed, runpaths, true
}
