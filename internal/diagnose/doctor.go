package diagnose

import (
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
)

// Doctor is the JSON document of `fastpath doctor --json`: the facts, the
// findings diagnose drew from them, and the model verdicts. It is declared
// here, below the renderers, because remote and fleet read and write it
// without rendering it (internal/layering); report.Doctor is this type.
type Doctor struct {
	Schema   string            `json:"schema"`
	Facts    *facts.Facts      `json:"facts"`
	Findings []finding.Finding `json:"findings"`
	Models   []*model.Report   `json:"models"`
}
