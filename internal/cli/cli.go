// Package cli is fastpath's command line: one options struct and one run
// function per command, callable from tests with in-memory I/O.
package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/render"
	"github.com/fastpath-dev/fastpath/internal/safetext"
)

// Version is fastpath's version, set at build time with
// -ldflags "-X github.com/fastpath-dev/fastpath/internal/cli.Version=...".
var Version = "0.1.0-dev"

// UsageError is a mistake in the command line: it exits ExitUsage and
// points at the command's --help (exit.go).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// findingsError reports that a command ran and found errors (exit 1); it
// prints nothing itself.
type findingsError struct{}

func (findingsError) Error() string { return "error-severity findings" }

// IO is where a command reads and writes.
type IO struct {
	In      io.Reader
	Out     io.Writer
	Err     io.Writer
	IsTTY   bool // Out is a terminal (colour, progress)
	NoColor bool
	Width   int // Out's width in columns when it is a terminal, else 0
}

// Main runs fastpath with args and returns the exit status
// (os.Exit(int(code))).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) ExitCode {
	// F9: everything printed passes one sanitiser, so escape sequences
	// from untrusted input never reach a terminal raw (internal/safetext).
	out := safetext.NewWriter(stdout, isTerminal(stdout))
	errOut := safetext.NewWriter(stderr, isTerminal(stderr))
	defer out.Flush()
	defer errOut.Flush()
	ios := &IO{In: stdin, Out: out, Err: errOut, IsTTY: isTerminal(stdout), NoColor: noColor(), Width: render.TerminalWidth(stdout)}
	root := newRootCommand(ios, args)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(out)
	root.SetErr(errOut)
	cmd, err := root.ExecuteContextC(context.Background())
	return exitCode(cmd, err, errOut)
}

// NewRootCommand builds the command tree.
func NewRootCommand(ios *IO) *cobra.Command { return newRootCommand(ios, nil) }

// commands are the subcommands by name. Main builds only the one that its
// arguments name (every command's flags cost allocations at each start;
// docs/speed.md, "GPU host and startup"), and all of them for anything
// else: help, completion, a mistyped name.
var commands = []struct {
	name  string
	build func(*IO) *cobra.Command
}{
	{"doctor", newDoctorCommand}, {"facts", newFactsCommand}, {"packages", newPackagesCommand},
	{"inspect", newInspectCommand}, {"model", newModelCommand}, {"explain", newExplainCommand},
	{"plan", newPlanCommand}, {"fix", newFixCommand}, {"remote", newRemoteCommand}, {"diff", newDiffCommand},
	{"k8s", newK8sCommand}, {"demo", newDemoCommand}, {"bench", newBenchCommand},
}

// newRootCommand builds the root and the subcommands args can reach: the
// one named by args[0], none for a lone --version, else all.
func newRootCommand(ios *IO, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "fastpath",
		Short: "Why a GPU machine or container cannot run a model on its fast path, and the fix",
		Long: `fastpath diagnoses GPU Python environments statically, in well under a second,
without importing torch: the CUDA compilers present and which one builds would
use, torch's CUDA and targets, the driver and GPUs, host compilers and build
tools, and every installed distribution. Each finding cites its evidence and
gives the exact commands that fix it.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &UsageError{Err: err} })
	subs := subcommands(ios, args)
	if len(args) > 0 && len(subs) == 1 {
		// A run of one named command never reaches cobra's completion
		// command: not building it saves every such start its flags.
		root.CompletionOptions.DisableDefaultCmd = true
	}
	root.AddCommand(subs...)
	addExitStatus(root, args != nil)
	return root
}

// subcommands builds the commands args can reach: the one args[0] names,
// none for a lone --version, else all of them.
func subcommands(ios *IO, args []string) []*cobra.Command {
	if len(args) == 1 && args[0] == "--version" {
		return nil
	}
	for _, c := range commands {
		if len(args) > 0 && c.name == args[0] {
			return []*cobra.Command{c.build(ios)}
		}
	}
	all := make([]*cobra.Command, 0, len(commands))
	for _, c := range commands {
		all = append(all, c.build(ios))
	}
	return all
}
