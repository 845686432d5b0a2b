package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastpath-dev/fastpath/internal/demo"
	"github.com/fastpath-dev/fastpath/internal/diagnose"
)

func newDemoCommand(ios *IO) *cobra.Command {
	o := &DoctorOptions{}
	var writeTree string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run doctor on a built-in copy of the seed container (no GPU needed)",
		Long: `demo writes the seed situation into a temporary folder (a container with
torch 2.11.0+cu128 in /root/venv, flash-linear-attention, no causal-conv1d,
no nvcc anywhere, eight GPUs of compute capability 12.0), the very tree the
tests build, then runs the real doctor on it with --root.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if writeTree != "" {
				if err := demo.Write(writeTree); err != nil {
					return err
				}
				fmt.Fprintf(ios.Out, "seed container written to %s; diagnose it with:\n  fastpath doctor --root %s --gpu 12.0 --env %s\n",
					writeTree, writeTree, diagnose.ShellQuote(demo.Env[0]))
				return nil
			}
			dir, err := os.MkdirTemp("", "fastpath-demo-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := demo.Write(dir); err != nil {
				return err
			}
			o.Source = SourceFlags{Root: dir, GPUs: demo.GPUs, Env: demo.Env}
			o.Models = []string{demo.Model}
			// The findings are the seed's, not this machine's: demo succeeds
			// when it ran (exit 0), so it can stand as the README's first command.
			if err := RunDoctor(cmd.Context(), o, ios); !errors.As(err, new(findingsError)) {
				return err
			}
			return nil
		},
	}
	addOutputFlags(cmd, &o.Output, allText, "text", "json", "markdown", "prom", "nfd")
	cmd.Flags().StringVar(&writeTree, "write-tree", "", "write the seed container into `DIR` and exit (to try --root on it)")
	return cmd
}
