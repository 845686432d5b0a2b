// Package envvars keeps the environment variables that matter to GPU builds
// and runs, with secrets redacted.
package envvars

import (
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/source"
)

// Collect returns the variables of env that matter, sorted by name.
func Collect(env source.Env) []facts.EnvVar {
	return nil // TODO(helper): implement
}
