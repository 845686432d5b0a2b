package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/explain"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// ExplainOptions are `fastpath explain`'s flags.
type ExplainOptions struct {
	Source SourceFlags
	Output // --format text|json, -v, -q
	// Follow prints each finding as soon as its evidence is complete.
	Follow bool
}

func newExplainCommand(ios *IO) *cobra.Command {
	o := &ExplainOptions{}
	cmd := &cobra.Command{
		Use:   "explain LOG|-",
		Short: "Explain a build or run log: root cause first, with the fix for this environment",
		Long: `explain reads a build or run log (a file, or - for stdin), streamed line by
line, and matches it against the error messages fastpath knows (pip, setup.py
of the kernel packages, torch's extension builder, nvcc, gcc, the CUDA runtime,
the loader, transformers' fallback warnings). It prints findings, the most
likely root cause first, each with the log lines that show it, and fixes made
concrete with the facts the log states about its own environment (torch and
its CUDA, nvcc, the GPU, gcc, the platform, the build system) and with the
facts of this machine (or --root DIR, or --facts FILE) only when they belong
to the same environment. A log with no known message says so; explain does
not guess.

--follow prints each finding as soon as its evidence is complete, while the
log is still being written:  tail -f build.log | fastpath explain --follow -
(with --json: one finding per line, then the report).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("explain takes one log file, or - for stdin (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunExplain(cmd.Context(), o, args[0], ios)
		},
	}
	o.Source.register(cmd.Flags(), diagnoseFlags)
	addOutputFlags(cmd, &o.Output, allText, "text", "json")
	cmd.Flags().BoolVar(&o.Follow, "follow", false, "print each finding as soon as its evidence is complete (for a log still being written: tail -f build.log | fastpath explain --follow -)")
	return cmd
}

// RunExplain runs `fastpath explain LOG`.
func RunExplain(ctx context.Context, o *ExplainOptions, log string, ios *IO) error {
	var in io.Reader
	if log == "-" {
		in = ios.In
	} else {
		fh, err := os.Open(log)
		if err != nil {
			return err
		}
		defer fh.Close()
		if st, err := fh.Stat(); err == nil && st.IsDir() {
			return usageErrorf("%s is a directory, not a log file", log)
		}
		in = fh
	}
	// A log file is scanned while the facts are collected: the two are
	// independent. (Not a pipe or a terminal on stdin, nor --follow: a
	// mistake in the source flags is a usage error whatever the log says,
	// and must not wait for input.)
	type scanned struct {
		scan *explain.Scan
		err  error
	}
	var early chan scanned
	if !o.Follow && (log != "-" || isRegularFile(in)) {
		early = make(chan scanned, 1)
		go func() {
			s, err := explain.Default().Scan(in)
			early <- scanned{s, err}
		}()
	}
	f, err := o.Source.Load(ctx)
	if err != nil {
		return err
	}
	var (
		scan     *explain.Scan
		findings []explain.Finding
	)
	if o.Follow {
		text := o.text(ios)
		enc := json.NewEncoder(ios.Out)
		scan, findings, err = explain.Default().Follow(in, f, func(fd explain.Finding, revised bool) error {
			if o.JSON {
				return enc.Encode(fd)
			}
			if revised {
				if _, err := fmt.Fprintf(ios.Out, "\n(revised %s: a later line of the log changed the facts its fixes are made from)", fd.ID); err != nil {
					return err
				}
			}
			return explain.WriteFinding(ios.Out, fd, text)
		})
	} else {
		if early != nil {
			r := <-early
			scan, err = r.scan, r.err
		} else {
			scan, err = explain.Default().Scan(in)
		}
		if scan != nil {
			findings = explain.Findings(scan, f)
		}
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", log, err)
	}
	label := factsLabel(&o.Source)
	if same, why := scan.Facts.SameEnvironment(f); !same && f != nil {
		label = "the log's own facts (" + label + " left out: " + why + ")"
	}
	rep := &explain.Report{
		Schema:    facts.Schema,
		Log:       log,
		Findings:  findings,
		LinesRead: scan.Lines,
		BytesRead: scan.Bytes,
		LongLines: scan.LongLines,
		Facts:     label,
		LogFacts:  &scan.Facts,
	}
	if scan.Facts.Empty() {
		rep.LogFacts = nil
	}
	switch {
	case o.JSON:
		err = report.JSON(ios.Out, rep)
	case o.Follow:
		// The findings are printed already: close with the order.
		err = rep.Summary(ios.Out, o.text(ios))
	default:
		err = rep.Text(ios.Out, o.text(ios))
	}
	if err != nil {
		return err
	}
	if rep.Errors() {
		return findingsError{}
	}
	return nil
}

// isRegularFile reports a reader that is a regular file (stdin redirected
// from one: `fastpath explain - < build.log`).
func isRegularFile(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

func factsLabel(s *SourceFlags) string {
	switch {
	case s.Facts != "":
		return "facts " + s.Facts
	case s.Root != "":
		return "root " + s.Root
	}
	return "this host"
}
