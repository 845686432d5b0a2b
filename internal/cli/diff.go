package cli

import (
	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/fleet"
	"github.com/fastpath-dev/fastpath/internal/report"
)

// DiffOptions are `fastpath diff`'s flags.
type DiffOptions struct {
	JSON     bool
	Markdown bool
	All      bool
}

func newDiffCommand(ios *IO) *cobra.Command {
	o := &DiffOptions{}
	cmd := &cobra.Command{
		Use:   "diff FILE FILE...",
		Short: "Compare machines: the facts that differ between saved doctor reports",
		Long: `diff reads reports saved with ` + "`fastpath doctor --json`" + ` (or ` + "`fastpath facts`" + `, diagnosed
here) from several machines, each named after its file, and prints the facts
that differ between them (OS, Python, torch and its CUDA and targets, driver,
nvcc, gcc, GPUs, torch and kernel package versions) and each machine's
findings. --all also prints the facts they agree on.

Exit status: 0 when the comparison was printed (whatever it shows), 2 when a
file could not be read.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunDiff(o, args, ios)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON: machines, every fact compared with a differs flag, findings")
	cmd.Flags().BoolVar(&o.Markdown, "markdown", false, "print Markdown tables")
	cmd.Flags().BoolVar(&o.All, "all", false, "also print the facts every machine agrees on")
	cmd.MarkFlagsMutuallyExclusive("json", "markdown")
	return cmd
}

// RunDiff runs `fastpath diff`.
func RunDiff(o *DiffOptions, paths []string, ios *IO) error {
	var ms []fleet.Machine
	seen := map[string]bool{}
	for _, p := range paths {
		m, err := fleet.Load(p)
		if err != nil {
			return err
		}
		if seen[m.Name] {
			m.Name = p // two files of one name in different folders
		}
		seen[m.Name] = true
		ms = append(ms, m)
	}
	d := fleet.Compare(ms)
	switch {
	case o.JSON:
		return report.JSON(ios.Out, d)
	case o.Markdown:
		return d.Markdown(ios.Out, fleet.Options{All: o.All})
	}
	return d.Text(ios.Out, fleet.Options{All: o.All})
}
