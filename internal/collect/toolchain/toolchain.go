// Package toolchain finds the host compilers and build tools.
package toolchain

import (
	"context"
	"time"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect finds gcc, g++, CUDAHOSTCXX, ninja and cmake.
func Collect(ctx context.Context, src source.Source, env *facts.PythonEnv, timeout time.Duration) (facts.Toolchain, []string) {
	return facts.Toolchain{}, nil // TODO(helper): implement
}
