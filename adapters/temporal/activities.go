package temporal

import (
	"context"
	"encoding/json"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

// Dispatcher runs a step by name with JSON in and out; *enrollment.Executor
// and *flow.Table (the merged steps of several workflows) are ones. When it
// is also a flow.Steps, each step's declared attempt bound is its timeout.
type Dispatcher interface {
	Dispatch(ctx context.Context, step string, in []byte) ([]byte, error)
	StepNames() []string
}

var (
	_ Dispatcher = (*enrollment.Executor)(nil)
	_ Dispatcher = (*flow.Table)(nil)
)

// Activities are the enrollment steps as Temporal activities: one
// dispatcher registered under every step's name. They hold no logic: the
// step's own name, its JSON input and output, and the error conversion.
type Activities struct {
	Exec Dispatcher
	// HeartbeatEvery is the heartbeat period while a step runs (10 s).
	HeartbeatEvery time.Duration
	// Secrets is the process's set of secret values. What an activity hands
	// Temporal — its result and its error (the ApplicationError's message
	// and the Failure in its details), which the workflow's history keeps —
	// is scrubbed of them. nil scrubs nothing.
	Secrets *hostforge.Secrets
}

// Step runs the activity's own step (its registered name) on the executor,
// heartbeating until it returns. The first attempt of a step scheduled
// with a delay (the sleep before it, delay.go) runs nothing and asks the
// server to retry it after the delay.
func (a *Activities) Step(ctx context.Context, in json.RawMessage, delay *Delay) (json.RawMessage, error) {
	info := activity.GetInfo(ctx)
	name := info.ActivityType.Name
	if deferring(info.Attempt, delay) {
		return nil, deferral(name, delay.After)
	}
	stop := a.heartbeat(ctx)
	out, err := a.Exec.Dispatch(ctx, name, in)
	stop()
	if err != nil {
		return nil, activityError(a.Secrets.Err(err))
	}
	return a.scrubResult(name, out)
}

// scrubResult scrubs a step's JSON result of secrets before it enters the
// history. The replacement keeps JSON valid (Redacted needs no escaping);
// a result that would not stay valid is refused rather than recorded.
func (a *Activities) scrubResult(step string, out json.RawMessage) (json.RawMessage, error) {
	if a.Secrets.Len() == 0 || len(out) == 0 {
		return out, nil
	}
	clean := a.Secrets.Scrub(string(out))
	if clean == string(out) {
		return out, nil
	}
	if !json.Valid([]byte(clean)) {
		return nil, activityError(hostforge.Unclassified.New("step %s: its result carries a secret that cannot be scrubbed from its JSON", step))
	}
	return json.RawMessage(clean), nil
}

// heartbeat records a heartbeat every period until the returned stop is
// called; stop waits for the heartbeating goroutine to end.
func (a *Activities) heartbeat(ctx context.Context) (stop func()) {
	every := a.HeartbeatEvery
	if every <= 0 {
		every = 10 * time.Second
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done); <-ended }
}

// Register registers the activities under every step name of a.Exec, and
// each workflow definition, on w. Each step's start-to-close timeout is its
// declared attempt bound (flow.Step.Attempt) unless opts.StartToClose
// overrides every step; a step's call policy (flow.PerCall) applies to each
// of its calls.
func Register(w worker.Registry, a *Activities, opts ActivityOptions, defs ...Definition) {
	if steps, ok := a.Exec.(flow.Steps); ok {
		if opts.StepTimeouts == nil {
			opts.StepTimeouts = StepTimeouts(steps)
		}
		if opts.CallPolicies == nil {
			opts.CallPolicies = CallPolicies(steps)
		}
	}
	for _, name := range a.Exec.StepNames() {
		w.RegisterActivityWithOptions(a.Step, activity.RegisterOptions{Name: name})
	}
	for _, d := range defs {
		w.RegisterWorkflowWithOptions(d.Func(opts), d.RegisterOptions())
	}
}

// CallPolicies maps each step that declares a call policy
// (flow.PerCall) to it.
func CallPolicies(steps flow.Steps) map[string]func(in any) flow.CallPolicy {
	out := map[string]func(in any) flow.CallPolicy{}
	for _, n := range steps.StepNames() {
		if s, ok := steps.Step(n); ok && s.HasPolicy() {
			out[n] = s.Policy
		}
	}
	return out
}

// StepTimeouts maps each step to its attempt bound.
func StepTimeouts(steps flow.Steps) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, n := range steps.StepNames() {
		if s, ok := steps.Step(n); ok {
			out[n] = s.Attempt
		}
	}
	return out
}
