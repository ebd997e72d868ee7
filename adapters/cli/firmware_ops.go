package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
)

// The operator's commands of managed-host firmware updates, against the
// store and the Ironic instances the config file names. Every refusal
// (an unknown machine, an end before the start, a clear after the start)
// changes nothing and exits 2.

const firmwareOpsHelp = `It reads the config file's firmware: section (docs/config.md): the state
database the worker shares, and the Ironic instances whose nodes are the
managed hosts (a machine ID is its node's name). A request the state
refuses changes nothing and exits 2.`

// The -o json documents of the firmware operations that print no store
// record of their own.
type (
	// autoUpdateJSON is 'firmware auto-update': the machine's override,
	// null once cleared.
	autoUpdateJSON struct {
		MachineID  string `json:"machine_id"`
		AutoUpdate *bool  `json:"autoupdate"`
	}
	// windowsJSON is 'firmware start-updates': the window opened.
	windowsJSON struct {
		Machines []string  `json:"machines"`
		Start    time.Time `json:"start"`
		End      time.Time `json:"end"`
	}
	// windowsCancelledJSON is 'firmware start-updates --cancel'.
	windowsCancelledJSON struct {
		Machines  []string `json:"machines"`
		Cancelled bool     `json:"cancelled"`
	}
	// clearedJSON is 'firmware reprovision clear'.
	clearedJSON struct {
		MachineID string `json:"machine_id"`
		Cleared   bool   `json:"cleared"`
	}
	// cancelJSON is 'firmware cancel'.
	cancelJSON struct {
		MachineID   string            `json:"machine_id"`
		Substate    firmware.Substate `json:"substate"`
		CancelledBy string            `json:"cancelled_by"`
	}
	// overrideDeletedJSON is 'firmware config delete': the override removed.
	overrideDeletedJSON struct {
		firmware.Override
		Deleted bool `json:"deleted"`
	}
)

// fwOps is one operator command's opened systems.
type fwOps struct {
	fs  *wiring.FirmwareSystems
	op  *firmware.Operator
	out string
	log *slog.Logger
}

// fwOpsExitCodes are the exit codes of the firmware operations.
var fwOpsExitCodes = exitCodes(ExitOK, ExitUsage, ExitInfra, ExitBug, ExitCancelled)

// fwOpener opens one operator command's systems; the func it returns
// closes them.
type fwOpener func(cmd *cobra.Command) (*fwOps, func(), error)

// run opens the systems, runs op on them and closes them after: every
// firmware operation's body, so none repeats the open and the close.
func (open fwOpener) run(cmd *cobra.Command, op func(o *fwOps) error) error {
	o, done, err := open(cmd)
	if err != nil {
		return err
	}
	defer done()
	return op(o)
}

// onMachine is run for an operation on one machine: it reads --machine
// first, so a missing or repeated machine is refused before the config
// file is read.
func (open fwOpener) onMachine(cmd *cobra.Command, machines []string, op func(o *fwOps, machine string) error) error {
	machine, err := oneMachine(cmd, machines)
	if err != nil {
		return err
	}
	return open.run(cmd, func(o *fwOps) error { return op(o, machine) })
}

// firmwareFlags adds --config, -o and --log-level; open opens the systems.
func (a *app) firmwareFlags(cmd *cobra.Command) fwOpener {
	var config string
	configFlag(cmd, &config, "config file with the firmware: section (required)")
	out := outputFlag(cmd)
	logLevelFlag(cmd)
	return func(cmd *cobra.Command) (*fwOps, func(), error) {
		if err := checkOutput(*out); err != nil {
			return nil, nil, err
		}
		if config == "" {
			return nil, nil, inputErr("--config is required: the firmware: section names the state database and the Ironic instances")
		}
		log, cfg, err := a.loggerAndConfig(cmd, config)
		if err != nil {
			return nil, nil, err
		}
		fs, err := wiring.OpenFirmware(cmd.Context(), cfg, nil, log, a.secrets)
		if err != nil {
			return nil, nil, configRefused(err)
		}
		o := &fwOps{fs: fs, out: *out, log: log,
			op: &firmware.Operator{Store: fs.Store, Hosts: fs.Hosts, Clock: clock.Real{}, Settings: fs.Settings, Catalog: fs.Catalog, CheckCatalog: fs.CheckCatalog}}
		return o, func() { _ = fs.Close() }, nil
	}
}

// operatorName is who a firmware operation records as its initiator (a
// request) or canceller (an update): "operator", followed by $USER when
// it is set.
func (a *app) operatorName() string {
	who := "operator"
	if u := a.getenv("USER"); u != "" {
		who += " " + u
	}
	return who
}

// refused makes a refusal of the state a usage error (exit 2).
func refused(err error) error {
	if firmware.RequestRefused.Is(err) {
		return usageErr(err)
	}
	return err
}

func (o *fwOps) print(w io.Writer, v any, text func(io.Writer)) error {
	if o.out == formatJSON {
		return writeJSON(w, v)
	}
	text(w)
	return nil
}

func (a *app) firmwareOpsCmds() []*cobra.Command {
	return []*cobra.Command{a.fwAutoUpdateCmd(), a.fwStartUpdatesCmd(), a.fwReprovisionCmd(), a.fwResetCmd(), a.fwShowCmd(), a.fwApproveCmd(),
		a.fwConfigCmd(), a.fwHistoryCmd(), a.fwReportCmd(), a.fwCancelCmd(), a.fwRunCmd()}
}

func (a *app) fwAutoUpdateCmd() *cobra.Command {
	var machines []string
	var enable, disable, clear bool
	cmd := &cobra.Command{
		Use:   "auto-update --config FILE --machine ID --enable|--disable|--clear",
		Short: "Enable or disable automatic firmware updates of one machine, or clear its override",
		Long: `Set one machine's automatic update policy. --enable and --disable override the
site default (firmware.settings.autoupdate) and the legacy
host_disable_autoupdate list; --clear returns the machine to them.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware auto-update --config site.yaml --machine gpu-r1-u02 --disable
  hostforge firmware auto-update --config site.yaml --machine gpu-r1-u02 --clear -o json`,
		Args: cobra.NoArgs,
	}
	f := cmd.Flags()
	machineFlag(cmd, &machines, "machine ID (required)")
	f.BoolVar(&enable, "enable", false, "update this machine automatically")
	f.BoolVar(&disable, "disable", false, "never update this machine automatically")
	f.BoolVar(&clear, "clear", false, "remove the override: the site default applies")
	exclusive(cmd, "each sets the machine's automatic update policy (--clear returns it to the site default); give one", "enable", "disable", "clear")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		machine, err := oneMachine(cmd, machines)
		if err != nil {
			return err
		}
		if !enable && !disable && !clear {
			return inputErr("one of --enable, --disable or --clear is required")
		}
		return open.run(cmd, func(o *fwOps) error {
			var v *bool
			if enable || disable {
				v = &enable
			}
			if err := o.op.SetAutoUpdate(cmd.Context(), machine, v); err != nil {
				return refused(err)
			}
			res := autoUpdateJSON{machine, v}
			return o.print(cmd.OutOrStdout(), res, func(w io.Writer) {
				switch {
				case v == nil:
					fmt.Fprintf(w, "%s: autoupdate override cleared (the site default applies)\n", machine)
				case *v:
					fmt.Fprintf(w, "%s: autoupdate enabled\n", machine)
				default:
					fmt.Fprintf(w, "%s: autoupdate disabled\n", machine)
				}
			})
		})
	}
	return cmd
}

// Time layouts of --start and --end: an explicit offset, or local time.
const (
	layoutOffset = "2006-01-02T15:04:05-0700"
	layoutLocal  = "2006-01-02T15:04:05"
)

