package explain

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// Follow prints a finding while the pipe it reads from is still open: as
// soon as the line that shows it is read, or, for a message that goes on
// over the next line, as soon as that line is read too (and not before:
// the finding then names what the second line says).
func TestFollowWhileThePipeIsOpen(t *testing.T) {
	pr, pw := io.Pipe()
	got := make(chan Finding, 8)
	done := make(chan error, 1)
	go func() {
		_, final, err := Default().Follow(pr, nil, func(f Finding) error {
			got <- f
			return nil
		})
		if err == nil && len(final) != 2 {
			t.Errorf("final findings %v", ids(final))
		}
		done <- err
	}()
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(pw, s); err != nil {
			t.Fatal(err)
		}
	}
	next := func(what string) Finding {
		t.Helper()
		select {
		case f := <-got:
			return f
		case <-time.After(10 * time.Second):
			t.Fatalf("no finding for %s while the pipe is open", what)
		}
		return Finding{}
	}

	write("Collecting causal-conv1d\n  Preparing metadata (setup.py) ... error\n")
	write("      NameError: name 'bare_metal_version' is not defined\n")
	if f := next("the NameError"); f.ID != finding.NoCUDACompiler || !strings.Contains(strings.Join(f.Evidence, "\n"), "package being installed: causal-conv1d") {
		t.Errorf("first finding %s %q %q", f.ID, f.Title, f.Evidence)
	}

	write("RuntimeError:\n")
	write("      The detected CUDA version (11.8) mismatches the version that was used to compile\n")
	write("      PyTorch (12.4). Please make sure to use the same CUDA versions.\n")
	if f := next("the two-line mismatch"); f.ID != finding.NVCCTorchCUDAMismatch || !strings.Contains(f.Title, "12.4") {
		t.Errorf("second finding %s %q: emitted before its second line was read?", f.ID, f.Title)
	}
	// The same finding again is not printed twice.
	write("      NameError: name 'bare_metal_version' is not defined\n")
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("%d findings printed twice", len(got))
	}
}

// A message that continues and then meets the end of the log is emitted at
// the end, with what it has.
func TestFollowFlushesAtEnd(t *testing.T) {
	var n int
	_, _, err := Default().Follow(strings.NewReader("The detected CUDA version (11.8) mismatches the version that was used to compile"), nil, func(f Finding) error {
		n++
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("emitted %d, err %v", n, err)
	}
}
