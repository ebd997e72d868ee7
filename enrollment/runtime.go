package enrollment

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
)

// Runtime is what the workflow body needs from an orchestrator. The body is
// written once against it: Local runs it inline, the Temporal adapter runs it
// as a deterministic workflow with activities and durable timers.
type Runtime interface {
	// Do runs one activity-like step by name. in is the step's input value,
	// out a pointer to its output. Both are plain serialisable structs; the
	// clients a step uses are injected into the step executor, never passed in.
	// The error is nil, a *hostforge.Wait or a *hostforge.Failure.
	Do(ctx context.Context, step string, in, out any) error
	// Sleep is a durable timer.
	Sleep(ctx context.Context, d time.Duration) error
	// Now is the workflow's notion of the current time.
	Now(ctx context.Context) time.Time
}

// Event is one thing that happened in a run, for progress display and the
// step timeline. Local emits them; other runtimes may.
type Event struct {
	Device string
	// Kind is "step" (a step finished), "sleep" (the workflow waits).
	Kind string
	Step string
	// Outcome of a step: done, wait or failed.
	Outcome hostforge.Outcome
	// At is the runtime's time when the event happened.
	At time.Time
	// Took is how long the step ran (on the runtime's clock).
	Took time.Duration
	// Wait is set for a step that returned a wait or for a sleep.
	Wait *hostforge.Wait
	// Failure is set for a step that failed.
	Failure *hostforge.Failure
}

// Local runs the workflow inline: each step is a direct call on the
// Executor, and Sleep is the injected clock's Sleep.
type Local struct {
	Exec  *Executor
	Clock clock.Clock
	// RoundTrip, when true, passes every step's input and output through
	// JSON, as a remote orchestrator would, so a step that leaks unserialisable
	// state fails in unit tests rather than under Temporal.
	RoundTrip bool
	// OnEvent, when set, receives every event. It must not block for long.
	OnEvent func(Event)
	// Device labels events.
	Device string
}

// Do runs the step on the executor.
func (l *Local) Do(ctx context.Context, step string, in, out any) error {
	s, ok := l.Exec.step(step)
	if !ok {
		return hostforge.Unclassified.New("no step named %q is registered", step)
	}
	start := l.Clock.Now()
	if l.RoundTrip {
		var err error
		if in, err = s.roundTripIn(in); err != nil {
			return hostforge.Unclassified.Wrap(err, "step %s: input does not survive JSON", step)
		}
	}
	err := hostforge.Classified(s.call(ctx, in, out, l.RoundTrip))
	o, f, w := hostforge.Classify(err)
	took := l.Clock.Now().Sub(start)
	log := l.Exec.log()
	switch o {
	case hostforge.Done:
		log.Debug("step done", "device", l.Device, "step", step, "took", took)
	case hostforge.Waiting:
		log.Info("step waits", "device", l.Device, "step", step, "reason", w.Reason, "after", w.After, "detail", w.Detail)
	default:
		log.Warn("step failed", "device", l.Device, "step", step, "phase", f.Phase, "code", f.Code, "owner", f.Owner, "retryable", f.Retryable, "error", f.Error())
	}
	if l.OnEvent != nil {
		l.OnEvent(Event{Device: l.Device, Kind: "step", Step: step, Outcome: o, At: l.Clock.Now(), Took: took, Wait: w, Failure: f})
	}
	return err
}

// Sleep sleeps on the clock.
func (l *Local) Sleep(ctx context.Context, d time.Duration) error {
	if l.OnEvent != nil {
		l.OnEvent(Event{Device: l.Device, Kind: "sleep", At: l.Clock.Now(), Took: d})
	}
	return l.Clock.Sleep(ctx, d)
}

// Now reads the clock.
func (l *Local) Now(context.Context) time.Time { return l.Clock.Now() }

// stepFn is one registered step, type-erased.
type stepFn struct {
	call        func(ctx context.Context, in, out any, roundTrip bool) error
	roundTripIn func(in any) (any, error)
	// newOut returns a new *O, for Dispatch.
	newOut func() any
}

// bind type-erases a typed step function. in must be an I; out must be a *O.
func bind[I, O any](fn func(context.Context, I) (O, error)) stepFn {
	return stepFn{
		call: func(ctx context.Context, in, out any, roundTrip bool) error {
			i, ok := in.(I)
			if !ok {
				return hostforge.Unclassified.New("step input is %T, want %T", in, *new(I))
			}
			po, ok := out.(*O)
			if !ok && out != nil {
				return hostforge.Unclassified.New("step output is %T, want *%T", out, *new(O))
			}
			o, err := fn(ctx, i)
			if po != nil {
				if roundTrip {
					b, merr := json.Marshal(o)
					if merr == nil {
						merr = json.Unmarshal(b, po)
					}
					if merr != nil {
						return hostforge.Unclassified.Wrap(merr, "step output does not survive JSON")
					}
				} else {
					*po = o
				}
			}
			return err
		},
		newOut: func() any { return new(O) },
		roundTripIn: func(in any) (any, error) {
			b, err := json.Marshal(in)
			if err != nil {
				return nil, err
			}
			var i I
			if err := json.Unmarshal(b, &i); err != nil {
				return nil, fmt.Errorf("decoding %T: %w", i, err)
			}
			return i, nil
		},
	}
}
