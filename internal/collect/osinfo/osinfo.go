// Package osinfo collects the operating system's facts: os-release, the
// architecture, glibc's version, CPUs and memory.
package osinfo

import (
	"context"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect reads the OS facts of src.
func Collect(ctx context.Context, src source.Source) (facts.OS, []string) {
	return facts.OS{}, nil // TODO(helper): implement
}
