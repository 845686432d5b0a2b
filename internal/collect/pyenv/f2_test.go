package pyenv

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/source"
)

// F2: a .pth line of 30,000 components took 3.5 GB. It must be skipped with
// a warning, cheaply, and the good lines around it still read.
func TestF2HugePthLineBounded(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	if err := os.MkdirAll(filepath.Join(dir, "good"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("/a", 30000)
	if err := os.WriteFile(filepath.Join(site, "evil.pth"), []byte(huge+"\n/good\n"+strings.Repeat("b/", 1000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	c := &collector{src: src, env: src.Env(), cwd: "/", warn: func(f string, a ...any) { warnings = append(warnings, f) }}
	var out []string
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c.processPth("/site", map[string]bool{}, &out)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("reading a .pth with a 30,000-component line allocated %d bytes", n)
	}
	if len(out) != 1 || out[0] != "/good" {
		t.Errorf("paths = %q, want [/good]", out)
	}
	if len(warnings) == 0 {
		t.Error("no warning for the skipped line")
	}
}
