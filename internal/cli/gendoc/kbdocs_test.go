package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/kb"
)

// TestKBDocsCurrent: docs/findings.md and docs/families.md are what the
// knowledge base generates now, and README.md's marked blocks (where it
// has them) too.
func TestKBDocsCurrent(t *testing.T) {
	repo := filepath.Join("..", "..", "..")
	for name, want := range kbPages() {
		got, err := os.ReadFile(filepath.Join(repo, "docs", name))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/%s is out of date (%v): run go run ./internal/cli/gendoc", name, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	filled, err := fillBlocks(readme, readmeBlocks())
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if !bytes.Equal(filled, readme) {
		t.Error("README.md's generated blocks are out of date: run go run ./internal/cli/gendoc")
	}
}

// TestKBPagesCoverKB: every registered finding id and every family appears
// in its page, so a page cannot silently drop one.
func TestKBPagesCoverKB(t *testing.T) {
	findings, families := string(findingsMarkdown()), string(familiesMarkdown())
	for _, e := range kb.Findings().Findings {
		if !strings.Contains(findings, "| `"+e.ID+"` |") {
			t.Errorf("findings.md lacks %s", e.ID)
		}
	}
	for mt := range kb.Families().Families {
		if !strings.Contains(families, "| `"+mt+"` |") {
			t.Errorf("families.md lacks %s", mt)
		}
	}
	for name := range kb.Families().Packages {
		if !strings.Contains(families, "| `"+name+"` |") {
			t.Errorf("families.md lacks kernel package %s", name)
		}
	}
}

// TestReadmeBlocks: generateKB fills a README's marked blocks, keeps
// everything else byte for byte, leaves a README without markers alone,
// and refuses an unknown or unterminated block.
func TestReadmeBlocks(t *testing.T) {
	dir := t.TempDir()
	readme := filepath.Join(dir, "README.md")
	docs := filepath.Join(dir, "docs")
	in := "# fastpath\n\nintro\n\n<!-- generated:families -->\nstale table\n<!-- end -->\n\nmiddle\n<!-- generated:findings --><!-- end -->\ntail\n"
	if err := os.WriteFile(readme, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := generateKB(docs, readme); err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(readme)
	s := string(out)
	if strings.Contains(s, "stale table") || !strings.Contains(s, "| `qwen3_5` | causal-conv1d, flash-linear-attention |") ||
		!strings.Contains(s, "| `no-cuda-compiler` | error, warning | No CUDA compiler (nvcc) anywhere |") {
		t.Errorf("blocks not filled:\n%s", s)
	}
	if !strings.HasPrefix(s, "# fastpath\n\nintro\n\n<!-- generated:families -->\n") || !strings.Contains(s, "<!-- end -->\n\nmiddle\n<!-- generated:findings -->\n") ||
		!strings.HasSuffix(s, "<!-- end -->\ntail\n") {
		t.Errorf("text outside the blocks changed:\n%s", s)
	}
	for _, p := range []string{"findings.md", "families.md"} {
		if _, err := os.Stat(filepath.Join(docs, p)); err != nil {
			t.Error(err)
		}
	}
	// Idempotent: a second run changes nothing.
	if err := generateKB(docs, readme); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(readme); !bytes.Equal(again, out) {
		t.Error("a second run changed the README")
	}
	// No markers: untouched.
	plain := "# fastpath\nno blocks here\n"
	if err := os.WriteFile(readme, []byte(plain), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := generateKB(docs, readme); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(readme); string(got) != plain {
		t.Errorf("README without markers changed: %q", got)
	}
	for _, bad := range []string{"<!-- generated:familys -->x<!-- end -->", "<!-- generated:families -->no end", "<!-- generated:families"} {
		if _, err := fillBlocks([]byte(bad), readmeBlocks()); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	// No README at all is fine (the docs pages are still written).
	if err := generateKB(docs, filepath.Join(dir, "none.md")); err != nil {
		t.Error(err)
	}
}
