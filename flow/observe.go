package flow

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
)

// Observer is told what workflow runs do, for metrics. The core declares it
// so that no workflow depends on a metrics library; adapters/metrics
// implements it with Prometheus. Observe receives one observation value:
// flow's own (StepAttempt, Waited, WaitExhausted, RunStarted, RunEnded,
// PhaseEnded, ScheduleRun) or a workflow package's (extensions.DeliveryEnded);
// an observer ignores the kinds it does not know.
//
// Observe is called from workflow code — under Temporal, from the workflow
// goroutine — so it must be safe for concurrent use, must not block and
// must not fail: an observation never changes what a run does.
type Observer interface {
	Observe(o any)
}

// ObservedRuntime is a Runtime that reports what its runs do. Local is one
// (with its Observer set); so is the Temporal runtime.
type ObservedRuntime interface {
	Runtime
	// Observing returns the observer to report to now, or nil when there
	// is none, or when this moment of the run was reported already: under
	// Temporal, while the workflow replays history a worker has executed
	// before. Ask again for every observation; never keep the answer
	// across a step or a sleep.
	Observing() Observer
}

// ObserverOf returns rt's observer for an observation made now, or nil.
// Bodies report through it:
//
//	if o := flow.ObserverOf(rt); o != nil {
//		o.Observe(flow.PhaseEnded{...})
//	}
//
// so that a run without an observer builds no observation.
func ObserverOf(rt Runtime) Observer {
	if o, ok := rt.(ObservedRuntime); ok {
		return o.Observing()
	}
	return nil
}

// StepAttempt is one call of a step that returned: done, a wait or a
// failure. Local reports it from the step's own call; the Temporal runtime
// from the workflow when the activity's result arrives (Took then counts
// the activity's queueing too).
type StepAttempt struct {
	Step    string
	Outcome hostforge.Outcome
	Took    time.Duration
	// Wait is set for a step that returned a wait.
	Wait *hostforge.Wait
	// Failure is set for a step that failed.
	Failure *hostforge.Failure
}

// Waited is a wait the Runner sleeps for, within its reason's budget.
type Waited struct {
	Step, Reason string
	// Sleep is this pause; Waited the meter's total with it, of Budget.
	Sleep, Waited, Budget time.Duration
}

// WaitExhausted is a wait past its reason's budget: the Runner fails the
// step with the reason's exhaustion failure instead of sleeping again. It
// is how a run that would otherwise be stuck in a wait ends.
type WaitExhausted struct {
	Step, Reason   string
	Waited, Budget time.Duration
}

// RunStarted is a workflow body's start. Workflow names the workflow:
// "enrollment", "firmware" or "extensions".
type RunStarted struct {
	Workflow string
}

// RunEnded is a workflow body's end. Failure is nil when it succeeded.
type RunEnded struct {
	Workflow string
	Took     time.Duration
	Failure  *hostforge.Failure
}

// PhaseEnded is one phase of a run that completed ("done") or failed
// ("failed"): an enrollment phase, a firmware update's substate. Phase
// names are the workflow's constants, never a device or an ID.
type PhaseEnded struct {
	Workflow, Phase, Status string
	Took                    time.Duration
}

// ScheduleRun is one run of a periodic job (the Ironic projection,
// inventory exploration, the firmware manager's pass): Scheduled is when
// its schedule meant it to start, Started when it did.
type ScheduleRun struct {
	Schedule           string
	Scheduled, Started time.Time
}

// Lag is how late the run started.
func (s ScheduleRun) Lag() time.Duration { return max(s.Started.Sub(s.Scheduled), 0) }

// ObserveScheduleRun reports a run of schedule, meant to start at
// scheduled, from the body of the scheduled job: it started at the
// runtime's now. A zero scheduled (a run started by hand) reports no lag.
// Under Temporal, the scheduled time of a run a Temporal Schedule started
// is temporal.ScheduledStart.
func ObserveScheduleRun(ctx context.Context, rt Runtime, schedule string, scheduled time.Time) {
	o := ObserverOf(rt)
	if o == nil {
		return
	}
	now := rt.Now(ctx)
	if scheduled.IsZero() {
		scheduled = now
	}
	o.Observe(ScheduleRun{Schedule: schedule, Scheduled: scheduled, Started: now})
}
