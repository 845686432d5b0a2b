// Package nvcc finds every CUDA compiler on a source and works out which one
// torch's extension builder would use.
package nvcc

import (
	"context"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect finds the CUDA compilers of src.
func Collect(ctx context.Context, src source.Source, py facts.Python, t *facts.Torch, timeout time.Duration) (facts.CUDA, []string) {
	return facts.CUDA{}, nil // TODO(helper): implement
}
