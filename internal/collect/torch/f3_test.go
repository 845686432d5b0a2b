package torch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/hostile"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// F3: a libc10.so claiming 10 million sections cost doctor 2.8 GB. The ABI
// check must refuse it from its header, and record no verdict.
func TestF3ABICheckRefusesSectionCountBomb(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libc10.so"), hostile.ELFSectionBomb(10_000_000), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tf := &facts.Torch{Lib: "/"}
	warnings := collectCXX11ABI(src, tf)
	if tf.CXX11ABI != nil {
		t.Fatalf("ABI verdict %v from an ELF section-count bomb", *tf.CXX11ABI)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "not a readable ELF file") {
		t.Fatalf("warnings = %q, want one saying the file is not a readable ELF file", warnings)
	}
}
