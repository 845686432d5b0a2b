package explain

import (
	"fmt"
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
	revisions := make(chan Finding, 8)
	done := make(chan error, 1)
	go func() {
		_, final, err := Default().Follow(pr, nil, func(f Finding, revised bool) error {
			if revised {
				// The mismatch states torch's CUDA: the first finding's
				// fixes are revised for it.
				revisions <- f
				return nil
			}
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
	for len(revisions) > 0 {
		if f := <-revisions; f.ID != finding.NoCUDACompiler || !strings.Contains(fixesKey(f), "12.4") {
			t.Errorf("revision %s: %q", f.ID, fixesKey(f))
		}
	}
}

// A message that continues and then meets the end of the log is emitted at
// the end, with what it has.
func TestFollowFlushesAtEnd(t *testing.T) {
	var n int
	_, _, err := Default().Follow(strings.NewReader("The detected CUDA version (11.8) mismatches the version that was used to compile"), nil, func(f Finding, _ bool) error {
		n++
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("emitted %d, err %v", n, err)
	}
}

// A fact stated after a finding was printed (the torch the build saw)
// revises the finding's fixes: it is printed again, marked revised.
func TestFollowRevisesOnLaterFacts(t *testing.T) {
	log := "Collecting causal-conv1d\n" +
		"      <string>:119: UserWarning: causal_conv1d was requested, but nvcc was not found.\n" +
		"      torch.__version__  = 2.11.0+cu130\n" +
		"      NameError: name 'bare_metal_version' is not defined\n"
	var got []string
	_, _, err := Default().Follow(strings.NewReader(log), nil, func(f Finding, revised bool) error {
		got = append(got, fmt.Sprintf("%s revised=%v %s", f.ID, revised, fixesKey(f)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.Contains(got[0], "revised=false") || !strings.Contains(got[1], "revised=true") || !strings.Contains(got[1], "13.0") {
		t.Errorf("emitted:\n%s", strings.Join(got, "\n---\n"))
	}
}
