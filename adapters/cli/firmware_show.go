package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/firmware"
)

// catalogShow is 'hostforge firmware show -o json': what is in force.
type catalogShow struct {
	// Catalog is the files in force (and why changed ones were refused).
	Catalog   firmware.CatalogStatus `json:"catalog"`
	Overrides []firmware.Override    `json:"overrides"`
	// ArtifactCache is where URL artifacts are downloaded ("" without a
	// cache); ArtifactCacheDefault says it is the default beside the
	// SQLite state database.
	ArtifactCache        string            `json:"artifact_cache"`
	ArtifactCacheDefault bool              `json:"artifact_cache_default"`
	Models               []*firmware.Model `json:"models"`
}

// machineShow is 'hostforge firmware show --machine ID -o json': what was
// read of one host, and where its update is.
type machineShow struct {
	MachineID string `json:"machine_id"`
	// Host is the managed host as the Ironic node says (state, MNNVL and
	// where it was read from).
	Host firmware.Host `json:"host"`
	// RequiresManualUpgrade is the site's setting; ManualGate says the
	// update of this host waits for the manual platform procedure.
	RequiresManualUpgrade bool `json:"requires_manual_upgrade"`
	ManualGate            bool `json:"manual_gate"`
	// Observed is the last inventory reading; Drift its comparison with
	// the effective catalog (null before the first reading).
	Observed *firmware.Observed   `json:"observed"`
	Drift    *firmware.Report     `json:"drift"`
	Request  *firmware.Request    `json:"request"`
	Update   *firmware.HostUpdate `json:"update"`
}

func (a *app) fwShowCmd() *cobra.Command {
	var machines []string
	cmd := &cobra.Command{
		Use:   "show --config FILE [--machine ID]",
		Short: "Show the catalog in force (its files, the runtime overrides, the artifact cache), or what was read of one machine",
		Long: `Print the effective host firmware catalog: which files of firmware.catalog are
in force (a changed file is read again within one pass interval; one that
does not load leaves the last good catalog in force, and the error is shown
here), the runtime overrides of the state database on top, where URL
artifacts are downloaded (the configured artifact_cache, or the default
beside a SQLite state database), and per model: vendor, model, ordering,
explicit_start_needed, host_profile and each component's matcher and known
firmware (the default marked).

With --machine, print what was read of one managed host instead: its Ironic
node's state and whether it is MNNVL capable — and which trait, capability or
property said so (the manual gate of requires_manual_upgrade applies to it) —
its last firmware inventory reading and its drift, its request and update.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware show --config site.yaml -o json
  hostforge firmware show --config site.yaml --machine gb200-r4-u10`,
		Args: cobra.NoArgs,
	}
	machineFlag(cmd, &machines, "show one machine instead of the catalog")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var machine string
		if len(machines) > 0 {
			m, err := oneMachine(cmd, machines)
			if err != nil {
				return err
			}
			machine = m
		}
		return open.run(cmd, func(o *fwOps) error {
			ctx := cmd.Context()
			cat, ovs, err := o.op.EffectiveCatalog(ctx)
			if err != nil {
				return err
			}
			if machine != "" {
				h, ok, err := o.fs.Hosts.Get(ctx, machine)
				if err != nil {
					return err
				}
				if !ok {
					return usageErr(firmware.RequestRefused.New("machine %s is not a managed host", machine))
				}
				ms := machineShow{MachineID: machine, Host: h, RequiresManualUpgrade: o.fs.Settings.RequiresManualUpgrade}
				ms.ManualGate = ms.RequiresManualUpgrade && h.MNNVL
				if ob, ok, err := o.fs.Store.Observed(ctx, machine); err != nil {
					return err
				} else if ok {
					ms.Observed = &ob
					d := driftOf(cat, ob)
					ms.Drift = &d
				}
				if r, ok, err := o.fs.Store.Request(ctx, machine); err != nil {
					return err
				} else if ok {
					ms.Request = &r
				}
				if u, ok, err := o.fs.Store.Update(ctx, machine); err != nil {
					return err
				} else if ok {
					ms.Update = &u
				}
				return o.print(cmd.OutOrStdout(), ms, func(w io.Writer) { printMachine(w, ms) })
			}
			models := cat.Models()
			models = jsonList(models)
			ovs = jsonList(ovs)
			cs := catalogShow{Catalog: o.fs.Catalog.Status(), Overrides: ovs, ArtifactCache: o.fs.ArtifactCache, ArtifactCacheDefault: o.fs.ArtifactCacheDefault, Models: models}
			return o.print(cmd.OutOrStdout(), cs, func(w io.Writer) { printCatalogShow(w, cs) })
		})
	}
	return cmd
}

