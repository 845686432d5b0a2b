package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/render"
)

// TextOptions tune the text report: colour, width and level (-q, -v),
// from internal/render.
type TextOptions = render.Options

// Summary is the one-line verdict: "2 errors, 1 warning".
func Summary(findings []finding.Finding) string { return render.Severities(findings) }

// Text writes the report for people at o's level (docs/output.md):
//   - default: the verdict; each finding with its first sentence, its
//     decisive evidence, the count of places searched and its fixes; the
//     main facts;
//   - -v (Verbose): every evidence line and place searched, the whole
//     detail, and the full facts table;
//   - -q (Quiet): one line per finding, its id and title, and nothing else.
//
// Each of models adds a "model" row to the facts: its layer count, also
// when nothing falls back ("0 of 64"), so that a fix can be seen to have
// worked.
func Text(w io.Writer, f *facts.Facts, findings []finding.Finding, o TextOptions, models ...*model.Report) error {
	p := render.NewPrinter(w, o)
	if o.Quiet() {
		for _, fd := range findings {
			p.FindingQuiet(fd)
		}
		return p.Err()
	}
	pl := p.P
	src := describeSource(f)
	if f.OS.PrettyName != "" && !o.Verbose() {
		src += " (" + f.OS.PrettyName + ")" // the OS row is -v's
	}
	p.Wrap("", "  ", pl.B("fastpath doctor")+"  "+src+"  "+pl.B(Summary(findings)))
	for _, fd := range findings {
		p.Blank()
		p.Finding(fd, nil)
	}
	p.Blank()
	rows := FactRows(f)
	if !o.Verbose() {
		p.Line(pl.B("Facts") + pl.D("  (-v lists every fact)"))
	} else {
		p.Line(pl.B("Facts"))
	}
	for _, r := range models {
		v := fmt.Sprintf("%s (%s): %d of %d layers fall back to torch", r.Model, r.ModelType, r.FallbackLayers, r.NumLayers)
		if r.WillNotLoad != "" {
			v += "; will not run: " + r.WillNotLoad
		}
		rows = append(rows, [2]string{"model", v})
	}
	if !o.Verbose() {
		rows = mainFacts(rows)
	}
	keyW := 0
	for _, row := range rows {
		keyW = max(keyW, render.Width(row[0]))
	}
	for _, row := range rows {
		p.Para("  "+row[0]+strings.Repeat(" ", keyW-render.Width(row[0])+2), row[1])
	}
	if len(f.Warnings) > 0 {
		p.Blank()
		p.Line(pl.B("While collecting:"))
		for _, wn := range f.Warnings {
			p.Para("  ! ", wn)
		}
	}
	return p.Err()
}

// mainFacts keeps the rows the default level shows: what a reader needs to
// place the findings (Python, torch, nvcc, GPUs with the driver, and the
// models; the OS is in the heading).
func mainFacts(rows [][2]string) [][2]string {
	keep := map[string]bool{"Python": true, "torch": true, "nvcc": true, "GPUs": true, "model": true}
	driver := ""
	for _, r := range rows {
		if r[0] == "driver" {
			driver = r[1]
		}
	}
	var out [][2]string
	for _, r := range rows {
		if r[0] == "GPUs" && driver != "" {
			r[1] += "; driver " + driver
		}
		if keep[r[0]] {
			out = append(out, r)
		}
	}
	return out
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
		osExtra = append(osExtra, render.Count(f.OS.CPUs, "CPU", "CPUs"))
	}
	if f.OS.MemTotal > 0 {
		osExtra = append(osExtra, fmt.Sprintf("%.0f GiB RAM", float64(f.OS.MemTotal)/(1<<30)))
	}
	if len(osExtra) > 0 {
		osDesc += " (" + strings.Join(osExtra, ", ") + ")"
	}
	add("OS", osDesc)
	if py := f.Python.Selected; py != nil {
		add("Python", fmt.Sprintf("%s (%s, %s, %s)", py.Interpreter, py.Kind, valueOr(py.Version, "version unknown"), render.Count(py.NumDists, "distribution", "distributions")))
	} else {
		add("Python", "none found")
	}
	if n := len(f.Python.Others); n > 0 {
		var parts []string
		for i, o := range f.Python.Others {
			if i == 3 {
				parts = append(parts, "and "+render.Count(n-3, "more", "more"))
				break
			}
			parts = append(parts, fmt.Sprintf("%s (%s %s, %s)", o.Interpreter, o.Kind, valueOr(o.Version, "?"), render.Count(o.NumDists, "distribution", "distributions")))
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
		add("nvcc", "none found ("+render.Count(len(f.CUDA.Searched), "place", "places")+" searched)")
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
