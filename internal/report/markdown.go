package report

import (
	"io"
	"strings"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// Markdown writes the report as Markdown, to paste into a bug report: the
// verdict, each finding with its evidence and fixes, and the facts table.
func Markdown(w io.Writer, f *facts.Facts, findings []finding.Finding) error {
	ew := &errWriter{w: w}
	ew.printf("## fastpath doctor: %s\n\n", Summary(findings))
	ew.printf("Source: %s; fastpath %s.\n", describeSource(f), valueOr(f.Tool, "dev"))
	for _, fd := range findings {
		ew.printf("\n### %s: %s (`%s`)\n\n", strings.ToUpper(string(fd.Severity)), mdEscape(fd.Title), fd.ID)
		if fd.Detail != "" {
			ew.printf("%s\n\n", mdEscape(fd.Detail))
		}
		if len(fd.Evidence) > 0 {
			ew.printf("Evidence:\n")
			for _, e := range fd.Evidence {
				ew.printf("- `%s`\n", strings.ReplaceAll(e, "`", "'"))
			}
			ew.printf("\n")
		}
		for i, fx := range fd.Fixes {
			ew.printf("Fix %d: %s\n", i+1, mdEscape(fx.Title))
			if len(fx.Commands) > 0 {
				ew.printf("```sh\n%s\n```\n", strings.Join(fx.Commands, "\n"))
			}
		}
	}
	ew.printf("\n| fact | value |\n| --- | --- |\n")
	for _, row := range FactRows(f) {
		ew.printf("| %s | %s |\n", row[0], strings.ReplaceAll(mdEscape(row[1]), "|", `\|`))
	}
	if len(f.Warnings) > 0 {
		ew.printf("\nWhile collecting:\n")
		for _, wn := range f.Warnings {
			ew.printf("- %s\n", mdEscape(wn))
		}
	}
	return ew.err
}

// mdEscape keeps text from turning into Markdown markup by accident.
func mdEscape(s string) string {
	return strings.NewReplacer("*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;").Replace(s)
}
