// Package torch reads the facts of the torch installed in an environment.
package torch

import (
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect returns the torch of env, or nil when there is none.
func Collect(src source.Source, env *facts.PythonEnv) (*facts.Torch, []string) {
	return nil, nil // TODO(helper): implement
}
