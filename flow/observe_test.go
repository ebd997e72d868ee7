package flow_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/flow"
)

// recorder is an Observer that keeps what it is told.
type recorder struct{ got []any }

func (r *recorder) Observe(o any) { r.got = append(r.got, o) }

// TestLocalAndRunnerReport: Local reports every step attempt with its
// outcome and time, the Runner every wait it sleeps for and the wait that
// exhausts its budget, with the meter's totals.
func TestLocalAndRunnerReport(t *testing.T) {
	st, _ := scripted("s", hostforge.RetryAfter(time.Minute, "lock", "held"), hostforge.RetryAfter(time.Minute, "lock", "held"),
		hostforge.RetryAfter(time.Minute, "lock", "held"))
	rt, _, _ := local(t, st)
	rec := &recorder{}
	rt.Observer = rec
	r := flow.Runner{RT: rt, Policy: flow.Policy{Waits: map[string]flow.WaitPolicy{"lock": {Budget: 2 * time.Minute}}}}
	err := r.Run(context.Background(), "s", in{N: 1}, nil)
	if !flow.WaitBudgetExhausted.Is(err) {
		t.Fatalf("run = %v, want the lock budget exhausted", err)
	}
	var got []string
	for _, o := range rec.got {
		switch o := o.(type) {
		case flow.StepAttempt:
			got = append(got, fmt.Sprintf("attempt %s %s %s", o.Step, o.Outcome, o.Wait.Reason))
		case flow.Waited:
			got = append(got, fmt.Sprintf("waited %s %s %s %s/%s", o.Step, o.Reason, o.Sleep, o.Waited, o.Budget))
		case flow.WaitExhausted:
			got = append(got, fmt.Sprintf("exhausted %s %s %s/%s", o.Step, o.Reason, o.Waited, o.Budget))
		default:
			t.Errorf("unexpected observation %T", o)
		}
	}
	want := []string{
		"attempt s wait lock", "waited s lock 1m0s 1m0s/2m0s",
		"attempt s wait lock", "waited s lock 1m0s 2m0s/2m0s",
		"attempt s wait lock", "exhausted s lock 2m0s/2m0s",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("observations\n got %q\nwant %q", got, want)
	}
}

// A step's attempt reports its failure and how long it took on the clock.
func TestLocalReportsFailureAndTime(t *testing.T) {
	var clk *clock.Fake
	slow := flow.Bind("slow", time.Minute, func(context.Context, in) (out, error) {
		clk.Advance(3 * time.Second)
		return out{}, fatal.New("no")
	})
	rt, clk, _ := local(t, slow)
	rec := &recorder{}
	rt.Observer = rec
	_ = rt.Do(context.Background(), "slow", in{}, nil)
	if len(rec.got) != 1 {
		t.Fatalf("%d observations, want 1", len(rec.got))
	}
	a, ok := rec.got[0].(flow.StepAttempt)
	if !ok || a.Outcome != hostforge.Failed || a.Failure == nil || a.Failure.Code != fatal.Code || a.Took != 3*time.Second {
		t.Fatalf("observation %+v", rec.got[0])
	}
}

// Without an observer nothing is built, and a runtime that does not report
// has no observer.
func TestObserverOf(t *testing.T) {
	st, _ := scripted("s")
	rt, _, _ := local(t, st)
	if flow.ObserverOf(rt) != nil {
		t.Fatal("a Local without an Observer has one")
	}
	rec := &recorder{}
	rt.Observer = rec
	if flow.ObserverOf(rt) != rec {
		t.Fatal("ObserverOf does not return the Local's Observer")
	}
	if flow.ObserverOf(plain{rt}) != nil {
		t.Fatal("a runtime that is not an ObservedRuntime has an observer")
	}
	flow.ObserveScheduleRun(context.Background(), rt, "nightly", t0.Add(-90*time.Second))
	s, ok := rec.got[0].(flow.ScheduleRun)
	if !ok || s.Schedule != "nightly" || s.Lag() != 90*time.Second {
		t.Fatalf("schedule run %+v", rec.got[0])
	}
	flow.ObserveScheduleRun(context.Background(), rt, "nightly", time.Time{})
	if s := rec.got[1].(flow.ScheduleRun); s.Lag() != 0 {
		t.Fatalf("a run started by hand lags %s", s.Lag())
	}
}

// plain hides the Local's Observing method.
type plain struct{ flow.Runtime }
