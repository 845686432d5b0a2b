package live

import (
	"bytes"
	"strings"
	"testing"
)

// TestBenchPartial: a bench killed at its time limit reports the results
// that finished (the last complete partial line), and the partial lines
// never reach the progress shown to the user.
func TestBenchPartial(t *testing.T) {
	stderr := "bench: causal_conv1d_fn fast batch=1 seq_len=2048 x\n" +
		partialPrefix + `{"bench":2,"results":[{"function":"causal_conv1d_fn","fast_ms":0.1}],"layer_forward":[],"skipped":[],"errors":[]}` + "\n" +
		"bench: whole layer forward batch=1 seq_len=2048\n" +
		partialPrefix + `{"bench":2,"results":[{"function":"causal_conv1d_fn","fast_ms":0.1},{"function":"chunk_gated_delta_rule","fast_ms":0.8}],"layer_forward":[],"skipped":[],"errors":[]}` + "\n" +
		partialPrefix + `{"bench":2,"results":[` // cut off by the kill
	b := partialBench([]byte(stderr))
	if b == nil || len(b.Results) != 2 || b.Results[1].Function != "chunk_gated_delta_rule" {
		t.Fatalf("partial: %+v", b)
	}
	if partialBench([]byte("bench: nothing finished\n")) != nil {
		t.Fatal("no partial line must give nil")
	}
	var shown bytes.Buffer
	d := &dropPartial{w: &shown}
	for _, chunk := range strings.SplitAfter(stderr, "e") { // arbitrary write boundaries
		d.Write([]byte(chunk))
	}
	if strings.Contains(shown.String(), partialPrefix) || !strings.Contains(shown.String(), "bench: whole layer forward batch=1 seq_len=2048\n") {
		t.Fatalf("shown:\n%s", shown.String())
	}
}
