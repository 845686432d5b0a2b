package fleet

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/remote"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// TestSpoolAndStreamedJSON: reports spooled to disk and slimmed in memory
// give the same comparison, and the streamed JSON is byte for byte what
// report.JSON writes for the full reports.
func TestSpoolAndStreamedJSON(t *testing.T) {
	seed := seedVariant(t, nil)
	full := func(name string) remote.Result {
		return remote.Result{Target: name, Status: remote.StatusFindings, ExitCode: 1, Seconds: 0.5,
			Doctor: &report.Doctor{Schema: facts.Schema, Facts: seed, Findings: diagnose.Run(seed)}}
	}
	rs := []remote.Result{full("a<b>&"), {Target: "down", Status: remote.StatusFailed, Error: "exit 255", ExitCode: 255}, full("c")}
	var want bytes.Buffer
	if err := report.JSON(&want, NewReport(rs)); err != nil {
		t.Fatal(err)
	}
	sp, err := NewSpool()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Remove()
	slim := make([]remote.Result, len(rs))
	for i, r := range rs {
		if r.Doctor != nil {
			if err := sp.Put(i, r.Doctor); err != nil {
				t.Fatal(err)
			}
			r.Doctor = Slim(r.Doctor)
			if n := len(r.Doctor.Facts.Python.Selected.Distributions); n == 0 || n >= len(seed.Python.Selected.Distributions) {
				t.Errorf("slim kept %d of %d distributions", n, len(seed.Python.Selected.Distributions))
			}
		}
		slim[i] = r
	}
	var got bytes.Buffer
	if err := NewReport(slim).WriteJSON(&got, sp.Get); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("streamed JSON differs:\n%s\nwant:\n%s", got.String(), want.String())
	}
	var empty bytes.Buffer
	if err := NewReport(nil).WriteJSON(&empty, nil); err != nil || !json.Valid(empty.Bytes()) {
		t.Errorf("no targets: %v\n%s", err, empty.String())
	}
}
