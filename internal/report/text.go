package report

import (
	"fmt"
	"io"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// TextOptions tune the text report.
type TextOptions struct{ Color bool }

// Text writes the report for people.
func Text(w io.Writer, f *facts.Facts, findings []finding.Finding, o TextOptions) error {
	_, err := fmt.Fprintf(w, "%d findings\n", len(findings))
	return err
}

// Markdown writes the report as Markdown.
func Markdown(w io.Writer, f *facts.Facts, findings []finding.Finding) error {
	_, err := fmt.Fprintf(w, "# fastpath doctor\n")
	return err
}
