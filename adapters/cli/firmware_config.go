package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/firmware"
)

// The Host Firmware Config API on the command line: runtime overrides of
// the catalog, kept in the state database, read by every worker's next
// pass and step.

// catalogRefused makes a catalog or request refusal a usage error (exit 2).
func catalogRefused(err error) error {
	if firmware.CatalogInvalid.Is(err) || firmware.RequestRefused.Is(err) || ConfigInvalid.Is(err) {
		return usageErr(err)
	}
	return err
}

func (a *app) fwConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Runtime catalog overrides (the Host Firmware Config API): set, delete, list",
		Long: `Runtime overrides of the host firmware catalog, kept in the state database: the
last merge stage, on top of the catalog files (a version is upserted by
vendor, model, component and version; a default clears the component's other
defaults; a component new to the model is added to the end of its ordering).
Every worker's next pass and step uses them; nothing restarts.

A change is checked against the catalog files and the other overrides before
it is written, and written by compare-and-set on what was read: an entry that
would not parse or apply (an unknown component, a new component without a
matcher, a URL without its sha256, a URL artifact on a site without an
artifact cache) is refused with exit 2 and changes nothing.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware config set --config site.yaml --vendor Dell --model "PowerEdge R750" --component bmc --version 7.20.10.00 --default --file /opt/fw/idrac-7.20.exe,sha256=<hex>
  hostforge firmware config list --config site.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: set, delete or list"))
		},
	}
	cmd.AddCommand(a.fwConfigSetCmd(), a.fwConfigDeleteCmd(), a.fwConfigListCmd())
	return cmd
}

// overrideKeyFlags are the flags naming one override.
type overrideKeyFlags struct{ vendor, model, component, version string }

func (k *overrideKeyFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&k.vendor, "vendor", "", `vendor as the catalog names it ("Dell", "Lenovo", "Nvidia", ...; any spelling of the family) (required)`)
	f.StringVar(&k.model, "model", "", "model, as the host reports it (compared lower-cased) (required)")
	f.StringVar(&k.component, "component", "", "component type: "+strings.Join(componentNames(), ", ")+" (required)")
	f.StringVar(&k.version, "version", "", "the version (exactly as the BMC reports it) (required)")
}

func componentNames() []string {
	out := make([]string, len(firmware.ComponentTypes))
	for i, c := range firmware.ComponentTypes {
		out[i] = string(c)
	}
	return out
}

func (k *overrideKeyFlags) check() (firmware.ComponentType, error) {
	for flag, v := range map[string]string{"--vendor": k.vendor, "--model": k.model, "--component": k.component, "--version": k.version} {
		if strings.TrimSpace(v) == "" {
			return "", inputErr("%s is required", flag)
		}
	}
	c, ok := firmware.ParseComponentType(k.component)
	if !ok {
		return "", inputErr("--component %q: want one of %s", k.component, strings.Join(componentNames(), ", "))
	}
	return c, nil
}

// parseFileFlag reads --file LOCATION[,sha256=HEX][,allow_http]: a local
// file name or a URL, its digest, and for a plain-http URL its opt-in.
func parseFileFlag(s string) (firmware.Artifact, error) {
	parts := strings.Split(s, ",")
	loc := strings.TrimSpace(parts[0])
	if loc == "" {
		return firmware.Artifact{}, inputErr("--file %q: no file name or URL", s)
	}
	var a firmware.Artifact
	if strings.Contains(loc, "://") {
		a.URL = loc
	} else {
		a.Filename = loc
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch k {
		case "sha256":
			a.SHA256 = v
		case "allow_http":
			a.AllowHTTP = v == "" || v == "true"
		default:
			return firmware.Artifact{}, inputErr("--file %q: unknown option %q (want sha256=HEX or allow_http)", s, k)
		}
	}
	return a, nil
}

func (a *app) fwConfigSetCmd() *cobra.Command {
	var key overrideKeyFlags
	var def, installOnly, preResets bool
	var files []string
	var matcher, script string
	var drains int
	cmd := &cobra.Command{
		Use:   "set --config FILE --vendor V --model M --component C --version X [--default] [--file LOCATION[,sha256=HEX][,allow_http]...]",
		Short: "Add or replace one version of one component of one model (a runtime override)",
		Long: `Add or replace a known firmware version of a model's component, as a runtime
override of the catalog. --file gives the artifacts to install, in order: a
local file name (on every worker) or an https URL, which needs its sha256
(,sha256=HEX; a plain http URL also ,allow_http). --matcher gives the
component's current_version_reported_as where the catalog and the built-in
table have none. --script, --power-drains-needed, --install-only-specified
and --pre-update-resets are the entry's fields of those names.

