// Package extensions looks at the native modules of the selected
// environment's distributions, statically: which link torch, which hold CUDA
// code and for which GPUs, which torch symbols they need that the installed
// torch lacks, and whether the CUDA runtime they need is anywhere the
// dynamic linker (or torch's preloading) would find it.
//
// Only ELF headers, dynamic sections, dynamic symbol tables and fatbin entry
// headers are read; nothing is loaded or run.
package extensions

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/elfdyn"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/fatbin"
	"github.com/fastpath-dev/fastpath/internal/source"
)

const (
	// MaxFiles bounds the native files read in one environment (RECORD
	// order): a real ML venv holds about a thousand (scipy 111, cupy 65,
	// the H200 reference venv's 197 distributions ~900), and each costs a
	// header and dynamic-section read; past this the scan says where it stopped.
	MaxFiles = 4096
	// workers read files concurrently: the reads are small and mostly wait
	// on the disk.
	workers = 16
	// maxMissingShown is how many missing symbols are kept, demangled.
	maxMissingShown = 10
	// maxLdConf caps one ld.so.conf file.
	maxLdConf = 64 << 10
)

// Collect reads the native modules of py's distributions. t is the torch of
// the same environment (nil when there is none): extensions that link torch
// are checked against its libraries.
func Collect(ctx context.Context, src source.Source, py *facts.PythonEnv, t *facts.Torch) ([]facts.Extension, []string) {
	return CollectWith(ctx, src, py, t, nil)
}

