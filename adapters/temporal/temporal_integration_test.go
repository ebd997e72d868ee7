//go:build integration

package temporal_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/internal/benchtemporal"
	"github.com/hostforge/hostforge/internal/itenv"
)

// devServer returns the address of the dev server scripts/integration
// started, skipping (or failing, under HOSTFORGE_REQUIRE_INTEGRATION=1)
// when there is none.
func devServer(t *testing.T) string { return itenv.TemporalAddress(t) }

func dial(t *testing.T, addr string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  addr,
		Namespace: "default",
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))),
	})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return c
}

// liveWorld is the fake rack on wall-clock time with short Ironic timings,
// so a whole enrollment on a real server takes seconds, not an hour.
func liveWorld(t *testing.T) (*fakes.Site, *enrollment.Executor) {
	t.Helper()
	site, exec, _ := world(t, "cpu-u10")
	benchtemporal.FastTiming(site, exec)
	// The BMC phase waits iDRAC jobs and cold resets out as workflow
	// timers: the fake BMCs take seconds, not minutes, on the wall clock.
	t.Cleanup(site.OnWallClock())
	return site, exec
}

// startWorker starts a worker of the enrollment and its settlement: the
// enrollment's steps (exec), the close probe on c and the proof steps on
// proofs.
func startWorker(t *testing.T, c client.Client, queue string, exec temporal.Dispatcher, proofs enrollment.ProofStore) worker.Worker {
	t.Helper()
	return startWorkerOpts(t, c, queue, exec, proofs, temporal.ActivityOptions{Heartbeat: 3 * time.Second, StartToClose: 2 * time.Minute})
}

func startWorkerOpts(t *testing.T, c client.Client, queue string, exec temporal.Dispatcher, proofs enrollment.ProofStore, opts temporal.ActivityOptions) worker.Worker {
	t.Helper()
	settle, err := temporal.SettleSteps(c, proofs)
	if err != nil {
		t.Fatal(err)
	}
	w := worker.New(c, queue, worker.Options{WorkerStopTimeout: time.Second})
	temporal.Register(w, &temporal.Activities{Exec: both{exec, settle}, HeartbeatEvery: 500 * time.Millisecond}, opts, temporal.Enrollment, temporal.Settlement)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	return w
}

// both dispatches to two step sets with distinct names.
type both struct{ a, b temporal.Dispatcher }

func (d both) StepNames() []string { return append(d.a.StepNames(), d.b.StepNames()...) }

func (d both) Dispatch(ctx context.Context, step string, in []byte) ([]byte, error) {
	for _, n := range d.b.StepNames() {
		if n == step {
			return d.b.Dispatch(ctx, step, in)
		}
	}
	return d.a.Dispatch(ctx, step, in)
}

// gate blocks the first run of one step until the test lets it go, so the
// worker can be killed while the step is in flight.
type gate struct {
	temporal.Dispatcher
	step    string
	mu      sync.Mutex
	hit     bool
	reached chan struct{}
}

func (g *gate) Dispatch(ctx context.Context, step string, in []byte) ([]byte, error) {
	g.mu.Lock()
	first := step == g.step && !g.hit
	if first {
		g.hit = true
	}
	g.mu.Unlock()
	if first {
		close(g.reached)
		<-ctx.Done() // the worker dies with the step in flight
		return nil, ctx.Err()
	}
	return g.Dispatcher.Dispatch(ctx, step, in)
}

