package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
)

// F1: `fix --apply --image` ran the image's plan on this host. --apply must
// refuse every source but the live host, before anything is collected.
func TestF1FixApplyRefusesImageRootFacts(t *testing.T) {
	dir := t.TempDir()
	factsFile := filepath.Join(dir, "facts.json")
	os.WriteFile(factsFile, []byte(`{"schema":"`+facts.Schema+`"}`), 0o644)
	for name, s := range map[string]SourceFlags{
		"--image":    {Image: filepath.Join(dir, "evil.tar")},
		"--platform": {Image: "example.invalid/evil:latest", Platform: "linux/amd64"},
		"--root":     {Root: dir},
		"--facts":    {Facts: factsFile},
	} {
		var out bytes.Buffer
		err := RunFix(context.Background(), &FixOptions{Apply: true, Yes: true, Plan: PlanOptions{Source: s, Offline: true}}, &IO{Out: &out})
		if _, ok := err.(*UsageError); !ok || !strings.Contains(err.Error(), "live machine only") {
			t.Errorf("%s: %v", name, err)
		}
		if out.Len() != 0 {
			t.Errorf("%s: printed a plan before refusing:\n%s", name, out.String())
		}
	}
}

// F1: the live facts are collected again just before anything runs; if
// they differ from the plan's, nothing runs.
func TestF1FixApplyRefusesWhenFactsChanged(t *testing.T) {
	k := newKernelVenv(t)
	before, _ := filepath.Glob(filepath.Join(k.site, "*"))
	o := &FixOptions{Apply: true, Yes: true, Plan: PlanOptions{Source: k.source(), Models: []string{k.cfg}, Offline: true}}
	// Two real collections of an unchanged machine fingerprint the same:
	// the check must not refuse for nothing.
	a, err := o.Plan.Source.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := o.Plan.Source.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if factsFingerprint(a) != factsFingerprint(b) {
		t.Fatal("two collections of an unchanged machine fingerprint differently")
	}
	o.collectAgain = func(ctx context.Context) (*facts.Facts, error) {
		f, err := o.Plan.Source.Load(ctx)
		if err == nil {
			f.OS.Glibc += ".1" // another C library now
		}
		return f, err
	}
	var out bytes.Buffer
	err = RunFix(context.Background(), o, &IO{Out: &out})
	if err == nil || !strings.Contains(err.Error(), "facts changed since the plan was made") {
		t.Fatalf("changed facts: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "==> ") {
		t.Errorf("a step ran:\n%s", out.String())
	}
	after, _ := filepath.Glob(filepath.Join(k.site, "*"))
	if len(after) != len(before) {
		t.Errorf("site-packages changed: %d -> %d entries", len(before), len(after))
	}
}

// F11: /dev/null and /dev/zero are character devices, not terminals.
func TestF11DevNullAndZeroAreNotTerminals(t *testing.T) {
	for _, p := range []string{os.DevNull, "/dev/zero"} {
		f, err := os.Open(p)
		if err != nil {
			t.Skip(err)
		}
		if isTerminalReader(f) || isTerminal(f) {
			t.Errorf("%s counts as a terminal", p)
		}
		f.Close()
	}
}

// countingZeros is /dev/zero that counts what was read from it.
type countingZeros struct{ n int64 }

func (z *countingZeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

// F11: with stdin on /dev/zero fix read 1.7 GB. The prompt reads at most
// maxAnswer bytes from an endless answer, and says no to it. (That fix
// --apply refuses without --yes when stdin is not a terminal is held by
// TestFixRefuses, and /dev/zero not being one by the test above.)
func TestF11PromptReadIsCapped(t *testing.T) {
	z := &countingZeros{}
	var out bytes.Buffer
	if confirm(z, &out) {
		t.Error("an endless run of NULs confirmed")
	}
	if z.n > maxAnswer {
		t.Errorf("the prompt read %d bytes, cap %d", z.n, maxAnswer)
	}
	for in, want := range map[string]bool{"y\n": true, "YES\n": true, "n\n": false, "": false, "yes please\n": false} {
		if got := confirm(strings.NewReader(in), &out); got != want {
			t.Errorf("answer %q: %v, want %v", in, got, want)
		}
	}
}
