package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
)

// systems are the clients a command runs against: the demo rack's fakes or
// the real systems a config file names.
type systems struct {
	site       string
	netbox     enrollment.NetBox
	lister     enrollment.DeviceLister
	fleet      enrollment.FleetManager
	exec       *enrollment.Executor
	clock      clock.Clock
	siteConfig enrollment.SiteConfig
	pcReady    bool
	log        *slog.Logger
	// demo is the fake site behind --demo, nil otherwise.
	demo *fakes.Site
	// wired are the real systems behind --config, nil otherwise.
	wired *wiring.Systems
	// ledger settles completion proof after each local run; nil without one.
	ledger *ledgerWiring
	// observer is told what local runs do (--metrics-listen); nil: nothing.
	observer flow.Observer
	closers  []func()
}

func (s *systems) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// systems builds the clients for --demo or --config.
func (a *app) systems(cmd *cobra.Command, demo bool, config string) (*systems, error) {
	log, err := a.logger(cmd)
	if err != nil {
		return nil, err
	}
	switch {
	case demo && config != "":
		return nil, inputErr("--demo and --config exclude each other: run against the demo rack or against the systems the config file names")
	case demo:
		return demoSystems(log, a.secrets), nil
	case config != "":
		cfg, err := loadConfigFile(config)
		if err != nil {
			return nil, err
		}
		return a.realSystems(cmd.Context(), cfg, log)
	}
	return nil, inputErr("name the systems to run against: --config FILE, or --demo for the built-in fake rack")
}

// logger builds the slog logger of --log-level, writing to the error stream.
func (a *app) logger(cmd *cobra.Command) (*slog.Logger, error) {
	lvl, _ := cmd.Flags().GetString("log-level")
	var l slog.Level
	switch strings.ToLower(lvl) {
	case "", "warn":
		l = slog.LevelWarn
	case "debug":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "error":
		l = slog.LevelError
	case "off":
		return slog.New(slog.DiscardHandler), nil
	default:
		return nil, inputErr("--log-level %q: want debug, info, warn, error or off", lvl)
	}
	return slog.New(a.secrets.Handler(slog.NewTextHandler(a.streams.Err, &slog.HandlerOptions{Level: l}))), nil
}

// logLevelFlag adds --log-level to a command that talks to systems.
func logLevelFlag(cmd *cobra.Command) {
	cmd.Flags().String("log-level", "warn", "log level of the structured log on standard error: debug, info, warn, error or off")
}

// hostResult is one host's outcome.
type hostResult struct {
	Result  enrollment.Result
	Failure *hostforge.Failure
	Elapsed time.Duration
	// WorkflowID is the Temporal workflow of the run, "" for an inline run.
	WorkflowID string
	// Extensions are the serverRegistered deliveries an inline run fired
	// after the enrollment succeeded (with an extensions: section).
	Extensions []fireJSON
	// Proof is the run's completion-proof settlement (nil without a ledger).
	Proof *proofJSON
}

// proofJSON is a run's settlement in -o json.
type proofJSON struct {
	Kind      string       `json:"kind"`
	Action    string       `json:"action"`
	Reference string       `json:"reference,omitempty"`
	Holder    string       `json:"holder,omitempty"`
	Failure   *failureJSON `json:"failure,omitempty"`
}

// enrollJSON is one host's line in -o json.
type enrollJSON struct {
	Device         string                   `json:"device"`
	Enrolled       bool                     `json:"enrolled"`
	Instance       string                   `json:"instance,omitempty"`
	Node           string                   `json:"node,omitempty"`
	ProvisionState string                   `json:"provision_state,omitempty"`
	PlatformClass  string                   `json:"platform_class,omitempty"`
	ElapsedSeconds float64                  `json:"elapsed_seconds"`
	Phases         []enrollment.PhaseRecord `json:"phases"`
	Failure        *failureJSON             `json:"failure,omitempty"`
	Proof          *proofJSON               `json:"proof,omitempty"`
	ExitCode       int                      `json:"exit_code"`
	// WorkflowID is the Temporal workflow the enrollment ran as (--temporal).
	WorkflowID string `json:"workflow_id,omitempty"`
	// Extensions are the serverRegistered deliveries fired after the
	// enrollment succeeded, as 'extensions fire -o json' reports them.
	Extensions []fireJSON `json:"extensions,omitempty"`
}

