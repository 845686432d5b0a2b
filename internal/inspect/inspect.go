// Package inspect reports the CUDA code inside files and folders for `fastpath inspect`:
// which SASS and PTX targets each fatbin container holds, and whether a GPU of a given
// compute capability can run every container. Only headers are read (package fatbin).
package inspect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/fatbin"
	"github.com/fastpath-dev/fastpath/internal/kb"
)

// Report is inspect's JSON: {"files": [...]} (DESIGN.md, JSON contracts).
type Report struct {
	Files []*File `json:"files"`
}

// File is what one file holds. Sass and PTX are sorted and unique; arch-specific
// targets keep their `a`, family targets their `f`.
type File struct {
	Path    string   `json:"path"`
	Kind    string   `json:"kind,omitempty"` // "elf", "cubin", "fatbin"; empty when unread
	Fatbins int      `json:"fatbins"`
	Entries int      `json:"entries"`
	SASS    []string `json:"sass"`
	PTX     []string `json:"ptx"`
	// CommonSASS is the SASS targets in every container: what torch.cuda.get_arch_list()
	// reports for libtorch_cuda.so.
	CommonSASS []string  `json:"common_sass"`
	Verdicts   []Verdict `json:"verdicts,omitempty"`
	// Dist is the Python distribution that installed the file (the *.dist-info/RECORD
	// in a folder above it that lists it: site-packages, an unpacked wheel), or "".
	// A file of a distribution that picks its modules and cubins by GPU (kb
	// loading.json arch_specific_modules) and holds code for other GPUs only gets
	// the other-gpu verdict, not no-kernel-image.
	Dist string `json:"dist,omitempty"`
	// dists finds Dist (set by Walk; nil once looked up, or for a file not walked).
	dists *distIndex
	// Relocatable is the -rdc device code of a file that also has an executable
	// fatbin (__nv_relfatbin beside .nv_fatbin): kept for device linking, never loaded
	// by the runtime, so it is left out of every count, target list and verdict above.
	Relocatable *Code  `json:"relocatable,omitempty"`
	Error       string `json:"error,omitempty"`

	// Named is true for a path given on the command line (not found by a folder walk).
	Named bool `json:"-"`
	// NotCUDA is true when the file is neither ELF nor a fatbin.
	NotCUDA bool `json:"-"`
	// Open is the open error (missing, not a regular file, permission) when the file could not be read at all.
	Open error `json:"-"`
	// Fat is what was read; nil when nothing could be.
	Fat *fatbin.File `json:"-"`
}

// Code is the fatbins of one kind in a file: counts and sorted, unique targets.
type Code struct {
	Fatbins int      `json:"fatbins"`
	Entries int      `json:"entries"`
	SASS    []string `json:"sass"`
	PTX     []string `json:"ptx"`
}

// HasCUDA says whether the file holds any fatbin entry.
func (f *File) HasCUDA() bool { return f.Entries > 0 }

// Verdict names, as the JSON spells them.
const (
	VerdictNative   = "native"          // every container has SASS that runs as is
	VerdictFamily   = "family"          // every container runs from SASS, some only through an `f` target of an earlier family member
	VerdictPTXJIT   = "ptx-jit"         // some containers run only once the driver JIT-compiles their PTX
	VerdictNoKernel = "no-kernel-image" // some containers have neither SASS nor PTX for the GPU
	// VerdictOtherGPU: no container has code for the GPU, and each holds code for
	// other GPUs alone (cudaarch.ForOtherGPUs) in a file of a distribution that
	// picks its files by GPU (File.Dist): the file is not loaded or launched here.
	VerdictOtherGPU = "other-gpu"
)

// NoKernelImage is the CUDA runtime's message for a kernel without code for the GPU
// (cudaErrorNoKernelImageForDevice).
const NoKernelImage = "no kernel image is available for execution on the device"

