package kb

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCitationsInsideRepo: code and data cite primary sources (a vendor
// URL, package==version and file) or files inside the repository, never
// the development machine's shared notes; and every repository file a
// data table cites exists.
func TestCitationsInsideRepo(t *testing.T) {
	outside := regexp.MustCompile(`shared/(knowledge|reference)|/work/shared`)
	inRepo := regexp.MustCompile(`\b(?:internal|scripts|docs)/[A-Za-z0-9_./-]+\.(?:md|txt|json|gz|go|py|sh)\b`)
	root := filepath.Join(repoRoot, "internal")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "fuzz" {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(p)
		if ext != ".go" && ext != ".json" && ext != ".py" && ext != ".md" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if loc := outside.FindIndex(b); loc != nil && !strings.HasSuffix(p, "citations_test.go") {
			t.Errorf("%s cites %q, outside the repository: cite the primary source or a file inside the repo", p, b[loc[0]:loc[1]])
		}
		if ext == ".json" && strings.Contains(filepath.ToSlash(p), "/data/") {
			for _, ref := range inRepo.FindAllString(string(b), -1) {
				if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(ref))); err != nil {
					t.Errorf("%s cites %s, which is not in the repository", p, ref)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
