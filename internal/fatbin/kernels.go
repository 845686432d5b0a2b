package fatbin

import (
	"debug/elf"
	"io"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// stoCUDAEntry is the st_other bit ptxas sets on a kernel's symbol in a cubin: what
// `cuobjdump -symbols` prints as ENTRY and `readelf -s` as "[<other>: 10]" (nvcc 13.0,
// testdata/real/nvcc-13.0: axpy and scale carry it; device functions do not).
const stoCUDAEntry = 0x10

// maxKernelScan caps the bytes of one cubin a kernel scan may read: its ELF and
// section headers and its symbol table, which debug/elf holds in memory.
const maxKernelScan = 64 << 20

// ContainerKernels says whether container c (an index into f.Containers) defines a
// kernel, read from the symbol tables of its cubins in r, the file f was read from:
// has is true as soon as one cubin has a symbol marked ENTRY. known is false where
// that cannot be told from headers and symbol tables alone (a compressed cubin, a
// container of PTX only, a cubin that does not parse, a bare cubin's pseudo
// container): callers must then assume kernels. This reads payload bytes, unlike the
// rest of the package, so callers ask only about containers that decide a verdict.
//
// Why it matters: nvcc links a container without any kernel next to the kernels'
// own (nvcc 13.0's default build of axpy.cu: {sm_75} with no symbol at all beside
// {sm_75, compute_75} with axpy and scale). It holds SASS for the real targets only,
// so on a newer GPU it has no code, yet nothing is ever launched from it.
func (f *File) ContainerKernels(r io.ReaderAt, c int) (has, known bool) {
	if f == nil || c < 0 || c >= len(f.Containers) {
		return false, false
	}
	ct := f.Containers[c]
	if ct.First < 0 || ct.N <= 0 || ct.First+ct.N > len(f.Entries) {
		return false, false
	}
	cubins := 0
	for _, e := range f.Entries[ct.First : ct.First+ct.N] {
		if e.Kind != cudaarch.SASS {
			continue
		}
		cubins++
		if e.Compression != CompressionNone || e.PayloadSize > maxKernelScan {
			return false, false
		}
		has, ok := cubinHasKernel(io.NewSectionReader(r, e.Offset+int64(e.HeaderSize), int64(e.PayloadSize)))
		if !ok {
			return false, false
		}
		if has {
			return true, true
		}
	}
	if cubins == 0 {
		return false, false // PTX only: its .entry lines would have to be read
	}
	return false, true
}

// cubinHasKernel reads a cubin's symbol table for a kernel. ok is false when the
// cubin does not parse. debug/elf bounds every read by r's size; ptxas 12.x's
// e_version is read as cubinVersionFix allows.
func cubinHasKernel(r *io.SectionReader) (has, ok bool) {
	defer func() {
		if recover() != nil { // debug/elf on hostile bytes: no verdict, no crash
			has, ok = false, false
		}
	}()
	ef, err := elf.NewFile(cubinVersionFix(r))
	if err != nil {
		return false, false
	}
	syms, err := ef.Symbols()
	if err != nil && err != elf.ErrNoSymbols {
		return false, false
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Other&stoCUDAEntry != 0 {
			return true, true
		}
	}
	return false, true
}