// CollectWith is Collect taking the files early has read already (nil for
// none). It stops early first.
func CollectWith(ctx context.Context, src source.Source, py *facts.PythonEnv, t *facts.Torch, early *Early) ([]facts.Extension, []string) {
	if early != nil {
		early.stop()
	}
	if py == nil {
		return nil, nil
	}
	c := &collector{src: src, py: py, torch: t, runtimeFound: map[string]string{}}
	var jobs []job
	for _, d := range py.Distributions {
		if d.Shadowed || skipDist(d.Name) || len(d.Extensions) == 0 {
			continue
		}
		for _, rel := range d.Extensions {
			jobs = append(jobs, newJob(d.Name, d.Version, d.Location, rel))
		}
	}
	if len(jobs) > MaxFiles {
		c.warn("extensions: the environment lists %d native files; only the first %d were read (%s and after were not)", len(jobs), MaxFiles, jobs[MaxFiles].dist)
		jobs = jobs[:MaxFiles]
	}
	results := make([]*module, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, len(jobs)) {
		wg.Go(func() {
			for i := range next {
				if r, ok := early.take(jobs[i]); ok {
					for _, w := range r.warns {
						c.warn("%s", w)
					}
					results[i] = r.m
					continue
				}
				source.AcquireReader() // the descriptor budget (source/readers.go)
				results[i] = c.read(jobs[i])
				source.ReleaseReader()
			}
		})
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()

	var mods []*module
	for _, m := range results {
		if m != nil {
			mods = append(mods, m)
		}
	}
	c.checkABI(mods)
	// Sorted by path as pointers, then copied once: sorting the facts
	// themselves moved some 250 bytes at every swap, thousands of times.
	slices.SortFunc(mods, func(a, b *module) int { return cmp.Compare(a.ext.Path, b.ext.Path) })
	out := make([]facts.Extension, 0, len(mods))
	for _, m := range mods {
		if m.ext.CUDARuntime != "" {
			m.ext.CUDARuntimeFound = c.findRuntime(m.ext.CUDARuntime, m)
		}
		out = append(out, m.ext)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Sorted: the workers meet them in any order.
	slices.Sort(c.warns)
	return out, c.warns
}

type job struct{ dist, version, path string }

func newJob(dist, version, location, rel string) job {
	return job{dist: dist, version: version, path: path.Join(location, rel)}
}

// wholeFileBytes is the largest library read whole rather than a header at
// a time (a var so that a test can turn it off); smallFiles holds the
// workers' buffers for them.
var wholeFileBytes int64 = 64 << 10

var smallFiles = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// module is one file kept: its facts and what the later checks need.
type module struct {
	ext facts.Extension
	// torchUndefined are its undefined symbols that name torch's namespaces.
	torchUndefined []string
	runPaths       []string
}

type collector struct {
	src   source.Source
	py    *facts.PythonEnv
	torch *facts.Torch

	mu    sync.Mutex
	warns []string

	// runtimeFound caches where each libcudart soname was found in the
	// shared search places ("" for nowhere).
	runtimeFound map[string]string
	sysDirs      []string
}

func (c *collector) warn(format string, args ...any) {
	c.mu.Lock()
	c.warns = append(c.warns, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

// skipDist: torch itself and NVIDIA's library wheels (nvidia-cublas-cu12,
// nvidia-cudnn-cu12, ...) are libraries other modules load, not extensions;
// their files are large and reading them would cost time for nothing.
func skipDist(name string) bool {
	n := strings.ToLower(distSeparators.Replace(name))
	return n == "torch" || strings.HasPrefix(n, "nvidia-")
}

// distSeparators folds a distribution name's separators, as PEP 503 does.
var distSeparators = strings.NewReplacer("_", "-", ".", "-")

// IsTorchLibrary reports whether a DT_NEEDED name is one of torch's own
// libraries (libc10.so, libc10_cuda.so, libtorch.so, libtorch_cpu.so,
// libtorch_cuda.so, libtorch_python.so).
func IsTorchLibrary(needed string) bool {
	return (strings.HasPrefix(needed, "libc10") || strings.HasPrefix(needed, "libtorch")) && strings.Contains(needed, ".so")
}

// isCUDARuntime matches the CUDA runtime's sonames: libcudart.so.12, libcudart.so.13, and
// CUDA 11's libcudart.so.11.0 (its soname kept the minor).
// It is ^libcudart\.so\.(\d+)(\.0)?$, matched by a scan (every doctor start
// compiled the regexp; scan_test.go compares the two).
func isCUDARuntime(name string) bool {
	v, ok := strings.CutPrefix(name, "libcudart.so.")
	if !ok {
		return false
	}
	v = strings.TrimSuffix(v, ".0") // CUDA 11's soname kept the minor
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// read opens one file and keeps it when it links torch, holds CUDA code or
// needs the CUDA runtime.
func (c *collector) read(j job) *module {
	f, err := c.src.Open(j.path)
	if err != nil {
		c.warn("extensions: %s: %v", j.path, err)
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		c.warn("extensions: %s: %v", j.path, err)
		return nil
	}
	if !st.Mode().IsRegular() {
		return nil
	}
	var r io.ReaderAt = f
	var whole []byte
	if size := st.Size(); size > 0 && size <= wholeFileBytes {
		// A small library is read whole, in one call: its headers, dynamic
		// section and symbols are most of it, and reading them piecemeal
		// cost some twenty system calls a file. The buffer goes back to
		// the pool when read returns: nothing kept points into it.
		bp := smallFiles.Get().(*[]byte)
		defer smallFiles.Put(bp)
		buf := (*bp)[:size]
		if n, err := f.ReadAt(buf, 0); n == len(buf) || errors.Is(err, io.EOF) {
			whole = buf[:n]
			r = bytes.NewReader(whole)
		}
	}
	var ef *elfdyn.File
	if whole != nil {
		ef, err = elfdyn.OpenBytes(whole)
	} else {
		ef, err = elfdyn.Open(r, st.Size())
	}
	if err != nil {
		c.warn("extensions: %s: %v", j.path, err)
		return nil
	}
	m := &module{ext: facts.Extension{Dist: j.dist, Version: j.version, Path: j.path, Needed: ef.Needed}}
	for _, n := range ef.Needed {
		if IsTorchLibrary(n) {
			m.ext.LinksTorch = true
		}
		if isCUDARuntime(n) && m.ext.CUDARuntime == "" {
			m.ext.CUDARuntime = n
		}
	}
	hasFatbin := false
	for _, s := range ef.Sections {
		if (s.Name == ".nv_fatbin" || s.Name == "__nv_relfatbin") && s.Size > 0 {
			hasFatbin = true
		}
	}
	if !m.ext.LinksTorch && !hasFatbin && m.ext.CUDARuntime == "" {
		return nil
	}
	for _, rp := range []string{ef.RunPath, ef.RPath} {
		for d := range strings.SplitSeq(rp, ":") {
			if d == "" {
				continue
			}
			if strings.Contains(d, "ORIGIN") {
				d = strings.NewReplacer("$ORIGIN", path.Dir(j.path), "${ORIGIN}", path.Dir(j.path)).Replace(d)
			}
			m.runPaths = append(m.runPaths, d)
		}
	}
	if hasFatbin {
		fb, err := fatbin.NewFile(r)
		if fb != nil {
			fillTargets(&m.ext, fb, r)
		}
		if err != nil {
			m.ext.Error = err.Error()
		}
	}
	if m.ext.LinksTorch {
		syms, err := ef.Symbols()
		if err != nil {
			m.ext.Error = err.Error()
		} else {
			m.torchUndefined = torchReferences(syms)
		}
	}
	return m
}

// torchReferences are the names of syms's strong undefined references into
// torch's namespaces, copied out of the table (it may be a read buffer, or
// as big as the file) into one string and cut from it: one allocation for
// all of a module's names, not one each (growing a copy cost more than the
// names). The table is walked once; the names found are kept meanwhile in a
// recycled list.
func torchReferences(syms *elfdyn.Symbols) []string {
	sp := nameLists.Get().(*[]string)
	defer func() {
		clear(*sp) // they point into the table
		nameLists.Put(sp)
	}()
	found, size := (*sp)[:0], 0
	for s := range syms.All() {
		// Weak references may stay unresolved: the loader does not fail on them.
		if !s.Defined && s.Bind != 2 /* STB_WEAK */ && TorchSymbol(s.Name) {
			found = append(found, s.Name)
			size += len(s.Name)
		}
	}
	*sp = found
	if len(found) == 0 {
		return nil
	}
	var b strings.Builder
	b.Grow(size)
	for _, n := range found {
		b.WriteString(n)
	}
	joined, at := b.String(), 0
	out := make([]string, len(found))
	for i, n := range found {
		out[i] = joined[at : at+len(n)]
		at += len(n)
	}
	return out
}

var nameLists = sync.Pool{New: func() any { return new([]string) }}

// fillTargets copies what the fatbin headers say into e, and which of its target
// sets only containers without kernels hold, read from r (the file fb was read
// from).
func fillTargets(e *facts.Extension, fb *fatbin.File, r io.ReaderAt) {
	e.SASS, e.PTX = fb.Targets()
	e.Containers = len(fb.Containers)
	var isa cudaarch.Version
	for _, en := range fb.Entries {
		if en.Kind == cudaarch.PTX && isa.Less(en.PTXVersion) {
			isa = en.PTXVersion
		}
	}
	if isa != (cudaarch.Version{}) {
		e.PTXISA = isa.String()
	}
	for _, t := range fb.CommonSASS() {
		e.CommonSASS = append(e.CommonSASS, t.String())
	}
	index := map[string]int{} // set -> its index in e.TargetSets
	var holders [][]int       // per set, the containers holding it, in file order
	for c, ct := range fb.Containers {
		if ct.First < 0 || ct.First+ct.N > len(fb.Entries) {
			continue
		}
		sub := &fatbin.File{Containers: []fatbin.Container{{N: ct.N}}, Entries: fb.Entries[ct.First : ct.First+ct.N]}
		sass, ptx := sub.Targets()
		set := append(sass, ptx...)
		if len(set) == 0 {
			continue
		}
		key := strings.Join(set, " ")
		i, ok := index[key]
		if !ok {
			i = len(e.TargetSets)
			index[key] = i
			e.TargetSets = append(e.TargetSets, set)
			holders = append(holders, nil)
		}
		holders[i] = append(holders[i], c)
	}
	budget, inflate := maxKernelScans, int64(fatbin.DecompressBudget)
	for i, cs := range holders {
		if kernelLess(fb, r, cs, &budget, &inflate) {
			e.KernelLessSets = append(e.KernelLessSets, e.TargetSets[i])
		}
	}
}

// maxKernelScans caps the containers of one file whose cubins' symbol tables
// fillTargets reads. A set holding kernels is settled by its first container (the
// scan stops there), so the cap binds only on files with thousands of kernel-less
// containers; past it, sets count as holding kernels, as before the scan existed.
const maxKernelScans = 1024

// kernelLess says whether every container in cs is known to define no kernel
// (fatbin.ContainerKernels), reading them in file order until one has kernels or
// cannot be told. inflate is what is left of the file's decompression budget.
func kernelLess(fb *fatbin.File, r io.ReaderAt, cs []int, budget *int, inflate *int64) bool {
	if r == nil || len(cs) == 0 || len(cs) > *budget {
		return false
	}
	for _, c := range cs {
		*budget--
		if has, known := fb.ContainerKernels(r, c, inflate); has || !known {
			return false
		}
	}
	return true
}

// TorchSymbol reports whether a mangled name belongs to torch's own
// namespaces (c10, at, torch, caffe2): a function, or the vtable, typeinfo
// or guard variable of a class there. References into other namespaces
// (libc, libstdc++, the CUDA runtime, the module's own) are not torch's to
// satisfy.
func TorchSymbol(name string) bool {
	s, ok := strings.CutPrefix(name, "_Z")
	if !ok {
		return false
	}
	for _, special := range []string{"TV", "TI", "TS", "GV"} {
		if rest, ok := strings.CutPrefix(s, special); ok {
			s = rest
			break
		}
	}
	s, ok = strings.CutPrefix(s, "N")
	if !ok {
		return false
	}
	s = strings.TrimLeft(s, "rVKRO") // cv- and ref-qualifiers of member functions
	return strings.HasPrefix(s, "3c10") || strings.HasPrefix(s, "2at") || strings.HasPrefix(s, "5torch") || strings.HasPrefix(s, "6caffe2")
}

// Demangle returns the C++ name of sym, or sym itself when it does not
// demangle.
func Demangle(sym string) string {
	if d, err := demangle.ToString(sym); err == nil {
		return d
	}
	return sym
}

// torchLib is one of torch's libraries, opened at most once per run.
type torchLib struct {
	name, path string
	needed     []string
	file       *elfdyn.File
	closer     interface{ Close() error }
	err        error
}

// checkABI resolves every torch-linking module's torch references against
// the torch libraries it loads (its DT_NEEDED torch libraries and theirs),
// reading each library's symbol table once for all modules.
func (c *collector) checkABI(mods []*module) {
	var linking []*module
	for _, m := range mods {
		if m.ext.LinksTorch && len(m.torchUndefined) > 0 {
			linking = append(linking, m)
		}
	}
	if len(linking) == 0 || c.torch == nil {
		return
	}
	libDir := c.torch.Lib
	if libDir == "" {
		libDir = path.Join(c.torch.Location, "lib")
	}
	libs := map[string]*torchLib{}
	var order []*torchLib
	open := func(name string) *torchLib {
		if l, ok := libs[name]; ok {
			return l
		}
		l := &torchLib{name: name, path: path.Join(libDir, name)}
		libs[name] = l
		f, err := c.src.Open(l.path)
		if err == nil {
			var fi interface{ Size() int64 }
			if fi, err = f.Stat(); err == nil {
				l.file, err = elfdyn.Open(f, fi.Size())
			}
			if err != nil {
				f.Close()
			} else {
				l.closer = f
				l.needed = l.file.Needed
			}
		}
		l.err = err
		if err == nil {
			order = append(order, l)
		}
		return l
	}
	defer func() {
		for _, l := range order {
			l.closer.Close()
		}
	}()
	// The libraries each module loads: a breadth-first walk of DT_NEEDED
	// through torch's libraries, as the dynamic linker does.
	closures := make([][]*torchLib, len(linking))
	warned := map[*torchLib]bool{}
	for i, m := range linking {
		seen := map[string]bool{}
		queue := slices.Clone(m.ext.Needed)
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			if seen[n] || !IsTorchLibrary(n) {
				continue
			}
			seen[n] = true
			l := open(n)
			if errors.Is(l.err, fs.ErrNotExist) && coreTorchLibrary(n) {
				// Every torch ships it: torch itself is broken (its
				// libraries deleted, or only version.py left), and the module
				// was not built for another torch. Its symbols are unknown.
				if !warned[l] {
					warned[l] = true
					c.warn("extensions: %s, one of torch's own libraries, is missing (extensions linking it were not checked)", l.path)
				}
				closures[i] = append(closures[i], l)
				continue
			}
			if errors.Is(l.err, fs.ErrNotExist) {
				// A library this torch does not have (libtorch_cuda.so on a CPU
				// torch, torch 1.x's libtorch_cuda_cu.so): the loader fails on
				// it, and every symbol it should give is missing.
				continue
			}
			if l.err != nil {
				if !warned[l] {
					warned[l] = true
					c.warn("extensions: %s: %v (extensions linking it were not checked)", l.path, l.err)
				}
				closures[i] = append(closures[i], l)
				continue
			}
			closures[i] = append(closures[i], l)
			queue = append(queue, l.needed...)
		}
	}
	if len(order) > 64 {
		c.warn("extensions: %d torch libraries loaded; only the first 64 were read", len(order))
		order = order[:64]
	}
	index := map[*torchLib]uint{}
	for i, l := range order {
		index[l] = uint(i)
	}
	names, refs, indexOf := distinctNames(linking)
	// defines[j] has a bit per library in order that defines names[j].
	defines := make([]uint64, len(names))
	var definesMu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2) // two tables of libtorch_cpu's size in memory at most
	for i, l := range order {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			bit := uint64(1) << uint(i)
			// The library's own hash table answers for the wanted names
			// alone (libtorch_cpu.so: a few MB read instead of ~60 MB of
			// symbol tables); the whole table is read only without one.
			if h, err := l.file.HashTable(); err == nil {
				if ok, err := h.Defined(names); err == nil {
					definesMu.Lock()
					for j, d := range ok {
						if d {
							defines[j] |= bit
						}
					}
					definesMu.Unlock()
					return
				}
			}
			syms, err := l.file.Symbols()
			if err != nil {
				l.err = err
				c.warn("extensions: %s: %v", l.path, err)
				return
			}
			var found []int32
			for s := range syms.All() {
				if s.Defined && elfdyn.Exported(s) {
					if j, ok := indexOf(s.Name); ok {
						found = append(found, j)
					}
				}
			}
			definesMu.Lock()
			for _, j := range found {
				defines[j] |= bit
			}
			definesMu.Unlock()
		})
	}
	wg.Wait()
	for i, m := range linking {
		var mask uint64
		unknown := false
		for _, l := range closures[i] {
			if j, ok := index[l]; ok && l.err == nil {
				mask |= 1 << j
			} else {
				unknown = true
			}
		}
		if unknown {
			// A torch library it loads could not be read: its symbols are
			// unknown, and counting them missing would accuse the module.
			continue
		}
		for k, j := range refs[i] {
			if defines[j]&mask != 0 {
				continue
			}
			m.ext.MissingCount++
			if len(m.ext.MissingSymbols) < maxMissingShown {
				m.ext.MissingSymbols = append(m.ext.MissingSymbols, Demangle(m.torchUndefined[k]))
			}
		}
	}
}

// coreTorchLibrary says whether every torch wheel, CPU or CUDA, ships the library
// in torch/lib (torch==2.11.0+cu130 and torch==2.14.0 manylinux wheels: libc10.so,
// libtorch.so, libtorch_cpu.so, libtorch_python.so beside libtorch_cuda.so and
// libc10_cuda.so, which a CPU torch lacks).
func coreTorchLibrary(name string) bool {
	switch name {
	case "libc10.so", "libtorch.so", "libtorch_cpu.so", "libtorch_python.so":
		return true
	}
	return false
}

// distinctNames gives each distinct torch name the modules reference an
// index: names are the names by index, refs[i] the indexes of linking[i]'s
// references in order, and indexOf the index of a name. Each name is then
// looked up once, and a module's verdicts are read by index, not by
// hashing its names again.
//
// The 2,048 torch-linking extensions of the scale tree reference some
// 40,000 names, and this runs after every other collector of its wave has
// finished: the names are split by length parity (equal names fall on the
// same side) and the two halves indexed side by side.
func distinctNames(linking []*module) (names []string, refs [][]int32, indexOf func(string) (int32, bool)) {
	total := 0
	for _, m := range linking {
		total += len(m.torchUndefined)
	}
	parts := 1
	if total >= 8192 && runtime.GOMAXPROCS(0) > 1 {
		parts = 2
	}
	// flat holds every module's references in order; refs cut it.
	flat := make([]int32, total)
	refs = make([][]int32, len(linking))
	at := 0
	for i, m := range linking {
		refs[i] = flat[at : at+len(m.torchUndefined) : at+len(m.torchUndefined)]
		at += len(m.torchUndefined)
	}
	type part struct {
		index map[string]int32
		names []string
	}
	ps := make([]part, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			// Sized for every reference, an upper bound on the distinct
			// names: growing the map was most of its cost.
			index := make(map[string]int32, total/parts)
			var names []string
			pos := 0
			for _, m := range linking {
				for _, s := range m.torchUndefined {
					if len(s)%parts == p {
						j, ok := index[s]
						if !ok {
							j = int32(len(names))
							index[s] = j
							names = append(names, s)
						}
						flat[pos] = j
					}
					pos++
				}
			}
			ps[p] = part{index, names}
		})
	}
	wg.Wait()
	// The second half's indexes follow the first half's names.
	shift := make([]int32, parts)
	for p := 1; p < parts; p++ {
		shift[p] = shift[p-1] + int32(len(ps[p-1].names))
	}
	if parts > 1 {
		pos := 0
		for _, m := range linking {
			for _, s := range m.torchUndefined {
				flat[pos] += shift[len(s)%parts]
				pos++
			}
		}
	}
	names = make([]string, 0, int(shift[parts-1])+len(ps[parts-1].names))
	for _, p := range ps {
		names = append(names, p.names...)
	}
	indexOf = func(name string) (int32, bool) {
		p := len(name) % parts
		j, ok := ps[p].index[name]
		return j + shift[p], ok
	}
	return names, refs, indexOf
}

