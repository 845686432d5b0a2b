package demo

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestExtractRefuses: entries that climb out, lie below a symlink, are too
// large or are devices are refused, and nothing is written outside dir.
func TestExtractRefuses(t *testing.T) {
	type entry struct {
		h    tar.Header
		body string
	}
	for name, entries := range map[string][]entry{
		"climbs":        {{h: tar.Header{Name: "./../escape", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}, body: "x"}},
		"absolute":      {{h: tar.Header{Name: "/etc/escape", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}, body: "x"}},
		"below a link":  {{h: tar.Header{Name: "./out", Typeflag: tar.TypeSymlink, Linkname: "/tmp"}}, {h: tar.Header{Name: "./out/escape", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}, body: "x"}},
		"too large":     {{h: tar.Header{Name: "./big", Typeflag: tar.TypeReg, Size: maxFileBytes + 1, Mode: 0o644}}},
		"a device":      {{h: tar.Header{Name: "./dev", Typeflag: tar.TypeChar, Mode: 0o644}}},
		"a hard link":   {{h: tar.Header{Name: "./hard", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}}},
		"climbs inside": {{h: tar.Header{Name: "./a/../../escape", Typeflag: tar.TypeReg, Size: 1, Mode: 0o644}, body: "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, e := range entries {
				if err := tw.WriteHeader(&e.h); err != nil {
					t.Fatal(err)
				}
				if e.body != "" {
					tw.Write([]byte(e.body))
				}
			}
			tw.Flush() // no Close: a stream may also end short
			parent := t.TempDir()
			dir := filepath.Join(parent, "tree")
			if err := extract(&buf, dir); err == nil {
				t.Fatal("extract accepted it")
			}
			if _, err := os.Lstat(filepath.Join(parent, "escape")); err == nil {
				t.Fatal("a file was written outside the tree")
			}
		})
	}
}
