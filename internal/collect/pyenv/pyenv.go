// Package pyenv finds Python environments and their installed
// distributions, statically: nothing from the environment is run.
package pyenv

import (
	"context"

	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect finds the selected Python (python3 on PATH, or the --python
// value), its distributions, the other environments, and pip on PATH.
func Collect(ctx context.Context, src source.Source, python string) (facts.Python, []string) {
	return facts.Python{}, nil // TODO(helper): implement
}

// PipListJSON renders env's distributions exactly as
// `python -m pip list --format=json` prints them (same selection, order,
// normalised versions, editable_project_location, and json.dumps spacing).
func PipListJSON(env *facts.PythonEnv) []byte {
	return []byte("[]") // TODO(helper): implement
}

// Listed returns the distributions pip list would show, in its order.
func Listed(env *facts.PythonEnv) []facts.Distribution {
	return nil // TODO(helper): implement
}
