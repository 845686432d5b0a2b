package diagnose

import "github.com/fastpath-dev/fastpath/internal/facts"

// The helpers below let the planner (internal/plan) word its commands
// exactly as doctor's fixes do.

// PipInstall is the install command for f's selected environment: its own
// interpreter's `-m pip install`, or `uv pip install --python` for uv envs
// without pip.
func PipInstall(f *facts.Facts, args ...string) string { return newJudgement(f).pipInstall(args...) }

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string { return shellQuote(s) }
