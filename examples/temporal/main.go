// Command temporal enrols the demo rack through a Temporal server: a worker
// that runs the enrollment workflow and its steps on the fake rack, and a
// starter that submits every host (one workflow per device), waits for each
// to close and settles its completion proof in the fake fleet manager.
//
//	temporal server start-dev --headless --ip 127.0.0.1 --port 7233 &
//	go run ./examples/temporal -address 127.0.0.1:7233
//
// The fake rack lives in this process, so the worker and the starter run
// side by side here; with real systems they are separate processes (see
// README.md). -worker runs only the worker, until interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/examples/internal/demo"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/ironic"
)

func main() {
	addr := flag.String("address", envOr("HOSTFORGE_TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port")
	queue := flag.String("task-queue", temporal.DefaultTaskQueue, "task queue")
	workerOnly := flag.Bool("worker", false, "run only the worker, until interrupted")
	verbose := flag.Bool("v", false, "log the Temporal SDK's messages (every failed step) to stderr")
	flag.Parse()

	log := demo.Logger(os.Stderr)
	sdk := slog.New(slog.DiscardHandler)
	if *verbose {
		sdk = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, log, sdk, *addr, *queue, *workerOnly); err != nil {
		log.Error("temporal example failed", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, log, sdk *slog.Logger, addr, queue string, workerOnly bool) error {
	c, err := client.Dial(client.Options{HostPort: addr, Logger: sdklog.NewStructuredLogger(sdk)})
	if err != nil {
		return fmt.Errorf("connecting to Temporal at %s: %w", addr, err)
	}
	defer c.Close()

	site := demo.NewSite()
	exec := enrolltest.Executor(site, log)
	stopClock := liveTime(site, exec)
	defer stopClock()

	// The worker: the enrollment and its settlement, one activity per step,
	// on the fake rack and its fake fleet manager.
	settle, err := temporal.SettleSteps(c, site.Proofs)
	if err != nil {
		return err
	}
	steps, err := flow.Merge(exec, settle)
	if err != nil {
		return err
	}
	w := worker.New(c, queue, worker.Options{})
	temporal.Register(w, &temporal.Activities{Exec: steps}, temporal.ActivityOptions{}, temporal.Enrollment, temporal.Settlement)
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting the worker: %w", err)
	}
	defer w.Stop()
	if workerOnly {
		fmt.Fprintf(out, "worker polling %s on %s; interrupt to stop\n", queue, addr)
		<-ctx.Done()
		return nil
	}

	// The starter: snapshot the site, submit each host, wait, settle proof.
	cfg := demo.SiteConfig()
	cfg.ConfigureDHCP = cfg.ConfigureDHCP && exec.DHCP != nil
	sub := &temporal.Submitter{Client: c, TaskQueue: queue, NetBox: site.NetBox, Proofs: site.Proofs,
		ProofWindow: 10 * time.Second, ProofInterval: time.Second, Log: log}
	hosts := site.HostNames()
	rows := make([]row, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		site.Proofs.Register(h, "fm-"+h)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows[i] = enrol(ctx, site, sub, cfg, h)
		}()
	}
	wg.Wait()
	printRows(out, rows)
	return nil
}

type row struct {
	host, workflow string
	res            enrollment.Result
	failure        *hostforge.Failure
	proof          enrollment.ProofOutcome
	proofErr       error
}

func enrol(ctx context.Context, site *fakes.Site, sub *temporal.Submitter, cfg enrollment.SiteConfig, host string) row {
	r := row{host: host}
	run, err := sub.Submit(ctx, temporal.Submission{Device: host, Site: demo.Site, Config: cfg, PlatformClassReady: true})
	if err != nil {
		_, r.failure, _ = hostforge.Classify(err)
		return r
	}
	r.workflow = run.WorkflowID
	r.res, r.failure = sub.Wait(ctx, run)
	// The fleet manager's projection reads the node from Ironic (hostforge
	// worker runs the projector on an interval); the settlement the
	// enrollment started compares against it.
	if _, err := enrolltest.Projector(site).Project(ctx); err != nil {
		r.proofErr = err
		return r
	}
	r.proof, r.proofErr = sub.Settle(ctx, run)
	return r
}

func printRows(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tWORKFLOW\tRESULT\tOWNER\tPROOF")
	for _, r := range rows {
		result, owner := r.res.ProvisionState, "-"
		if r.failure != nil {
			result, owner = r.failure.Code, string(r.failure.Owner)
		}
		proof := string(r.proof.Kind) + " → " + r.proof.Action
		if r.proofErr != nil {
			proof += " (" + hostforge.CodeOf(r.proofErr) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.host, r.workflow, result, owner, proof)
	}
	tw.Flush()
}

// liveTime runs the fake rack on wall-clock time with short Ironic timings,
// so that the workflow's real timers and the fake Ironic agree and the rack
// enrols in seconds.
func liveTime(site *fakes.Site, exec *enrollment.Executor) (stop func()) {
	for _, ir := range site.Ironic {
		ir.Timing = fakes.IronicTiming{Verify: 200 * time.Millisecond, Inspecting: 300 * time.Millisecond, InspectWait: 2 * time.Second,
			Cleaning: 300 * time.Millisecond, CleanWait: 2 * time.Second, Power: 200 * time.Millisecond, Deploy: time.Second}
	}
	for _, p := range exec.Ironic {
		if ph, ok := p.(*ironic.Phases); ok {
			ph.Timing = ironic.Timing{StatePoll: time.Second, LockRetry: time.Second, InspectionPoll: time.Second,
				CleanPollMin: time.Second, CleanPollMax: 2 * time.Second, LinkBudget: 10 * time.Second}
		}
	}
	// The BMC phase waits iDRAC jobs and cold resets out as workflow
	// timers: the fake BMCs take seconds, not minutes, on the wall clock.
	return site.OnWallClock()
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
