package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// TextOptions tune the text report.
type TextOptions struct {
	// Color adds ANSI colour (on a terminal, unless NO_COLOR is set).
	Color bool
}

type palette struct{ red, yellow, blue, bold, dim, reset string }

func newPalette(on bool) palette {
	if !on {
		return palette{}
	}
	return palette{red: "\x1b[31m", yellow: "\x1b[33m", blue: "\x1b[34m", bold: "\x1b[1m", dim: "\x1b[2m", reset: "\x1b[0m"}
}

func (p palette) severity(s finding.Severity) string {
	switch s {
	case finding.Error:
		return p.red + p.bold + "ERROR  " + p.reset
	case finding.Warning:
		return p.yellow + p.bold + "WARN   " + p.reset
	}
	return p.blue + "INFO   " + p.reset
}

// Summary is the one-line verdict: "2 errors, 1 warning".
func Summary(findings []finding.Finding) string {
	var e, w, i int
	for _, f := range findings {
		switch f.Severity {
		case finding.Error:
			e++
		case finding.Warning:
			w++
		default:
			i++
		}
	}
	if e+w+i == 0 {
		return "no problems found"
	}
	parts := []string{count(e, "error", "errors"), count(w, "warning", "warnings")}
	if i > 0 {
		parts = append(parts, count(i, "note", "notes"))
	}
	return strings.Join(parts, ", ")
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Text writes the report for people: the verdict, the findings by severity
// with evidence and fixes, then a compact table of the facts.
func Text(w io.Writer, f *facts.Facts, findings []finding.Finding, o TextOptions) error {
	p := newPalette(o.Color)
	ew := &errWriter{w: w}
	ew.printf("%sfastpath doctor%s  %s  %s%s%s\n", p.bold, p.reset, describeSource(f), p.bold, Summary(findings), p.reset)
	for _, fd := range findings {
		ew.printf("\n%s%s%s%s  %s[%s]%s\n", p.severity(fd.Severity), p.bold, fd.Title, p.reset, p.dim, fd.ID, p.reset)
		if fd.Detail != "" {
			// One line: terminals wrap, and quoted error texts stay greppable.
			ew.printf("  %s\n", fd.Detail)
		}
		if len(fd.Evidence) > 0 {
			ew.printf("  %sEvidence:%s\n", p.bold, p.reset)
			for _, e := range fd.Evidence {
				ew.printf("    - %s\n", e)
			}
		}
		for i, fx := range fd.Fixes {
			ew.printf("  %sFix %d:%s %s\n", p.bold, i+1, p.reset, fx.Title)
			for _, c := range fx.Commands {
				ew.printf("      $ %s\n", c)
			}
		}
	}
	ew.printf("\n%sFacts%s\n", p.bold, p.reset)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, row := range FactRows(f) {
		fmt.Fprintf(tw, "  %s\t%s\n", row[0], row[1])
	}
	tw.Flush()
	if len(f.Warnings) > 0 {
		ew.printf("\n%sWhile collecting:%s\n", p.bold, p.reset)
		for _, wn := range f.Warnings {
			ew.printf("  ! %s\n", wn)
		}
	}
	return ew.err
}

func describeSource(f *facts.Facts) string {
	if f.Source.Kind == "root" {
		return "root " + f.Source.Root
	}
	if f.Source.Kind == "image" && f.Source.Image != "" {
		d := f.Source.Digest
		if d == "" {
			d = "id " + f.Source.ImageID
		}
		return "image " + f.Source.Image + " (" + strings.TrimSpace(d) + ")"
	}
	return string(f.Source.Kind)
}

// FactRows is the compact facts table shared by the text and Markdown
// reports.
func FactRows(f *facts.Facts) [][2]string {
	var rows [][2]string
	add := func(k, v string) { rows = append(rows, [2]string{k, v}) }
	osDesc := f.OS.PrettyName
	if osDesc == "" {
		osDesc = "unknown"
	}
	var osExtra []string
	if f.OS.Arch != "" {
		osExtra = append(osExtra, f.OS.Arch)
	}
	if f.OS.Glibc != "" {
		osExtra = append(osExtra, "glibc "+f.OS.Glibc)
	} else if f.OS.Libc != "" {
		osExtra = append(osExtra, f.OS.Libc)
	}
	if f.OS.CPUs > 0 {
		osExtra = append(osExtra, fmt.Sprintf("%d CPUs", f.OS.CPUs))
	}
	if f.OS.MemTotal > 0 {
		osExtra = append(osExtra, fmt.Sprintf("%.0f GiB RAM", float64(f.OS.MemTotal)/(1<<30)))
	}
	if len(osExtra) > 0 {
		osDesc += " (" + strings.Join(osExtra, ", ") + ")"
	}
	add("OS", osDesc)
	if py := f.Python.Selected; py != nil {
		add("Python", fmt.Sprintf("%s (%s, %s, %d distributions)", py.Interpreter, py.Kind, valueOr(py.Version, "version unknown"), py.NumDists))
	} else {
		add("Python", "none found")
	}
	if n := len(f.Python.Others); n > 0 {
		var parts []string
		for i, o := range f.Python.Others {
			if i == 3 {
				parts = append(parts, fmt.Sprintf("and %d more", n-3))
				break
			}
			parts = append(parts, fmt.Sprintf("%s (%s %s, %d distributions)", o.Interpreter, o.Kind, valueOr(o.Version, "?"), o.NumDists))
		}
		add("other Pythons", strings.Join(parts, "; "))
	}
	if p := f.Python.Pip; p != nil {
		same := "same environment"
		if !p.SameAsPython {
			same = "ANOTHER environment: " + valueOr(p.Prefix, "unknown")
		}
		add("pip", fmt.Sprintf("%s (%s)", p.Path, same))
	}
	if t := f.Torch; t != nil {
		cuda := "CPU build"
		if t.CUDA != "" {
			cuda = "CUDA " + t.CUDA
		} else if t.HIP != "" {
			cuda = "ROCm " + t.HIP
		}
		add("torch", fmt.Sprintf("%s (%s)", t.Version, cuda))
	} else {
		add("torch", "not installed")
	}
	if len(f.CUDA.Compilers) == 0 {
		add("nvcc", fmt.Sprintf("none found (%d places searched)", len(f.CUDA.Searched)))
	}
	for _, n := range f.CUDA.Compilers {
		add("nvcc", fmt.Sprintf("%s %s", valueOr(n.Version, "?"), n.Path))
	}
	if h := f.CUDA.TorchHome; h != nil {
		state := "no bin/nvcc"
		if h.NVCC != "" {
			state = "nvcc present"
		}
		add("CUDA_HOME (torch)", fmt.Sprintf("%s (from %s; %s)", h.Path, h.Via, state))
	} else {
		add("CUDA_HOME (torch)", "none")
	}
	tc := f.Toolchain
	add("g++", toolDesc(tc.GXX))
	if tc.CUDAHostCXX != nil {
		// Only CMake reads it: pip builds of torch extensions do not.
		add("CUDAHOSTCXX (CMake)", toolDesc(tc.CUDAHostCXX))
	}
	add("ninja", toolDesc(tc.Ninja))
	add("cmake", toolDesc(tc.CMake))
	if d := f.GPU.Driver; d != nil {
		s := d.Version
		if d.CUDA != "" {
			s += fmt.Sprintf(" (supports CUDA <= %s)", d.CUDA)
		}
		add("driver", s)
	} else {
		add("driver", "not found")
	}
	add("GPUs", gpuDesc(f.GPU))
	return rows
}

func toolDesc(t *facts.Tool) string {
	if t == nil {
		return "not found"
	}
	if t.Version == "" {
		return t.Path
	}
	return t.Version + " " + t.Path
}

func gpuDesc(g facts.GPU) string {
	if len(g.Devices) == 0 {
		return "none found"
	}
	if g.Overridden {
		return g.Summary() + " (given with --gpu)"
	}
	return g.Summary()
}

func valueOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }
