package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/fixture"
)

// TestTraceBuild builds fastpath with -tags fastpath_trace, runs doctor on
// the seed container with FASTPATH_GOTRACE set, and reads the trace with
// scripts/trace-waits.py (docs/contributing.md): the trace must hold the
// collectors' system calls, named by the functions that made them.
func TestTraceBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fastpath: skipped under -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH:", err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH:", err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "fastpath-trace")
	build := exec.Command(goTool, "build", "-tags", "fastpath_trace", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags fastpath_trace: %v\n%s", err, out)
	}
	seed := filepath.Join(tmp, "seed")
	if err := fixture.Seed(seed); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(tmp, "run.trace")
	args := []string{"doctor", "--root", seed, "--gpu", fixture.SeedGPUs[0]}
	for _, e := range fixture.SeedEnv {
		args = append(args, "--env", e)
	}
	run := exec.Command(bin, args...)
	run.Env = append(os.Environ(), "FASTPATH_GOTRACE="+trace)
	out, err := run.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	if !strings.HasPrefix(string(out), "fastpath doctor") || !strings.Contains(string(out), "[no-cuda-compiler]") {
		t.Errorf("the traced build's report is not the seed tree's:\n%s", out)
	}
	// Every call counts as slow at 0 µs: the seed tree is in the page cache.
	waits, err := exec.Command(python, filepath.Join("..", "..", "scripts", "trace-waits.py"), trace, "0", "400").CombinedOutput()
	if err != nil {
		t.Fatalf("trace-waits.py: %v\n%s", err, waits)
	}
	for _, want := range []string{"system calls over", "pyenv.(*collector).readDist", "pyenv="} {
		if !strings.Contains(string(waits), want) {
			t.Errorf("trace-waits.py's report lacks %q:\n%s", want, waits)
		}
	}
}
