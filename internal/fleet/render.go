package fleet

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/fastpath-dev/fastpath/internal/remote"
	"github.com/fastpath-dev/fastpath/internal/render"
)

// maxColumns is the most machines shown side by side; beyond it each
// differing fact lists its values with the machines that have them.
const maxColumns = 6

// listNames is how many machine names a grouped value lists.
const listNames = 8

// Options tune the rendering of a Diff.
type Options struct {
	All bool // every fact compared, not only those that differ (-v too)
	// Quiet (-q): the text shows only the findings and which machines
	// have them.
	Quiet bool
}

func (d *Diff) rows(o Options) []Row {
	if o.All {
		return d.Rows
	}
	return d.Differences()
}

func show(v string) string {
	if v == "" {
		return "-"
	}
	return v
}

// group is one value of a fact with the machines that have it.
type group struct {
	value    string
	machines []string
}

func groups(names []string, vals []string) []group {
	idx := map[string]int{}
	var gs []group
	for i, v := range vals {
		j, ok := idx[v]
		if !ok {
			j = len(gs)
			idx[v] = j
			gs = append(gs, group{value: v})
		}
		gs[j].machines = append(gs[j].machines, names[i])
	}
	// Most common value first: the odd machines out come last.
	sort.SliceStable(gs, func(a, b int) bool { return len(gs[a].machines) > len(gs[b].machines) })
	return gs
}

func nameList(ms []string) string {
	if len(ms) <= listNames {
		return strings.Join(ms, ", ")
	}
	return strings.Join(ms[:listNames], ", ") + " and " + render.Count(len(ms)-listNames, "more", "more")
}

// Text writes the comparison for a terminal.
func (d *Diff) Text(w io.Writer, o Options) error {
	ew := &errWriter{w: w}
	rows := d.rows(o)
	switch {
	case len(d.Machines) == 0:
		ew.printf("no machines to compare\n")
		return ew.err
	case o.Quiet:
	case len(rows) == 0:
		ew.printf("%s on every fact compared (torch, CUDA, driver, nvcc, Python, GPUs, kernel packages, findings)\n",
			render.CountVerb(len(d.Machines), "machine", "machines", "agrees", "agree"))
	case len(d.Machines) <= maxColumns:
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "fact\t%s\n", strings.Join(d.Machines, "\t"))
		for _, r := range rows {
			vs := make([]string, len(r.Values))
			for i, v := range r.Values {
				vs[i] = show(v)
			}
			fmt.Fprintf(tw, "%s\t%s\n", r.Fact, strings.Join(vs, "\t"))
		}
		tw.Flush()
	default:
		for _, r := range rows {
			ew.printf("%s\n", r.Fact)
			for _, g := range groups(d.Machines, r.Values) {
				ew.printf("  %-24s %4d  %s\n", show(g.value), len(g.machines), nameList(g.machines))
			}
		}
	}
	if !o.Quiet {
		ew.printf("\n")
	}
	ew.printf("findings\n")
	for _, g := range groups(d.Machines, d.findingLines()) {
		ew.printf("  %-24s %4d  %s\n", show(g.value), len(g.machines), nameList(g.machines))
	}
	return ew.err
}

func (d *Diff) findingLines() []string {
	out := make([]string, len(d.Findings))
	for i, ids := range d.Findings {
		if len(ids) == 0 {
			out[i] = "none"
		} else {
			out[i] = strings.Join(ids, " ")
		}
	}
	return out
}

