package cli

import (
	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/report"
)

func newFactsCommand(ios *IO) *cobra.Command {
	o := &SourceFlags{}
	cmd := &cobra.Command{
		Use:   "facts",
		Short: "Print the raw facts as JSON (diagnose them elsewhere with doctor --facts)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := o.Observe(cmd.Context())
			if err != nil {
				return err
			}
			return report.JSON(ios.Out, f)
		},
	}
	o.register(cmd.Flags(), machineFlags)
	// facts always prints JSON; --json and --format json are accepted so
	// scripts can pass them to every command.
	addOutputFlags(cmd, &Output{}, 0, "json")
	return cmd
}
