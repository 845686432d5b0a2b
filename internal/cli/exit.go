package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// ExitCode is fastpath's exit status. The contract (docs/exit-status.md):
// 0 no error-severity finding, 1 at least one, 2 a usage error or a
// failure to run. Usage errors and failures share 2, as they always have:
// scripts and the DaemonSet of `k8s manifest` treat "at most 1" as "the
// report is valid", and splitting 2 would break them for no new decision a
// caller can take; stderr says which it was.
type ExitCode int

const (
	ExitOK       ExitCode = 0 // ran; no error-severity finding
	ExitFindings ExitCode = 1 // ran; at least one error-severity finding
	ExitUsage    ExitCode = 2 // the command line is wrong (a flag, an argument, a combination)
	ExitFailure  ExitCode = 2 // fastpath could not do what was asked
)

// ExitStatus says what each exit code means for one command; its help and
// docs/exit-status.md are generated from it, never written by hand.
type ExitStatus struct {
	OK       string // what 0 means
	Findings string // what 1 means; empty when the command never exits 1
	Failure  string // what 2 means besides a usage error; empty when nothing else
}

// exitStatuses is the one table of every command's exit codes, by command
// path. TestEveryCommandDocumentsExitStatus fails for a command missing here.
var exitStatuses = map[string]ExitStatus{
	"fastpath": {
		OK:       "no error-severity finding (each command's help says what it counts)",
		Findings: "at least one error-severity finding",
		Failure:  "fastpath could not run",
	},
	"fastpath doctor": {
		OK:       "no error-severity finding",
		Findings: "at least one error-severity finding (with --format prom or nfd the output is complete either way)",
		Failure:  "the machine, root, image or facts file could not be read",
	},
	"fastpath facts": {
		OK:      "the facts were printed",
		Failure: "the machine, root or image could not be read",
	},
	"fastpath packages": {
		OK:      "the distributions were listed",
		Failure: "no Python environment was found, or the root or image could not be read",
	},
	"fastpath inspect": {
		OK:       `every file named was read; no --gpu verdict predicts "no kernel image"`,
		Findings: `some --gpu verdict predicts "no kernel image"`,
		Failure: "a file named on the command line could not be read (missing, not a regular file, " +
			"not ELF or fatbin, malformed); errors met inside a folder walk are reported on their entry " +
			"and do not change the status",
	},
	"fastpath model": {
		OK: "every layer was judged and runs its fast path",
		Findings: "some layers fall back to torch (fast-path-fallback), the model will not load " +
			"(model-will-not-load), or some layers could not be judged (model-not-judged)",
		Failure: "the config could not be found or read",
	},
	"fastpath explain": {
		OK:       "no error-severity cause in the log (warnings only, or no known message)",
		Findings: "the log shows an error-severity cause",
		Failure:  "the log, the machine, the root, the image or the facts file could not be read",
	},
	"fastpath plan": {
		OK:      "the plan was made (empty when nothing needs fixing)",
		Failure: "the facts could not be collected",
	},
	"fastpath fix": {
		OK:       "nothing was run (no --apply, no step that can be applied, or the answer was no), or no error-severity finding remains after --apply ran its steps",
		Findings: "--apply ran and error-severity findings remain",
		Failure: "a refusal (--apply with --root, --image or --facts; no --yes without a terminal; " +
			"the facts changed since the plan), a step that failed, or an interruption",
	},
	"fastpath remote": {
		OK:       "every target was diagnosed, none has an error-severity finding",
		Findings: "every target was diagnosed, at least one has an error-severity finding",
		Failure:  "at least one target could not be diagnosed (unreachable, failed, timed out, interrupted); this wins over 1",
	},
	"fastpath diff": {
		OK: "the comparison was printed (whatever it shows)",
		Failure: "a file could not be read, a line of the stream held no report, or fewer machines " +
			"than --expect reported",
	},
	"fastpath k8s": {
		OK: "the help was printed",
	},
	"fastpath k8s manifest": {
		OK: "the manifest was printed",
	},
	"fastpath demo": {
		OK:      "the demo ran (its findings are the built-in container's, not this machine's)",
		Failure: "it could not run",
	},
	"fastpath bench": {
		OK:      "the benchmark ran and its table was printed (whatever it measured)",
		Failure: "the model or the interpreter could not be found, or the benchmark failed or timed out",
	},
}