// Markdown writes the comparison as Markdown tables.
func (d *Diff) Markdown(w io.Writer, o Options) error {
	ew := &errWriter{w: w}
	rows := d.rows(o)
	ew.printf("## fastpath diff: %s, %s\n\n", render.Count(len(d.Machines), "machine", "machines"),
		render.CountVerb(len(d.Differences()), "fact", "facts", "differs", "differ"))
	if len(rows) > 0 {
		if len(d.Machines) <= maxColumns {
			ew.printf("| fact | %s |\n|---|%s\n", strings.Join(mapStrings(d.Machines, mdCell), " | "), strings.Repeat("---|", len(d.Machines)))
			for _, r := range rows {
				ew.printf("| %s | %s |\n", mdCell(r.Fact), strings.Join(mapStrings(r.Values, func(s string) string { return mdCell(show(s)) }), " | "))
			}
		} else {
			ew.printf("| fact | value | machines |\n|---|---|---|\n")
			for _, r := range rows {
				for _, g := range groups(d.Machines, r.Values) {
					ew.printf("| %s | %s | %d: %s |\n", mdCell(r.Fact), mdCell(show(g.value)), len(g.machines), mdCell(nameList(g.machines)))
				}
			}
		}
	}
	ew.printf("\n| findings | machines |\n|---|---|\n")
	for _, g := range groups(d.Machines, d.findingLines()) {
		ew.printf("| %s | %d: %s |\n", mdCell(g.value), len(g.machines), mdCell(nameList(g.machines)))
	}
	return ew.err
}

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;").Replace(s)
}

func mapStrings(ss []string, f func(string) string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// Report is `fastpath remote`'s result: each target's outcome and the
// comparison of those that answered.
type Report struct {
	Schema  string          `json:"schema"`
	Targets []remote.Result `json:"targets"`
	Diff    *Diff           `json:"diff"`
}

// NewReport compares the targets that answered.
func NewReport(rs []remote.Result) *Report {
	var ms []Machine
	for _, r := range rs {
		if r.Doctor != nil {
			ms = append(ms, FromDoctor(r.Target, r.Doctor))
		}
	}
	return &Report{Schema: "fastpath.v1", Targets: rs, Diff: Compare(ms)}
}

// Text writes the remote report: one line per target, the failures' stderr,
// then the comparison.
func (r *Report) Text(w io.Writer, o Options) error {
	ew := &errWriter{w: w}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\tstatus\tseconds\tbinary\tresult\n")
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%s\t%s\n", t.Target, t.Status, t.Seconds, sentWord(t), outcome(t))
	}
	tw.Flush()
	for _, t := range r.Targets {
		if t.Doctor == nil && strings.TrimSpace(t.StderrTail) != "" {
			ew.printf("\n%s stderr (end):\n", t.Target)
			for _, line := range strings.Split(strings.TrimRight(t.StderrTail, "\n"), "\n") {
				ew.printf("  | %s\n", line)
			}
		}
	}
	ew.printf("\n")
	if ew.err == nil && len(r.Diff.Machines) > 0 {
		ew.err = r.Diff.Text(ew, o)
	}
	return ew.err
}

// Markdown writes the remote report as Markdown.
func (r *Report) Markdown(w io.Writer, o Options) error {
	ew := &errWriter{w: w}
	ew.printf("## fastpath remote: %s\n\n| target | status | seconds | binary | result |\n|---|---|---|---|---|\n", render.Count(len(r.Targets), "target", "targets"))
	for _, t := range r.Targets {
		ew.printf("| %s | %s | %.1f | %s | %s |\n", mdCell(t.Target), t.Status, t.Seconds, sentWord(t), mdCell(outcome(t)))
	}
	ew.printf("\n")
	if ew.err == nil && len(r.Diff.Machines) > 0 {
		ew.err = r.Diff.Markdown(ew, o)
	}
	return ew.err
}

func sentWord(t remote.Result) string {
	switch {
	case t.SentBinary:
		return "sent"
	case t.Doctor != nil:
		return "cached"
	}
	return "-"
}

func outcome(t remote.Result) string {
	if t.Doctor == nil {
		return t.Error
	}
	var e, wn int
	for _, f := range t.Doctor.Findings {
		switch f.Severity {
		case "error":
			e++
		case "warning":
			wn++
		}
	}
	return render.SeverityCounts(e, wn, 0)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }
