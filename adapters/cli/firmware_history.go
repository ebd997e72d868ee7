package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge/firmware"
)

func (a *app) fwHistoryCmd() *cobra.Command {
	var machines []string
	cmd := &cobra.Command{
		Use:   "history --config FILE --machine ID",
		Short: "List a host's firmware updates: when, how they ended, their substates, the components they changed",
		Long: `List one host's firmware updates, oldest first: the finished ones the state
database keeps (firmware.settings.history_retention, 90 days by default),
then the one under way. Each has started_at and finished_at (null while it
has not), outcome (done, cancelled; exhausted, in_progress or waiting for the
one under way), substates ([{substate, at}], the last 64), components (the
ones it brought to their target: [{component, from, to}]) and failure (its
last recorded failure, or null); a cancelled update names who cancelled it
(cancelled_by).

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware history --config site.yaml --machine gpu-r1-u02
  hostforge firmware history --config site.yaml --machine gpu-r1-u02 -o json`,
		Args: cobra.NoArgs,
	}
	machineFlag(cmd, &machines, "machine ID (required)")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.onMachine(cmd, machines, func(o *fwOps, machine string) error {
			hs, err := o.op.History(cmd.Context(), machine)
			if err != nil {
				return err
			}
			return o.print(cmd.OutOrStdout(), hs, func(w io.Writer) { printHistory(w, machine, hs) })
		})
	}
	return cmd
}

func printHistory(w io.Writer, machine string, hs []firmware.HistoryEntry) {
	if len(hs) == 0 {
		fmt.Fprintf(w, "%s: no firmware update on record\n", machine)
		return
	}
	at := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Format(time.RFC3339)
	}
	for i, h := range hs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "started %s, finished %s: %s", at(h.StartedAt), at(h.FinishedAt), h.Outcome)
		if h.CancelledBy != "" {
			fmt.Fprintf(w, " (cancelled by %s)", h.CancelledBy)
		}
		fmt.Fprintln(w)
		for _, c := range h.Components {
			fmt.Fprintf(w, "  %s: %s → %s\n", c.Component, orDash(c.From), c.To)
		}
		if h.Failure != nil {
			fmt.Fprintf(w, "  last failure: %s %s\n", h.Failure.Code, firstLineOf(h.Failure.Message))
		}
		var subs []string
		for _, s := range h.Substates {
			subs = append(subs, string(s.Substate))
		}
		fmt.Fprintf(w, "  substates: %s\n", strings.Join(subs, " → "))
	}
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (a *app) fwReportCmd() *cobra.Command {
	var unmatched bool
	cmd := &cobra.Command{
		Use:   "report --config FILE [--unmatched]",
		Short: "The fleet's firmware compliance per model; --unmatched lists the hosts with unmatched components",
		Long: `Report the fleet's compliance with the effective catalog, per model: hosts,
compliant, drifted, unmatched (a component whose matcher finds no installed
inventory entry, nothing drifted), not_in_catalog, updating (a request under
way) and exhausted (an update that spent its retry budget). Each host counts
once, under the first of exhausted, updating, not_in_catalog, drifted,
unmatched, compliant. It reads the managed hosts, the inventory readings the
worker stored (a host never read is counted in hosts only, under vendor and
model "") and the update records; nothing is contacted but Ironic.

With --unmatched, list the hosts with unmatched components instead:
[{machine_id, vendor, model, components}].

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware report --config site.yaml -o json
  hostforge firmware report --config site.yaml --unmatched`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&unmatched, "unmatched", false, "list the hosts with unmatched components")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.run(cmd, func(o *fwOps) error {
			lines, un, err := o.op.Report(cmd.Context())
			if err != nil {
				return err
			}
			if unmatched {
				un = jsonList(un)
				return o.print(cmd.OutOrStdout(), un, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "MACHINE\tVENDOR\tMODEL\tUNMATCHED")
					for _, u := range un {
						var cs []string
						for _, c := range u.Components {
							cs = append(cs, string(c))
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.MachineID, u.Vendor, u.Model, strings.Join(cs, ", "))
					}
					_ = tw.Flush()
				})
			}
			lines = jsonList(lines)
			return o.print(cmd.OutOrStdout(), lines, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "VENDOR\tMODEL\tHOSTS\tCOMPLIANT\tDRIFTED\tUNMATCHED\tNOT IN CATALOG\tUPDATING\tEXHAUSTED")
				for _, l := range lines {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", orDash(l.Vendor), orDash(l.Model), l.Hosts, l.Compliant, l.Drifted, l.Unmatched, l.NotInCatalog, l.Updating, l.Exhausted)
				}
				_ = tw.Flush()
			})
		})
	}
	return cmd
}

func (a *app) fwCancelCmd() *cobra.Command {
	var machines []string
	cmd := &cobra.Command{
		Use:   "cancel --config FILE --machine ID",
		Short: "Stop a host's started or exhausted update at its next step boundary and hand the host back",
		Long: `Cancel a host's firmware update, started or exhausted. It stops at the next
step boundary: nothing already sent is cut — a push being sent, the BMC's
task of a push, an agent run, a reset under way are waited out — and then the
host is handed back as the update found it (platform lockdown as it was,
powered on if it was, out of the update's maintenance when it is safe), with
firmware already activated left in place and firmware staged but not
activated left staged. The update is kept in the history as cancelled, with
who cancelled it (the operator, $USER). An exhausted update's workflow is run
again by the worker to hand the host back. A request not picked up yet is
cleared instead ('reprovision clear').

` + firmwareOpsHelp + "\n\n" + fwOpsExitCodes,
		Example: `  hostforge firmware cancel --config site.yaml --machine gpu-r1-u02
  hostforge firmware cancel --config site.yaml --machine gpu-r1-u02 -o json`,
		Args: cobra.NoArgs,
	}
	machineFlag(cmd, &machines, "machine ID (required)")
	open := a.firmwareFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return open.onMachine(cmd, machines, func(o *fwOps, machine string) error {
			u, err := o.op.Cancel(cmd.Context(), machine, a.operatorName())
			if err != nil {
				return refused(err)
			}
			res := cancelJSON{machine, u.Substate, u.Cancel.By}
			return o.print(cmd.OutOrStdout(), res, func(w io.Writer) {
				fmt.Fprintf(w, "%s: update cancelled by %s; it stops at its next step boundary (now %s)\n", machine, u.Cancel.By, u.Substate)
			})
		})
	}
	return cmd
}