// ExitStatusOf is the exit-code table of c, if it has one.
func ExitStatusOf(c *cobra.Command) (ExitStatus, bool) {
	s, ok := exitStatuses[c.CommandPath()]
	return s, ok
}

// exitHeading starts the generated section of every command's long help.
const exitHeading = "Exit status:"

// Help is the "Exit status:" section of a command's long help. The rows
// are indented four spaces after a blank line, so that the Markdown
// reference and the man pages (cobra/doc) keep them as preformatted lines.
func (s ExitStatus) Help() string {
	var b strings.Builder
	b.WriteString(exitHeading + "\n\n")
	row := func(code ExitCode, text string) {
		b.WriteString(wrapHanging(fmt.Sprintf("    %d  ", code), text, 80))
	}
	row(ExitOK, s.OK)
	if s.Findings != "" {
		row(ExitFindings, s.Findings)
	}
	row(ExitUsage, s.Usage())
	return strings.TrimSuffix(b.String(), "\n")
}

// Usage is what 2 means: a usage error, or the command's own failures.
func (s ExitStatus) Usage() string {
	const usage = "usage error (an unknown flag, a wrong argument, flags that conflict)"
	if s.Failure == "" {
		return usage
	}
	return usage + ", or " + s.Failure
}

// wrapHanging wraps text into lines of at most width columns, the first
// starting with lead and the others indented to line up under it.
func wrapHanging(lead, text string, width int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", len(lead))
	line := lead
	empty := true
	for _, w := range strings.Fields(text) {
		if !empty && len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line, empty = pad, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}

// addExitStatus appends each command's generated exit section to its long
// help (after the short text when it has no long one), and marks the
// errors its RunE returns as its own: an error that no RunE returned is
// cobra's (unknown flag or command, wrong arguments, flags that conflict,
// a required flag missing), hence a usage error.
//
// With lazy set (a run of Main), the exit sections are written only when a
// help is printed: wrapping them cost every start (issue 17).
func addExitStatus(c *cobra.Command, lazy bool) {
	if lazy && !c.HasParent() {
		help := c.HelpFunc()
		added := map[*cobra.Command]bool{}
		c.SetHelpFunc(func(c *cobra.Command, args []string) {
			if !added[c] {
				added[c] = true
				addExitHelp(c)
			}
			help(c, args)
		})
	} else if !lazy {
		addExitHelp(c)
	}
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if err := run(cmd, args); err != nil {
				return &runError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		addExitStatus(sub, lazy)
	}
}

// addExitHelp appends c's exit section to its long help.
func addExitHelp(c *cobra.Command) {
	if s, ok := ExitStatusOf(c); ok {
		long := c.Long
		if long == "" {
			long = c.Short + "."
		}
		c.Long = strings.TrimRight(long, "\n") + "\n\n" + s.Help()
	}
}

// runError is an error a command's RunE returned (see addExitStatus).
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// exitCode maps what cmd returned to the exit status, and says why on
// stderr: usage errors end with a pointer to the command's help.
func exitCode(cmd *cobra.Command, err error, stderr io.Writer) ExitCode {
	if err == nil {
		return ExitOK
	}
	if errors.As(err, new(findingsError)) {
		return ExitFindings
	}
	fmt.Fprintln(stderr, "fastpath:", err)
	if isUsageError(err) {
		path := "fastpath"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", path)
		return ExitUsage
	}
	return ExitFailure
}

// isUsageError: a UsageError anywhere in the chain, or an error no RunE
// returned (cobra's own checks of the command line).
func isUsageError(err error) bool {
	if errors.As(err, new(*UsageError)) {
		return true
	}
	return !errors.As(err, new(*runError))
}
