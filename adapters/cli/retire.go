package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/retirement"
)

// retirePhases names the retirement's steps for the progress lines.
var retirePhases = map[string]string{
	retirement.StepRead: "gate", retirement.StepIronicGate: "gate", retirement.StepErase: "erase",
	retirement.StepRemoveNode: "ironic", retirement.StepDHCP: "dhcp", retirement.StepBMC: "bmc",
	retirement.StepLedger: "ledger", retirement.StepNetBox: "netbox", retirement.StepAnnounced: "extensions",
}

type retireOpts struct {
	config                string
	noErase, force        bool
	maxAttempts, parallel int
	output                *string
	temporal              temporalFlags
}

func (o *retireOpts) params() retirement.Params {
	return retirement.Params{NoErase: o.noErase, Force: o.force, MaxAttemptsOverride: o.maxAttempts}
}

// retireResult is one host's retirement.
type retireResult struct {
	Result  retirement.Result
	Failure *hostforge.Failure
	Elapsed time.Duration
	// WorkflowID is the Temporal workflow of the run, "" for an inline run.
	WorkflowID string
}

// retireJSON is one host's line in -o json.
type retireJSON struct {
	Device         string                   `json:"device"`
	Retired        bool                     `json:"retired"`
	Run            string                   `json:"run,omitempty"`
	Resumed        bool                     `json:"resumed,omitempty"`
	Instance       string                   `json:"instance,omitempty"`
	Node           string                   `json:"node,omitempty"`
	Erase          string                   `json:"erase,omitempty"`
	NoErase        bool                     `json:"no_erase,omitempty"`
	KeptNode       bool                     `json:"kept_node,omitempty"`
	Archived       string                   `json:"archived,omitempty"`
	ArchivedUntil  *time.Time               `json:"archived_until,omitempty"`
	ElapsedSeconds float64                  `json:"elapsed_seconds"`
	Phases         []retirement.PhaseRecord `json:"phases"`
	Deliveries     []retirement.Delivery    `json:"deliveries,omitempty"`
	Failure        *failureJSON             `json:"failure,omitempty"`
	ExitCode       int                      `json:"exit_code"`
	WorkflowID     string                   `json:"workflow_id,omitempty"`
}

func (a *app) retireCmd() *cobra.Command {
	var o retireOpts
	cmd := &cobra.Command{
		Use:   "retire DEVICE...",
		Short: "Retire devices: erase, out of Ironic, DHCP, the BMC's monitoring and the ledger, offline in NetBox",
		Long: `Run the retirement workflow in-process for each device, against the real
systems a config file names (--config, docs/config.md). A device NetBox has
as decommissioning is erased as an Ironic manual clean (retire.erase:
metadata by default, or full), its ports, portgroups and node deleted (or
the node kept manageable in maintenance with retire.keep_node), its DHCP
reservation and BMC monitoring user removed, its BMC admin credential
archived in the vault (retire.archive_retention), its ledger records
cleared, and the NetBox device set offline with a journal entry naming the
run; with extensions, serverDecommissioned and serverDeleteDNS are fired.

A node that holds an instance is refused before anything is written
(RETIRE_NODE_IN_USE, owner TENANT, exit 8). A device already offline is
retired only with --force, unless its journal names a retirement: the rerun
resumes that run, and a retired host's rerun writes nothing. --no-erase
skips the erase (recorded in the result and the journal).

With --temporal, each device is submitted as its own workflow
(retire/<device>) for 'hostforge worker' to run, and followed from its
history. Progress, summary and -o json (one object per host) are enroll's.

` + exitCodes(ExitOK, ExitUsage, ExitOnSite, ExitInfra, ExitFleetManager, ExitBug, ExitCancelled, ExitTenant, exitSeveralHosts),
		Example: `  hostforge retire --config /etc/hostforge/lab1.yaml cpu-r1-u10
  hostforge retire --config lab1.yaml --no-erase -o json cpu-r1-u10 cpu-r1-u11
  hostforge retire --config lab1.yaml --temporal 127.0.0.1:7233 gpu-r1-u02`,
	}
	f := cmd.Flags()
	configFlag(cmd, &o.config, "config file naming the real systems (docs/config.md)")
	f.BoolVar(&o.noErase, "no-erase", false, "skip the erase (recorded in the result and NetBox's journal)")
	f.BoolVar(&o.force, "force", false, "retire a device NetBox has offline although no retirement's journal entry says why")
	f.IntVar(&o.maxAttempts, "max-attempts", 0, "attempt budget for retryable failures, replacing the site's (1 fails fast; 0 keeps the site's)")
	f.IntVar(&o.parallel, "parallel", 1, "number of devices retired at once (local runs)")
	o.temporal.add(cmd, "submit to this Temporal frontend (host:port) for 'hostforge worker' to run, instead of running in-process")
	logLevelFlag(cmd)
	o.output = outputFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*o.output); err != nil {
			return err
		}
		switch {
		case o.parallel < 1:
			return inputErr("--parallel %d: want 1 or more", o.parallel)
		case o.maxAttempts < 0:
			return inputErr("--max-attempts %d: want 1 or more (0 keeps the site's budget)", o.maxAttempts)
		case len(args) == 0:
			return usageErr(fmt.Errorf("name at least one DEVICE to retire"))
		case o.config == "":
			return inputErr("--config is required: the site, its systems and its retire settings come from the config file")
		}
		if dup := duplicate(args); dup != "" {
			return inputErr("device %s is named twice", dup)
		}
		if o.temporal.address != "" {
			return a.retireTemporal(cmd, o, args)
		}
		log, cfg, err := a.loggerAndConfig(cmd, o.config)
		if err != nil {
			return err
		}
		ws, err := a.openWiring(cmd.Context(), cfg, log)
		if err != nil {
			return err
		}
		defer ws.Close()
		run, err := localRetirement(ws)
		if err != nil {
			return err
		}
		var prog *progress
		if *o.output == formatText {
			prog = a.runProgress(cmd.OutOrStdout(), args, time.Now)
		}
		results := retireAll(cmd.Context(), ws, run, args, o.params(), o.parallel, clock.Real{}, log, prog)
		a.endProgress(prog)
		return printRetire(cmd.OutOrStdout(), *o.output, args, results)
	}
	return cmd
}

