package explain

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// corpusEntry is one real log of testdata/corpus/corpus.json: where it was
// pasted, the root cause it shows and the ids that would be wrong, all
// decided from the log before fastpath was run on it. Expect "" marks a log
// that shows no environment failure (a model too big for its GPU, a bug in
// user code): any error finding on it is a false alarm. Fix and FixNot
// hold what the thread shows fixed it (or would not): text the first
// finding's fixes (titles and commands) must contain, and must not.
type corpusEntry struct {
	File   string   `json:"file"`
	Source string   `json:"source"`
	Expect string   `json:"expect"`
	Wrong  []string `json:"wrong"`
	Fix    []string `json:"fix"`
	FixNot []string `json:"fix_not"`
	Why    string   `json:"why"`
}

// unfilled is a template name a title or detail kept.
var unfilled = regexp.MustCompile(`\{[A-Za-z_0-9]+\}`)

// findingIDs are the ids a log can show (finding's constants).
var findingIDs = []finding.ID{
	finding.NoCUDACompiler, finding.CUDACompilerNotDiscoverable, finding.CUDAHomeInvalid,
	finding.NVCCTorchCUDAMismatch, finding.NVCCCannotTargetGPU, finding.HostCompilerUnsupported,
	finding.MissingPythonHeaders, finding.MissingNinja, finding.BuildIsolationHidesTorch,
	finding.BuildOutOfMemory, finding.TorchMissing, finding.TorchCPUOnly, finding.TorchArchUnsupported,
	finding.DriverTooOld, finding.GPUBusy, finding.FastPathFallback, finding.ExtensionArchUnsupported,
	finding.ExtensionABIMismatch, finding.ExtensionCUDAMismatch, finding.PipPythonMismatch, finding.TorchLibrariesMissing,
	finding.ModelWillNotLoad, finding.CUDADriverNotVisible, finding.DriverLibraryMismatch, finding.CuDNNVersionMismatch,
	finding.LibcudaNotLinkable,
}

func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Logs []corpusEntry `json:"logs"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Logs
}

// TestCorpus runs explain (no facts: the logs are other people's machines)
// on every real log of the corpus. A log with an expected root cause must
// have it as the first finding; no log may show one of its wrong ids; a log
// that is no environment failure must show no error finding.
func TestCorpus(t *testing.T) {
	logs := loadCorpus(t)
	known := map[string]bool{}
	for _, id := range findingIDs {
		known[string(id)] = true
	}
	var failures, first, alarms, fixChecked, fixRight int
	perID := map[string]int{}
	for _, e := range logs {
		if e.Source == "" || !strings.HasPrefix(e.Source, "https://github.com/") {
			t.Errorf("%s: no source", e.File)
		}
		for _, id := range append([]string{e.Expect}, e.Wrong...) {
			if id != "" && !known[id] {
				t.Errorf("%s: unknown finding id %q", e.File, id)
			}
		}
		fh, err := os.Open(filepath.Join("testdata/corpus", e.File))
		if err != nil {
			t.Error(err)
			continue
		}
		s, err := Default().Scan(fh)
		fh.Close()
		if err != nil {
			t.Error(err)
			continue
		}
		fs := Findings(s, nil)
		got := ids(fs)
		label := e.Expect
		if label == "" {
			label = "(no environment failure)"
		}
		perID[label]++
		if e.Expect != "" {
			failures++
			if len(fs) > 0 && string(fs[0].ID) == e.Expect {
				first++
			} else {
				t.Errorf("%s (%s): root cause %s not first: got %v", e.File, e.Source, e.Expect, got)
			}
		}
		if len(e.Fix)+len(e.FixNot) > 0 {
			fixChecked++
			text := ""
			if len(fs) > 0 {
				text = fixText(fs[0].Fixes)
			}
			right := len(fs) > 0
			for _, want := range e.Fix {
				if !strings.Contains(text, want) {
					right = false
					t.Errorf("%s (%s): the fix does not say %q:\n%s", e.File, e.Source, want, text)
				}
			}
			for _, bad := range e.FixNot {
				if strings.Contains(text, bad) {
					right = false
					t.Errorf("%s (%s): the fix says %q:\n%s", e.File, e.Source, bad, text)
				}
			}
			if right {
				fixRight++
			}
		}
		for _, f := range fs {
			// A template name left in the words (a capture whose name the
			// filler does not read) is a message nobody can use.
			if m := unfilled.FindString(f.Title + " " + f.Detail); m != "" {
				t.Errorf("%s: %s's title or detail keeps the template name %s: %s", e.File, f.ID, m, f.Title)
			}
		}
		alarm := false
		for _, f := range fs {
			if slices.Contains(e.Wrong, string(f.ID)) || (e.Expect == "" && f.Severity == finding.Error) {
				alarm = true
				t.Errorf("%s (%s): false alarm %s (%s)", e.File, e.Source, f.ID, f.Title)
			}
		}
		if alarm {
			alarms++
		}
	}
	fmt.Printf("explain on real logs: %d/%d root causes first, %d false alarms, %d/%d fixes as the thread says (%d logs, %d with no environment failure)\n",
		first, failures, alarms, fixRight, fixChecked, len(logs), len(logs)-failures)
	var keys []string
	for k := range perID {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-32s %d\n", k, perID[k])
	}
}
