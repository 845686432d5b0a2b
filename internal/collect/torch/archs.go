package torch

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fatbin"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// archLib is the library whose fatbins torch.cuda.get_arch_list() describes:
// torch compiles every kernel of it for each entry of TORCH_CUDA_ARCH_LIST.
// torch 1.x builds split it in two; libtorch_cuda_cu.so then holds the
// kernels.
var archLibs = []string{"libtorch_cuda.so", "libtorch_cuda_cu.so"}

// maxCUDALibs caps how many torch/lib files are read for fatbins (a wheel
// has three or four CUDA libraries).
const maxCUDALibs = 32

// cudaLibRead is what one library's fatbins held.
type cudaLibRead struct {
	path string
	file *fatbin.File
	err  error
}

// collectArchs fills t.Archs, t.PTX and t.ArchLibs from the fatbin headers of
// torch's CUDA libraries in t.Lib: every lib*.so whose name says cuda
// (libtorch_cuda.so, libtorch_cuda_linalg.so, libc10_cuda.so). The CPU
// libraries hold no device code and are not opened. Only ELF section headers
// and fatbin entry headers are read (a few thousand small reads for the
// 300 MB section of libtorch_cuda.so, ~20 ms); the libraries are read
// concurrently.
//
// Archs and PTX are the targets present in every container of
// libtorch_cuda.so: its containers are torch's kernels, each built for the
// whole TORCH_CUDA_ARCH_LIST, so this is torch.cuda.get_arch_list(). Other
// libraries are read and listed in ArchLibs but do not change Archs: some
// are built for fewer targets (torch 2.11's libtorch_cuda_linalg.so has no
// sm_75) and get_arch_list() does not reflect them.
func collectArchs(src source.Source, t *facts.Torch) []string {
	if t.Lib == "" {
		return nil
	}
	ents, err := src.ReadDir(t.Lib)
	if err != nil {
		return []string{fmt.Sprintf("torch: cannot list %s: %v", t.Lib, err)}
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "lib") && strings.HasSuffix(n, ".so") && strings.Contains(n, "cuda") && len(names) < maxCUDALibs {
			names = append(names, n)
		}
	}
	reads := make([]cudaLibRead, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		reads[i].path = path.Join(t.Lib, n)
		wg.Go(func() { reads[i].file, reads[i].err = readFatbins(src, reads[i].path) })
	}
	wg.Wait()

	var warns []string
	var primary *fatbin.File
	primaryRank := len(archLibs)
	for _, r := range reads {
		name := path.Base(r.path)
		rank := slices.Index(archLibs, name)
		if r.err != nil {
			// A CUDA library that is not ELF at all is not torch's business
			// here; a broken fatbin or a broken libtorch_cuda.so is.
			var fe *fatbin.FormatError
			if rank >= 0 || (errors.As(r.err, &fe) && r.file != nil && len(r.file.Containers) > 0) {
				warns = append(warns, fmt.Sprintf("torch: %s: %v", r.path, r.err))
			}
			continue
		}
		if len(r.file.Containers) == 0 {
			continue
		}
		t.ArchLibs = append(t.ArchLibs, r.path)
		if rank >= 0 && rank < primaryRank {
			primary, primaryRank = r.file, rank
		}
	}
	// The library Archs come from first, the rest by name.
	slices.SortStableFunc(t.ArchLibs, func(a, b string) int {
		ra, rb := slices.Index(archLibs, path.Base(a)), slices.Index(archLibs, path.Base(b))
		if ra < 0 {
			ra = len(archLibs)
		}
		if rb < 0 {
			rb = len(archLibs)
		}
		return cmp.Or(cmp.Compare(ra, rb), strings.Compare(a, b))
	})
	if primary != nil {
		for _, tg := range primary.CommonSASS() {
			t.Archs = append(t.Archs, tg.String())
		}
		for _, tg := range commonPTX(primary) {
			t.PTX = append(t.PTX, tg.String())
		}
	}
	return warns
}

// readFatbins reads the fatbin headers of one library through src.
func readFatbins(src source.Source, p string) (*fatbin.File, error) {
	f, err := src.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: errors.New("not a regular file")}
	}
	return fatbin.NewFile(sizedReader{f, st.Size()})
}

// sizedReader tells fatbin the file's size, so sections running past the
// end are caught before they are walked.
type sizedReader struct {
	source.File
	size int64
}

func (r sizedReader) Size() int64 { return r.size }

// commonPTX is the PTX targets present in every container of f (a PTX
// entry in some kernels only does not make torch run on a newer GPU).
func commonPTX(f *fatbin.File) []cudaarch.Target {
	if len(f.Containers) == 0 {
		return nil
	}
	count := map[cudaarch.Target]int{}
	for _, c := range f.Containers {
		if c.First < 0 || c.N < 0 || c.First+c.N > len(f.Entries) {
			return nil
		}
		seen := map[cudaarch.Target]bool{}
		for _, e := range f.Entries[c.First : c.First+c.N] {
			if e.Kind == cudaarch.PTX && !seen[e.Target()] {
				seen[e.Target()] = true
				count[e.Target()]++
			}
		}
	}
	var out []cudaarch.Target
	for tg, n := range count {
		if n == len(f.Containers) {
			out = append(out, tg)
		}
	}
	slices.SortFunc(out, func(a, b cudaarch.Target) int {
		return cmp.Or(cmp.Compare(a.SM, b.SM), cmp.Compare(a.Variant, b.Variant))
	})
	return out
}
