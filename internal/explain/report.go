package explain

import (
	"fmt"
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

// Text writes the report for people; color adds ANSI colour.
func (r *Report) Text(w io.Writer, color bool) error {
	bold, reset, name, counts := r.heading(color)
	var b strings.Builder
	if len(r.Findings) == 0 {
		fmt.Fprintf(&b, "%sfastpath explain%s  %s  no known failure signature in %s\n", bold, reset, name, plural(r.LinesRead, "line", "lines"))
		fmt.Fprintf(&b, "  Nothing in this log matches a message fastpath knows; it does not guess. `fastpath doctor` checks the environment itself.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "%sfastpath explain%s  %s  %s%s%s in %s\n", bold, reset, name, bold, counts, reset, plural(r.LinesRead, "line", "lines"))
	if r.Facts != "" {
		fmt.Fprintf(&b, "  fixes for: %s\n", r.Facts)
	}
	if d := r.LogFacts.Describe(); len(d) > 0 {
		fmt.Fprintf(&b, "  the log states: %s\n", strings.Join(d, ", "))
	}
	if len(r.Findings) > 1 {
		fmt.Fprintf(&b, "  Most likely root cause first: %s [%s]\n", r.Findings[0].Title, r.Findings[0].ID)
	}
	for _, f := range r.Findings {
		writeFinding(&b, f, color)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary writes the closing lines of `explain --follow`: how much was
// read and the findings, root cause first (each was printed in full as it
// came).
func (r *Report) Summary(w io.Writer, color bool) error {
	bold, reset, name, counts := r.heading(color)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%sfastpath explain%s  %s  %s in %s\n", bold, reset, name, counts, plural(r.LinesRead, "line", "lines"))
	for i, f := range r.Findings {
		if i == 0 && len(r.Findings) > 1 {
			fmt.Fprintf(&b, "  Most likely root cause first:\n")
		}
		fmt.Fprintf(&b, "  %d. %s [%s]\n", i+1, f.Title, f.ID)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintf(&b, "  no known failure signature: fastpath does not guess\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// heading is what Text's and Summary's first lines share: the bold codes
// (empty without colour), the log's name, and "N errors, M warnings".
func (r *Report) heading(color bool) (bold, reset, name, counts string) {
	if color {
		bold, reset = "\x1b[1m", "\x1b[0m"
	}
	name = r.Log
	if name == "-" {
		name = "stdin"
	}
	var e, wn int
	for _, f := range r.Findings {
		if f.Severity == finding.Error {
			e++
		} else {
			wn++
		}
	}
	return bold, reset, name, plural(e, "error", "errors") + ", " + plural(wn, "warning", "warnings")
}

// WriteFinding writes one finding for people, as Text does: `explain
// --follow` prints each as soon as it is complete.
func WriteFinding(w io.Writer, f Finding, color bool) error {
	var b strings.Builder
	writeFinding(&b, f, color)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeFinding(b *strings.Builder, f Finding, color bool) {
	red, yellow, blue, bold, dim, reset := "", "", "", "", "", ""
	if color {
		red, yellow, blue, bold, dim, reset = "\x1b[31m", "\x1b[33m", "\x1b[34m", "\x1b[1m", "\x1b[2m", "\x1b[0m"
	}
	sev := blue + "INFO   " + reset
	switch f.Severity {
	case finding.Error:
		sev = red + bold + "ERROR  " + reset
	case finding.Warning:
		sev = yellow + bold + "WARN   " + reset
	}
	fmt.Fprintf(b, "\n%s%s%s%s  %s[%s]%s\n", sev, bold, f.Title, reset, dim, f.ID, reset)
	if f.Detail != "" {
		fmt.Fprintf(b, "  %s\n", f.Detail)
	}
	if len(f.Evidence) > 0 {
		fmt.Fprintf(b, "  %sEvidence:%s\n", bold, reset)
		for _, ev := range f.Evidence {
			fmt.Fprintf(b, "    - %s\n", ev)
		}
	}
	for i, fx := range f.Fixes {
		fmt.Fprintf(b, "  %sFix %d:%s %s\n", bold, i+1, reset, fx.Title)
		for _, c := range fx.Commands {
			fmt.Fprintf(b, "      $ %s\n", c)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