type enrollOpts struct {
	demo, forceBMCRestart, noInspection, forceInspection bool
	config                                               string
	maxAttempts, parallel                                int
	output, metricsListen                                *string
	temporal                                             temporalFlags
}

func (a *app) enrollCmd() *cobra.Command {
	var o enrollOpts
	cmd := &cobra.Command{
		Use:   "enroll DEVICE...",
		Short: "Enrol devices: DHCP, BMC, NetBox activation, Ironic inspection and cleaning",
		Long: `Run the enrollment workflow in-process for each device, against the real
systems a config file names (--config) or against the built-in fake rack
(--demo; with no DEVICE, every host of the rack).

With --temporal, submit each device to a Temporal server instead, as its own
workflow (ID enroll/<device>: a device already enrolling is refused with
ENROLLMENT_ALREADY_RUNNING), for 'hostforge worker' to run, and follow each
run from its history: the same progress, summary, exit codes and -o json
(with workflow_id) as a local run. --parallel does not apply: every device
is submitted at once and the workers' capacity paces them. Interrupting the
command stops following; the workflows carry on.

Progress shows a line per host with its current phase/step, elapsed time and
what it waits for ("node locked by conductor-2, retry in 20s"): redrawn in
place on a terminal, a line per event otherwise. A summary table and each
failure's operator action follow; -o json prints one JSON object per host
instead (and no progress).

Operator parameters: --force-bmc-restart cold-resets the BMC even without a
password rotation; --no-inspection skips inspection and verification;
--force-inspection runs a fresh inspection even when the existing inventory
verifies; --max-attempts replaces the site's attempt budget (1 fails fast).

--metrics-listen serves the run's Prometheus metrics (hostforge_ names, as
a worker exports them: runs by outcome, code and owner, phase and step
durations, waits) on /metrics while it runs, for a long local run.

` + wiring.ConfigHelp + `
` + exitCodeHelp,
		Example: `  hostforge enroll --demo
  hostforge enroll --demo --parallel 4 gpu-r1-u02 cpu-r1-u10
  hostforge enroll --config /etc/hostforge/lab1.yaml --force-inspection cpu-r1-u10
  hostforge enroll --config lab1.yaml --max-attempts 1 -o json cpu-r1-u10 cpu-r1-u11
  hostforge enroll --config lab1.yaml --temporal 127.0.0.1:7233 cpu-r1-u10 gpu-r1-u02`,
	}
	f := cmd.Flags()
	f.BoolVar(&o.demo, "demo", false, "run against the built-in fake rack instead of real systems")
	f.StringVar(&o.config, "config", "", "config file naming the real systems (format below)")
	f.BoolVar(&o.forceBMCRestart, "force-bmc-restart", false, "cold-reset the BMC even when its password was not rotated")
	f.BoolVar(&o.noInspection, "no-inspection", false, "skip inspection and verification (run_inspection=false)")
	f.BoolVar(&o.forceInspection, "force-inspection", false, "run a fresh inspection even when the existing inventory verifies")
	f.IntVar(&o.maxAttempts, "max-attempts", 0, "attempt budget for retryable failures, replacing the site's (1 fails fast; 0 keeps the site's)")
	f.IntVar(&o.parallel, "parallel", 1, "number of devices enrolled at once (local runs)")
	o.temporal.add(cmd, "submit to this Temporal frontend (host:port) for 'hostforge worker' to run, instead of running in-process")
	cmd.MarkFlagsMutuallyExclusive("no-inspection", "force-inspection")
	cmd.MarkFlagsMutuallyExclusive("demo", "config")
	_ = cmd.MarkFlagFilename("config", "yaml", "yml")
	logLevelFlag(cmd)
	o.output = outputFlag(cmd)
	o.metricsListen = metricsListenFlag(cmd)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkOutput(*o.output); err != nil {
			return err
		}
		if o.parallel < 1 {
			return inputErr("--parallel %d: want 1 or more", o.parallel)
		}
		if o.maxAttempts < 0 {
			return inputErr("--max-attempts %d: want 1 or more (0 keeps the site's budget)", o.maxAttempts)
		}
		if len(args) == 0 && !o.demo {
			return usageErr(fmt.Errorf("name at least one DEVICE to enrol"))
		}
		if dup := duplicate(args); dup != "" {
			return inputErr("device %s is named twice", dup)
		}
		if o.temporal.address != "" {
			if o.demo {
				return inputErr("--temporal needs --config: the demo rack lives in this process, where no worker can reach it (try 'hostforge lab')")
			}
			if o.config == "" {
				return inputErr("--temporal needs --config: the site, its gates and NetBox come from the config file")
			}
		}
		if o.temporal.address != "" {
			if *o.metricsListen != "" {
				return inputErr("--metrics-listen is for runs in this process: with --temporal the workers run the enrollments and export their metrics")
			}
			return a.enrollTemporal(cmd, o, args)
		}
		sys, err := a.systems(cmd, o.demo, o.config)
		if err != nil {
			return err
		}
		defer sys.close()
		obs, stopMetrics, err := a.serveLocalMetrics(*o.metricsListen)
		if err != nil {
			return err
		}
		defer stopMetrics()
		sys.observer = obs
		if len(args) == 0 {
			args = sys.demo.HostNames()
		}
		params := o.params()
		var prog *progress
		if *o.output == formatText {
			prog = newProgress(cmd.OutOrStdout(), a.streams.Terminal, args)
		}
		results := enrollAll(cmd.Context(), sys, args, params, o.parallel, prog)
		return printEnroll(cmd.OutOrStdout(), *o.output, args, results)
	}
	return cmd
}

