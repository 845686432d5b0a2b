package explain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fastpath-dev/fastpath/internal/finding"
)

// FuzzExplain: any input scans and explains without panicking; line
// numbers stay within the lines read; evidence is valid UTF-8; every
// finding has a known severity.
func FuzzExplain(f *testing.F) {
	entries, _ := os.ReadDir("testdata/logs")
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join("testdata/logs", e.Name())); err == nil {
			f.Add(b)
		}
	}
	for _, b := range corpusSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Default().Scan(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Bytes != int64(len(data)) {
			t.Fatalf("bytes %d, want %d", s.Bytes, len(data))
		}
		for _, fd := range Findings(s, nil) {
			if fd.Severity != finding.Error && fd.Severity != finding.Warning {
				t.Fatalf("severity %q", fd.Severity)
			}
			for _, l := range fd.Lines {
				if l < 1 || l > s.Lines {
					t.Fatalf("line %d of %d", l, s.Lines)
				}
			}
			for _, ev := range append(fd.Evidence, fd.Title, fd.Detail) {
				if !utf8.ValidString(ev) {
					t.Fatalf("invalid UTF-8 %q", ev)
				}
			}
		}
	})
}
