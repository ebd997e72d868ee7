package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/wiring"
)

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "The config file: a commented sample of every section",
		Long: `Every command that takes --config, and the worker, read one YAML file: the
site, the systems it names, its gates and where its state lives. The
reference of every key is docs/config.md; 'config example' prints a
commented sample of every section.`,
		Example: `  hostforge config example > /etc/hostforge/site.yaml
  hostforge config example | less`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: example"))
		},
	}
	ex := &cobra.Command{
		Use:   "example",
		Short: "Print a commented sample config covering every section",
		Long: `Print a sample config file with every section and key, each commented: keys
commented out are alternatives or tunings most sites leave at their
defaults. It is examples/config/site.yaml, and it loads as it is: edit the
names, addresses and paths to the site's. The reference is docs/config.md.

` + exitCodes(ExitOK, ExitUsage),
		Example: `  hostforge config example > site.yaml
  hostforge config example | grep -A12 '^firmware:'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), wiring.ExampleConfig())
			return err
		},
	}
	cmd.AddCommand(ex)
	return cmd
}
