package remedy

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// commandLiteral matches a Go string literal that starts a command line
// that changes a machine: a package manager, an install, an export.
var commandLiteral = regexp.MustCompile("[\"`](apt-get |dnf |yum |conda (install|remove)|docker pull|export [A-Z_]+=|unset [A-Z_]|MAX_JOBS=|CMAKE_BUILD_PARALLEL_LEVEL=)|\"-m\", \"pip\", \"install\"|\" -m pip install")

// TestCommandsOnlyFromRemedy: no package outside internal/remedy writes a
// command line of its own (tests and the test helpers that drive real pip
// aside): diagnose, plan, explain and fix take theirs from remedy.
func TestCommandsOnlyFromRemedy(t *testing.T) {
	root := filepath.Join("..", "..")
	var hits []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "remedy", "testdata", "testenv", "pyenvtest", "transformerstest", ".git", ".cache":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if commandLiteral.MatchString(line) {
				hits = append(hits, path+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		t.Errorf("a command built outside internal/remedy: %s", h)
	}
}