// driftOf compares a stored reading with the catalog.
func driftOf(cat *firmware.Catalog, ob firmware.Observed) firmware.Report {
	m, ok := cat.ForHost(ob.Identity)
	if !ok {
		return firmware.Drift(cat, firmware.Inventory{Identity: ob.Identity})
	}
	r := firmware.Report{Vendor: m.Vendor, Model: m.Model, InCatalog: true, Components: m.Evaluate(ob.Reported)}
	for _, c := range r.Components {
		r.Drifted = r.Drifted || c.Status == firmware.StatusDrifted
	}
	return r
}

func printCatalogShow(w io.Writer, cs catalogShow) {
	fmt.Fprintln(w, "catalog files in force:")
	for _, f := range cs.Catalog.Files {
		fmt.Fprintf(w, "  %s (modified %s)\n", f.Path, f.Modified.Format(time.RFC3339))
	}
	if cs.Catalog.Error != "" {
		fmt.Fprintf(w, "the files as they are now were refused (the last good catalog stays in force): %s\n", cs.Catalog.Error)
	}
	if len(cs.Overrides) == 0 {
		fmt.Fprintln(w, "runtime overrides: none")
	} else {
		fmt.Fprintln(w, "runtime overrides:")
		for _, o := range cs.Overrides {
			fmt.Fprintf(w, "  %s / %s %s %s (set %s)\n", o.Vendor, o.Model, o.Component, o.Entry.Version, o.UpdatedAt.Format(time.RFC3339))
		}
	}
	switch {
	case cs.ArtifactCache == "":
		fmt.Fprintln(w, "artifact cache: none (URL artifacts are refused)")
	case cs.ArtifactCacheDefault:
		fmt.Fprintf(w, "artifact cache: %s (the default, beside the state database)\n", cs.ArtifactCache)
	default:
		fmt.Fprintf(w, "artifact cache: %s\n", cs.ArtifactCache)
	}
	fmt.Fprintln(w)
	printCatalog(w, cs.Models)
}

func printMachine(w io.Writer, ms machineShow) {
	h := ms.Host
	fmt.Fprintf(w, "machine: %s\nstate: %s", ms.MachineID, h.State)
	if h.InMaintenance {
		fmt.Fprint(w, " (in maintenance)")
	}
	if h.UpdateReport {
		fmt.Fprint(w, " (firmware update report)")
	}
	fmt.Fprintln(w)
	if h.MNNVL {
		fmt.Fprintf(w, "MNNVL capable: yes (from %s)\n", h.MNNVLFrom)
	} else {
		fmt.Fprintln(w, "MNNVL capable: no (no trait CUSTOM_MNNVL, capability or property mnnvl)")
	}
	fmt.Fprintf(w, "manual gate: %v (requires_manual_upgrade %v)\n", ms.ManualGate, ms.RequiresManualUpgrade)
	if ms.Observed == nil {
		fmt.Fprintln(w, "inventory: never read")
	} else {
		fmt.Fprintf(w, "inventory: %s %s, read %s\n", ms.Observed.Identity.Manufacturer, ms.Observed.Identity.Model, ms.Observed.At.Format(time.RFC3339))
		if d := ms.Drift; d != nil && d.InCatalog {
			var parts []string
			for _, c := range d.Components {
				parts = append(parts, fmt.Sprintf("%s %s", c.Component, c.Status))
			}
			fmt.Fprintf(w, "catalog: %s / %s: %s\n", d.Vendor, d.Model, strings.Join(parts, ", "))
		} else {
			fmt.Fprintln(w, "catalog: no entry for its model")
		}
	}
	switch {
	case ms.Update != nil:
		fmt.Fprintf(w, "update: %s (retry %d)\n", ms.Update.Substate, ms.Update.RetryCount)
	case ms.Request != nil:
		fmt.Fprintf(w, "update: requested by %s, not started\n", ms.Request.Initiator)
	default:
		fmt.Fprintln(w, "update: none")
	}
}
