package fatbin

import (
	"cmp"
	"debug/elf"
	"io"
	"slices"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// stoCUDAEntry is the st_other bit ptxas sets on a kernel's symbol in a cubin: what
// `cuobjdump -symbols` prints as ENTRY and `readelf -s` as "[<other>: 10]" (nvcc 13.0,
// testdata/real/nvcc-13.0: axpy and scale carry it; device functions do not).
const stoCUDAEntry = 0x10

// maxKernelScan caps the bytes of one cubin a kernel scan may read: its ELF and
// section headers and its symbol table, which debug/elf holds in memory.
const maxKernelScan = 64 << 20

// maxScanInflate is the largest compressed cubin a kernel scan decompresses: a
// container without kernels holds small cubins (nvcc 13.0's: 1.5 KB; cuDNN 9.28's
// and cuBLASLt 12.9's: at most 5.2 KB), and a container whose cheapest cubin is
// larger is taken to hold kernels unread, as every compressed one was before
// session 11. Without the cap, judging vllm's, cuBLASLt's and onnxruntime-gpu's
// libraries decompressed 1 to 4 MB cubins of kernel containers only to find ENTRY
// symbols (40 MB for the session-11 sweep's 68 files and ten GPUs), and doctor's
// collection of vllm 0.33.0, sgl-kernel 0.3.21 and xformers 0.0.35 took 18-60 ms
// instead of 7 (256 KB: still twice; 64 KB: 9-13 ms).
const maxScanInflate = 64 << 10

// DecompressBudget is the bytes a kernel scan decompresses in one file at most
// (ContainerKernels' budget): far above what real files need (a kernel-less
// container's cubins are a few KB; the first container with kernels settles a
// verdict, its smallest cubin first), and a bound on a hostile file's cost.
const DecompressBudget = 256 << 20

// ContainerKernels says whether container c (an index into f.Containers) defines a
// kernel, read from the symbol tables of its cubins in r, the file f was read from:
// has is true as soon as one cubin has a symbol marked ENTRY. known is false where
// that cannot be told from headers and symbol tables alone (a container of PTX
// only, a cubin that does not parse or decompress, a bare cubin's pseudo
// container): callers must then assume kernels. This reads payload bytes, unlike
// the rest of the package, so callers ask only about containers that decide a
// verdict. Compressed cubins (-Xfatbin=-compress-all, --compress-mode; torch's and
// flashinfer's wheels) are decompressed, each of at most maxScanInflate bytes; the
// cheapest cubins are read first (plain ones, then by uncompressed size), since
// any one with a kernel settles the answer. budget holds the bytes the caller
// still allows to be decompressed for one file (start it at DecompressBudget);
// a cubin that needs more is not opened (unknown), so a hostile file of many
// containers that each inflate to maxScanInflate bytes costs at most the budget.
// nil allows one DecompressBudget for this call.
//
// Why it matters: nvcc links a container without any kernel next to the kernels'
// own (nvcc 13.0's default build of axpy.cu: {sm_75} with no symbol at all beside
// {sm_75, compute_75} with axpy and scale). It holds SASS for the real targets only,
// so on a newer GPU it has no code, yet nothing is ever launched from it. Built
// with --compress-mode=size, its cubin is zstd-compressed like the kernels' own
// (testdata/real/nvcc-13.0/cmode_size.so).
func (f *File) ContainerKernels(r io.ReaderAt, c int, budget *int64) (has, known bool) {
	if f == nil || c < 0 || c >= len(f.Containers) {
		return false, false
	}
	ct := f.Containers[c]
	if ct.First < 0 || ct.N <= 0 || ct.First+ct.N > len(f.Entries) {
		return false, false
	}
	var cubins []Entry
	for _, e := range f.Entries[ct.First : ct.First+ct.N] {
		if e.Kind != cudaarch.SASS {
			continue
		}
		if e.PayloadSize > maxKernelScan {
			return false, false
		}
		cubins = append(cubins, e)
	}
	if len(cubins) == 0 {
		return false, false // PTX only: its .entry lines would have to be read
	}
	slices.SortStableFunc(cubins, func(a, b Entry) int { return cmp.Compare(scanCost(a), scanCost(b)) })
	if budget == nil {
		b := int64(DecompressBudget)
		budget = &b
	}
	for _, e := range cubins {
		if e.Compression != CompressionNone {
			if e.UncompressedSize > maxScanInflate || e.UncompressedSize > uint64(max(*budget, 0)) {
				return false, false
			}
			*budget -= int64(e.UncompressedSize)
		}
		p, err := e.payload(r)
		if err != nil {
			return false, false
		}
		has, ok := cubinHasKernel(p)
		if !ok {
			return false, false
		}
		if has {
			return true, true
		}
	}
	return false, true
}

// scanCost orders a container's cubins for ContainerKernels: a plain cubin costs
// only its headers and symbol table (0 here), a compressed one its whole
// uncompressed size.
func scanCost(e Entry) uint64 {
	if e.Compression == CompressionNone {
		return 0
	}
	return max(e.UncompressedSize, 1)
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