The output is the override as stored.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware config set --config site.yaml --vendor Dell --model "PowerEdge R750" --component bmc --version 7.20.10.00 --default --file /opt/fw/idrac-7.20.exe
  hostforge firmware config set --config site.yaml --vendor Nvidia --model DGXH100 --component cx7 --version 28.47.2682 --default --file https://fw.example.net/cx7.bin,sha256=<hex> --power-drains-needed 1 -o json`,
		Args: cobra.NoArgs,
	}
	key.add(cmd)
	f := cmd.Flags()
	f.BoolVar(&def, "default", false, "make this version the component's default (clears the other defaults)")
	f.StringArrayVar(&files, "file", nil, "an artifact: LOCATION[,sha256=HEX][,allow_http] (repeatable, in order)")
	f.StringVar(&matcher, "matcher", "", "the component's current_version_reported_as (a regular expression over inventory Ids)")
	f.StringVar(&script, "script", "", "a local script that installs and activates the version itself")
	f.IntVar(&drains, "power-drains-needed", 0, "AC power drains that activate the firmware")
	f.BoolVar(&installOnly, "install-only-specified", false, "push the update to this component's inventory members only")
	f.BoolVar(&preResets, "pre-update-resets", false, "power off, reset the BMC and power on before the first upload")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := key.check()
		if err != nil {
			return err
		}
		if drains < 0 {
			return inputErr("--power-drains-needed %d: want 0 or more", drains)
		}
		e := firmware.Entry{Version: strings.TrimSpace(key.version), Default: def, Script: script, PowerDrainsNeeded: drains,
			InstallOnlySpecified: installOnly, PreUpdateResets: preResets}
		for _, s := range files {
			art, err := parseFileFlag(s)
			if err != nil {
				return err
			}
			e.Artifacts = append(e.Artifacts, art)
		}
		return open.run(cmd, func(o *fwOps) error {
			ov, err := o.op.SetOverride(cmd.Context(), firmware.Override{Vendor: strings.TrimSpace(key.vendor), Model: strings.TrimSpace(key.model),
				Component: c, Matcher: matcher, Entry: e})
			if err != nil {
				return catalogRefused(err)
			}
			return o.print(cmd.OutOrStdout(), ov, func(w io.Writer) {
				def := ""
				if ov.Entry.Default {
					def = " (default)"
				}
				fmt.Fprintf(w, "%s / %s %s %s%s set\n", ov.Vendor, ov.Model, ov.Component, ov.Entry.Version, def)
			})
		})
	}
	return cmd
}

func (a *app) fwConfigDeleteCmd() *cobra.Command {
	var key overrideKeyFlags
	cmd := &cobra.Command{
		Use:   "delete --config FILE --vendor V --model M --component C --version X",
		Short: "Remove one runtime override",
		Long: `Remove the runtime override of one version of one component of one model:
the catalog files (and the other overrides) decide that version again. A
removal that would leave the catalog unable to apply (another override
relying on this one's matcher) is refused with exit 2; so is an override that
does not exist.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware config delete --config site.yaml --vendor Dell --model "PowerEdge R750" --component bmc --version 7.20.10.00
  hostforge firmware config delete --config site.yaml --vendor Nvidia --model DGXH100 --component cx7 --version 28.47.2682 -o json`,
		Args: cobra.NoArgs,
	}
	key.add(cmd)
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := key.check()
		if err != nil {
			return err
		}
		return open.run(cmd, func(o *fwOps) error {
			ov, err := o.op.DeleteOverride(cmd.Context(), key.vendor, key.model, c, strings.TrimSpace(key.version))
			if err != nil {
				return catalogRefused(err)
			}
			res := overrideDeletedJSON{ov, true}
			return o.print(cmd.OutOrStdout(), res, func(w io.Writer) {
				fmt.Fprintf(w, "%s / %s %s %s deleted\n", ov.Vendor, ov.Model, ov.Component, ov.Entry.Version)
			})
		})
	}
	return cmd
}

func (a *app) fwConfigListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list --config FILE",
		Short: "List the runtime overrides, oldest first",
		Long:  "List the runtime overrides of the catalog, in the order they apply (oldest first).\n\n" + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware config list --config site.yaml
  hostforge firmware config list --config site.yaml -o json`,
		Args: cobra.NoArgs,
	}
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.run(cmd, func(o *fwOps) error {
			ovs, err := o.fs.Store.Overrides(cmd.Context())
			if err != nil {
				return err
			}
			ovs = jsonList(ovs)
			return o.print(cmd.OutOrStdout(), ovs, func(w io.Writer) { printOverrides(w, ovs) })
		})
	}
	return cmd
}

func printOverrides(w io.Writer, ovs []firmware.Override) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VENDOR\tMODEL\tCOMPONENT\tVERSION\tDEFAULT\tINSTALL\tUPDATED")
	for _, o := range ovs {
		def := ""
		if o.Entry.Default {
			def = "yes"
		}
		how := strconv.Itoa(len(o.Entry.Artifacts)) + " artifact(s)"
		if o.Entry.Script != "" {
			how = "script " + o.Entry.Script
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.Vendor, o.Model, o.Component, o.Entry.Version, def, how, o.UpdatedAt.Format(time.RFC3339))
	}
	_ = tw.Flush()
}