// Verdict says whether a GPU can run the code of one file.
type Verdict struct {
	GPU     string `json:"gpu"`     // compute capability, "9.0"
	Verdict string `json:"verdict"` // one of the Verdict* names
	// Targets is, for every container that runs, the target it runs from (the one the
	// CUDA loader picks: best compatibility, then highest SM), sorted and unique.
	Targets    []string `json:"targets"`
	Containers int      `json:"containers"` // containers with entries (a bare cubin counts as one)
	Native     int      `json:"native"`     // containers running their own SASS for this capability or an older minor
	Family     int      `json:"family"`     // containers running from an `f` target of an earlier family member
	PTXJIT     int      `json:"ptx_jit"`    // containers running only through PTX JIT
	None       int      `json:"none"`       // containers with no code for the GPU
	// KernelLess are containers with no code for the GPU that define no kernel (their
	// cubins' symbol tables have no ENTRY): nothing is launched from them, so they
	// do not make a no-kernel-image verdict. Counted apart from None; 0 unless some
	// container had no code.
	KernelLess int `json:"kernel_less"`
	// OtherArch are containers with no code for the GPU that are code for other
	// GPUs alone (cudaarch.ForOtherGPUs: each target arch- or family-specific
	// SASS, newer than the GPU, or held by containers that run too), counted apart
	// from None where some container with kernels runs: real libraries ship
	// per-GPU kernels beside code for every GPU and launch them only there
	// (onnxruntime-gpu 1.31.1's {sm_90a} and {sm_120a}; vllm 0.33.0's Turing-only
	// Marlin {sm_75}; cuDNN 9.28's {sm_75}; cuBLASLt 12.9's Blackwell-only
	// {sm_100 sm_103 sm_120 sm_121}). They make no no-kernel-image verdict; where
	// no container with kernels runs they count as None (or KernelLess), except in
	// a file its package loads only on other GPUs (File.Dist; verdict other-gpu).
	OtherArch int    `json:"other_arch"`
	Detail    string `json:"detail"`
}

// Judge gives the verdict for a GPU of capability cc over f's containers, counting
// every container (File.Judge also sets apart those that define no kernel).
func Judge(f *fatbin.File, cc cudaarch.Capability) Verdict {
	return judge(f, cc, nil, nil)
}

