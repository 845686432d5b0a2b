package pyenv

import (
	"fmt"
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

// F2: a RECORD naming 200,000 shared objects (a hostile 59 MB one named 4
// million: 39 s, 741 MB and a 120 MB doctor --json) lists the first 4096
// with a warning; every file is still counted, and the read allocates a
// bounded amount.
func TestF2RecordExtensionsCapped(t *testing.T) {
	dir := t.TempDir()
	info := filepath.Join(dir, "site", "evil-1.0.dist-info")
	if err := os.MkdirAll(info, 0o755); err != nil {
		t.Fatal(err)
	}
	var rec strings.Builder
	const n = 200000
	for i := 0; i < n; i++ {
		fmt.Fprintf(&rec, "evil/m%d.so,,\n", i)
	}
	if err := os.WriteFile(filepath.Join(info, "RECORD"), []byte(rec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	c := &collector{src: src, env: src.Env(), cwd: "/", warn: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }}
	cd := &candidate{loc: "/site", dir: "/site/evil-1.0.dist-info"}
	folder := source.OpenFolder(src, cd.dir)
	defer folder.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c.readRecord(cd, folder)
	runtime.ReadMemStats(&after)
	if got := len(cd.dist.Extensions); got != maxExtensions {
		t.Errorf("%d shared objects listed; want the first %d", got, maxExtensions)
	}
	if cd.dist.Files != n {
		t.Errorf("%d files counted; want %d", cd.dist.Files, n)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], fmt.Sprintf("%d more are not listed", n-maxExtensions)) {
		t.Errorf("warnings %q", warnings)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 4<<20 {
		t.Errorf("reading the RECORD allocated %d bytes", a)
	}
}
