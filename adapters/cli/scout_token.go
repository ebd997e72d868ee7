package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/adapters/wiring"
)

// scoutTokenJSON is 'scout token -o json'.
type scoutTokenJSON struct {
	MachineID string `json:"machine_id"`
	Token     string `json:"token"`
}

// scoutTokenCmd prints one machine's agent token for provisioning.
func (a *app) scoutTokenCmd() *cobra.Command {
	var config string
	var machines []string
	cmd := &cobra.Command{
		Use:   "token --config F --machine ID",
		Short: "Print one machine's agent token, for provisioning the host",
		Long: `Prints the token 'hostforge scout --token-file' presents for one machine:
the machine ID and HMAC-SHA256 of it under the site secret, which is read
from the vault item firmware.scout.site_secret_item names. The token proves
that machine and no other: the agent server refuses it (403) on any other
machine's task, script, artifacts or report. Install it on that host only,
in a file only root can read (mode 0600). Changing the site secret
invalidates every token.

` + exitCodes(ExitOK, ExitUsage, ExitBug),
		Example: `  hostforge scout token --config /etc/hostforge/site.yaml --machine gpu-r1-u02 > scout.token
  hostforge scout token --config /etc/hostforge/site.yaml --machine gpu-r1-u02 -o json`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	f.StringVar(&config, "config", "", "the site config file, with firmware.scout and the vault (required)")
	machineFlag(cmd, &machines, "the machine ID whose token to print (required)")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if config == "" {
			return inputErr("--config is required: the site config naming the vault and firmware.scout.site_secret_item")
		}
		machine, err := oneMachine(cmd, machines)
		if err != nil {
			return err
		}
		if err := scout.CheckMachineID(machine); err != nil {
			return usageErr(err)
		}
		cfg, err := loadConfigFile(config)
		if err != nil {
			return err
		}
		secret, err := wiring.ScoutSiteSecret(cmd.Context(), cfg, nil, a.secrets)
		if err != nil {
			return usageErr(err)
		}
		token, err := scout.MachineToken(secret, machine)
		if err != nil {
			return usageErr(err)
		}
		if *out == formatJSON {
			return writeJSON(cmd.OutOrStdout(), scoutTokenJSON{MachineID: machine, Token: token})
		}
		_, err = fmt.Fprintln(cmd.OutOrStdout(), token)
		return err
	}
	return cmd
}