// judge is Judge where k, when not nil, reads which containers define no kernel:
// those with no code for the GPU count as KernelLess, and where no container that
// runs defines a kernel, the containers built for other GPUs are the only kernels
// and count as any container without code. otherFile, when not nil, says (where no
// container runs) whether a container's targets are code for other GPUs that the
// file's package loads only there (File.Judge): those count as OtherArch, and a file
// of those alone is VerdictOtherGPU.
func judge(f *fatbin.File, cc cudaarch.Capability, k *kernelScan, otherFile func([]cudaarch.Target) bool) Verdict {
	v := Verdict{GPU: cc.String(), Targets: []string{}}
	// The detail of a ptx-jit or family verdict names only the targets of that kind
	// (spconv-cu126 2.3.8 on 8.0: 411 containers run sm_80, 195 JIT compute_52; the
	// JIT ones run from compute_52, not from "sm_80, compute_52").
	var jitTargets, familyTargets, otherTargets []string
	var jitISA cudaarch.Version // the newest PTX ISA a container runs from through JIT
	type noCode struct {
		container int
		ts        []cudaarch.Target
	}
	var missing []noCode            // containers with no code for the GPU, in file order
	var running []int               // the containers that run
	runTargets := map[string]bool{} // every target of the containers that run
	for _, group := range groups(f) {
		container := group[0].Container
		var ts []cudaarch.Target
		for _, e := range group {
			if e.Kind == cudaarch.SASS || e.Kind == cudaarch.PTX {
				ts = append(ts, e.Target())
			}
		}
		v.Containers++
		best, c := cudaarch.Best(ts, cc)
		switch c {
		case cudaarch.Native:
			v.Native++
		case cudaarch.Family:
			v.Family++
		case cudaarch.PTXJIT:
			v.PTXJIT++
		default:
			missing = append(missing, noCode{container, ts})
			continue
		}
		running = append(running, container)
		for _, t := range ts {
			runTargets[t.String()] = true
		}
		s := best.String()
		if !slices.Contains(v.Targets, s) {
			v.Targets = append(v.Targets, s)
		}
		switch {
		case c == cudaarch.PTXJIT:
			if !slices.Contains(jitTargets, s) {
				jitTargets = append(jitTargets, s)
			}
			for _, e := range group {
				if e.Kind == cudaarch.PTX && e.Target() == best && jitISA.Less(e.PTXVersion) {
					jitISA = e.PTXVersion
				}
			}
		case c == cudaarch.Family && !slices.Contains(familyTargets, s):
			familyTargets = append(familyTargets, s)
		}
	}
	// Containers without code for the GPU: built for other GPUs alone (OtherArch)
	// where some container with kernels runs, else kernel-less or none. Each kind is
	// read for kernels in file order until its first container with kernels.
	kernelsRun := len(running) > 0
	ranNothing := !kernelsRun
	var noneKL, otherKL func(int) bool
	if k != nil {
		noneKL, otherKL = k.verdict(), k.verdict()
		if kernelsRun && len(missing) > 0 {
			kernelsRun = k.anyKernels(running)
		}
	}
	for _, m := range missing {
		switch {
		case kernelsRun && cudaarch.ForOtherGPUs(m.ts, cc, func(t cudaarch.Target) bool { return runTargets[t.String()] }),
			ranNothing && otherFile != nil && otherFile(m.ts):
			if otherKL != nil && m.container >= 0 && otherKL(m.container) {
				v.KernelLess++
				continue
			}
			v.OtherArch++
			otherTargets = addTargets(otherTargets, m.ts)
		case noneKL != nil && m.container >= 0 && noneKL(m.container):
			v.KernelLess++
		default:
			v.None++
		}
	}
	slices.SortFunc(v.Targets, compareTargetNames)
	slices.SortFunc(otherTargets, compareTargetNames)
	slices.SortFunc(jitTargets, compareTargetNames)
	slices.SortFunc(familyTargets, compareTargetNames)
	switch {
	case v.Containers == 0:
		v.Verdict = VerdictNative
		v.Detail = "no CUDA code: nothing to run"
	case v.Containers == v.KernelLess:
		v.Verdict = VerdictNative
		v.Detail = "no kernels: nothing to launch"
	case v.None == 0 && v.OtherArch > 0 && ranNothing:
		v.Verdict = VerdictOtherGPU
		v.Detail = fmt.Sprintf("no fatbin has SASS or PTX for %s: %d of %d hold code for other GPUs only (%s), which a package that picks its files by GPU loads only there (expected, not an error)",
			cc, v.OtherArch, v.Containers, strings.Join(otherTargets, ", "))
		if v.KernelLess > 0 {
			v.Detail += fmt.Sprintf("; %d more fatbin(s) define no kernel", v.KernelLess)
		}
		return v
	case v.None > 0:
		v.Verdict = VerdictNoKernel
		v.Detail = fmt.Sprintf("%d of %d fatbin(s) have neither SASS nor PTX for %s: their kernels fail with %q", v.None, v.Containers, cc, NoKernelImage)
		if v.Containers == 1 {
			v.Detail = fmt.Sprintf("its only fatbin has neither SASS nor PTX for %s: its kernels fail with %q", cc, NoKernelImage)
		}
	case v.PTXJIT > 0:
		v.Verdict = VerdictPTXJIT
		v.Detail = fmt.Sprintf("%d of %d fatbin(s) run only through PTX JIT (%s): the driver compiles them at first use, slowly, and needs to know their PTX ISA",
			v.PTXJIT, v.Containers, strings.Join(jitTargets, ", "))
		if cuda, ok := cudaarch.PTXISAToCUDA(jitISA); ok {
			v.Detail += fmt.Sprintf(" (%s: a driver for CUDA %s or newer)", jitISA, cuda)
		}
	case v.Family > 0:
		v.Verdict = VerdictFamily
		v.Detail = fmt.Sprintf("every fatbin has SASS for %s; %d through a family target (%s)", cc, v.Family, strings.Join(familyTargets, ", "))
	default:
		v.Verdict = VerdictNative
		v.Detail = fmt.Sprintf("every fatbin has native SASS for %s (%s)", cc, strings.Join(v.Targets, ", "))
	}
	if v.OtherArch > 0 {
		v.Detail += fmt.Sprintf("; %d more fatbin(s) hold code for other GPUs only (%s): their kernels fail with %q if launched here, which a library that picks kernels by GPU (cuBLAS, cuDNN, vllm) never does",
			v.OtherArch, strings.Join(otherTargets, ", "), NoKernelImage)
	}
	if v.KernelLess > 0 && v.Containers > v.KernelLess {
		v.Detail += fmt.Sprintf("; %d more fatbin(s) without kernels have no code for %s either, which launches nothing from them", v.KernelLess, cc)
	}
	return v
}

// addTargets adds the names of ts to names, once each.
func addTargets(names []string, ts []cudaarch.Target) []string {
	for _, t := range ts {
		if s := t.String(); !slices.Contains(names, s) {
			names = append(names, s)
		}
	}
	return names
}

