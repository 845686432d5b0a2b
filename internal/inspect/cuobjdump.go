package inspect

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/fastpath-dev/fastpath/internal/cudaarch"
	"github.com/fastpath-dev/fastpath/internal/fatbin"
)

// Cuobjdump writes what `cuobjdump --list-elf PATH` and then `cuobjdump --list-ptx
// PATH` print for r: listings to stdout, cuobjdump's messages to stderr. cuobjdump
// names the file in its messages by cwd + "/" + PATH, uncleaned, for a relative PATH.
// Messages, as cuobjdump 13.5 prints them:
//
//	cuobjdump info    : File '/abs/hostonly' does not contain device code
//	cuobjdump info    : No PTX file found to extract from '/abs/x.so'. You may try with -all option.
//	cuobjdump fatal   : Invalid fatbin header in '/abs/notes.txt'
//	cuobjdump fatal   : Could not open input file '/abs/missing'
//
// (A single `cuobjdump --list-elf --list-ptx PATH` interleaves ELF and PTX lines in
// file order and says "does not contain device code" once; this is the two-run form.)
// A fatbin that is malformed part way is listed as far as it was read, then the error
// is reported on stderr in fastpath's own words: cuobjdump's for it is unknown.
//
// cuobjdump lists the executable fatbin (.nv_fatbin) when there is one, else the
// relocatable one (__nv_relfatbin); with all it lists both in file order, as
// `cuobjdump -all --list-elf` does.
func Cuobjdump(stdout, stderr io.Writer, r *File, cwd string, all bool) error {
	name := r.Path
	if !filepath.IsAbs(name) {
		name = cwd + "/" + name
	}
	for _, kind := range []cudaarch.Kind{cudaarch.SASS, cudaarch.PTX} {
		if err := cuobjdumpRun(stdout, stderr, r, name, kind, all); err != nil {
			return err
		}
	}
	if r.Fat != nil && r.Error != "" && !r.NotCUDA {
		_, err := fmt.Fprintf(stderr, "fastpath: %s: %s\n", r.Path, r.Error)
		return err
	}
	return nil
}

func cuobjdumpRun(stdout, stderr io.Writer, r *File, name string, kind cudaarch.Kind, all bool) error {
	switch {
	case r.Open != nil:
		_, err := fmt.Fprintf(stderr, "cuobjdump fatal   : Could not open input file '%s'\n", name)
		return err
	case r.NotCUDA || r.Fat == nil:
		_, err := fmt.Fprintf(stderr, "cuobjdump fatal   : Invalid fatbin header in '%s'\n", name)
		return err
	case !r.HasCUDA():
		_, err := fmt.Fprintf(stderr, "cuobjdump info    : File '%s' does not contain device code\n", name)
		return err
	}
	fat := r.Fat
	if all {
		fat = fat.All()
	}
	n := 0
	for _, e := range fat.Entries {
		if e.Kind == kind {
			n++
		}
	}
	base := fatbin.ListBase(r.Path)
	switch {
	case n == 0 && kind == cudaarch.SASS:
		_, err := fmt.Fprintf(stderr, "cuobjdump info    : No ELF file found to extract from '%s'. You may try with -all option.\n", name)
		return err
	case n == 0:
		_, err := fmt.Fprintf(stderr, "cuobjdump info    : No PTX file found to extract from '%s'. You may try with -all option.\n", name)
		return err
	case kind == cudaarch.SASS:
		return fatbin.ListELF(stdout, fat, base)
	default:
		return fatbin.ListPTX(stdout, fat, base)
	}
}
