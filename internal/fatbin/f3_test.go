package fatbin

import (
	"bytes"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/hostile"
)

// F3: `inspect` on a 4 KB file claiming 10 million sections used 3 GB.
func TestF3FatbinRefusesSectionCountBomb(t *testing.T) {
	if _, err := NewFile(bytes.NewReader(hostile.ELFSectionBomb(10_000_000))); err == nil {
		t.Fatal("NewFile accepted an ELF section-count bomb")
	}
}