// parseWindowTime reads YYYY-MM-DDTHH:MM:SS+0000 (an explicit offset) or
// YYYY-MM-DDTHH:MM:SS (local time); RFC 3339 is accepted too.
func parseWindowTime(flag, s string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(layoutOffset, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(layoutLocal, s, loc); err == nil {
		return t, nil
	}
	return time.Time{}, inputErr("%s %q: want YYYY-MM-DDTHH:MM:SS+0000 (explicit offset) or YYYY-MM-DDTHH:MM:SS (local time)", flag, s)
}

func (a *app) fwStartUpdatesCmd() *cobra.Command {
	var machines []string
	var start, end string
	var cancel bool
	cmd := &cobra.Command{
		Use:   "start-updates --config FILE --machine ID... [--start T] [--end T] [--cancel]",
		Short: "Open (or cancel) the firmware update window of machines whose model needs an explicit start",
		Long: `Open the firmware update window of each machine: a model with
explicit_start_needed = true is only selected for an automatic update while
now is strictly inside its machine's window. The command opens a gate; it
creates no update request. Models without explicit_start_needed need no
window.

--start and --end take YYYY-MM-DDTHH:MM:SS+0000 (an explicit offset) or
YYYY-MM-DDTHH:MM:SS (local time). Without --start the window opens now;
without --end it lasts 24 hours. --cancel removes the machines' windows.
--machine is repeated for each machine. Every machine is checked before
any window changes.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware start-updates --config site.yaml --machine gpu-r1-u02 --machine gpu-r1-u03 --start 2026-07-01T02:00:00+0000 --end 2026-07-01T06:00:00+0000
  hostforge firmware start-updates --config site.yaml --machine gpu-r1-u02 --cancel -o json`,
	}
	f := cmd.Flags()
	machineFlag(cmd, &machines, "machine ID (required; repeatable)")
	// --machines took a list ("--machines a,b", or "--machines a b"): it
	// goes in the next release.
	a.deprecatedAlias(cmd, "machines", "machine", splitComma)
	f.StringVar(&start, "start", "", "window start (default now)")
	f.StringVar(&end, "end", "", "window end (default start + 24h)")
	f.BoolVar(&cancel, "cancel", false, "remove the machines' windows")
	open := a.firmwareFlags(cmd)
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 && !cmd.Flags().Changed("machines") {
			return usageErr(fmt.Errorf("unexpected arguments %q: give each machine as --machine ID", args))
		}
		return nil
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		all := append(append([]string(nil), machines...), args...)
		for _, m := range all {
			if strings.TrimSpace(m) == "" {
				return inputErr("--machine: an empty machine ID")
			}
		}
		if len(all) == 0 {
			return inputErr("--machine is required: the machines whose windows to open or cancel")
		}
		if cancel && (start != "" || end != "") {
			return inputErr("--cancel takes no --start or --end")
		}
		now := time.Now()
		from, to := now, time.Time{}
		var err error
		if start != "" {
			if from, err = parseWindowTime("--start", start, time.Local); err != nil {
				return err
			}
		}
		to = from.Add(24 * time.Hour)
		if end != "" {
			if to, err = parseWindowTime("--end", end, time.Local); err != nil {
				return err
			}
		}
		if !cancel && !to.After(from) {
			return usageErr(firmware.RequestRefused.New("the window ends (%s) before it starts (%s)", to.Format(time.RFC3339), from.Format(time.RFC3339)))
		}
		return open.run(cmd, func(o *fwOps) error {
			ctx := cmd.Context()
			if cancel {
				if err := o.op.CancelUpdates(ctx, all); err != nil {
					return refused(err)
				}
				res := windowsCancelledJSON{all, true}
				return o.print(cmd.OutOrStdout(), res, func(w io.Writer) {
					fmt.Fprintf(w, "firmware update windows removed: %s\n", strings.Join(all, ", "))
				})
			}
			if err := o.op.StartUpdates(ctx, all, from, to); err != nil {
				return refused(err)
			}
			res := windowsJSON{all, from.UTC(), to.UTC()}
			return o.print(cmd.OutOrStdout(), res, func(w io.Writer) {
				fmt.Fprintf(w, "firmware update window %s to %s opened for %s\n", from.Format(time.RFC3339), to.Format(time.RFC3339), strings.Join(all, ", "))
			})
		})
	}
	return cmd
}

func (a *app) fwReprovisionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reprovision",
		Short: "Host reprovisioning requests: set, clear, list, mark-manual-upgrade-complete",
		Long:  "Host reprovisioning requests: a direct firmware update request per machine.\n\n" + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware reprovision set --config site.yaml --machine gpu-r1-u02 --update-message CHG-4711
  hostforge firmware reprovision list --config site.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErr(fmt.Errorf("missing subcommand: set, clear, list or mark-manual-upgrade-complete"))
		},
	}
	cmd.AddCommand(a.fwReprovisionSetCmd(), a.fwReprovisionClearCmd(), a.fwReprovisionListCmd(), a.fwReprovisionManualCmd())
	return cmd
}

// reprovisionMachineFlag adds --machine to a reprovision command, and
// --id, its former spelling, for one more release.
func (a *app) reprovisionMachineFlag(cmd *cobra.Command, machines *[]string) {
	machineFlag(cmd, machines, "machine ID (required)")
	a.deprecatedAlias(cmd, "id", "machine", nil)
}

