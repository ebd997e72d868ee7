package temporal

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
)

// Periodic work of a site: the Ironic projection, the exploration of the
// managed hosts' firmware inventories and the firmware update manager's
// pass. Each is a short workflow a Temporal schedule of the site starts
// every interval (see EnsureSchedules), so it runs once per interval
// however many workers poll the site's queue, and never twice at once
// (overlap policy skip). A failed run is logged in its history and the
// next interval's run starts over: the work only ever converges.

// Workflow types of the periodic work.
const (
	ProjectionWorkflowName = "hostforge.periodic.ironic_projection"
	ExploreWorkflowName    = "hostforge.periodic.firmware_explore"
	PassWorkflowName       = "hostforge.periodic.firmware_pass"
)

// Steps of the periodic work.
const (
	StepProject      = "periodic.ironic_projection"
	StepExplore      = "periodic.firmware_explore"
	StepPass         = "periodic.firmware_pass"
	StepStartUpdates = "periodic.firmware_start_updates"
)

// Attempt bounds of the periodic steps. A projection lists every Ironic
// instance and writes the changes; an exploration reads the inventories
// of every host whose reading got old (eight at a time, each BMC read
// bounded by its request deadlines), which on a large site takes a while.
const (
	projectAttempt = 10 * time.Minute
	exploreAttempt = time.Hour
	passAttempt    = 10 * time.Minute
	startAttempt   = 10 * time.Minute
)

// PeriodicFailed is a periodic run that failed on an error its system did
// not classify.
var PeriodicFailed = hostforge.Declare(hostforge.Spec{
	Code:      "PERIODIC_RUN_FAILED",
	Phase:     "periodic",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: true,
	Action:    "A periodic run (the Ironic projection, the firmware inventories' exploration or the update manager's pass) failed on a system that answered unexpectedly (the message names the run and the answer); the next interval's run tries again. If it keeps failing, check that system.",
})

// classified returns a periodic step's error classified: what the systems
// did not classify is PERIODIC_RUN_FAILED naming the run.
func classified(err error, run string) error {
	if hostforge.Settled(err) {
		return err
	}
	return PeriodicFailed.Wrap(err, "%s", run)
}

// PeriodicInput is every periodic workflow's input.
type PeriodicInput struct {
	Site string `json:"site"`
}

// PassResult is what a firmware pass workflow did.
type PassResult struct {
	Pass firmware.PassReport `json:"pass"`
	// Started lists the machines whose update workflow this run started.
	Started []string `json:"started,omitempty"`
}

// periodicPolicy: one attempt; the next interval's run is the retry.
var periodicPolicy = flow.Policy{MaxAttempts: 1}

// Projection is the Ironic projection of a site (one StepProject).
var Projection = Define(ProjectionWorkflowName, func(ctx context.Context, rt flow.Runtime, in PeriodicInput) (enrollment.ProjectionReport, error) {
	observeScheduleRun(ctx, rt, PurposeProjection)
	var rep enrollment.ProjectionReport
	err := flow.Runner{RT: rt, Policy: periodicPolicy}.Run(ctx, StepProject, in, &rep)
	return rep, err
})

// Explore reads the managed hosts' inventories that got old (one
// StepExplore).
var Explore = Define(ExploreWorkflowName, func(ctx context.Context, rt flow.Runtime, in PeriodicInput) (firmware.ExploreReport, error) {
	observeScheduleRun(ctx, rt, PurposeExplore)
	var rep firmware.ExploreReport
	err := flow.Runner{RT: rt, Policy: periodicPolicy}.Run(ctx, StepExplore, in, &rep)
	return rep, err
})

// Pass is the firmware update manager's pass (StepPass), then the start of
// the update workflow of every request that has none running
// (StepStartUpdates).
var Pass = Define(PassWorkflowName, func(ctx context.Context, rt flow.Runtime, in PeriodicInput) (PassResult, error) {
	observeScheduleRun(ctx, rt, PurposePass)
	var res PassResult
	r := flow.Runner{RT: rt, Policy: periodicPolicy}
	if err := r.Run(ctx, StepPass, in, &res.Pass); err != nil {
		return res, err
	}
	err := r.Run(ctx, StepStartUpdates, in, &res.Started)
	return res, err
})

// observeScheduleRun reports a periodic run to the runtime's observer
// (hostforge_schedule_runs_total and its lag), labelled by the schedule's
// purpose and timed from the start the schedule meant it to have.
func observeScheduleRun(ctx context.Context, rt flow.Runtime, purpose string) {
	var at time.Time
	if r, ok := rt.(*Runtime); ok {
		at, _ = ScheduledStart(r.ctx)
	}
	flow.ObserveScheduleRun(ctx, rt, purpose, at)
}

// ProjectionSteps is the projection workflow's step on p.
func ProjectionSteps(p *enrollment.Projector) *flow.Table {
	return flow.MustTable(flow.Bind(StepProject, projectAttempt, func(ctx context.Context, _ PeriodicInput) (enrollment.ProjectionReport, error) {
		rep, err := p.Project(ctx)
		return rep, classified(err, "the Ironic projection")
	}))
}

// FirmwarePeriodic binds the exploration and pass workflows' steps to a
// site's firmware cycle (firmware.Cycle: its explorer, its update manager
// and the metrics its pass publishes to).
type FirmwarePeriodic struct {
	Cycle *firmware.Cycle
	// Client starts the update workflows; nil takes the client of the
	// worker running the step (activity.GetClient).
	Client client.Client
	// TaskQueue is where the update workflows run; "" takes the queue of
	// the worker running the step.
	TaskQueue string
	// Log receives a line per update workflow start (nil discards); the
	// cycle logs its own.
	Log *slog.Logger
}

func (f *FirmwarePeriodic) log() *slog.Logger {
	if f.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Log
}

// Steps are StepExplore, StepPass and StepStartUpdates.
func (f *FirmwarePeriodic) Steps() *flow.Table {
	return flow.MustTable(
		// Hosts whose BMC could not be read are logged and reported; the
		// next run reads them again.
		flow.Bind(StepExplore, exploreAttempt, func(ctx context.Context, _ PeriodicInput) (firmware.ExploreReport, error) {
			return f.Cycle.Explore(ctx), nil
		}),
		flow.Bind(StepPass, passAttempt, f.pass),
		flow.Bind(StepStartUpdates, startAttempt, f.startUpdates),
	)
}

func (f *FirmwarePeriodic) pass(ctx context.Context, _ PeriodicInput) (firmware.PassReport, error) {
	rep, err := f.Cycle.Pass(ctx)
	return rep.Pass, classified(err, "the update manager's pass")
}

func (f *FirmwarePeriodic) startUpdates(ctx context.Context, _ PeriodicInput) ([]string, error) {
	c, queue := f.Client, f.TaskQueue
	if activity.IsActivity(ctx) {
		if c == nil {
			c = activity.GetClient(ctx)
		}
		if queue == "" {
			queue = activity.GetInfo(ctx).TaskQueue
		}
	}
	if c == nil {
		return nil, TemporalUnavailable.At("firmware_pass").New("starting firmware updates: no Temporal client (FirmwarePeriodic.Client is nil and this is not a worker's activity)")
	}
	m := f.Cycle.Manager
	started, err := StartFirmwareUpdates(ctx, c, queue, m.Store, m.Settings)
	if len(started) > 0 {
		f.log().Info("firmware update workflows started", "phase", "firmware_pass", "machines", started)
	}
	return started, classified(err, "starting the firmware update workflows")
}
