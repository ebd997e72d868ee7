package worker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/extevents"
	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/firmware"
)

// Options configure a worker. Zero fields take the defaults noted.
type Options struct {
	// TaskQueue is the queue the worker polls, submitters start
	// enrollments on and the site's schedules start their runs on
	// (temporal.DefaultTaskQueue).
	TaskQueue string
	// MetricsListen serves the registry on http://MetricsListen/metrics
	// (host:port; "" serves nothing).
	MetricsListen string
	// Registry receives the worker's metrics; nil makes one with the Go
	// and process collectors (metrics.NewRegistry).
	Registry *prometheus.Registry
	// StopTimeout is how long running steps may finish once Run's context
	// ends, before they are cancelled (30 s).
	StopTimeout time.Duration
	// MaxConcurrentSteps bounds the steps this worker runs at once (0: the
	// Temporal SDK's default).
	MaxConcurrentSteps int
	// Activity tunes the step activities (zero: the defaults of
	// temporal.ActivityOptions).
	Activity temporal.ActivityOptions
	// NoSchedules leaves the site's schedules alone: a worker that only
	// adds capacity, or runs without the periodic work's systems.
	NoSchedules bool
	// Status receives one line per service as it starts and stops (the
	// command line prints them); nil discards them.
	Status io.Writer
	// Ready, when set, is called once the worker polls its task queue
	// (the command line's -o json document is printed then).
	Ready func()
	// Log receives the worker's own log; nil discards it.
	Log *slog.Logger
}

// DefaultStopTimeout is Options.StopTimeout's default.
const DefaultStopTimeout = 30 * time.Second

// Worker is a Temporal worker on a site's systems. Run it once.
type Worker struct {
	sys       *wiring.Systems
	client    client.Client
	o         Options
	registry  *prometheus.Registry
	workflows []temporal.Workflow
	schedules []temporal.Schedule
	cycle     *firmware.Cycle
	ran       sync.Once
}

// WorkerFailed is a worker that could not be built or started (a service
// whose address does not listen, a missing argument), or a service of a
// running worker that stopped.
var WorkerFailed = hostforge.Declare(hostforge.Spec{
	Code:      "WORKER_FAILED",
	Phase:     "worker",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "The worker could not start, or one of its services stopped (the message names the service and why: an address already in use, a missing argument); fix the config or the flag it names and start the worker again. Workflows in flight carry on with the other workers.",
})

