package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) bmcCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "bmc",
		Short:   "BMC tools",
		Args:    cobra.NoArgs,
		Example: `  hostforge bmc detect --url https://10.10.0.12 --user root`,
		RunE:    func(cmd *cobra.Command, _ []string) error { return usageErr(fmt.Errorf("missing subcommand: detect")) },
	}
	return cmd
}
