package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/diagnose"
	"github.com/fastpath-dev/fastpath/internal/facts"
	"github.com/fastpath-dev/fastpath/internal/finding"
	"github.com/fastpath-dev/fastpath/internal/fleet"
	"github.com/fastpath-dev/fastpath/internal/model"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// DiffOptions are `fastpath diff`'s flags.
type DiffOptions struct {
	Output // --format text|json|markdown, -v, -q
	All    bool
	Expect int // --expect N: machines that should have reported
}

func newDiffCommand(ios *IO) *cobra.Command {
	o := &DiffOptions{}
	cmd := &cobra.Command{
		Use:   "diff FILE|- [FILE|-]...",
		Short: "Compare machines: the facts that differ between saved doctor reports",
		Long: `diff reads reports saved with ` + "`fastpath doctor --json`" + ` (or ` + "`fastpath facts`" + `, diagnosed
here) from several machines, each named after its file, and prints the facts
that differ between them (OS, Python, torch and its CUDA and targets, driver,
nvcc, gcc, GPUs, torch and kernel package versions) and each machine's
findings. --all also prints the facts they agree on.

- reads a stream of ` + "`fastpath doctor --json-lines`" + ` reports from standard input,
one per line, each named after the node that wrote it; no shared
filesystem is needed:

  srun --label --nodes=4 --ntasks-per-node=1 fastpath doctor --json-lines | fastpath diff --expect 4 -

srun cuts lines longer than 1 KiB into pieces and interleaves the pieces of
its tasks; --label marks each piece with its task, and diff puts every
task's report back together (docs/fleet.md).

--expect N says how many machines should have reported: fewer is reported
as missing (and exits 2).`,
		Args: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-" {
					return cobra.MinimumNArgs(1)(cmd, args)
				}
			}
			return cobra.MinimumNArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunDiff(o, args, ios)
		},
	}
	addOutputFlags(cmd, &o.Output, verboseFlag|quietFlag, "text", "json", "markdown")
	cmd.Flags().BoolVar(&o.All, "all", false, "also print the facts every machine agrees on")
	cmd.Flags().IntVar(&o.Expect, "expect", 0, "`N` machines should have reported (e.g. $SLURM_JOB_NUM_NODES); fewer is an error")
	return cmd
}

// RunDiff runs `fastpath diff`.
func RunDiff(o *DiffOptions, paths []string, ios *IO) error {
	if o.Expect < 0 {
		return usageErrorf("--expect %d: not a count of machines", o.Expect)
	}
	if o.All && o.JSON {
		return usageErrorf("--all is for text and Markdown: the JSON already holds every fact compared")
	}
	var (
		ms         []fleet.Machine
		unreadable []string
		stdinRead  bool
	)
	seen := map[string]bool{}
	add := func(m fleet.Machine, alt string) {
		if seen[m.Name] {
			m.Name = alt // two files of one name in different folders
		}
		seen[m.Name] = true
		ms = append(ms, m)
	}
	for _, p := range paths {
		if p == "-" {
			if stdinRead {
				return usageErrorf("- (standard input) given twice")
			}
			stdinRead = true
			in := ios.In
			if in == nil {
				in = os.Stdin
			}
			res, err := fleet.ReadStream(in)
			if err != nil {
				return fmt.Errorf("standard input: %w", err)
			}
			for _, m := range res.Machines {
				add(m, "-:"+m.Name)
			}
			unreadable = append(unreadable, res.Unreadable...)
			continue
		}
		m, err := fleet.Load(p)
		if err != nil {
			return err
		}
		add(m, p)
	}
	d := fleet.Compare(ms)
	d.Expected, d.Unreadable = o.Expect, unreadable
	if o.Expect > len(ms) {
		d.Missing = o.Expect - len(ms)
	}
	var err error
	switch {
	case o.JSON:
		err = report.JSON(ios.Out, d)
	case o.Markdown:
		err = d.Markdown(ios.Out, fleet.Options{All: o.All || o.Verbose})
	default:
		err = d.Text(ios.Out, fleet.Options{All: o.All || o.Verbose, Quiet: o.Quiet})
	}
	if err != nil {
		return err
	}
	for _, u := range unreadable {
		fmt.Fprintf(ios.Err, "fastpath diff: standard input %s\n", u)
	}
	switch {
	case d.Missing > 0:
		if !o.JSON {
			fmt.Fprintf(ios.Out, "\nmissing: %d of %d expected machines did not report (%d reported)\n", d.Missing, o.Expect, len(ms))
		}
		return fmt.Errorf("%d of %d expected machines did not report", d.Missing, o.Expect)
	case len(unreadable) > 0:
		return fmt.Errorf("%d lines of standard input held no report (from srun, add --label: srun cuts long lines into pieces and interleaves the tasks' pieces, which --label keeps apart)", len(unreadable))
	case len(ms) == 0:
		return fmt.Errorf("no reports to compare")
	}
	return nil
}

// renderDoctorLine is `doctor --json-lines`: the doctor report on one
// line, labelled with the node's name (and its Slurm task under srun).
func renderDoctorLine(f *facts.Facts, models []*model.Report, ios *IO) error {
	findings := diagnose.RunWithModels(f, models)
	if models == nil {
		models = []*model.Report{}
	}
	line := &fleet.NodeReport{
		Node:   fleet.NodeName(os.Getenv),
		Slurm:  fleet.SlurmFromEnv(os.Getenv),
		Doctor: report.Doctor{Schema: facts.Schema, Facts: f, Findings: findings, Models: models},
	}
	if err := fleet.WriteLine(ios.Out, line); err != nil {
		return err
	}
	for _, fd := range findings {
		if fd.Severity == finding.Error {
			return findingsError{}
		}
	}
	return nil
}
