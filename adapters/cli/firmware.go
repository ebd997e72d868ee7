package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/firmware"
)

func (a *app) firmwareCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "firmware",
		Short: "Managed-host firmware: drift, the catalog and its overrides, requests, policy, windows, history, report, cancel, run",
		Args:  cobra.NoArgs,
		Example: `  hostforge firmware drift --catalog /etc/hostforge/firmware.toml --inventory ./r750-capture -o json
  hostforge firmware reprovision list --config site.yaml`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: drift, show, config, auto-update, start-updates, reprovision, reset, approve, history, report, cancel or run"))
		},
	}
	cmd.AddCommand(a.firmwareDriftCmd())
	cmd.AddCommand(a.firmwareOpsCmds()...)
	return cmd
}

func (a *app) firmwareDriftCmd() *cobra.Command {
	var catalogs []string
	var inventory string
	cmd := &cobra.Command{
		Use:   "drift --catalog PATH [--catalog PATH...] --inventory DIR",
		Short: "Compare a saved Redfish tree's firmware inventory with the catalog's defaults, offline",
		Long: `Read a host firmware catalog (NICo's TOML format) and a saved Redfish tree, and
report, per catalog component of the host's model, whether its installed
firmware is at the catalog's default version. Nothing is contacted.

--catalog is a site configuration with [host_models.<key>] tables, a single
metadata.toml, or a firmware directory (the metadata.toml of each
subdirectory, oldest modification time first). Repeat it to merge several,
in order; a later one wins where they disagree.

--inventory is a directory holding redfish/v1/.../index.json files (DMTF
mockup layout). The host's model is the first system's Model, its vendor
family the system's Manufacturer ("Dell Inc." is Dell).

Per component, the status is:
  ok          every matching installed entry reports the default version
  drifted     some matching entry reports another version (exact string
              comparison: "1.2" vs "1.2.0" is drift, and so is newer firmware)
  unmatched   the matcher finds no installed entry (flagged, never a reason
              to start an update)
  no-default  the component has no default version (ignored)
An inventory entry whose Status.State is present and not Enabled, or whose Id
or Name says it is a pending, staged or staging image, is not installed
firmware and is left out before matching. The JSON object's in_catalog says
whether a catalog model matched the host: a model without a catalog entry
prints in_catalog: false, drifted: false and no components (it is neither
drifted nor compliant).

The exit code is 0 whether or not the host drifted; 2 for an unreadable
catalog or tree.

` + exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug),
		Example: `  hostforge firmware drift --catalog site.toml --inventory ./captures/r750 -o json
  hostforge firmware drift --catalog site.toml --catalog /opt/firmware --inventory ./captures/r750`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringArrayVar(&catalogs, "catalog", nil, "catalog file or firmware directory (repeatable, merged in order)")
	cmd.Flags().StringVar(&inventory, "inventory", "", "directory of a saved Redfish tree (holding redfish/v1/index.json)")
	_ = cmd.MarkFlagRequired("catalog")
	_ = cmd.MarkFlagRequired("inventory")
	logLevelFlag(cmd)
	out := outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := checkOutput(*out); err != nil {
			return err
		}
		cat, err := firmware.LoadCatalog(catalogs...)
		if err != nil {
			return fileErr("--catalog", err)
		}
		tree, err := firmware.ReadSavedTree(inventory)
		if err != nil {
			return fileErr("--inventory "+inventory, err)
		}
		for _, w := range tree.Warnings {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", w)
		}
		rep := firmware.Drift(cat, tree.Inventory)
		if *out == formatJSON {
			return writeJSON(cmd.OutOrStdout(), rep)
		}
		printDrift(cmd.OutOrStdout(), rep, tree.Inventory.Identity)
		return nil
	}
	return cmd
}

func printDrift(w io.Writer, r firmware.Report, id firmware.Identity) {
	fmt.Fprintf(w, "host: %s %s\n", id.Manufacturer, id.Model)
	if !r.InCatalog {
		fmt.Fprintf(w, "catalog: no entry for %s / %s\ndrifted: no\n", r.Vendor, r.Model)
		return
	}
	fmt.Fprintf(w, "catalog: %s / %s\n", r.Vendor, r.Model)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tSTATUS\tDESIRED\tREPORTED")
	for _, c := range r.Components {
		desired := "-"
		if c.Desired != nil {
			desired = *c.Desired
		}
		var rep []string
		for _, x := range c.Reported {
			rep = append(rep, fmt.Sprintf("%s=%q", x.ID, x.Version))
		}
		if len(rep) == 0 {
			rep = []string{"-"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Component, c.Status, desired, strings.Join(rep, " "))
	}
	_ = tw.Flush()
	if r.Drifted {
		fmt.Fprintln(w, "drifted: yes")
	} else {
		fmt.Fprintln(w, "drifted: no")
	}
}
