package explain

import (
	"fmt"
	"github.com/fastpath-dev/fastpath/internal/render"
	"io"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// Report is the JSON document of `fastpath explain --json`.
type Report struct {
	Schema   string    `json:"schema"`
	Log      string    `json:"log"` // the file read, "-" for stdin
	Findings []Finding `json:"findings"`
	// LinesRead and BytesRead are how much of the log was read;
	// LongLines the lines longer than MaxLine, matched on their start.
	LinesRead int   `json:"lines_read"`
	BytesRead int64 `json:"bytes_read"`
	LongLines int   `json:"long_lines"`
	// Facts says which environment made the fixes concrete: "host",
	// "root DIR", "facts FILE".
	Facts string `json:"facts,omitempty"`
	// LogFacts are what the log states about its own environment.
	LogFacts *LogFacts `json:"log_facts,omitempty"`
}

// Errors reports whether any finding is error-severity.
func (r *Report) Errors() bool {
	for _, f := range r.Findings {
		if f.Severity == finding.Error {
			return true
		}
	}
	return false
}

// Text writes the report for people at o's level (internal/render): -q
// writes one line per finding, -v every line of every finding.
func (r *Report) Text(w io.Writer, o render.Options) error {
	p := render.NewPrinter(w, o)
	if o.Quiet() {
		for _, f := range r.Findings {
			p.FindingQuiet(f.Finding)
		}
		return p.Err()
	}
	pl, name, counts := p.P, r.name(), r.counts()
	lines := render.Count(r.LinesRead, "line", "lines")
	if len(r.Findings) == 0 {
		p.Wrap("", "  ", pl.B("fastpath explain")+"  "+name+"  no known failure signature in "+lines)
		p.Para("  ", "Nothing in this log matches a message fastpath knows; it does not guess. `fastpath doctor` checks the environment itself.")
		return p.Err()
	}
	p.Wrap("", "  ", pl.B("fastpath explain")+"  "+name+"  "+pl.B(counts)+" in "+lines)
	if r.Facts != "" {
		p.Para("  fixes for: ", r.Facts)
	}
	if d := r.LogFacts.Describe(); len(d) > 0 {
		p.Para("  the log states: ", strings.Join(d, ", "))
	}
	if len(r.Findings) > 1 {
		p.Para("  Most likely root cause first: ", r.Findings[0].Title+" ["+string(r.Findings[0].ID)+"]")
	}
	for _, f := range r.Findings {
		writeFinding(p, f)
	}
	return p.Err()
}

// Summary writes the closing lines of `explain --follow`: how much was
// read and the findings, root cause first (each was printed in full as it
// came).
func (r *Report) Summary(w io.Writer, o render.Options) error {
	p := render.NewPrinter(w, o)
	if o.Quiet() {
		return nil // -q printed each finding's line as it came
	}
	p.Blank()
	p.Wrap("", "  ", p.P.B("fastpath explain")+"  "+r.name()+"  "+r.counts()+" in "+render.Count(r.LinesRead, "line", "lines"))
	for i, f := range r.Findings {
		if i == 0 && len(r.Findings) > 1 {
			p.Line("  Most likely root cause first:")
		}
		p.Para(fmt.Sprintf("  %d. ", i+1), f.Title+" ["+string(f.ID)+"]")
	}
	if len(r.Findings) == 0 {
		p.Line("  no known failure signature: fastpath does not guess")
	}
	return p.Err()
}

// name is the log's name in the heading.
func (r *Report) name() string {
	if r.Log == "-" {
		return "stdin"
	}
	return r.Log
}

// counts is "N errors, M warnings" (every finding that is not an error
// counts as a warning).
func (r *Report) counts() string {
	var e, wn int
	for _, f := range r.Findings {
		if f.Severity == finding.Error {
			e++
		} else {
			wn++
		}
	}
	return render.SeverityCounts(e, wn, 0)
}

// WriteFinding writes one finding for people, as Text does: `explain
// --follow` prints each as soon as it is complete.
func WriteFinding(w io.Writer, f Finding, o render.Options) error {
	p := render.NewPrinter(w, o)
	writeFinding(p, f)
	return p.Err()
}

// writeFinding writes f through render's finding block. A log's finding is
// all decisive: each evidence line is a matched line of the log or a fact
// its fixes were made from, and the detail is the explanation itself, so
// every level but -q shows it whole (what -v shows for doctor).
func writeFinding(p *render.Printer, f Finding) {
	if p.O.Quiet() {
		p.FindingQuiet(f.Finding)
		return
	}
	level := p.O.Level
	p.O.Level = render.Verbose
	p.Blank()
	p.Finding(f.Finding, nil)
	p.O.Level = level
}
