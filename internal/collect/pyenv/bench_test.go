package pyenv

import (
	"context"
	"os/exec"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// BenchmarkPackages times what `fastpath packages --json` does on this
// machine's python3: resolve it, collect everything, render pip's JSON.
func BenchmarkPackages(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("no python3 on PATH")
	}
	src, err := source.Host(source.ProcessEnv(nil))
	if err != nil {
		b.Fatal(err)
	}
	py, _ := Collect(context.Background(), src, "")
	if py.Selected == nil {
		b.Skip("python3 on PATH could not be resolved")
	}
	b.ReportMetric(float64(len(py.Selected.Distributions)), "dists")
	for b.Loop() {
		// A fresh Source each time: no resolution cache carried over.
		src, _ := source.Host(source.ProcessEnv(nil))
		py, _ := Collect(context.Background(), src, "")
		_ = PipListJSON(py.Selected)
	}
}