// groups is f's entries per container; a bare cubin is one group of its own.
func groups(f *fatbin.File) [][]fatbin.Entry {
	if f == nil {
		return nil
	}
	if f.Kind == fatbin.KindCubin {
		if len(f.Entries) == 0 {
			return nil
		}
		return [][]fatbin.Entry{f.Entries}
	}
	var out [][]fatbin.Entry
	for _, c := range f.Containers {
		if c.N == 0 || c.First < 0 || c.First+c.N > len(f.Entries) {
			continue // an empty container registers no kernels
		}
		out = append(out, f.Entries[c.First:c.First+c.N])
	}
	return out
}

// compareTargetNames orders sm_ before compute_, then by number, then plain, a, f.
func compareTargetNames(a, b string) int {
	ta, errA := cudaarch.ParseTarget(a)
	tb, errB := cudaarch.ParseTarget(b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	if ta.Kind != tb.Kind {
		return int(ta.Kind) - int(tb.Kind)
	}
	if ta.SM != tb.SM {
		return ta.SM - tb.SM
	}
	return int(ta.Variant) - int(tb.Variant)
}

// Read inspects one file by path. It never blocks on a fifo or device: only regular
// files (after following links) are opened.
func Read(path string) *File {
	r := &File{Path: path, SASS: []string{}, PTX: []string{}, CommonSASS: []string{}}
	st, err := os.Stat(path)
	if err != nil {
		r.fail(err)
		return r
	}
	if !st.Mode().IsRegular() {
		r.fail(&fs.PathError{Op: "read", Path: path, Err: errNotRegular(st.Mode())})
		return r
	}
	f, err := fatbin.Open(path)
	if f != nil {
		r.fill(f)
		f.Close()
	}
	switch {
	case err == nil:
	case errors.Is(err, fatbin.ErrNotCUDA):
		r.NotCUDA = true
		r.Error = "not an ELF file or fatbin"
	default:
		var fe *fatbin.FormatError
		if f == nil && !errors.As(err, &fe) {
			r.fail(err) // could not open or read at all
		} else {
			r.Error = err.Error()
		}
	}
	return r
}

func (r *File) fail(err error) {
	r.Open = err
	r.Error = err.Error()
}

func errNotRegular(m fs.FileMode) error {
	switch {
	case m.IsDir():
		return syscall.EISDIR
	case m&fs.ModeNamedPipe != 0:
		return errors.New("a fifo, not a regular file")
	case m&fs.ModeDevice != 0:
		return errors.New("a device, not a regular file")
	case m&fs.ModeSocket != 0:
		return errors.New("a socket, not a regular file")
	}
	return errors.New("not a regular file")
}

func (r *File) fill(f *fatbin.File) {
	r.Fat = f
	switch f.Kind {
	case fatbin.KindHostELF:
		r.Kind = "elf"
	case fatbin.KindCubin:
		r.Kind = "cubin"
	case fatbin.KindFatbin:
		r.Kind = "fatbin"
	}
	r.Fatbins = len(f.Containers)
	r.Entries = len(f.Entries)
	sass, ptx := f.Targets()
	if rel := f.Relocatable; rel != nil {
		rs, rp := rel.Targets()
		r.Relocatable = &Code{Fatbins: len(rel.Containers), Entries: len(rel.Entries),
			SASS: append([]string{}, rs...), PTX: append([]string{}, rp...)}
	}
	r.SASS = append(r.SASS, sass...)
	r.PTX = append(r.PTX, ptx...)
	if f.Kind == fatbin.KindCubin {
		r.CommonSASS = append(r.CommonSASS, sass...)
	} else {
		for _, t := range f.CommonSASS() {
			r.CommonSASS = append(r.CommonSASS, t.String())
		}
	}
}

// Judge adds a verdict per capability. Where some container has no code for a GPU,
// the file is opened again to read whether those containers define any kernel
// (fatbin.ContainerKernels): one without kernels cannot fail a launch. Only then are
// payload bytes read: the symbol tables of those containers' cubins, in file order,
// until one container with kernels settles the verdict (the containers after it are
// counted as none unread, so kernel_less is a lower bound there).
func (r *File) Judge(gpus []cudaarch.Capability) {
	if r.Fat == nil || !r.HasCUDA() {
		return
	}
	k := &kernelScan{path: r.Path, fat: r.Fat, known: map[int]bool{}, inflate: fatbin.DecompressBudget}
	defer k.close()
	for _, cc := range gpus {
		// Looked up only where a container has no code for cc (judge asks then).
		var otherFn func([]cudaarch.Target) bool
		looked := false
		other := func(ts []cudaarch.Target) bool {
			if !looked {
				otherFn, looked = r.otherGPUFile(cc), true
			}
			return otherFn != nil && otherFn(ts)
		}
		v := judge(r.Fat, cc, nil, other)
		if (v.None > 0 || v.OtherArch > 0) && r.Fat.Kind != fatbin.KindCubin {
			v = judge(r.Fat, cc, k, other)
		}
		r.Verdicts = append(r.Verdicts, v)
	}
}

// ResolveDist sets and returns Dist, the Python distribution whose RECORD lists
// the file, for a file Walk found ("" when none does, or when it was not walked).
func (r *File) ResolveDist() string {
	if r.dists != nil {
		r.Dist, r.dists = r.dists.dist(r.Path), nil
	}
	return r.Dist
}

// otherGPUFile says, for a file with no code for cc, which of its containers are
// code its package loads only on other GPUs (kb loading.json), or nil:
//   - a module the package uses only on other majors ("module-gated-by-major":
//     sgl-kernel's flash_ops on 8.x and 9.x alone): every container;
//   - a bare cubin of a package that picks its files by GPU (arch_specific_modules):
//     every container. flashinfer-python 0.7.4 loads flashinfer-cubin's cubins by
//     name (jit/cubin_loader.py get_artifact) for the kernels its C++ picks by SM
//     (trtllm-gen fmhaSm100a* on 10.x alone; utils.py is_sm100a_supported);
//   - a module of such a package: containers of arch- or family-specific SASS
//     alone (sm_90a, sm_100f; vllm 0.33.0's _deepselect_C {sm_100f}), as the KB's
//     rule says; a module with plain targets for other GPUs only (sgl-kernel's
//     common_ops {sm_80 ... sm_120a} on 7.5, loaded on every GPU) stays an error.
func (r *File) otherGPUFile(cc cudaarch.Capability) func([]cudaarch.Target) bool {
	if r.ResolveDist() == "" {
		return nil
	}
	all := func([]cudaarch.Target) bool { return true }
	if kb.Loading().GatedOff(r.Dist, filepath.Base(filepath.Dir(r.Path))+"/"+filepath.Base(r.Path), cc.Major) {
		return all
	}
	if !kb.Loading().DispatchesByArch(r.Dist) {
		return nil
	}
	if r.Fat.Kind == fatbin.KindCubin {
		return all
	}
	return func(ts []cudaarch.Target) bool {
		for _, t := range ts {
			if t.Kind != cudaarch.SASS || t.Variant == cudaarch.VariantPlain {
				return false
			}
		}
		return len(ts) > 0
	}
}

// kernelScan reads, once per container and from one open of the file, whether a
// container is known to define no kernel.
type kernelScan struct {
	path  string
	fat   *fatbin.File
	file  *os.File
	err   error
	known map[int]bool // container -> known to be kernel-less
	// inflate is what is left of the file's decompression budget
	// (fatbin.ContainerKernels).
	inflate int64
}

// verdict is the kernel-less test for one verdict: true for containers known to
// define no kernel, checked in order until the first that has kernels (or cannot be
// told); after it every answer is false without reading.
func (k *kernelScan) verdict() func(int) bool {
	settled := false
	return func(c int) bool {
		if settled {
			return false
		}
		kl, ok := k.known[c]
		if !ok {
			kl = k.read(c)
			k.known[c] = kl
		}
		if !kl {
			settled = true
		}
		return kl
	}
}

// anyKernels says whether some of containers may define a kernel: true at the
// first that is not known to be kernel-less.
func (k *kernelScan) anyKernels(containers []int) bool {
	for _, c := range containers {
		kl, ok := k.known[c]
		if !ok {
			kl = c >= 0 && k.read(c)
			k.known[c] = kl
		}
		if !kl {
			return true
		}
	}
	return false
}

func (k *kernelScan) read(c int) bool {
	if k.file == nil && k.err == nil {
		k.file, k.err = openRegular(k.path)
	}
	if k.err != nil {
		return false
	}
	has, ok := k.fat.ContainerKernels(k.file, c, &k.inflate)
	return ok && !has
}

// openRegular opens path for reading without blocking (a fifo swapped in since the
// first read would otherwise hang the open) and only if it is still a regular file.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	return f, nil
}

func (k *kernelScan) close() {
	if k.file != nil {
		k.file.Close()
	}
}

// NoKernelImage says whether some verdict predicts "no kernel image".
func (r *File) NoKernelImage() bool {
	for _, v := range r.Verdicts {
		if v.Verdict == VerdictNoKernel {
			return true
		}
	}
	return false
}
