package temporal

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
)

// Runtime is flow.Runtime inside a Temporal workflow: Do is an
// activity, Sleep a durable timer, Now the workflow clock. It is bound to
// one workflow.Context; the context.Context arguments of its methods are
// not used for scheduling (cancellation arrives through the workflow).
type Runtime struct {
	ctx  workflow.Context
	opts ActivityOptions
}

var _ flow.ObservedRuntime = (*Runtime)(nil)

// ActivityOptions are the timeouts of step activities. Zero fields take the
// defaults noted.
type ActivityOptions struct {
	// StartToClose, when set, bounds every step alike (tests). Otherwise a
	// step is bounded by StepTimeouts[step] — its declared attempt bound,
	// the sum of the deadlines of the calls one attempt makes — and a step
	// missing there by DefaultStartToClose.
	StartToClose time.Duration
	// StepTimeouts is each step's attempt bound; Register fills it from the
	// registered steps.
	StepTimeouts map[string]time.Duration
	// Heartbeat is how long a step may go without a heartbeat before
	// Temporal declares its worker gone (1 minute).
	Heartbeat time.Duration
	// WorkerLossAttempts bounds the attempts of a step whose worker died
	// (3). Classified failures and waits are never retried by Temporal.
	WorkerLossAttempts int
	// Observer, when set, is told what the workflows do (flow.Observer):
	// each step's attempt as its result reaches the workflow, and what the
	// bodies report. It is never told while a workflow replays history, so
	// a worker that replays a run does not report it again.
	Observer flow.Observer
}

// Defaults of ActivityOptions.
const (
	// DefaultStartToClose bounds a step that declares no attempt bound.
	DefaultStartToClose = 15 * time.Minute
	DefaultHeartbeat    = time.Minute
	// DefaultWorkerLossAttempts: a step survives two worker deaths.
	DefaultWorkerLossAttempts = 3
)

func (o ActivityOptions) withDefaults() ActivityOptions {
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.WorkerLossAttempts <= 0 {
		o.WorkerLossAttempts = DefaultWorkerLossAttempts
	}
	return o
}

// timeout is the start-to-close timeout of step.
func (o ActivityOptions) timeout(step string) time.Duration {
	if o.StartToClose > 0 {
		return o.StartToClose
	}
	if d, ok := o.StepTimeouts[step]; ok && d > 0 {
		return d
	}
	return DefaultStartToClose
}

// NewRuntime binds a Runtime to a workflow context.
func NewRuntime(ctx workflow.Context, opts ActivityOptions) *Runtime {
	return &Runtime{ctx: ctx, opts: opts.withDefaults()}
}

// Do runs the step as the activity of the same name and decodes its output
// into out. The error is nil, a *hostforge.Wait or a *hostforge.Failure.
func (r *Runtime) Do(_ context.Context, step string, in, out any) error {
	ctx := workflow.WithActivityOptions(r.ctx, workflow.ActivityOptions{
		StartToCloseTimeout: r.opts.timeout(step),
		HeartbeatTimeout:    r.opts.Heartbeat,
		// The workflow body owns retries, waits and their budgets: every
		// classified outcome is non-retryable here. Temporal retries only
		// what never reached hostforge's classification — a worker that
		// died or stopped heartbeating mid-step — as every step is idempotent.
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        int32(r.opts.WorkerLossAttempts),
			InitialInterval:        time.Second,
			NonRetryableErrorTypes: classifiedTypes(),
		},
	})
	start := workflow.Now(r.ctx)
	err := fromActivityError(step, workflow.ExecuteActivity(ctx, step, in).Get(ctx, out))
	if o := r.Observing(); o != nil {
		outcome, f, w := hostforge.Classify(err)
		o.Observe(flow.StepAttempt{Step: step, Outcome: outcome, Took: workflow.Now(r.ctx).Sub(start), Wait: w, Failure: f})
	}
	return err
}

// Observing returns the observer, or nil while the workflow replays
// history: what a worker executed before was reported then (the package
// doc of adapters/metrics says why the workflow side is where to count).
func (r *Runtime) Observing() flow.Observer {
	if r.opts.Observer == nil || workflow.IsReplaying(r.ctx) {
		return nil
	}
	return r.opts.Observer
}

// Sleep is a durable workflow timer.
func (r *Runtime) Sleep(_ context.Context, d time.Duration) error {
	if err := workflow.Sleep(r.ctx, d); err != nil {
		return hostforge.Cancelled.Wrap(err, "the workflow was cancelled while waiting %s", d)
	}
	return nil
}

// Now is the workflow's deterministic clock.
func (r *Runtime) Now(context.Context) time.Time { return workflow.Now(r.ctx) }

// classifiedTypes lists the ApplicationError types activities return for
// classified outcomes: every declared failure code and the wait.
func classifiedTypes() []string {
	codes := hostforge.Codes()
	out := make([]string, 0, len(codes)+1)
	for _, c := range codes {
		out = append(out, c.Code)
	}
	return append(out, WaitErrorType)
}
