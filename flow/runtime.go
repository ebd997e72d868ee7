package flow

import (
	"context"
	"log/slog"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
)

// Runtime is what a workflow body needs from an orchestrator. Every body
// (enrollment, firmware update, extension dispatch) is written once against
// it: Local runs it inline, the Temporal adapter runs it as a deterministic
// workflow with activities and durable timers.
type Runtime interface {
	// Do runs one activity-like step by name. in is the step's input value
	// (or a pointer to it, read during the call only: a body that polls
	// passes its input so), out a pointer to its output. Both are plain
	// serialisable structs; the clients a step uses are injected into the
	// step set, never passed in.
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
	// Subject is what the run is about: a device, a machine, an event ID.
	Subject string
	// Kind is "step" (a step finished) or "sleep" (the workflow waits).
	Kind string
	Step string
	// Outcome of a step: done, wait or failed.
	Outcome hostforge.Outcome
	// At is the runtime's time when the event happened.
	At time.Time
	// Took is how long the step ran, or how long the sleep lasts.
	Took time.Duration
	// Wait is set for a step that returned a wait.
	Wait *hostforge.Wait
	// Failure is set for a step that failed.
	Failure *hostforge.Failure
}

// Local runs a workflow inline: each step is a direct call into Steps, and
// Sleep is the injected clock's Sleep (virtual time in tests and the
// simulators, real time in the CLI).
type Local struct {
	Steps Steps
	Clock clock.Clock
	// RoundTrip, when true, passes every step's input and output through
	// JSON, as a remote orchestrator would, so a step that leaks
	// unserialisable state fails in unit tests rather than under Temporal.
	RoundTrip bool
	// OnEvent, when set, receives every event. It must not block for long.
	OnEvent func(Event)
	// Subject labels events and log lines; SubjectKey is its key in log
	// lines ("subject" when empty; enrollment uses "device").
	Subject    string
	SubjectKey string
	// Log receives a line per step outcome (nil: discarded).
	Log *slog.Logger
	// Observer, when set, is told every step attempt and what the bodies
	// run on this runtime report (runs, phases, waits), for metrics.
	Observer Observer
}

var _ ObservedRuntime = (*Local)(nil)

// Observing returns the Observer.
func (l *Local) Observing() Observer { return l.Observer }

// Do runs the step.
func (l *Local) Do(ctx context.Context, step string, in, out any) error {
	s, ok := l.Steps.Step(step)
	if !ok {
		return hostforge.Unclassified.New("no step named %q is registered", step)
	}
	start := l.Clock.Now()
	err := s.Call(ctx, in, out, l.RoundTrip)
	o, f, w := hostforge.Classify(err)
	took := l.Clock.Now().Sub(start)
	log := l.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key := l.SubjectKey
	if key == "" {
		key = "subject"
	}
	// Each line is built only when its level is on: the arguments of a
	// disabled line still cost an allocation each, on every step call.
	switch {
	case o == hostforge.Done:
		if log.Enabled(ctx, slog.LevelDebug) {
			log.Debug("step done", key, l.Subject, "step", step, "took", took)
		}
	case o == hostforge.Waiting:
		if log.Enabled(ctx, slog.LevelInfo) {
			log.Info("step waits", key, l.Subject, "step", step, "reason", w.Reason, "after", w.After, "detail", w.Detail)
		}
	case log.Enabled(ctx, slog.LevelWarn):
		log.Warn("step failed", key, l.Subject, "step", step, "phase", f.Phase, "code", f.Code, "owner", f.Owner, "retryable", f.Retryable, "error", f.Error())
	}
	if l.OnEvent != nil {
		l.OnEvent(Event{Subject: l.Subject, Kind: "step", Step: step, Outcome: o, At: l.Clock.Now(), Took: took, Wait: w, Failure: f})
	}
	if l.Observer != nil {
		l.Observer.Observe(StepAttempt{Step: step, Outcome: o, Took: took, Wait: w, Failure: f})
	}
	return err
}

// Sleep sleeps on the clock.
func (l *Local) Sleep(ctx context.Context, d time.Duration) error {
	if l.OnEvent != nil {
		l.OnEvent(Event{Subject: l.Subject, Kind: "sleep", At: l.Clock.Now(), Took: d})
	}
	if err := l.Clock.Sleep(ctx, d); err != nil {
		return hostforge.Cancelled.Wrap(err, "cancelled while waiting %s", d)
	}
	return nil
}

// Now reads the clock.
func (l *Local) Now(context.Context) time.Time { return l.Clock.Now() }
