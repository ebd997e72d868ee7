package temporal

import (
	"encoding/json"
	"fmt"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// A poll's sleep rides in its next step.
//
// A body that polls sleeps, then calls the same step again: as a durable
// timer and an activity that is two commands, each waking the workflow —
// 11 history events per poll (the timer's started and fired, the
// activity's scheduled, started and closed, two workflow tasks of three).
// Instead, a sleep followed by a step is not a timer: the runtime holds it
// and schedules the step's activity with the sleep as its Delay (the
// activity's second argument). The activity's first attempt runs nothing:
// it asks the server to retry it after the delay ([DelayErrorType], its
// NextRetryDelay), and the retry runs the step. The server writes no event
// for a retry, so the poll costs the activity's three events and the one
// workflow task it wakes: 6.
//
// Everything above the runtime is unchanged: the body still calls Sleep
// and Do, the Runner spends its wait budgets and reports its waits as
// before, the journal records the same entries, and the step runs no
// sooner than it did after the timer. A sleep not followed by a step — a
// clock reading, a second sleep, a call that runs at most once (one
// attempt leaves no room for the deferring one), the body's end, a run
// about to continue as new — is slept as a timer first. A step the server
// ran before its delay was over (an older server that ignores
// NextRetryDelay retries after a second) is followed by a timer for
// the rest, so the waits' real time never falls short of what their
// budgets counted. The deferring attempt does not count against
// WorkerLossAttempts: a deferred step's activity has one attempt more.
//
// Histories recorded before the change replay with timers: the runtime
// asks workflow.GetVersion ([DeferredSleepChange]) at a run's first sleep,
// which records a marker in new runs (two events, once per run).

// DelayErrorType is the ApplicationError type of a deferred step's first
// attempt: "retry me after the delay". It never reaches the workflow.
const DelayErrorType = "HOSTFORGE_DELAY"

// DeferredSleepChange is the workflow.GetVersion change of deferred sleeps:
// DefaultVersion sleeps on timers (histories recorded before), version 1
// folds a sleep into the step after it.
const DeferredSleepChange = "hostforge-deferred-sleep"

// Delay is a step activity's second argument: how long its first attempt
// defers the step (the sleep the body asked for before it). Absent (nil)
// or zero, the step runs at once.
type Delay struct {
	After time.Duration `json:"after"`
}

// deferral is the first attempt's answer to a deferred step: a benign
// error (the SDK logs it at debug level, and counts no failure) that the
// server retries after d.
func deferral(step string, d time.Duration) error {
	return temporal.NewApplicationErrorWithOptions(fmt.Sprintf("step %s waits %s before it runs", step, d), DelayErrorType, temporal.ApplicationErrorOptions{
		NextRetryDelay: d,
		Category:       temporal.ApplicationErrorCategoryBenign,
	})
}

// deferring reports whether an attempt of a step activity only defers the
// step: its first attempt, when it carries a delay.
func deferring(attempt int32, d *Delay) bool {
	return d != nil && d.After > 0 && attempt <= 1
}

// DeferredSleep is the sleep a step activity's attempt stands for, as a
// test environment (go.temporal.io/sdk/testsuite) sees it: true only for
// the first attempt of a deferred step, which runs nothing. A harness that
// moves a fake clock on the workflow's timers (SetOnTimerScheduledListener)
// moves it on these too (SetOnActivityStartedListener), and counts the
// attempt as a sleep, not a step.
func DeferredSleep(info *activity.Info, args converter.EncodedValues) (time.Duration, bool) {
	if info == nil || args == nil {
		return 0, false
	}
	var in json.RawMessage
	var d *Delay
	if err := args.Get(&in, &d); err != nil || !deferring(info.Attempt, d) {
		return 0, false
	}
	return d.After, true
}

// ScheduledDelay is the delay a step's scheduled activity carries in a
// history (zero for an activity scheduled at once, or not a step's): the
// sleep the body took before the step.
func ScheduledDelay(a *historypb.ActivityTaskScheduledEventAttributes) time.Duration {
	ps := a.GetInput().GetPayloads()
	if len(ps) < 2 {
		return 0
	}
	var d Delay
	if err := converter.GetDefaultDataConverter().FromPayload(ps[1], &d); err != nil {
		return 0
	}
	return max(d.After, 0)
}

// defers reports whether this run folds its sleeps into the next step: a
// workflow defined with Define, on histories recorded since the change.
func (r *Runtime) defers() bool {
	if !r.deferSleeps {
		return false
	}
	if r.version == nil {
		v := workflow.GetVersion(r.ctx, DeferredSleepChange, workflow.DefaultVersion, 1)
		r.version = &v
	}
	return *r.version >= 1
}

// flush sleeps a held sleep on a timer: the next thing the body does is
// not a step that can carry it.
func (r *Runtime) flush() error {
	d := r.pending
	if d <= 0 {
		return nil
	}
	r.pending = 0
	return r.sleepTimer(d)
}
