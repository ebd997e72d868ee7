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
	// j journals the run so it can continue as new (resume.go); nil for a
	// runtime made with NewRuntime, which never continues.
	j *journal
	// deferSleeps folds a sleep into the step after it (delay.go): set for
	// the workflows Define runs, which sleep what is left at the body's
	// end; a runtime made with NewRuntime sleeps on timers.
	deferSleeps bool
	// pending is the sleep held for the next step; version is the run's
	// DeferredSleepChange, asked at its first sleep.
	pending time.Duration
	version *workflow.Version
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
	// CallPolicies are the call policies steps declare (flow.PerCall),
	// read from each call's input; Register fills them from the registered
	// steps. A call's policy overrides StartToClose, the step's timeout,
	// Heartbeat and WorkerLossAttempts: an at-most-once call has one
	// attempt, and its loss reaches the body as flow.AttemptLost.
	CallPolicies map[string]func(in any) flow.CallPolicy
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
	// ContinueAsNewAt is the history length at which a run continues as
	// new (DefaultContinueAsNewAt; see resume.go). Tests lower it.
	ContinueAsNewAt int
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

// policy is the call policy of one call of step.
func (o ActivityOptions) policy(step string, in any) flow.CallPolicy {
	if p := o.CallPolicies[step]; p != nil {
		return p(in)
	}
	return flow.CallPolicy{}
}

// NewRuntime binds a Runtime to a workflow context.
func NewRuntime(ctx workflow.Context, opts ActivityOptions) *Runtime {
	return &Runtime{ctx: ctx, opts: opts.withDefaults()}
}

// Do runs the step as the activity of the same name and decodes its output
// into out. The error is nil, a *hostforge.Wait or a *hostforge.Failure.
func (r *Runtime) Do(_ context.Context, step string, in, out any) error {
	if r.j != nil {
		return r.j.do(r, step, in, out)
	}
	return r.execute(step, in, out)
}

// execute runs the step's activity and decodes its result into out. A
// sleep held for it delays the activity (delay.go); a call that runs at
// most once has no attempt to spare for that, and sleeps it first.
func (r *Runtime) execute(step string, in, out any) error {
	call := r.opts.policy(step, in)
	if call.AtMostOnce {
		if err := r.flush(); err != nil {
			return err
		}
	}
	delay := r.pending
	r.pending = 0
	ao := r.opts.activity(step, call)
	args := []any{in}
	if delay > 0 {
		args = append(args, Delay{After: delay})
		ao.RetryPolicy.MaximumAttempts++ // the deferring attempt
	}
	ctx := workflow.WithActivityOptions(r.ctx, ao)
	start := workflow.Now(r.ctx)
	err := fromActivityError(step, workflow.ExecuteActivity(ctx, step, args...).Get(ctx, out))
	if call.AtMostOnce && StepTimedOut.Is(err) {
		err = flow.AttemptLost.Wrap(err, "step %s lost its worker and was not started again (it runs at most once)", step)
	}
	took := workflow.Now(r.ctx).Sub(start)
	if o := r.Observing(); o != nil {
		outcome, f, w := hostforge.Classify(err)
		o.Observe(flow.StepAttempt{Step: step, Outcome: outcome, Took: max(took-delay, 0), Wait: w, Failure: f})
	}
	if took < delay && !hostforge.Cancelled.Is(err) {
		// The step ran before its delay was over (a server that ignores
		// NextRetryDelay, a worker of an older build): sleep the rest, so
		// the time the body's budgets counted did pass.
		workflow.GetLogger(r.ctx).Warn("a deferred step ran before its delay; sleeping the rest on a timer", "step", step, "delay", delay, "took", took)
		if serr := r.sleepTimer(delay - took); serr != nil {
			return serr
		}
	}
	return err
}

// Observing returns the observer, or nil while the workflow replays
// history or a continued run replays its journal: what a worker executed
// before was reported then (the package doc of adapters/metrics says why
// the workflow side is where to count).
func (r *Runtime) Observing() flow.Observer {
	if r.opts.Observer == nil || workflow.IsReplaying(r.ctx) || (r.j != nil && r.j.replaying()) {
		return nil
	}
	return r.opts.Observer
}

// activity is the activity options of one call of step.
func (o ActivityOptions) activity(step string, call flow.CallPolicy) workflow.ActivityOptions {
	ao := workflow.ActivityOptions{
		StartToCloseTimeout: o.timeout(step),
		HeartbeatTimeout:    o.Heartbeat,
		// The workflow body owns retries, waits and their budgets: every
		// classified outcome leaves the activity non-retryable
		// (activityError). Temporal retries only what never reached
		// hostforge's classification — a worker that died or stopped
		// heartbeating mid-step — as every step is idempotent, unless the
		// call says it runs at most once.
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts: int32(o.WorkerLossAttempts),
			InitialInterval: time.Second,
		},
	}
	if call.Timeout > 0 {
		ao.StartToCloseTimeout = call.Timeout
	}
	if call.Heartbeat > 0 {
		ao.HeartbeatTimeout = call.Heartbeat
	}
	if call.AtMostOnce {
		ao.RetryPolicy.MaximumAttempts = 1
	}
	return ao
}

// Sleep is a durable sleep: held for the step after it, or a workflow
// timer (delay.go).
func (r *Runtime) Sleep(_ context.Context, d time.Duration) error {
	if r.j != nil {
		return r.j.sleep(r, d)
	}
	return r.timer(d)
}

// timer sleeps d: a sleep already held is slept first, on its own timer,
// and d is held for the next step when the run defers its sleeps.
func (r *Runtime) timer(d time.Duration) error {
	if err := r.flush(); err != nil {
		return err
	}
	if d > 0 && r.defers() {
		r.pending = d
		return nil
	}
	return r.sleepTimer(d)
}

func (r *Runtime) sleepTimer(d time.Duration) error {
	if err := workflow.Sleep(r.ctx, d); err != nil {
		return hostforge.Cancelled.Wrap(err, "the workflow was cancelled while waiting %s", d)
	}
	return nil
}

// Now is the workflow's deterministic clock, after any sleep held.
func (r *Runtime) Now(context.Context) time.Time {
	if r.j != nil {
		return r.j.now(r)
	}
	return r.clock()
}

// clock reads the workflow clock once a held sleep is over. A cancelled
// sleep is not an error here: the body's next step or sleep returns it.
func (r *Runtime) clock() time.Time {
	_ = r.flush()
	return workflow.Now(r.ctx)
}
