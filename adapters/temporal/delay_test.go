package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/flow"
)

// pollIn is the input of the delay tests' workflow: what its body does.
type pollIn struct {
	// Waits is how many times the poll step asks to wait 40 s before it
	// is done; the body runs it with a flow.Runner.
	Waits int `json:"waits"`
	// Sleep, Read and Once make the body sleep Sleep, then read the clock
	// when Read, then call the poll step (Once: the at-most-once step)
	// directly; End makes it sleep End last, after it read the clock for
	// its output.
	Sleep time.Duration `json:"sleep"`
	Read  bool          `json:"read"`
	Once  bool          `json:"once"`
	End   time.Duration `json:"end"`
}

// pollOut is how far the workflow clock moved from the body's start to
// its end, and the step's outcome code.
type pollOut struct {
	Elapsed time.Duration `json:"elapsed"`
	Code    string        `json:"code"`
}

var pollWorkflow = temporal.Define("test.poll", func(ctx context.Context, rt flow.Runtime, in pollIn) (pollOut, error) {
	start := rt.Now(ctx)
	var err error
	switch {
	case in.Waits > 0:
		err = flow.Runner{RT: rt}.Run(ctx, "poll", in, nil)
	default:
		if in.Sleep > 0 {
			if err := rt.Sleep(ctx, in.Sleep); err != nil {
				return pollOut{}, err
			}
		}
		if in.Read {
			rt.Now(ctx)
		}
		step := "poll"
		if in.Once {
			step = "poll_once"
		}
		err = rt.Do(ctx, step, in, nil)
	}
	out := pollOut{Elapsed: rt.Now(ctx).Sub(start), Code: hostforge.CodeOf(err)}
	if in.End > 0 {
		if err := rt.Sleep(ctx, in.End); err != nil {
			return pollOut{}, err
		}
	}
	return out, nil
})

// pollStart is when the delay tests' workflows start.
var pollStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pollRig runs pollWorkflow under the test environment and records what
// Temporal saw: timers, activity attempts (with the delay the first
// attempt of a deferred step stands for) and the step's real runs.
type pollRig struct {
	env      *testsuite.TestWorkflowEnvironment
	acts     *temporal.Activities
	observed *observations
	timers   []time.Duration
	attempts []string
	runs     int
	waits    int
}

func newPollRig(t *testing.T) *pollRig {
	t.Helper()
	r := &pollRig{observed: &observations{}}
	steps := flow.MustTable(
		flow.Bind("poll", time.Minute, func(_ context.Context, in pollIn) (struct{}, error) {
			r.runs++
			if r.runs <= in.Waits {
				return struct{}{}, hostforge.RetryAfter(40*time.Second, "not_yet", "not yet")
			}
			return struct{}{}, nil
		}),
		flow.Bind("poll_once", time.Minute, func(_ context.Context, _ pollIn) (struct{}, error) {
			r.runs++
			return struct{}{}, nil
		}, flow.PerCall(func(pollIn) flow.CallPolicy { return flow.CallPolicy{AtMostOnce: true} })),
	)
	var s testsuite.WorkflowTestSuite
	r.env = s.NewTestWorkflowEnvironment()
	r.env.SetStartTime(pollStart)
	r.env.SetTestTimeout(time.Minute)
	r.env.SetOnTimerScheduledListener(func(_ string, d time.Duration) { r.timers = append(r.timers, d) })
	r.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		a := fmt.Sprintf("%s #%d", info.ActivityType.Name, info.Attempt)
		if d, ok := temporal.DeferredSleep(info, args); ok {
			a += " defers " + d.String()
		}
		r.attempts = append(r.attempts, a)
	})
	r.acts = &temporal.Activities{Exec: steps}
	temporal.Register(r.env, r.acts, temporal.ActivityOptions{Observer: r.observed}, pollWorkflow)
	return r
}

