package ironic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
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

// Paced, table by table: NextPoll's pause, with one more look at the
// siblings' Hi when the policy's next one would come well after it, the
// policy's look then kept as planned; never for a wait hostforge did not
// ask for.
func TestPaced(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s, ms := time.Second, time.Millisecond
	pol := ironic.PollPolicy{First: s, Max: 5 * s}
	asked := ironic.Observation{At: t0, Action: ironic.ActionManage}
	look := func(d time.Duration) ironic.Observation {
		return ironic.Observation{At: at(d), ProvisionState: ironic.StateVerifying, TargetProvisionState: ironic.StateManageable}
	}
	// The request was answered at t0.
	polls := func(h ...ironic.Observation) ironic.Polls {
		return ironic.Polls{Kind: ironic.PollVerify, Action: ironic.ActionManage, Since: t0, History: append([]ironic.Observation{asked}, h...)}
	}
	planned := func(p ironic.Polls, d time.Duration) ironic.Polls { p.Planned = at(d); return p }
	span := ironic.Span{Lo: 5 * s, Hi: 6500 * ms}
	for _, tt := range []struct {
		name    string
		polls   ironic.Polls
		span    ironic.Span
		now     time.Duration
		want    time.Duration
		planned time.Duration // 0: none
	}{
		{"no span: the policy", polls(), ironic.Span{}, 0, s, 0},
		{"the policy's look comes before Hi: as it is", polls(look(s)), span, s, 2 * s, 0},
		{"the policy's look would come after Hi: one at Hi first", polls(look(s), look(3*s)), span, 3 * s, 3500 * ms, 7 * s},
		{"less than First/2 after Hi: not worth a look", polls(look(s), look(3*s)), ironic.Span{Hi: 6800 * ms}, 3 * s, 4 * s, 0},
		{"the extra look found it unmoved: the policy's look as planned", planned(polls(look(s), look(6500*ms)), 7*s), span, 6500 * ms, 500 * ms, 0},
		{"the planned look reached: the policy alone", planned(polls(look(s), look(7*s)), 7*s), span, 7 * s, 5 * s, 0},
		{"past Hi: the policy alone", polls(look(s), look(3*s), look(7*s)), span, 7 * s, 5 * s, 0},
		{"a wait hostforge did not request: the policy", ironic.Polls{Kind: ironic.PollSettle, History: []ironic.Observation{look(0)}}, span, 0, s, 0},
		{"a request answered later than now (clock went back): the policy", ironic.Polls{Kind: ironic.PollVerify, Action: ironic.ActionManage, Since: at(10 * s), History: []ironic.Observation{{At: at(10 * s), Action: ironic.ActionManage}}}, span, 0, s, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, p := ironic.Paced(pol, tt.polls, tt.span, at(tt.now))
			want := time.Time{}
			if tt.planned != 0 {
				want = at(tt.planned)
			}
			if got != tt.want || !p.Equal(want) {
				t.Fatalf("Paced = %s, planned %v; want %s, planned %v", got, p, tt.want, want)
			}
		})
	}
}

