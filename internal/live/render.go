package live

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/render"
)

// wrapLines writes each line it is given (one Fprintf call, one line)
// through the Printer's hanging-indent wrap; a line with a line break
// inside (a traceback) is written as it is.
type wrapLines struct{ p *render.Printer }

func (l wrapLines) Write(b []byte) (int, error) {
	s := strings.TrimSuffix(string(b), "\n")
	if strings.Contains(s, "\n") || !strings.HasPrefix(s, "  ") {
		return l.p.Write(b)
	}
	l.p.Wrap("  ", "    ", strings.TrimPrefix(s, "  "))
	return len(b), l.p.Err()
}

// RenderProbe writes what the probe answered, for doctor's text output
// (internal/render: the heading in bold; a line that does not fit wraps
// under a hanging indent, except tracebacks, which keep their lines).
func RenderProbe(w io.Writer, lf *facts.LiveFacts, o render.Options) {
	p := render.NewPrinter(w, o)
	w = wrapLines{p}
	fmt.Fprintln(p, p.P.B("Live probe:"))
	if lf.Error != "" {
		fmt.Fprintf(w, "  not run: %s\n", indent(lf.Error))
		return
	}
	fmt.Fprintf(w, "  python %s (%s), %.1f s\n", lf.Python.Version, lf.Python.Executable, lf.Seconds)
	t := lf.Torch
	if !t.OK {
		fmt.Fprintf(w, "  torch: import failed after %.2f s: %s\n", t.ImportSeconds, indent(t.Error))
	} else {
		abi := "?"
		if t.CXX11ABI != nil {
			abi = fmt.Sprint(*t.CXX11ABI)
		}
		fmt.Fprintf(w, "  torch %s (CUDA %s), imported in %.2f s; cuda available: %v; cxx11 abi: %s\n",
			t.Version, orDash(t.CUDA), t.ImportSeconds, t.CUDAAvailable, abi)
		if t.CUDAError != "" {
			fmt.Fprintf(w, "  cuda error: %s\n", indent(t.CUDAError))
		}
		for _, d := range t.Devices {
			fmt.Fprintf(w, "  device %d: %s, capability %s%s\n", d.Index, d.Name, d.Capability, errSuffix(d.Error))
		}
		if len(t.ArchList) > 0 {
			fmt.Fprintf(w, "  get_arch_list: %s\n", strings.Join(t.ArchList, " "))
		}
	}
	pkgs := append(append([]facts.LivePackage{}, lf.Packages...), lf.Transformers)
	for _, p := range pkgs {
		if p.Import == "" {
			continue
		}
		if p.OK {
			fmt.Fprintf(w, "  import %s: ok %s (%.2f s) %s\n", p.Import, p.Version, p.Seconds, p.File)
		} else {
			fmt.Fprintf(w, "  import %s: %s\n", p.Import, indent(p.Error))
		}
	}
	types := make([]string, 0, len(lf.Models))
	for mt := range lf.Models {
		types = append(types, mt)
	}
	sort.Strings(types)
	for _, mt := range types {
		m := lf.Models[mt]
		if m.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", mt, indent(m.Error))
			continue
		}
		fns := make([]string, 0, len(m.Functions))
		for f := range m.Functions {
			fns = append(fns, f)
		}
		sort.Strings(fns)
		for _, f := range fns {
			fmt.Fprintf(w, "  %s %s -> %s (%s)\n", mt, f, m.Functions[f].Resolves, m.Functions[f].Module)
		}
	}
	for _, e := range lf.Errors {
		fmt.Fprintf(w, "  probe error: %s\n", indent(e))
	}
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n    ")
}