// New binds every workflow and the site's periodic work to sys (see the
// package doc) and registers the worker's metrics on the registry. c is
// the Temporal client the worker polls with, and the client its steps
// start workflows and read closes with. Nothing is started before Run.
func New(sys *wiring.Systems, c client.Client, o Options) (*Worker, error) {
	if sys == nil || c == nil {
		return nil, WorkerFailed.New("worker.New needs the wired systems and a Temporal client")
	}
	if o.TaskQueue == "" {
		o.TaskQueue = temporal.DefaultTaskQueue
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.StopTimeout < 0 || o.MaxConcurrentSteps < 0 {
		return nil, WorkerFailed.New("stop timeout %s and concurrent steps %d: want 0 or more", o.StopTimeout, o.MaxConcurrentSteps)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Status == nil {
		o.Status = io.Discard
	}
	w := &Worker{sys: sys, client: c, o: o, registry: o.Registry}
	if w.registry == nil {
		w.registry = metrics.NewRegistry()
	}
	ex, err := metrics.NewExporters(w.registry)
	if err != nil {
		return nil, WorkerFailed.Wrap(err, "registering the worker's metrics")
	}
	if w.o.Activity.Observer == nil {
		w.o.Activity.Observer = ex.Workflows
	}
	b, err := bind(sys, ex.Firmware, o.Log)
	if err != nil {
		return nil, err
	}
	w.workflows, w.schedules, w.cycle = b.workflows, b.schedules, b.cycle
	for _, s := range w.schedules {
		ex.Workflows.DeclareSchedule(s.Purpose, s.Every)
	}
	return w, nil
}

// publishStored sets the firmware gauges from the store before the
// metrics are read: the site's pass runs on one worker per interval, and
// every worker shows its figures, not zeros or its own last pass's.
func (w *Worker) publishStored(ctx context.Context) {
	if w.cycle == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, gaugeReadTimeout)
	defer cancel()
	if _, err := w.cycle.PublishStored(ctx); err != nil {
		w.o.Log.Warn("reading the firmware gauges from the store", "phase", "worker", "error", err.Error())
	}
}

// gaugeReadTimeout bounds the store reads of one scrape.
const gaugeReadTimeout = 5 * time.Second

// Workflows names the workflows the worker runs on its systems.
func (w *Worker) Workflows() []string {
	names := make([]string, 0, len(w.workflows))
	for _, wf := range w.workflows {
		names = append(names, wf.Name)
	}
	return names
}

// Schedules are the site's periodic workflows the worker converges.
func (w *Worker) Schedules() []temporal.Schedule { return w.schedules }

// Registry is the registry the worker's metrics are on.
func (w *Worker) Registry() *prometheus.Registry { return w.registry }

// Register registers every workflow and step of the worker on r (a
// Temporal worker, a test environment, a replayer).
func (w *Worker) Register(r sdkworker.Registry) error {
	a := temporal.Activities{Secrets: w.sys.Secrets}
	if hb := w.o.Activity.Heartbeat; hb > 0 {
		// Three heartbeats fit in the timeout, so one late one is no loss.
		a.HeartbeatEvery = min(hb/3, 10*time.Second)
	}
	return temporal.RegisterWorkflows(r, a, w.o.Activity, w.workflows...)
}

// Run registers the workflows on a Temporal worker, starts the services,
// converges the site's schedules and polls until ctx ends or a service
// fails; then it stops everything in order (see the package doc). It
// returns nil after a stop by ctx, else the failure (WORKER_FAILED,
// TEMPORAL_UNAVAILABLE). A Worker runs once.
func (w *Worker) Run(ctx context.Context) error {
	var err error = WorkerFailed.New("the worker has already run")
	w.ran.Do(func() { err = w.run(ctx) })
	return err
}

func (w *Worker) run(ctx context.Context) error {
	svc := &services{status: w.o.Status, log: w.o.Log}
	defer svc.stop()
	if w.o.MetricsListen != "" {
		if err := svc.serveMetrics(w.registry, w.o.MetricsListen, w.publishStored); err != nil {
			return err
		}
	}
	if fw := w.sys.Firmware; fw != nil && fw.Scout != nil {
		if err := svc.serveScout(fw.Scout, fw.ScoutListen, fw.ScoutTLS); err != nil {
			return err
		}
	}
	// The event sources: the Ironic deploy watcher (fed by the projection
	// this worker may run) and, with extensions.netbox_events, the
	// endpoint of NetBox's event rules; both dispatch through Temporal.
	sources, err := extevents.Start(ctx, w.sys, temporal.EventSubmitter{Client: w.client, Queue: w.o.TaskQueue}, "", false, w.o.Status)
	if err != nil {
		return err
	}
	defer sources.Stop()
	tw := sdkworker.New(w.client, w.o.TaskQueue, sdkworker.Options{WorkerStopTimeout: w.o.StopTimeout, MaxConcurrentActivityExecutionSize: w.o.MaxConcurrentSteps})
	if err := w.Register(tw); err != nil {
		return err
	}
	if !w.o.NoSchedules && len(w.schedules) > 0 {
		got, err := temporal.EnsureSchedules(ctx, w.client, w.sys.Site, w.o.TaskQueue, w.schedules...)
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(got))
		for id := range got {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			fmt.Fprintf(w.o.Status, "schedule %s %s\n", id, got[id])
		}
	}
	if err := tw.Start(); err != nil {
		return temporal.TemporalUnavailable.At("worker").Wrap(err, "starting the worker on task queue %s", w.o.TaskQueue)
	}
	fmt.Fprintf(w.o.Status, "worker polling task queue %s for %s on site %s\n", w.o.TaskQueue, strings.Join(w.Workflows(), ", "), w.sys.Site)
	if w.o.Ready != nil {
		w.o.Ready()
	}
	var failed error
	select {
	case <-ctx.Done():
	case failed = <-svc.failed():
		w.o.Log.Error("a service of the worker failed; stopping", "phase", "worker", "error", failed.Error())
	case failed = <-sources.Err():
		w.o.Log.Error("the NetBox events endpoint failed; stopping", "phase", "worker", "error", failed.Error())
	}
	fmt.Fprintf(w.o.Status, "stopping: running steps have %s to finish\n", w.o.StopTimeout)
	tw.Stop()
	svc.stop()
	fmt.Fprintln(w.o.Status, "worker stopped")
	if failed != nil {
		return WorkerFailed.Wrap(failed, "a service stopped")
	}
	return nil
}
