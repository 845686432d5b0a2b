package diagnose

import (
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/model"
)

// TestModelJudgedFamily is model-not-judged's near miss: a family the
// knowledge base holds (qwen3_5) is judged, so no model-not-judged.
func TestModelJudgedFamily(t *testing.T) {
	f := withDists(seedFacts(), "transformers", "5.17.0")
	fs := RunWithModels(f, []*model.Report{modelReport(t, f, qwen35Config)})
	if fd := find(fs, finding.ModelNotJudged); fd != nil {
		t.Fatalf("model-not-judged for a KB family: %+v", fd)
	}
	if find(fs, finding.FastPathFallback) == nil {
		t.Fatalf("the seed's qwen3_5 should be judged (fast-path-fallback): %v", ids(fs))
	}
}

// TestModelCodeKBDisagree: where the installed transformers' modeling file
// binds other functions than the KB lists (model.Report.CodeVsKB, what
// model's code reading records), diagnose says so as an info; where they
// agree, it says nothing.
func TestModelCodeKBDisagree(t *testing.T) {
	f := withDists(seedFacts(), "transformers", "5.17.0")
	base := func(t *testing.T) *model.Report { return modelReport(t, f, qwen35Config) }
	t.Run("fires", func(t *testing.T) {
		r := base(t)
		r.CodeVsKB = []string{"modeling_qwen3_5.py:412 binds chunk_gated_delta_rule_v2, which the knowledge base does not list"}
		fd := find(RunWithModels(f, []*model.Report{r}), finding.ModelCodeKBDisagree)
		if fd == nil || fd.Severity != finding.Info || !strings.Contains(fd.Detail, "chunk_gated_delta_rule_v2") || len(fd.Evidence) == 0 {
			t.Fatalf("%+v", fd)
		}
	})
	t.Run("agrees", func(t *testing.T) {
		r := base(t)
		if len(r.CodeVsKB) != 0 {
			t.Fatalf("the seed's report already disagrees: %v", r.CodeVsKB)
		}
		if fd := find(RunWithModels(f, []*model.Report{r}), finding.ModelCodeKBDisagree); fd != nil {
			t.Fatalf("fired on agreement: %+v", fd)
		}
	})
}
