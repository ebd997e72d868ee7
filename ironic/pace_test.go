package ironic_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// powerOnPolls drives the inspection half (run_inspection off) as the workflow
// does and returns the calls made after power on was requested, the time
// from that request to the end, and the last result.
func (w *world) powerOnPolls(t *testing.T) (polls int, took time.Duration, out ironic.InspectionOut, err error) {
	t.Helper()
	in := ironic.InspectionIn{Spec: w.spec, Inspect: false}
	for i := 0; i < maxCalls; i++ {
		out, err = w.p.Inspection(context.Background(), in)
		if wt, ok := hostforge.AsWait(err); ok {
			w.site.Clock.Advance(wt.After)
			continue
		}
		if !in.Progress.PowerOnAt.IsZero() {
			polls++
		}
		if err != nil || out.Done {
			return polls, w.site.Clock.Now().Sub(out.Progress.PowerOnAt), out, err
		}
		in.Progress = out.Progress
		w.site.Clock.Advance(out.Next)
	}
	t.Fatalf("inspection did not finish in %d calls", maxCalls)
	return
}

// A manage or power-on transition is polled along a doubling schedule from
// its request: a slow power on costs a handful of reads instead of one per
// StatePoll, is seen at most StatePollMax late, and the power-on timeout
// still fires within one StatePoll of its limit.
func TestTransitionPolls(t *testing.T) {
	timing := ironic.Timing{StatePoll: 10 * time.Second, StatePollMax: time.Minute, PowerOnTimeout: 10 * time.Minute}
	for _, tt := range []struct {
		name     string
		power    time.Duration
		polls    int
		late     time.Duration
		wantCode string
	}{
		// Points 10, 30, 70, 130, 190, … s: one poll per doubling, then
		// one a minute (fixed 10 s polls: 1, 3, 31 and 61 reads).
		{name: "power on in 3 s", power: 3 * time.Second, polls: 1, late: 10 * time.Second},
		{name: "power on in 25 s", power: 25 * time.Second, polls: 2, late: 10 * time.Second},
		{name: "power on in 5 min", power: 5 * time.Minute, polls: 7, late: time.Minute},
		// The failure comes at most StatePoll after the limit, as it did
		// with fixed polls.
		{name: "power on never ends", power: time.Hour, polls: 12, late: 10 * time.Second, wantCode: ironic.PowerOnTimeout.Code},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, fakes.HostSpec{})
			w.p.Timing = timing
			w.ir.Timing.Power = tt.power
			polls, took, _, err := w.powerOnPolls(t)
			limit := tt.power
			if tt.wantCode != "" {
				wantCode(t, err, tt.wantCode)
				limit = timing.PowerOnTimeout
			} else if err != nil {
				t.Fatal(err)
			}
			if polls != tt.polls {
				t.Errorf("%d polls after power on was requested, want %d", polls, tt.polls)
			}
			if took < limit || took > limit+tt.late {
				t.Errorf("done %s after the power-on request, want within %s after %s", took, tt.late, limit)
			}
			if n := w.node(t); tt.wantCode == "" && n.PowerState != ironic.PowerOn {
				t.Errorf("node left %s", n.PowerState)
			}
		})
	}
}

// Cleaning polls from CleanPollMin doubling to CleanPollMax, counted from
// the provide request: 10 minutes of clean wait take a handful of reads.
func TestCleaningPolls(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	if _, err := w.inspect(t); err != nil {
		t.Fatal(err)
	}
	w.p.Timing = ironic.Timing{CleanPollMin: 15 * time.Second, CleanPollMax: 5 * time.Minute}
	in := ironic.CleaningIn{Spec: w.spec, Deadline: w.site.Clock.Now().Add(3 * time.Hour)}
	var pauses []time.Duration
	for i := 0; i < maxCalls; i++ {
		out, err := w.p.Cleaning(context.Background(), in)
		if wt, ok := hostforge.AsWait(err); ok {
			w.site.Clock.Advance(wt.After)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if out.Done {
			break
		}
		in.Progress = out.Progress
		pauses = append(pauses, out.Next)
		w.site.Clock.Advance(out.Next)
	}
	// 10 min 5 s of cleaning on the fake: polls at 15 s, 45 s, 1m45, 3m45,
	// 7m45 and 12m45 after provide (fixed 15 s polls: 41).
	want := []time.Duration{15 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute}
	if !slices.Equal(pauses, want) {
		t.Fatalf("cleaning pauses %v, want %v", pauses, want)
	}
	if n := w.node(t); n.ProvisionState != ironic.StateAvailable {
		t.Fatalf("after cleaning: %s", n.ProvisionState)
	}
}
