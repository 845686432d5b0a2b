package torch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/hostile"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// F3: a libtorch_cuda.so claiming 10 million sections cost doctor 2.8 GB.
func TestF3ReadDynstrRefusesSectionCountBomb(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libtorch_cuda.so"), hostile.ELFSectionBomb(10_000_000), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := source.Root(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readDynstr(src, "/libtorch_cuda.so"); err == nil {
		t.Fatal("readDynstr accepted an ELF section-count bomb")
	}
}
