package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/collect/pyenv"
	"github.com/fastpath-dev/fastpath/internal/pep440"
)

// PackagesOptions are `fastpath packages`' flags.
type PackagesOptions struct {
	Source SourceFlags
	Output // --format text|json (pip list --format=json's JSON), -v, -q
}

func newPackagesCommand(ios *IO) *cobra.Command {
	o := &PackagesOptions{}
	cmd := &cobra.Command{
		Use:   "packages",
		Short: "List the selected environment's distributions, as pip list does",
		Long: `packages lists the distributions installed in the selected Python environment
without running Python. --json prints exactly what
'python -m pip list --format=json' prints for the same interpreter.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunPackages(cmd.Context(), o, ios)
		},
	}
	o.Source.register(cmd.Flags(), withRoot|withImage|withPython|withEnv) // no --gpu: the listing does not depend on it
	addOutputFlags(cmd, &o.Output, quietFlag, "text", "json")
	return cmd
}

// RunPackages runs `fastpath packages`.
func RunPackages(ctx context.Context, o *PackagesOptions, ios *IO) error {
	src, err := o.Source.SourceContext(ctx)
	if err != nil {
		return err
	}
	py, _ := pyenv.CollectWith(ctx, src, o.Source.Python, pyenv.Options{ListOnly: true})
	if py.Selected == nil {
		return fmt.Errorf("no Python environment found (use --python)")
	}
	if o.JSON {
		_, err := ios.Out.Write(append(pyenv.PipListJSON(py.Selected), '\n'))
		return err
	}
	if o.Quiet {
		// -q: the names only, one a line (pip list's columns otherwise).
		for _, d := range pyenv.Listed(py.Selected) {
			fmt.Fprintln(ios.Out, d.Name)
		}
		return nil
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "Package\tVersion\tLocation")
	for _, d := range pyenv.Listed(py.Selected) {
		loc := d.Location
		if d.Editable {
			loc = d.EditableLocation
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", d.Name, pep440.Normalize(d.Version), loc)
	}
	return tw.Flush()
}
