package fatbin

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
)

// ListBase is the name cuobjdump puts before an entry's number: the file's base name
// without its last extension. libtorch_cuda.so -> libtorch_cuda (reference listing);
// libggml-cuda.so.0.14.0 -> libggml-cuda.so.0.14 (seen in a public cuobjdump listing).
func ListBase(path string) string {
	b := filepath.Base(path)
	if i := strings.LastIndexByte(b, '.'); i > 0 {
		return b[:i]
	}
	return b
}

// nameBase is what cuobjdump 13.5 puts in place of "FILE.N" for an entry that records
// its source file name (Entry.Name): the name after its last '/', without its last
// extension, however short: "evaluator.cu" -> "evaluator", "my.kern.cu" -> "my.kern",
// ".cu" and "dir/" -> "" (a backslash is no separator). Checked against cuobjdump on
// nvcc 13.0 -lineinfo builds with the name patched (sweep, session 8).
func nameBase(name []byte) []byte {
	if i := bytes.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := bytes.LastIndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	return name
}

// cuobjdumpArch is the arch cuobjdump prints for an entry: sm_XY, with `a` for
// arch-specific entries. Family (`f`) cubins print plain (README of the reference),
// family PTX with its `f`: cuobjdump 13.5 lists cuDNN 9.28.0.42's compute_120f PTX
// (nvidia-cudnn-cu12, libcudnn_cnn.so.9) as "libcudnn_cnn.so.1.sm_120f.ptx".
func cuobjdumpArch(e Entry) string {
	s := fmt.Sprintf("sm_%d", e.SM)
	switch {
	case e.Variant == cudaarch.VariantArch:
		s += "a"
	case e.Variant == cudaarch.VariantFamily && e.Kind == cudaarch.PTX:
		s += "f"
	}
	return s
}

// ListELF writes what `cuobjdump --list-elf FILE` prints for f, with base =
// ListBase(FILE): one line per SASS entry in file order, numbered from 1,
//
//	ELF file    1: libtorch_cuda.1.sm_75.cubin
//
// (number right-aligned in 4 columns, wider past 9999, as printf's %4d). A bare cubin
// is listed without a number, as cuobjdump 13.5 does: "ELF file    1: axpy.sm_90.sm_90.cubin"
// for axpy.sm_90.cubin (testdata/real); so is an entry that records its source file
// name (-lineinfo, -G), after that name: "ELF file    1: axpy.sm_80.cubin".
func ListELF(w io.Writer, f *File, base string) error {
	return list(w, f, base, cudaarch.SASS, "ELF", "cubin")
}

// ListPTX writes what `cuobjdump --list-ptx FILE` prints: one line per PTX entry,
// numbered separately from the ELF entries,
//
//	PTX file    1: libfoo.1.sm_90.ptx
func ListPTX(w io.Writer, f *File, base string) error {
	return list(w, f, base, cudaarch.PTX, "PTX", "ptx")
}

func list(w io.Writer, f *File, base string, kind cudaarch.Kind, label, ext string) error {
	bw := bufio.NewWriter(w)
	n := 0
	for _, e := range f.Entries {
		if e.Kind != kind {
			continue
		}
		n++
		if f.Kind == KindCubin {
			fmt.Fprintf(bw, "%s file %4d: %s.%s.%s\n", label, n, base, cuobjdumpArch(e), ext)
			continue
		}
		if e.Name != "" {
			fmt.Fprintf(bw, "%s file %4d: %s.%s.%s\n", label, n, e.Name, cuobjdumpArch(e), ext)
			continue
		}
		fmt.Fprintf(bw, "%s file %4d: %s.%d.%s.%s\n", label, n, base, n, cuobjdumpArch(e), ext)
	}
	return bw.Flush()
}

// Targets is the sorted, unique SASS and PTX targets of f, as the inspect JSON spells
// them: sm_90, sm_100a, sm_120f, compute_90. Sorted by number, then plain, a, f.
func (f *File) Targets() (sass, ptx []string) {
	var ts []cudaarch.Target
	for _, e := range f.Entries {
		if e.Kind == cudaarch.SASS || e.Kind == cudaarch.PTX {
			ts = append(ts, e.Target())
		}
	}
	slices.SortFunc(ts, func(a, b cudaarch.Target) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.SM, b.SM), cmp.Compare(a.Variant, b.Variant))
	})
	ts = slices.Compact(ts)
	for _, t := range ts {
		if t.Kind == cudaarch.SASS {
			sass = append(sass, t.String())
		} else {
			ptx = append(ptx, t.String())
		}
	}
	return sass, ptx
}

// CommonSASS is the SASS targets present in every container (what
// torch.cuda.get_arch_list() reports for libtorch_cuda.so): sorted as Targets.
func (f *File) CommonSASS() []cudaarch.Target {
	if len(f.Containers) == 0 {
		return nil
	}
	count := map[cudaarch.Target]int{}
	for _, c := range f.Containers {
		seen := map[cudaarch.Target]bool{}
		for _, e := range f.Entries[c.First : c.First+c.N] {
			if e.Kind == cudaarch.SASS && !seen[e.Target()] {
				seen[e.Target()] = true
				count[e.Target()]++
			}
		}
	}
	var out []cudaarch.Target
	for t, n := range count {
		if n == len(f.Containers) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b cudaarch.Target) int {
		return cmp.Or(cmp.Compare(a.SM, b.SM), cmp.Compare(a.Variant, b.Variant))
	})
	return out
}