// Took dates the end of a wait by provision_updated_at when Ironic moved
// it between the two looks around the change; anything else teaches
// nothing.
func TestTook(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	s := time.Second
	state := func(d time.Duration, ps string, pua time.Duration) ironic.Observation {
		o := ironic.Observation{At: at(d), ProvisionState: ps}
		if pua != 0 {
			o.ProvisionUpdatedAt = at(pua)
		}
		return o
	}
	power := func(d time.Duration, on bool) ironic.Observation {
		o := state(d, ironic.StateManageable, -time.Hour)
		if on {
			o.PowerState = ironic.PowerOn
		} else {
			o.PowerState, o.TargetPowerState = ironic.PowerOff, ironic.PowerOn
		}
		return o
	}
	// The request was sent at -1 s and answered at 0.
	wait := func(action string, h ...ironic.Observation) ironic.Polls {
		return ironic.Polls{Action: action, Since: t0, History: h}
	}
	sent := func(action string) ironic.Observation { return ironic.Observation{At: at(-s), Action: action} }
	for _, tt := range []struct {
		name  string
		polls ironic.Polls
		took  time.Duration
		ok    bool
	}{
		{"verification dated by Ironic", wait(ironic.ActionManage, state(4*s, ironic.StateVerifying, -s/2), state(7*s, ironic.StateManageable, 6200*time.Millisecond)), 6200 * time.Millisecond, true},
		{"over at the first look, dated", wait(ironic.ActionManage, sent(ironic.ActionManage), state(2*s, ironic.StateManageable, 1500*time.Millisecond)), 1500 * time.Millisecond, true},
		{"over before Ironic answered: nothing to learn", wait(ironic.ActionManage, sent(ironic.ActionManage), state(2*s, ironic.StateManageable, -s/2)), 0, false},
		{"a power change is not dated", wait(ironic.PowerOn, power(4*s, false), power(7*s, true)), 0, false},
		{"a power change at the first look is not dated either", wait(ironic.PowerOn, sent(ironic.PowerOn), power(2*s, true)), 0, false},
		{"Ironic's time after the look (a skewed clock)", wait(ironic.ActionManage, state(4*s, ironic.StateVerifying, -s/2), state(7*s, ironic.StateManageable, 9*s)), 0, false},
		{"Ironic's time before the look before", wait(ironic.ActionManage, state(4*s, ironic.StateVerifying, -s/2), state(7*s, ironic.StateManageable, 3*s)), 0, false},
		{"the latest look saw no change", wait(ironic.ActionManage, state(4*s, ironic.StateVerifying, -s/2), state(7*s, ironic.StateVerifying, -s/2)), 0, false},
		{"no request", ironic.Polls{History: []ironic.Observation{state(4*s, ironic.StateVerifying, -s/2), state(7*s, ironic.StateManageable, 6*s)}}, 0, false},
		{"one look", wait(ironic.ActionManage, state(4*s, ironic.StateManageable, 3*s)), 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			took, ok := tt.polls.Took()
			if ok != tt.ok || took != tt.took {
				t.Fatalf("Took = %s, %v; want %s, %v", took, ok, tt.took, tt.ok)
			}
		})
	}
}

// Pace keeps the last PaceWindow transitions of each key and answers with
// their 10th and 90th percentiles once it has PaceMinSamples of them.
func TestPaceSpan(t *testing.T) {
	s := time.Second
	var nilPace *ironic.Pace
	nilPace.Learn(ironic.PollVerify, ironic.ActionManage, "c", s)
	if _, ok := nilPace.Span(ironic.PollVerify, ironic.ActionManage, "c"); ok {
		t.Fatal("a nil Pace placed a look")
	}
	p := ironic.NewPace()
	for i := 1; i < ironic.PaceMinSamples; i++ {
		p.Learn(ironic.PollVerify, ironic.ActionManage, "c", time.Duration(i)*s)
	}
	if sp, ok := p.Span(ironic.PollVerify, ironic.ActionManage, "c"); ok {
		t.Fatalf("span %+v from %d transitions", sp, ironic.PaceMinSamples-1)
	}
	p.Learn(ironic.PollVerify, ironic.ActionManage, "c", 5*s)
	if sp, ok := p.Span(ironic.PollVerify, ironic.ActionManage, "c"); !ok || sp != (ironic.Span{Lo: s, Hi: 5 * s}) {
		t.Fatalf("span %+v, %v; want 1s..5s", sp, ok)
	}
	// Nonsense is ignored.
	p.Learn(ironic.PollVerify, ironic.ActionManage, "c", -s)
	p.Learn(ironic.PollVerify, ironic.ActionManage, "c", 0)
	p.Learn(ironic.PollVerify, "", "c", s)
	if sp, _ := p.Span(ironic.PollVerify, ironic.ActionManage, "c"); sp != (ironic.Span{Lo: s, Hi: 5 * s}) {
		t.Fatalf("span %+v after nonsense, want 1s..5s", sp)
	}
	// A full window: the 2nd lowest and the 15th of 16; then the oldest go.
	q := ironic.NewPace()
	for i := 1; i <= ironic.PaceWindow; i++ {
		q.Learn(ironic.PollClean, ironic.ActionProvide, "c", time.Duration(i)*s)
	}
	if sp, _ := q.Span(ironic.PollClean, ironic.ActionProvide, "c"); sp != (ironic.Span{Lo: 2 * s, Hi: 15 * s}) {
		t.Fatalf("span of 16 %+v, want 2s..15s", sp)
	}
	for i := 0; i < ironic.PaceWindow; i++ {
		q.Learn(ironic.PollClean, ironic.ActionProvide, "c", time.Minute)
	}
	if sp, _ := q.Span(ironic.PollClean, ironic.ActionProvide, "c"); sp != (ironic.Span{Lo: time.Minute, Hi: time.Minute}) {
		t.Fatalf("span after a window of new transitions %+v, want 1m..1m", sp)
	}
	// Keys are apart: another class, kind or request learned nothing.
	for _, k := range []struct {
		kind          ironic.PollKind
		action, class string
	}{{ironic.PollClean, ironic.ActionProvide, "d"}, {ironic.PollVerify, ironic.ActionProvide, "c"}, {ironic.PollClean, ironic.ActionClean, "c"}} {
		if sp, ok := q.Span(k.kind, k.action, k.class); ok {
			t.Errorf("%v learned %+v from another key", k, sp)
		}
	}
}

