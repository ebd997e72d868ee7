package cli

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
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
	// quietSteps leaves out the runtime's line per step outcome: the
	// progress shows them (text output at the default log level).
	quietSteps bool
	closers    []func()
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
systems a config file names (--config, docs/config.md) or the built-in fake
rack (--demo; with no DEVICE, every host of the rack). With --temporal,
submit each device as its own workflow (enroll/<device>) for 'hostforge
worker' to run, and follow it: the same progress, summary, exit codes and
-o json (with workflow_id); every device is submitted at once, and an
interrupt stops following while the workflows carry on.

Progress is a row per host with its phase/step, elapsed time and what it
waits for: on a terminal a live area redrawn in place, log lines above it
(or in --log-file); otherwise a line per event. A summary and each
failure's operator action follow. -o json prints one JSON object per host
as each host finishes, and no progress.

--force-bmc-restart cold-resets the BMC even without a password rotation;
--no-inspection skips inspection and verification; --force-inspection
inspects afresh even when the existing inventory verifies; --max-attempts
replaces the site's attempt budget (1 fails fast). --metrics-listen serves
the run's Prometheus metrics on /metrics while it runs.

` + exitCodes(ExitOK, ExitUsage, ExitOnSite, ExitInfra, ExitFleetManager, ExitBug, ExitCancelled, exitSeveralHosts),
		Example: `  hostforge enroll --demo --parallel 4 gpu-r1-u02 cpu-r1-u10
  hostforge enroll --config /etc/hostforge/lab1.yaml --force-inspection cpu-r1-u10
  hostforge enroll --config lab1.yaml --max-attempts 1 -o json cpu-r1-u10 cpu-r1-u11
  hostforge enroll --config lab1.yaml --temporal 127.0.0.1:7233 cpu-r1-u10 gpu-r1-u02`,
	}
	f := cmd.Flags()
	f.BoolVar(&o.demo, "demo", false, "run against the built-in fake rack instead of real systems")
	configFlag(cmd, &o.config, "config file naming the real systems (docs/config.md)")
	f.BoolVar(&o.forceBMCRestart, "force-bmc-restart", false, "cold-reset the BMC even when its password was not rotated")
	f.BoolVar(&o.noInspection, "no-inspection", false, "skip inspection and verification (run_inspection=false)")
	f.BoolVar(&o.forceInspection, "force-inspection", false, "run a fresh inspection even when the existing inventory verifies")
	f.IntVar(&o.maxAttempts, "max-attempts", 0, "attempt budget for retryable failures, replacing the site's (1 fails fast; 0 keeps the site's)")
	f.IntVar(&o.parallel, "parallel", 1, "number of devices enrolled at once (local runs)")
	o.temporal.add(cmd, "submit to this Temporal frontend (host:port) for 'hostforge worker' to run, instead of running in-process")
	exclusive(cmd, "--no-inspection skips inspection and verification, --force-inspection runs a fresh inspection; give one", "no-inspection", "force-inspection")
	exclusive(cmd, "--demo runs against the built-in fake rack, --config against the real systems the file names; give one", "demo", "config")
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
		if err := o.temporal.check(); err != nil {
			return err
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
		rep := a.startReport(cmd, *o.output, args, sys.clock, sys.demo != nil)
		sys.quietSteps = rep.quietSteps
		results := enrollAll(cmd.Context(), sys, args, params, o.parallel, rep)
		return rep.end(results)
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

// enrollAll enrols the devices, parallel at a time, reports each as it
// finishes and returns their results in the order given.
func enrollAll(ctx context.Context, sys *systems, devices []string, p enrollment.Params, parallel int, rep *enrollReport) []hostResult {
	prog := rep.prog
	results := make([]hostResult, len(devices))
	inParallel(len(devices), parallel, func(i int) {
		results[i] = enrollOne(ctx, sys, devices[i], p, prog)
		rep.host(results[i])
	})
	return results
}

// inParallel calls do(i) for every i from 0 to n-1, handed out in order
// to at most parallel goroutines, and returns once every call has.
func inParallel(n, parallel int, do func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				do(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// enrollOne submits and runs one device's enrollment inline.
func enrollOne(ctx context.Context, sys *systems, device string, p enrollment.Params, prog *progress) hostResult {
	start := sys.clock.Now()
	if prog != nil {
		prog.begin(device, start)
	}
	r := hostResult{Result: enrollment.Result{Device: device}}
	req, err := enrollment.Submit(ctx, sys.netbox, device, enrollment.SubmitOptions{Site: sys.site, Config: sys.siteConfig, PlatformClassReady: sys.pcReady, Params: p})
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
		if sys.quietSteps {
			// The progress shows every step's outcome; the log would
			// say each again.
			rt.Log = nil
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
