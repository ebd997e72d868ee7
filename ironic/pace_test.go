package ironic_test

import (
	"context"
	"encoding/json"
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

// A power-on transition is polled soon after its request and then ever
// more rarely while it stays unmoved: a slow power on costs a handful of
// reads instead of one per StatePoll, is seen at most StatePollMax late, and
// the power-on timeout still fires within one StatePoll of its limit.
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

// Cleaning is polled CleanPollMin after provide; the move to clean wait
// that poll finds is dated by Ironic's provision_updated_at, and the pauses
// grow from that moment to CleanPollMax: ten minutes of clean wait take a
// handful of reads and are seen at most CleanPollMax late.
func TestCleaningPolls(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	if _, err := w.inspect(t); err != nil {
		t.Fatal(err)
	}
	w.p.Timing = ironic.Timing{CleanPollMin: 15 * time.Second, CleanPollMax: 2 * time.Minute}
	pauses, took := w.cleanPauses(t, false)
	// The fake: cleaning 5 s, then clean wait 10 min (available at 10m05).
	// Looks at 15 s (clean wait since 5 s: pause 10+15), 40 s, 1m30,
	// 3m10, then every 2 min (fixed 15 s polls: 41 looks).
	want := []time.Duration{15 * time.Second, 25 * time.Second, 50 * time.Second, 100 * time.Second,
		2 * time.Minute, 2 * time.Minute, 2 * time.Minute, 2 * time.Minute}
	if !slices.Equal(pauses, want) {
		t.Fatalf("cleaning pauses %v, want %v", pauses, want)
	}
	if late := took - (10*time.Minute + 5*time.Second); late < 0 || late > 2*time.Minute {
		t.Fatalf("available seen %s after provide: %s late", took, late)
	}
	if n := w.node(t); n.ProvisionState != ironic.StateAvailable {
		t.Fatalf("after cleaning: %s", n.ProvisionState)
	}
}

// cleanPauses drives the cleaning half as the workflow does and returns
// the pauses it asked for and the time from provide to done. With
// roundTrip, the input goes through JSON between calls, as it does through
// a Temporal payload or a restart.
func (w *world) cleanPauses(t *testing.T, roundTrip bool) ([]time.Duration, time.Duration) {
	t.Helper()
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
			return pauses, w.site.Clock.Now().Sub(out.Progress.ProvidedAt)
		}
		in.Progress = out.Progress
		if roundTrip {
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			in = ironic.CleaningIn{}
			if err := json.Unmarshal(b, &in); err != nil {
				t.Fatal(err)
			}
		}
		pauses = append(pauses, out.Next)
		w.site.Clock.Advance(out.Next)
	}
	t.Fatalf("cleaning did not finish in %d calls", maxCalls)
	return nil, 0
}

// The observation history travels in the step's progress and nowhere
// else: a cleaning whose input is serialised between every call (a worker
// restart, a Temporal replay) paces its polls exactly as one that is not.
func TestPollHistoryTravelsInProgress(t *testing.T) {
	var runs [2][]time.Duration
	for k, roundTrip := range []bool{false, true} {
		w := newWorld(t, fakes.HostSpec{})
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		runs[k], _ = w.cleanPauses(t, roundTrip)
	}
	if !slices.Equal(runs[0], runs[1]) {
		t.Fatalf("pauses %v in memory, %v through JSON", runs[0], runs[1])
	}
	if len(runs[0]) < 4 {
		t.Fatalf("only %d polls: nothing to compare", len(runs[0]))
	}
}

// With the default timing, a power on that takes 75 s is seen within
// StatePollMax (30 s) of its end: the doubling from the request to 1 min
// looked at 10, 30, 70 and 130 s, 55 s late.
func TestDefaultTimingSeesSlowPowerOnSoon(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.ir.Timing.Power = 75 * time.Second
	_, took, _, err := w.powerOnPolls(t)
	if err != nil {
		t.Fatal(err)
	}
	if late := took - 75*time.Second; late < 0 || late > ironic.DefaultTiming().StatePollMax {
		t.Fatalf("power on seen %s after its request: %s late", took, late)
	}
}

// With the default timing, ten minutes of clean wait are seen within
// CleanPollMax (2 min) of their end: the doubling to 5 min from provide
// looked at 7m45 and 12m45, 2m40 late.
func TestDefaultTimingSeesCleaningEndSoon(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	if _, err := w.inspect(t); err != nil {
		t.Fatal(err)
	}
	out, err := w.clean(t, 3*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	took := w.site.Clock.Now().Sub(out.Progress.ProvidedAt)
	if late := took - (10*time.Minute + 5*time.Second); late < 0 || late > 2*time.Minute {
		t.Fatalf("available seen %s after provide: %s late", took, late)
	}
}

// A node found in someone else's transition is looked at again after a
// pause that grows with the time Ironic says it has been in it: an hour in
// clean wait is CleanPollMax, not StatePoll.
func TestPreludePacesAnUnstableNodeByIronicsClock(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	if _, err := w.inspect(t); err != nil {
		t.Fatal(err)
	}
	w.ir.SetState(w.host.Name, ironic.StateCleanWait)
	for _, tt := range []struct {
		after time.Duration
		want  time.Duration
	}{{0, 10 * time.Second}, {5 * time.Second, 15 * time.Second}, {time.Hour, 2 * time.Minute}} {
		w.site.Clock.Advance(tt.after)
		_, err := w.p.Cleaning(context.Background(), ironic.CleaningIn{Spec: w.spec, Deadline: w.site.Clock.Now().Add(time.Hour)})
		wt, ok := hostforge.AsWait(err)
		if !ok || wt.Reason != ironic.WaitStateUnstable {
			t.Fatalf("cleaning a node in clean wait: %v, want a %s wait", err, ironic.WaitStateUnstable)
		}
		if wt.After != tt.want {
			t.Errorf("%s into clean wait: wait %s, want %s", tt.after, wt.After, tt.want)
		}
	}
}
