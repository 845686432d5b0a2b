package kb

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

//go:embed data/findings.json
var findingsJSON []byte

// FindingsData is data/findings.json: the registry of finding ids, with
// what each means, the severities it can have, the page that documents it
// and the tests that show it firing and not firing. docs/findings.md is
// generated from it; a test keeps it, internal/finding's ids, the checks
// that raise them and the tests in step.
type FindingsData struct {
	Source   string         `json:"source"`
	Findings []FindingEntry `json:"findings"`
}

// FindingEntry is one finding id.
type FindingEntry struct {
	ID string `json:"id"`
	// Const is the id's Go name in internal/finding (generated ids.go).
	Const string `json:"const"`
	// Severities are the severities the checks give it; SeverityText says
	// when each applies, for the docs.
	Severities   []string `json:"severities"`
	SeverityText string   `json:"severity_text"`
	Title        string   `json:"title"`
	Meaning      string   `json:"meaning"`
	// FoundBy: "doctor" (judged from facts), "explain" (read in logs).
	FoundBy []string `json:"found_by"`
	Doc     string   `json:"doc"` // the docs page that explains it, from the repository root
	// Fires and Quiet name a test where the id fires and a near miss where
	// it must not: "TestName" or "TestName/case".
	Fires string `json:"fires"`
	Quiet string `json:"quiet"`
}

var (
	findingsOnce sync.Once
	findingsData FindingsData
)

// Findings returns the parsed data/findings.json (a build defect if it
// does not parse: the package's tests catch it).
func Findings() *FindingsData {
	findingsOnce.Do(func() {
		if err := json.Unmarshal(findingsJSON, &findingsData); err != nil {
			panic(fmt.Sprintf("kb: data/findings.json: %v", err))
		}
	})
	return &findingsData
}

// Finding returns the registry entry of id.
func (d *FindingsData) Finding(id string) (FindingEntry, bool) {
	for _, f := range d.Findings {
		if f.ID == id {
			return f, true
		}
	}
	return FindingEntry{}, false
}