func (a *app) fwReprovisionSetCmd() *cobra.Command {
	var machines []string
	var message string
	cmd := &cobra.Command{
		Use:   "set --config FILE --machine ID --update-message TEXT",
		Short: "Request a host's firmware update directly (reprovisioning)",
		Long: `Create a host reprovisioning request: the machine's update workflow starts
(the worker picks the request up at its next pass) without drift selection
and outside the site's ceiling. An assigned host still waits for its
tenant's approval ('hostforge firmware approve') or the autoreboot period.
The workflow compares the inventory with the catalog and hands the host
back at once when nothing differs. Use it as part of an operator-controlled
maintenance procedure; --update-message is the ticket or maintenance
reference.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware reprovision set --config site.yaml --machine gpu-r1-u02 --update-message CHG-4711
  hostforge firmware reprovision set --config site.yaml --machine gpu-r1-u02 --update-message "maintenance 2026-07-01" -o json`,
		Args: cobra.NoArgs,
	}
	a.reprovisionMachineFlag(cmd, &machines)
	cmd.Flags().StringVar(&message, "update-message", "", "ticket or maintenance reference (required)")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		id, err := oneMachine(cmd, machines)
		if err != nil {
			return err
		}
		if strings.TrimSpace(message) == "" {
			return inputErr("--update-message is required: the ticket or maintenance reference")
		}
		return open.run(cmd, func(o *fwOps) error {
			r, err := o.op.RequestUpdate(cmd.Context(), id, a.operatorName(), message)
			if err != nil {
				return refused(err)
			}
			return o.print(cmd.OutOrStdout(), r, func(w io.Writer) {
				fmt.Fprintf(w, "%s: reprovisioning requested by %s (%s)\n", r.MachineID, r.Initiator, r.Message)
			})
		})
	}
	return cmd
}

func (a *app) fwReprovisionClearCmd() *cobra.Command {
	var machines []string
	cmd := &cobra.Command{
		Use:   "clear --config FILE --machine ID",
		Short: "Remove a reprovisioning request whose update has not started",
		Long:  "Remove a machine's reprovisioning request. A request whose update has started\ncannot be cleared (use 'hostforge firmware reset').\n\n" + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware reprovision clear --config site.yaml --machine gpu-r1-u02
  hostforge firmware reprovision clear --config site.yaml --machine gpu-r1-u02 -o json`,
		Args: cobra.NoArgs,
	}
	a.reprovisionMachineFlag(cmd, &machines)
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.onMachine(cmd, machines, func(o *fwOps, id string) error {
			if err := o.op.ClearRequest(cmd.Context(), id); err != nil {
				return refused(err)
			}
			res := clearedJSON{id, true}
			return o.print(cmd.OutOrStdout(), res, func(w io.Writer) { fmt.Fprintf(w, "%s: reprovisioning request cleared\n", id) })
		})
	}
	return cmd
}

func (a *app) fwReprovisionListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list --config FILE",
		Short: "List pending and active reprovisioning requests with their update's substate",
		Long:  "List every reprovisioning request, pending or active, with where its update is\n(substate, retry count, last failure) and whether it spent its retry budget.\n\n" + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware reprovision list --config site.yaml
  hostforge firmware reprovision list --config site.yaml -o json`,
		Args: cobra.NoArgs,
	}
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.run(cmd, func(o *fwOps) error {
			list, err := o.op.List(cmd.Context())
			if err != nil {
				return err
			}
			list = jsonList(list)
			return o.print(cmd.OutOrStdout(), list, func(w io.Writer) { printRequests(w, list) })
		})
	}
	return cmd
}