// params are the operator parameters of the run.
func (o *enrollOpts) params() enrollment.Params {
	p := enrollment.Params{ForceBMCRestart: o.forceBMCRestart, ForceInspection: o.forceInspection, MaxAttemptsOverride: o.maxAttempts}
	if o.noInspection {
		off := false
		p.RunInspection = &off
	}
	return p
}

func duplicate(names []string) string {
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return n
		}
		seen[n] = true
	}
	return ""
}

// enrollAll enrols the devices, parallel at a time, and returns their
// results in the order given. prog may be nil.
func enrollAll(ctx context.Context, sys *systems, devices []string, p enrollment.Params, parallel int, prog *progress) []hostResult {
	results := make([]hostResult, len(devices))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, len(devices)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = enrollOne(ctx, sys, devices[i], p, prog)
			}
		}()
	}
	for i := range devices {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// enrollOne submits and runs one device's enrollment inline.
func enrollOne(ctx context.Context, sys *systems, device string, p enrollment.Params, prog *progress) hostResult {
	start := sys.clock.Now()
	if prog != nil {
		prog.begin(device, start)
	}
	r := hostResult{Result: enrollment.Result{Device: device}}
	req, err := enrollment.Submit(ctx, sys.netbox, device, sys.site, sys.siteConfig, sys.pcReady, p)
	// With a ledger the device is recorded in it, and its identity and
	// reference revision snapshotted, before the run (as a Temporal
	// submitter snapshots them). A ledger that does not answer does not
	// stop the run: the platform-class phase fails with its own code if it
	// needs the ledger, and the unsettled proof is reported below.
	var pr proofRun
	var beforeErr error
	if err == nil && sys.ledger != nil {
		pr, beforeErr = sys.ledger.before(ctx, device)
		pr.start = start // the run is one: its proof and its serverRegistered event name it alike
	}
	if err == nil {
		rt := sys.exec.Local(sys.clock)
		rt.Subject, rt.Observer = device, sys.observer
		if prog != nil {
			rt.OnEvent = prog.event
		}
		r.Result, err = enrollment.Enroll(ctx, rt, req)
	}
	if err != nil {
		_, r.Failure, _ = hostforge.Classify(err)
		r.Result.Failure = r.Failure
	}
	if sys.ledger != nil && (beforeErr != nil || pr.identity != "") {
		// With flow.Local the run closes here: settle its completion proof.
		out, perr := enrollment.ProofOutcome{Action: enrollment.ProofNoAction}, beforeErr
		if beforeErr == nil {
			out, perr = sys.ledger.settle(ctx, pr, r.Result, r.Failure)
		}
		r.setProof(out, perr)
	}
	r.Elapsed = sys.clock.Now().Sub(start)
	if prog != nil {
		prog.finish(device, r)
	}
	if err == nil {
		r.Extensions = fireServerRegistered(ctx, sys, r.Result, inlineRun(device, start))
	}
	return r
}

// inlineRun identifies an inline enrollment run: its completion's run
// and its serverRegistered event.
func inlineRun(device string, start time.Time) string {
	return fmt.Sprintf("cli/%s/%d", device, start.UnixNano())
}

// fireServerRegistered fires serverRegistered for a host an inline run
// enrolled (the run's event), through the extension dispatch the config's
// extensions: section wires. Its outcome is reported beside the
// enrollment's and does not change it: the host is enrolled either way.
func fireServerRegistered(ctx context.Context, sys *systems, res enrollment.Result, run string) []fireJSON {
	if sys.wired == nil || sys.wired.Extensions == nil || !res.Enrolled || res.Failure != nil || res.Node == "" {
		return nil
	}
	rt := sys.wired.Extensions.Local(sys.clock)
	rt.Subject, rt.Observer = res.Device, sys.observer
	rep, err := extensions.FireServerRegistered(ctx, rt, extensions.Enrolled{Device: res.Device, Instance: res.Instance, Node: res.Node, Run: run,
		BMCHostname: res.Done(enrollment.PhaseBMC)})
	rows, _ := fireRows(rep)
	if err != nil {
		_, f, _ := hostforge.Classify(err)
		rows = append(rows, fireJSON{Task: "(dispatch)", Status: string(extensions.StatusFailed), Message: f.Code + ": " + f.Message})
	}
	return rows
}

// printEnroll writes the summary (or the JSON lines) and returns the exit status.
func printEnroll(w io.Writer, format string, devices []string, results []hostResult) error {
	failures := make([]*hostforge.Failure, 0, len(results))
	for _, r := range results {
		if r.Failure != nil {
			failures = append(failures, r.Failure)
		}
	}
	code := worst(failures)
	if format == formatJSON {
		for _, r := range results {
			j := enrollJSON{Device: r.Result.Device, Enrolled: r.Result.Enrolled && r.Result.Failure == nil, Instance: r.Result.Instance,
				Node: r.Result.Node, ProvisionState: r.Result.ProvisionState, PlatformClass: r.Result.PlatformClass,
				ElapsedSeconds: r.Elapsed.Seconds(), Phases: r.Result.Phases, Failure: failureOut(r.Failure), Proof: r.Proof, ExitCode: exitCodeOf(r.Failure),
				WorkflowID: r.WorkflowID, Extensions: r.Extensions}
			if j.Phases == nil {
				j.Phases = []enrollment.PhaseRecord{}
			}
			if err := writeJSONLine(w, j); err != nil {
				return err
			}
		}
		return exitWith(code)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tRESULT\tOWNER\tINSTANCE\tSTATE\tPLATFORM CLASS\tELAPSED")
	enrolled := 0
	for _, r := range results {
		result, owner := "enrolled", "-"
		if r.Failure != nil {
			result, owner = r.Failure.Code, string(r.Failure.Owner)
		} else {
			enrolled++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Result.Device, result, owner, dash(r.Result.Instance),
			dash(r.Result.ProvisionState), dash(r.Result.PlatformClass), fmtElapsed(r.Elapsed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d of %d enrolled.\n", enrolled, len(devices))
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
		for _, e := range r.Extensions {
			if first {
				fmt.Fprintln(w, "\nserverRegistered extensions (they do not change the enrollment's result):")
				first = false
			}
			fmt.Fprintf(w, "  %s — %s %s (delivery %s)\n", r.Result.Device, e.Task, e.Status, dash(e.DeliveryID))
			if e.Status != string(extensions.StatusSucceeded) && e.Message != "" {
				fmt.Fprintf(w, "      %s\n", oneLine(e.Message))
			}
		}
	}
	return exitWith(code)
}

func retryWord(retryable bool) string {
	if retryable {
		return "a rerun may succeed"
	}
	return "a rerun alone will not help"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