// TestWorkerRestartMidEnrollment kills the worker while a cleaning step is
// in flight, starts a new worker, and sees the enrollment finish.
func TestWorkerRestartMidEnrollment(t *testing.T) {
	addr := devServer(t)
	site, exec := liveWorld(t)
	queue := "it-restart-" + time.Now().Format("150405.000")
	g := &gate{Dispatcher: exec, step: enrollment.StepIronicCleaning, reached: make(chan struct{})}

	c1 := dial(t, addr)
	w1 := startWorker(t, c1, queue, g, site.Proofs)
	sub := &temporal.Submitter{Client: c1, TaskQueue: queue, NetBox: site.NetBox, Proofs: site.Proofs}
	site.Proofs.Register("cpu-u10", "fm-id-cpu-u10")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cfg := siteConfig()
	cfg.ConfigureDHCP = exec.DHCP != nil
	run, err := sub.Submit(ctx, temporal.Submission{Device: "cpu-u10", Site: "lab1", Config: cfg, PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	// A second concurrent enrollment of the same device is refused.
	if _, err := sub.Submit(ctx, temporal.Submission{Device: "cpu-u10", Site: "lab1", Config: cfg, PlatformClassReady: true}); hostforge.CodeOf(err) != temporal.AlreadyRunning.Code {
		t.Fatalf("second submission: %v, want ENROLLMENT_ALREADY_RUNNING", err)
	}

	select {
	case <-g.reached:
	case <-ctx.Done():
		t.Fatal("the enrollment never reached cleaning")
	}
	w1.Stop() // the worker dies with ironic_cleaning in flight
	c1.Close()

	c2 := dial(t, addr)
	defer c2.Close()
	w2 := startWorker(t, c2, queue, exec, site.Proofs)
	defer w2.Stop()
	sub.Client = c2
	res, f := sub.Wait(ctx, run)
	if f != nil {
		t.Fatalf("enrollment after the restart failed: %v", f)
	}
	if !res.Enrolled || res.ProvisionState != "available" {
		t.Fatalf("result %+v, want enrolled and available", res)
	}
	// The history shows the step that died with its worker, rerun by a
	// later attempt that completed: an attempt whose last failure is the
	// timeout (the first attempt of a step carrying the sleep before it
	// fails only to defer it).
	retried, completed := 0, 0
	it := c2.GetWorkflowHistory(ctx, run.WorkflowID, run.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]string{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] == enrollment.StepIronicCleaning && a.GetAttempt() > 1 && a.GetLastFailure().GetTimeoutFailureInfo() != nil {
			retried++
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] == enrollment.StepIronicCleaning {
			completed++
		}
	}
	if retried != 1 || completed == 0 {
		t.Fatalf("history has %d retried and %d completed cleaning steps; want the killed one rerun once", retried, completed)
	}

	// The fleet manager projects the node from the fake Ironic, never from
	// the result: a completed enrollment establishes proof against it.
	if _, err := enrolltest.Projector(site).Project(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := sub.Settle(ctx, run)
	if err != nil || out.Kind != enrollment.KindQualifying || out.Action != enrollment.ProofEstablished {
		t.Fatalf("settle = %+v, %v; want a qualifying completion establishing proof", out, err)
	}
	record(t, c2, run.WorkflowID, run.RunID, "restart-cpu-u10")
}

// TestFailuresAndProofOnDevServer runs a failing and a diagnostic
// enrollment and settles their proof from the close Temporal recorded.
func TestFailuresAndProofOnDevServer(t *testing.T) {
	addr := devServer(t)
	site, exec := liveWorld(t)
	queue := "it-proof-" + time.Now().Format("150405.000")
	c := dial(t, addr)
	defer c.Close()
	w := startWorker(t, c, queue, exec, site.Proofs)
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sub := &temporal.Submitter{Client: c, TaskQueue: queue, NetBox: site.NetBox, Proofs: site.Proofs, ProofWindow: 5 * time.Second, ProofInterval: time.Second}
	cfg := siteConfig()
	cfg.ConfigureDHCP = exec.DHCP != nil

	// A device that fails: the failure write clears stale proof of the
	// operated identity (proof left by a replaced identity).
	site.Proofs.Register("bad-offline", "old-id")
	site.Proofs.SetReference("bad-offline", "ironic-cpu/n-1")
	if _, err := site.Proofs.ProveEnrollment(ctx, "bad-offline", "old-id", "ironic-cpu/n-1", 0, "earlier", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	site.Proofs.ReplaceIdentity("bad-offline", "new-id")
	run, err := sub.Submit(ctx, temporal.Submission{Device: "bad-offline", Site: "lab1", Config: cfg, PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, f := sub.Wait(ctx, run); f == nil || f.Code != enrollment.StatusIneligible.Code {
		t.Fatalf("bad-offline ended with %v", f)
	}
	out, err := sub.Settle(ctx, run)
	if err != nil || out.Kind != enrollment.KindUnsuccessful || out.Action != enrollment.ProofFailureWrite || !out.Cleared {
		t.Fatalf("settle: %+v %v; want a failure write that cleared stale proof", out, err)
	}
	if rec, _ := site.Proofs.Record("bad-offline"); rec.Proof != nil {
		t.Fatalf("stale proof survived: %+v", rec.Proof)
	}
	record(t, c, run.WorkflowID, run.RunID, "failed-bad-offline")

	// Routing failure: classified before any activity.
	run, err = sub.Submit(ctx, temporal.Submission{Device: "bad-switch", Site: "lab1", Config: cfg, PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, f := sub.Wait(ctx, run); f == nil || f.Code != enrollment.RoutingUnresolved.Code || f.Retryable {
		t.Fatalf("bad-switch ended with %v", f)
	}
	record(t, c, run.WorkflowID, run.RunID, "routing-bad-switch")

	// A diagnostic run (Ironic phases off) preserves proof without a write.
	site.Proofs.Register("cpu-u11", "id-u11")
	site.Proofs.SetReference("cpu-u11", "ironic-cpu/n-9")
	if _, err := site.Proofs.ProveEnrollment(ctx, "cpu-u11", "id-u11", "ironic-cpu/n-9", 0, "earlier", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	diag := cfg
	diag.IronicEnrol = false
	run, err = sub.Submit(ctx, temporal.Submission{Device: "cpu-u11", Site: "lab1", Config: diag, PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	if res, f := sub.Wait(ctx, run); f != nil || !res.Enrolled {
		t.Fatalf("diagnostic run: %+v %v", res, f)
	}
	before := site.Calls()
	out, err = sub.Settle(ctx, run)
	if err != nil || out.Kind != enrollment.KindDiagnostic || out.Action != enrollment.ProofNoAction {
		t.Fatalf("settle: %+v %v; want a diagnostic completion", out, err)
	}
	if w := site.Calls().Sub(before)[fakes.SysFleetManager].Writes; w != 0 {
		t.Fatalf("a diagnostic completion wrote %d times to the fleet manager", w)
	}
	if rec, _ := site.Proofs.Record("cpu-u11"); !rec.Valid() {
		t.Fatalf("proof lost: %+v", rec)
	}
	record(t, c, run.WorkflowID, run.RunID, "diagnostic-cpu-u11")
}

// continuedAt is the threshold of TestContinueAsNewOnDevServer; the replay
// test replays the histories it records (continued-*) with it.
const continuedAt = 40

// TestContinueAsNewOnDevServer runs an enrollment whose runs continue as
// new every few steps on a real server: the resume crosses the wire as
// the workflow's second argument, the submitter's Wait follows the chain
// to the last run's result, and the settlement, started by the first run,
// settles proof against the chain's close.
func TestContinueAsNewOnDevServer(t *testing.T) {
	addr := devServer(t)
	site, exec := liveWorld(t)
	queue := "it-continue-" + time.Now().Format("150405.000")
	c := dial(t, addr)
	defer c.Close()
	w := startWorkerOpts(t, c, queue, exec, site.Proofs, temporal.ActivityOptions{Heartbeat: 3 * time.Second, StartToClose: 2 * time.Minute, ContinueAsNewAt: continuedAt})
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	site.Proofs.Register("cpu-u10", "fm-id-cpu-u10")
	sub := &temporal.Submitter{Client: c, TaskQueue: queue, NetBox: site.NetBox, Proofs: site.Proofs}
	cfg := siteConfig()
	cfg.ConfigureDHCP = exec.DHCP != nil
	run, err := sub.Submit(ctx, temporal.Submission{Device: "cpu-u10", Site: "lab1", Config: cfg, PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	res, f := sub.Wait(ctx, run)
	if f != nil || !res.Enrolled || res.ProvisionState != "available" {
		t.Fatalf("result %+v, %v; want enrolled and available", res, f)
	}
	// Walk the chain: every run under the threshold and one command past
	// it, all but the last continued.
	var runs []string
	lengths := []int{}
	for id := run.RunID; id != ""; {
		runs = append(runs, id)
		it := c.GetWorkflowHistory(ctx, run.WorkflowID, id, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		n, next := 0, ""
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			n++
			if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				next = a.GetNewExecutionRunId()
			}
		}
		lengths = append(lengths, n)
		id = next
	}
	if len(runs) < 3 {
		t.Fatalf("%d runs (%v events)", len(runs), lengths)
	}
	for i, n := range lengths {
		if n > continuedAt+12 {
			t.Errorf("run %d recorded %d events, past %d and one command", i, n, continuedAt)
		}
	}
	t.Logf("%d runs of %v events", len(runs), lengths)
	if _, err := enrolltest.Projector(site).Project(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := sub.Settle(ctx, run)
	if err != nil || out.Action != enrollment.ProofEstablished {
		t.Fatalf("settle = %+v, %v; want proof established across the chain", out, err)
	}
	record(t, c, run.WorkflowID, runs[0], "continued-first-cpu-u10")
	record(t, c, run.WorkflowID, runs[len(runs)-1], "continued-last-cpu-u10")
}

// record writes the run's history into testdata for the replay test when
// HOSTFORGE_RECORD_HISTORIES=1, with the temporal CLI, as name-deferred:
// the histories named without the suffix were recorded before sleeps rode
// in the next step (DeferredSleepChange) and stay, so that the replay
// test holds the code to the runs that started on timers.
func record(t *testing.T, c client.Client, workflowID, runID, name string) {
	t.Helper()
	if os.Getenv("HOSTFORGE_RECORD_HISTORIES") != "1" {
		return
	}
	cli := os.Getenv("HOSTFORGE_TEMPORAL_CLI")
	if cli == "" {
		t.Fatal("HOSTFORGE_TEMPORAL_CLI is unset")
	}
	out, err := exec.Command(cli, "workflow", "show", "--address", os.Getenv("HOSTFORGE_TEMPORAL_ADDRESS"),
		"--workflow-id", workflowID, "--run-id", runID, "--output", "json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("temporal workflow show: %v: %s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "histories", strings.ReplaceAll(name, "/", "-")+"-deferred.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", path)
}