func printRequests(w io.Writer, list []firmware.RequestStatus) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MACHINE\tINITIATOR\tMESSAGE\tCREATED\tSUBSTATE\tTARGET\tRETRIES\tLAST FAILURE")
	for _, r := range list {
		sub, target, retries, fail := "waiting to start", "-", "-", "-"
		if u := r.Update; u != nil {
			sub, retries = string(u.Substate), fmt.Sprint(u.RetryCount)
			if u.Component != "" {
				target = fmt.Sprintf("%s %s (%s)", u.Component, u.Version, u.Route)
			}
			if u.Failure != nil {
				fail = u.Failure.Code
			}
			if r.Exhausted {
				sub += " (exhausted)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.MachineID, r.Initiator, orDash(r.Message), r.CreatedAt.Format(time.RFC3339), sub, target, retries, fail)
	}
	_ = tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (a *app) fwReprovisionManualCmd() *cobra.Command {
	var machines []string
	cmd := &cobra.Command{
		Use:   "mark-manual-upgrade-complete --config FILE --machine ID",
		Short: "Confirm the manual platform procedure of an MNNVL host is done",
		Long: `Confirm that the approved manual platform procedure of a host held in
WaitingForManualUpgrade (requires_manual_upgrade, an MNNVL-capable host) is
complete. The update then reads the inventory again and updates whatever
still differs from the catalog: this does not assert compliance.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware reprovision mark-manual-upgrade-complete --config site.yaml --machine gb200-r4-u10
  hostforge firmware reprovision mark-manual-upgrade-complete --config site.yaml --machine gb200-r4-u10 -o json`,
		Args: cobra.NoArgs,
	}
	a.reprovisionMachineFlag(cmd, &machines)
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.onMachine(cmd, machines, func(o *fwOps, id string) error {
			r, err := o.op.MarkManualUpgradeComplete(cmd.Context(), id)
			if err != nil {
				return refused(err)
			}
			return o.print(cmd.OutOrStdout(), r, func(w io.Writer) {
				fmt.Fprintf(w, "%s: manual upgrade marked complete at %s\n", id, r.ManualUpgradeCompletedAt.Format(time.RFC3339))
			})
		})
	}
	return cmd
}

func (a *app) fwResetCmd() *cobra.Command {
	var machines []string
	cmd := &cobra.Command{
		Use:   "reset --config FILE --machine ID",
		Short: "Send a host's update back to firmware checking with its retry count cleared",
		Long: `Reset a host's started update (reset-host-reprovisioning): it goes back to
CheckingFirmwareRepeat with its retry count, reset retries and upload retries
cleared. It neither repairs the platform nor changes the catalog: correct
the artifact, script, BMC, matcher or platform condition first. An update
that had spent its retry budget is started again by the worker at its next
pass. A local script interrupted by a restart is never resumed: check it no
longer runs before resetting.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware reset --config site.yaml --machine gpu-r1-u02
  hostforge firmware reset --config site.yaml --machine gpu-r1-u02 -o json`,
		Args: cobra.NoArgs,
	}
	machineFlag(cmd, &machines, "machine ID (required)")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.onMachine(cmd, machines, func(o *fwOps, machine string) error {
			u, err := o.op.Reset(cmd.Context(), machine)
			if err != nil {
				return refused(err)
			}
			return o.print(cmd.OutOrStdout(), u, func(w io.Writer) {
				fmt.Fprintf(w, "%s: update reset to %s (retry count 0)\n", machine, u.Substate)
			})
		})
	}
	return cmd
}

func (a *app) fwApproveCmd() *cobra.Command {
	var machines []string
	cmd := &cobra.Command{
		Use:   "approve --config FILE --machine ID",
		Short: "Apply updates on reboot: the tenant approves an assigned host's pending update",
		Long: `Approve an assigned host's pending reprovisioning request, as its tenant does
when rebooting the instance with "apply updates on reboot": the update
starts (the host is rebooted into its firmware update and handed back to
its instance after). Without approval an assigned host's request waits,
unless the site's instance_autoreboot_period is open.

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware approve --config site.yaml --machine gpu-r1-u02
  hostforge firmware approve --config site.yaml --machine gpu-r1-u02 -o json`,
		Args: cobra.NoArgs,
	}
	machineFlag(cmd, &machines, "machine ID (required)")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.onMachine(cmd, machines, func(o *fwOps, machine string) error {
			r, err := o.op.Approve(cmd.Context(), machine)
			if err != nil {
				return refused(err)
			}
			return o.print(cmd.OutOrStdout(), r, func(w io.Writer) {
				fmt.Fprintf(w, "%s: updates approved at %s\n", machine, r.ApprovedAt.Format(time.RFC3339))
			})
		})
	}
	return cmd
}

func effectiveCatalog(ctx context.Context, fs *wiring.FirmwareSystems) (*firmware.Catalog, error) {
	ovs, err := fs.Store.Overrides(ctx)
	if err != nil {
		return nil, err
	}
	return fs.Catalog.Current().WithOverrides(ovs)
}

func printCatalog(w io.Writer, models []*firmware.Model) {
	for i, m := range models {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s / %s", m.Vendor, m.Model)
		if m.ExplicitStartNeeded {
			fmt.Fprint(w, " (explicit start needed)")
		}
		fmt.Fprintf(w, "\nordering: %v\n", m.EffectiveOrdering())
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "COMPONENT\tMATCHER\tVERSION\tDEFAULT\tINSTALL")
		for _, c := range m.EffectiveOrdering() {
			comp := m.Components[c]
			if comp == nil {
				continue
			}
			for _, e := range comp.KnownFirmware {
				def := ""
				if e.Default {
					def = "yes"
				}
				how := fmt.Sprintf("%d artifact(s)", len(e.Artifacts))
				if e.Script != "" {
					how = "script " + e.Script
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c, comp.CurrentVersionReportedAs, e.Version, def, how)
			}
		}
		_ = tw.Flush()
	}
}
