package inspect

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// F5/F2 for inspect: the RECORDs read to name a file's distribution come
// from the folder being inspected, which is untrusted. A FIFO RECORD (it
// blocked inspect forever), a link to /dev/zero, and a RECORD of 600,000
// lines beside the real one are refused or read within the caps; the real
// RECORD still names the distribution.
func TestRecordFIFODeviceAndHugeRecordBounded(t *testing.T) {
	site := t.TempDir()
	rel := "good/x.so"
	for _, d := range []string{"a_fifo-1.0.dist-info", "b_zero-1.0.dist-info", "c_huge-1.0.dist-info", "good-1.0.dist-info"} {
		if err := os.MkdirAll(filepath.Join(site, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(site, "a_fifo-1.0.dist-info", "RECORD"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(site, "b_zero-1.0.dist-info", "RECORD")); err != nil {
		t.Fatal(err)
	}
	var huge strings.Builder
	for i := 0; i < 600000; i++ {
		fmt.Fprintf(&huge, "c/m%d.so,,\n", i)
	}
	if err := os.WriteFile(filepath.Join(site, "c_huge-1.0.dist-info", "RECORD"), []byte(huge.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(site, "good-1.0.dist-info", "RECORD"), []byte(rel+",sha256=y,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x := newDistIndex()
	done := make(chan map[string]string, 1)
	go func() { done <- x.records(site) }()
	var rec map[string]string
	select {
	case rec = <-done:
	case <-time.After(60 * time.Second): // a hang, not a slow run: reading takes well under a second
		t.Fatal("reading the RECORDs blocked on the FIFO")
	}
	if len(rec) > maxRecordPaths {
		t.Errorf("%d paths kept; the cap is %d", len(rec), maxRecordPaths)
	}
	// The huge RECORD filled the cap before good's was read (the folders
	// are read in order): the file's distribution is then unknown, never
	// wrong. With the huge one gone it is found.
	if err := os.Remove(filepath.Join(site, "c_huge-1.0.dist-info", "RECORD")); err != nil {
		t.Fatal(err)
	}
	if got := newDistIndex().dist(filepath.Join(site, rel)); got != "good" {
		t.Errorf("dist = %q, want good", got)
	}
}
