// Package report renders facts and findings for people (text, Markdown) and
// programs (JSON).
package report

import (
	"encoding/json"
	"io"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
)

// Doctor is the JSON document of `fastpath doctor --json`.
type Doctor struct {
	Schema   string            `json:"schema"`
	Facts    *facts.Facts      `json:"facts"`
	Findings []finding.Finding `json:"findings"`
	Models   []*model.Report   `json:"models"`
}

// JSON writes v indented, with a trailing newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
