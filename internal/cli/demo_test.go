package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/ with the current output")

// TestDemoGolden pins the seed demo's text at the three levels (default,
// -v, -q) at the default width (100, not a terminal): the default must read
// in one screen (at most 40 lines), -v lists every searched place, -q only
// ids and titles. Regenerate on purpose with go test -run TestDemoGolden
// ./internal/cli -update, and say so in the commit.
func TestDemoGolden(t *testing.T) {
	t.Setenv("COLUMNS", "")
	t.Setenv("NO_COLOR", "")
	tmp := regexp.MustCompile(`\S*fastpath-demo-\d+`)
	for _, c := range []struct {
		name     string
		args     []string
		maxLines int
	}{
		{"default", nil, 40},
		{"verbose", []string{"-v"}, 0},
		{"quiet", []string{"-q"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			ios := &IO{In: strings.NewReader(""), Out: &out, Err: &errOut}
			root := NewRootCommand(ios)
			root.SetArgs(append([]string{"demo"}, c.args...))
			root.SetOut(&out)
			root.SetErr(&errOut)
			if err := root.Execute(); err != nil {
				t.Fatalf("demo %v: %v\n%s", c.args, err, errOut.String())
			}
			got := tmp.ReplaceAllString(out.String(), "$$ROOT")
			golden := filepath.Join("testdata", "demo", c.name+".txt")
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("demo %v differs from %s (go test -run TestDemoGolden ./internal/cli -update):\n%s", c.args, golden, got)
			}
			n := strings.Count(got, "\n")
			if c.maxLines > 0 && n > c.maxLines {
				t.Errorf("demo %v prints %d lines, want at most %d", c.args, n, c.maxLines)
			}
			for _, l := range strings.Split(got, "\n") {
				if strings.Contains(l, "\x1b[") {
					t.Errorf("colour when not on a terminal: %q", l)
				}
			}
			searched := strings.Count(got, "searched: ")
			switch c.name {
			case "verbose":
				if searched != 22 {
					t.Errorf("-v lists %d searched places, want the seed's 22", searched)
				}
			case "default":
				if searched != 0 || !strings.Contains(got, "searched 22 places") {
					t.Errorf("default: %d searched lines listed; want none, and the count", searched)
				}
			case "quiet":
				if !strings.HasPrefix(got, "ERROR  no-cuda-compiler  ") {
					t.Errorf("quiet: %q", got)
				}
			}
		})
	}
}