// findRuntime is where the dynamic linker (or torch, which preloads the
// CUDA runtime of its nvidia wheels) finds soname for m: m's run paths,
// LD_LIBRARY_PATH, the environment's nvidia wheels, ld.so.conf's folders,
// the default folders and the CUDA toolkits. "" when nowhere.
func (c *collector) findRuntime(soname string, m *module) string {
	for _, d := range m.runPaths {
		if p := path.Join(d, soname); c.exists(p) {
			return p
		}
	}
	if p, ok := c.runtimeFound[soname]; ok {
		return p
	}
	if c.sysDirs == nil {
		c.sysDirs = c.searchDirs()
	}
	found := ""
	for _, d := range c.sysDirs {
		if p := path.Join(d, soname); c.exists(p) {
			found = p
			break
		}
	}
	c.runtimeFound[soname] = found
	return found
}

func (c *collector) exists(p string) bool {
	st, err := c.src.Stat(p)
	return err == nil && !st.IsDir()
}

// searchDirs lists the shared search places in order.
func (c *collector) searchDirs() []string {
	var dirs []string
	for _, d := range strings.Split(c.src.Env().Get("LD_LIBRARY_PATH"), ":") {
		if path.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	for _, site := range c.py.SitePath {
		dirs = append(dirs, path.Join(site, "nvidia", "cuda_runtime", "lib"), path.Join(site, "nvidia", "cu13", "lib"))
	}
	dirs = append(dirs, c.ldSoConf("/etc/ld.so.conf", 0)...)
	dirs = append(dirs, defaultLibDirs...)
	dirs = append(dirs, source.Glob(c.src, "/usr/local/cuda*/lib64")...)
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// LinkerDirs are the dynamic linker's search folders on src other than a library's
// own run paths: LD_LIBRARY_PATH, ld.so.conf's folders, then the default ones.
func LinkerDirs(src source.Source) (ldLibraryPath, conf, defaults []string) {
	for _, d := range strings.Split(src.Env().Get("LD_LIBRARY_PATH"), ":") {
		if path.IsAbs(d) {
			ldLibraryPath = append(ldLibraryPath, path.Clean(d))
		}
	}
	c := &collector{src: src}
	conf = c.ldSoConf("/etc/ld.so.conf", 0)
	defaults = slices.Clone(defaultLibDirs)
	return ldLibraryPath, conf, defaults
}

// defaultLibDirs are where glibc's loader looks last (Debian multiarch first).
var defaultLibDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// ldSoConf reads an ld.so.conf: folders one a line, `include` globs of
// further files (Debian's /etc/ld.so.conf.d/*.conf).
func (c *collector) ldSoConf(p string, depth int) []string {
	if depth > 4 {
		return nil
	}
	b, err := source.ReadFile(c.src, p, maxLdConf)
	if err != nil {
		if !errors.Is(err, source.ErrTooLarge) {
			return nil
		}
		c.warn("extensions: %s: %v", p, err)
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "include"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			for _, pat := range strings.Fields(rest) {
				if !path.IsAbs(pat) {
					pat = path.Join(path.Dir(p), pat)
				}
				for _, inc := range source.Glob(c.src, pat) {
					dirs = append(dirs, c.ldSoConf(inc, depth+1)...)
				}
			}
			continue
		}
		if path.IsAbs(line) {
			dirs = append(dirs, path.Clean(line))
		}
	}
	return dirs
}
