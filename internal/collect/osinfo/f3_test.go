package osinfo

import (
	"bytes"
	"testing"

	"github.com/fastpath-dev/fastpath/internal/hostile"
)

// F3: a libc.so.6 claiming 10 million sections must be refused from its header.
func TestF3GlibcVersionRefusesSectionCountBomb(t *testing.T) {
	b := hostile.ELFSectionBomb(10_000_000)
	if _, err := GlibcVersion(bytes.NewReader(b), int64(len(b))); err == nil {
		t.Fatal("GlibcVersion accepted an ELF section-count bomb")
	}
}