// Many waits learn and ask at once (run under -race in CI); the keys stay
// bounded, the oldest going first.
func TestPaceConcurrent(t *testing.T) {
	p := ironic.NewPace()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				class := fmt.Sprintf("c%d", (g*200+i)%100)
				p.Learn(ironic.PollVerify, ironic.ActionManage, class, time.Second)
				p.Span(ironic.PollVerify, ironic.ActionManage, class)
			}
		}()
	}
	wg.Wait()
	answer := func(from, to int) (n int) {
		for c := from; c < to; c++ {
			if sp, ok := p.Span(ironic.PollVerify, ironic.ActionManage, fmt.Sprintf("c%d", c)); ok && sp == (ironic.Span{Lo: time.Second, Hi: time.Second}) {
				n++
			}
		}
		return n
	}
	if n := answer(0, 100); n != 100 {
		t.Fatalf("%d of 100 keys answer after concurrent learning", n)
	}
	for c := 100; c < 300; c++ {
		for range ironic.PaceMinSamples {
			p.Learn(ironic.PollVerify, ironic.ActionManage, fmt.Sprintf("c%d", c), time.Second)
		}
	}
	if old, kept := answer(0, 44), answer(44, 300); old != 0 || kept != 256 {
		t.Fatalf("after 300 keys: %d of the 44 oldest and %d of the 256 newest answer; want 0 and 256", old, kept)
	}
}

// verifyPolls drives the inspection half (run_inspection off) until the
// verification after manage is seen over, and returns the looks at the
// verifying node and the time from the manage request to the one that
// found it manageable.
func (w *world) verifyPolls(t *testing.T) (polls int, took time.Duration) {
	t.Helper()
	in := ironic.InspectionIn{Spec: w.spec, Inspect: false}
	for i := 0; i < maxCalls; i++ {
		asked := in.Progress.ManageRequested
		out, err := w.p.Inspection(context.Background(), in)
		if wt, ok := hostforge.AsWait(err); ok {
			w.site.Clock.Advance(wt.After)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if asked {
			polls++
			if out.Node.ProvisionState == ironic.StateManageable {
				if out.Progress.Polls.Kind == ironic.PollVerify {
					t.Errorf("the ended verification is still held: %+v", out.Progress.Polls)
				}
				return polls, w.site.Clock.Now().Sub(out.Progress.ManageRequestedAt)
			}
		}
		in.Progress = out.Progress
		w.site.Clock.Advance(out.Next)
	}
	t.Fatalf("verification did not end in %d calls", maxCalls)
	return
}

// A verification among siblings that took 20–22 s: the policy alone looks
// at 10 and 30 s (seen 9 s late); with the siblings' Hi of 22 s it looks at
// 10 and 22 s (1 s late). What it took, dated by Ironic, is learned. A node
// slower than its siblings is looked at Hi too and then on the policy's
// grid, as planned: never later than the policy alone.
func TestPacedVerification(t *testing.T) {
	timing := ironic.Timing{StatePoll: 10 * time.Second, StatePollMax: time.Minute}
	s := time.Second
	siblings := []time.Duration{20 * s, 20 * s, 22 * s, 22 * s}
	for _, tt := range []struct {
		name    string
		learned []time.Duration
		verify  time.Duration
		polls   int
		took    time.Duration
		after   ironic.Span
	}{
		// Three transitions are not enough to pace by; this one is the
		// fourth, and the lowest.
		{name: "policy alone", learned: []time.Duration{30 * s, 30 * s, 30 * s}, verify: 25 * s, polls: 2, took: 30 * s, after: ironic.Span{Lo: 25 * s, Hi: 30 * s}},
		{name: "paced", learned: siblings, verify: 21 * s, polls: 2, took: 22 * s, after: ironic.Span{Lo: 20 * s, Hi: 22 * s}},
		{name: "paced, faster than its siblings", learned: siblings, verify: 8 * s, polls: 1, took: 10 * s, after: ironic.Span{Lo: 8 * s, Hi: 22 * s}},
		{name: "paced, slower than its siblings", learned: siblings, verify: 24 * s, polls: 3, took: 30 * s, after: ironic.Span{Lo: 20 * s, Hi: 24 * s}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, fakes.HostSpec{})
			w.p.Timing, w.p.Pace = timing, ironic.NewPace()
			w.ir.Timing.Verify = tt.verify
			class := ironic.PaceClass(w.spec)
			for _, d := range tt.learned {
				w.p.Pace.Learn(ironic.PollVerify, ironic.ActionManage, class, d)
			}
			polls, took := w.verifyPolls(t)
			if polls != tt.polls || took != tt.took {
				t.Errorf("%d looks, seen %s after the request; want %d, %s", polls, took, tt.polls, tt.took)
			}
			if sp, ok := w.p.Pace.Span(ironic.PollVerify, ironic.ActionManage, class); !ok || sp != tt.after {
				t.Errorf("learned %+v, %v; want %+v", sp, ok, tt.after)
			}
		})
	}
}

