// Package diagnose turns Facts into Findings with the knowledge base. It is
// pure: no I/O, the same facts always give the same findings.
package diagnose

import (
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
)

// Run returns the findings for f, most severe first.
func Run(f *facts.Facts) []finding.Finding {
	return []finding.Finding{}
}