func (r *pollRig) run(t *testing.T, in pollIn) pollOut {
	t.Helper()
	r.env.ExecuteWorkflow("test.poll", in)
	if !r.env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := r.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var out pollOut
	if err := r.env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A wait's sleep rides in the step's next activity: no timer, the first
// attempt of each rerun defers it by the wait and runs nothing, the retry
// runs the step. The workflow's time passes as with timers, the Runner
// still reports each wait, and a step's reported duration leaves the
// sleep out.
func TestSleepRidesInTheNextStep(t *testing.T) {
	r := newPollRig(t)
	out := r.run(t, pollIn{Waits: 2})
	if len(r.timers) != 0 {
		t.Errorf("timers %v; want the sleeps carried by the steps", r.timers)
	}
	want := []string{"poll #1", "poll #1 defers 40s", "poll #2", "poll #1 defers 40s", "poll #2"}
	if !slices.Equal(r.attempts, want) {
		t.Errorf("attempts %q, want %q", r.attempts, want)
	}
	if r.runs != 3 || out.Elapsed != 80*time.Second || out.Code != "" {
		t.Errorf("%d runs of the step, %s elapsed, code %q; want 3 runs over 80s, done", r.runs, out.Elapsed, out.Code)
	}
	var waited, attempts int
	for _, o := range r.observed.got {
		switch o := o.(type) {
		case flow.Waited:
			waited++
		case flow.StepAttempt:
			attempts++
			if o.Took >= time.Second {
				t.Errorf("step attempt took %s: the sleep before it counted as its run", o.Took)
			}
		}
	}
	if waited != 2 || attempts != 3 {
		t.Errorf("observed %d waits and %d attempts, want 2 and 3", waited, attempts)
	}
}

// A deferred step whose worker is lost is started again as often as any
// step (WorkerLossAttempts runs): its deferring attempt is one more.
func TestDeferredStepLostWorkerAttempts(t *testing.T) {
	r := newPollRig(t)
	r.env.RegisterActivityWithOptions(func(ctx context.Context, in json.RawMessage, d *temporal.Delay) (json.RawMessage, error) {
		out, err := r.acts.Step(ctx, in, d)
		if err != nil {
			return out, err // the deferral
		}
		return nil, sdktemporal.NewHeartbeatTimeoutError()
	}, activity.RegisterOptions{Name: "poll", DisableAlreadyRegisteredCheck: true})
	out := r.run(t, pollIn{Sleep: 30 * time.Second})
	if r.runs != temporal.DefaultWorkerLossAttempts || out.Code != temporal.StepTimedOut.Code {
		t.Fatalf("%d runs ending %q; want %d runs, then %s (attempts %q)", r.runs, out.Code, temporal.DefaultWorkerLossAttempts, temporal.StepTimedOut.Code, r.attempts)
	}
	if len(r.attempts) != temporal.DefaultWorkerLossAttempts+1 || r.attempts[0] != "poll #1 defers 30s" {
		t.Fatalf("attempts %q; want the deferring one and %d runs", r.attempts, temporal.DefaultWorkerLossAttempts)
	}
}

// A call that runs at most once has no attempt to spare for a deferral:
// the sleep before it is a timer, and a lost worker is not retried.
func TestAtMostOnceStepSleepsOnATimer(t *testing.T) {
	r := newPollRig(t)
	r.env.RegisterActivityWithOptions(func(ctx context.Context, in json.RawMessage, d *temporal.Delay) (json.RawMessage, error) {
		if _, err := r.acts.Step(ctx, in, d); err != nil {
			return nil, err
		}
		return nil, sdktemporal.NewHeartbeatTimeoutError()
	}, activity.RegisterOptions{Name: "poll_once", DisableAlreadyRegisteredCheck: true})
	out := r.run(t, pollIn{Sleep: 30 * time.Second, Once: true})
	if !slices.Equal(r.timers, []time.Duration{30 * time.Second}) || !slices.Equal(r.attempts, []string{"poll_once #1"}) {
		t.Fatalf("timers %v, attempts %q; want a 30s timer and one attempt", r.timers, r.attempts)
	}
	if r.runs != 1 || out.Code != flow.AttemptLost.Code || out.Elapsed < 30*time.Second {
		t.Fatalf("%d runs ending %q after %s; want one run, %s, after the sleep", r.runs, out.Code, out.Elapsed, flow.AttemptLost.Code)
	}
}

// A step that ran before its delay was over — a worker that does not
// know the Delay, a server that ignores NextRetryDelay — is followed by a
// timer for the rest: the time the body slept does pass.
func TestDeferredStepRunEarlySleepsTheRest(t *testing.T) {
	r := newPollRig(t)
	r.env.RegisterActivityWithOptions(func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		return r.acts.Exec.Dispatch(ctx, activity.GetInfo(ctx).ActivityType.Name, in)
	}, activity.RegisterOptions{Name: "poll", DisableAlreadyRegisteredCheck: true})
	out := r.run(t, pollIn{Sleep: 30 * time.Second})
	if r.runs != 1 || out.Code != "" || out.Elapsed < 30*time.Second {
		t.Fatalf("%d runs ending %q after %s; want one run, done, after 30s", r.runs, out.Code, out.Elapsed)
	}
	if !slices.Equal(r.timers, []time.Duration{30 * time.Second}) {
		t.Fatalf("timers %v; want the 30s the early step did not wait", r.timers)
	}
}

// A sleep that no step follows is a timer: before a clock reading (which
// must see the time slept), and at the body's end (the run closes after
// it).
func TestSleepWithoutAStepAfterIsATimer(t *testing.T) {
	r := newPollRig(t)
	out := r.run(t, pollIn{Sleep: 10 * time.Minute, Read: true, End: time.Hour})
	if !slices.Equal(r.timers, []time.Duration{10 * time.Minute, time.Hour}) || !slices.Equal(r.attempts, []string{"poll #1"}) {
		t.Fatalf("timers %v, attempts %q; want timers of 10m and 1h around one attempt", r.timers, r.attempts)
	}
	if out.Elapsed != 10*time.Minute {
		t.Fatalf("%s elapsed by the step, want 10m", out.Elapsed)
	}
	if closed := r.env.Now().Sub(pollStart); closed < 70*time.Minute {
		t.Fatalf("the run closed %s after its start, before its last sleep was over", closed)
	}
}