// retireRunner runs one device's retirement inline.
type retireRunner struct {
	steps flow.Steps
	wf    retirement.Workflow
}

// localRetirement binds the retirement to the wired systems: its steps and,
// with extensions, the dispatch's on one runtime, so the events are part of
// the run.
func localRetirement(ws *wiring.Systems) (retireRunner, error) {
	rx := ws.Retirement()
	if rx == nil {
		return retireRunner{}, retirement.NotWired.New("the wiring has no retirement executor")
	}
	r := retireRunner{steps: rx}
	if ws.Extensions != nil {
		merged, err := flow.Merge(rx, ws.Extensions)
		if err != nil {
			return retireRunner{}, err
		}
		r.steps, r.wf.Announce = merged, wiring.AnnounceRetirement
	}
	return r, nil
}

// retireAll retires the devices, parallel at a time, in the order given.
func retireAll(ctx context.Context, ws *wiring.Systems, run retireRunner, devices []string, p retirement.Params, parallel int, clk clock.Clock, log *slog.Logger, prog *progress) []retireResult {
	results := make([]retireResult, len(devices))
	inParallel(len(devices), parallel, func(i int) {
		results[i] = retireOne(ctx, ws, run, devices[i], p, clk, log, prog)
	})
	return results
}

func retireOne(ctx context.Context, ws *wiring.Systems, run retireRunner, device string, p retirement.Params, clk clock.Clock, log *slog.Logger, prog *progress) retireResult {
	start := clk.Now()
	if prog != nil {
		prog.begin(device, start)
	}
	r := retireResult{Result: retirement.Result{Device: device}}
	req, err := ws.RetireRequest(ctx, device, wiring.NewRunID(), p)
	if err == nil {
		rt := &flow.Local{Steps: run.steps, Clock: clk, Log: log, Subject: device, SubjectKey: "device"}
		if prog != nil {
			rt.OnEvent = prog.event
		}
		r.Result, err = run.wf.Run(ctx, rt, req)
	}
	if err != nil {
		_, r.Failure, _ = hostforge.Classify(err)
		r.Result.Failure = r.Failure
	}
	r.Elapsed = clk.Now().Sub(start)
	if prog != nil {
		prog.done(device, r.Elapsed, "retired (run "+r.Result.Run+")", r.Failure)
	}
	return r
}

// printRetire writes the summary (or the JSON lines) and returns the exit status.
func printRetire(w io.Writer, format string, devices []string, results []retireResult) error {
	failures := make([]*hostforge.Failure, 0, len(results))
	for _, r := range results {
		if r.Failure != nil {
			failures = append(failures, r.Failure)
		}
	}
	code := worst(failures)
	if format == formatJSON {
		for _, r := range results {
			res := r.Result
			j := retireJSON{Device: res.Device, Retired: res.Retired && r.Failure == nil, Run: res.Run, Resumed: res.Resumed, Instance: res.Instance,
				Node: res.Node, Erase: res.Erase, NoErase: res.NoErase, KeptNode: res.KeptNode, Archived: res.Archived,
				ElapsedSeconds: r.Elapsed.Seconds(), Phases: res.Phases, Deliveries: res.Deliveries, Failure: failureOut(r.Failure),
				ExitCode: exitCodeOf(r.Failure), WorkflowID: r.WorkflowID}
			if !res.ArchivedUntil.IsZero() {
				until := res.ArchivedUntil.UTC()
				j.ArchivedUntil = &until
			}
			j.Phases = jsonList(j.Phases)
			if err := writeJSONLine(w, j); err != nil {
				return err
			}
		}
		return exitWith(code)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tRESULT\tOWNER\tRUN\tERASE\tNODE\tELAPSED")
	retired := 0
	for _, r := range results {
		result, owner := "retired", "-"
		if r.Failure != nil {
			result, owner = r.Failure.Code, string(r.Failure.Owner)
		} else {
			retired++
		}
		node := dash(r.Result.Node)
		if r.Result.KeptNode {
			node += " (kept)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Result.Device, result, owner, dash(r.Result.Run), dash(r.Result.Erase), node, fmtElapsed(r.Elapsed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d of %d retired.\n", retired, len(devices))
	first := true
	for _, r := range results {
		if r.Failure == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nOperator actions:")
			first = false
		}
		fmt.Fprintf(w, "  %s — %s (owner %s, %s)\n      %s\n      next: %s\n", r.Result.Device, r.Failure.Code, r.Failure.Owner,
			retryWord(r.Failure.Retryable), oneLine(failureOut(r.Failure).Message), r.Failure.Action)
	}
	first = true
	for _, r := range results {
		for _, d := range r.Result.Deliveries {
			if first {
				fmt.Fprintln(w, "\nExtension deliveries:")
				first = false
			}
			fmt.Fprintf(w, "  %s — %s %s/%s %s (delivery %s)\n", r.Result.Device, d.Stage, d.Extension, d.Task, d.Status, dash(d.DeliveryID))
			if d.Status != retirement.DeliverySucceeded && d.Message != "" {
				fmt.Fprintf(w, "      %s\n", oneLine(d.Message))
			}
		}
	}
	return exitWith(code)
}
