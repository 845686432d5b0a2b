// Package flagread is a command with flags that are not read, for
// TestFlagReadCheckFails (parsed, never compiled).
package flagread

import (
	"fmt"

	"github.com/spf13/cobra"
)

type widgetOptions struct {
	Used    string
	Unused  string
	Written bool
}

func newWidgetCommand() *cobra.Command {
	o := &widgetOptions{}
	var local string
	cmd := &cobra.Command{
		Use: "widget NAME",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Written = true // a write is not a read
			fmt.Println(local)
			return runWidget(o)
		},
	}
	cmd.Flags().StringVar(&o.Used, "used", "", "read by runWidget")
	cmd.Flags().StringVar(&o.Unused, "unused", "", "never read")
	cmd.Flags().StringVar(&local, "local", "", "read in RunE")
	cmd.Flags().BoolVar(&o.Written, "written", false, "only written")
	return cmd
}

func runWidget(o *widgetOptions) error {
	_, err := fmt.Println(o.Used)
	return err
}