// A power on is not dated by anything a read selects: it teaches nothing
// and is paced by the policy alone.
func TestPowerOnIsNotPaced(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.p.Timing = ironic.Timing{StatePoll: 10 * time.Second, StatePollMax: time.Minute, PowerOnTimeout: 10 * time.Minute}
	w.p.Pace = ironic.NewPace()
	w.ir.Timing.Power = 25 * time.Second
	polls, took, out, err := w.powerOnPolls(t)
	if err != nil || !out.Done {
		t.Fatalf("power on: %v, done %v", err, out.Done)
	}
	if polls != 2 || took != 30*time.Second {
		t.Errorf("%d polls, seen %s after the request; want the policy's 2 and 30s", polls, took)
	}
	if sp, ok := w.p.Pace.Span(ironic.PollPower, ironic.PowerOn, ironic.PaceClass(w.spec)); ok {
		t.Errorf("a power on taught %+v", sp)
	}
}

// Cleaning is dated by Ironic's provision_updated_at, so hosts teach the
// exact moment their cleaning ended; once four have, the next is looked at
// exactly then, with no more looks than the policy alone makes (the
// extra one at Hi ends the wait before the policy's next).
func TestPacedCleaning(t *testing.T) {
	timing := ironic.Timing{CleanPollMin: 15 * time.Second, CleanPollMax: 2 * time.Minute}
	pace := ironic.NewPace()
	const cleaned = 10*time.Minute + 5*time.Second // the fake: cleaning 5 s, clean wait 10 min
	var alone []time.Duration
	for i := 0; i < 5; i++ {
		w := newWorld(t, fakes.HostSpec{})
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		w.p.Timing, w.p.Pace = timing, pace
		pauses, took := w.cleanPauses(t, true)
		switch {
		case i == 0:
			alone = pauses
		case i == 4:
			if took != cleaned {
				t.Errorf("paced cleaning seen %s after provide, want %s", took, cleaned)
			}
			if len(pauses) > len(alone) {
				t.Errorf("paced cleaning looked %d times, the policy alone %d", len(pauses), len(alone))
			}
		}
		sp, ok := pace.Span(ironic.PollClean, ironic.ActionProvide, ironic.PaceClass(w.spec))
		if ok != (i >= 3) || (ok && sp != (ironic.Span{Lo: cleaned, Hi: cleaned})) {
			t.Errorf("after host %d: learned %+v, %v; want %s exactly from the fourth", i+1, sp, ok, cleaned)
		}
	}
}
