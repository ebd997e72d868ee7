package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/flow"
)

var (
	t0       = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	testCode = hostforge.Declare(hostforge.Spec{Code: "FLOW_TEST_FLAKY", Phase: "test", Owner: hostforge.OwnerSDK, Retryable: true, Action: "none: test code"})
	fatal    = hostforge.Declare(hostforge.Spec{Code: "FLOW_TEST_FATAL", Phase: "test", Owner: hostforge.OwnerSDK, Action: "none: test code"})
)

type in struct {
	N int `json:"n"`
}
type out struct {
	Twice int `json:"twice"`
}

// scripted is a step that returns its script's errors in order, then done.
func scripted(name string, errs ...error) (flow.Step, *int) {
	calls := 0
	return flow.Bind(name, time.Minute, func(_ context.Context, i in) (out, error) {
		calls++
		if calls <= len(errs) && errs[calls-1] != nil {
			return out{}, errs[calls-1]
		}
		return out{Twice: 2 * i.N}, nil
	}), &calls
}

func local(t *testing.T, steps ...flow.Step) (*flow.Local, *clock.Fake, *[]flow.Event) {
	t.Helper()
	tab, err := flow.NewTable(steps...)
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(t0)
	var evts []flow.Event
	return &flow.Local{Steps: tab, Clock: clk, RoundTrip: true, OnEvent: func(e flow.Event) { evts = append(evts, e) }}, clk, &evts
}

func TestRunnerOutcomes(t *testing.T) {
	wait := func(d time.Duration, reason string) error { return hostforge.RetryAfter(d, reason, "busy") }
	cases := []struct {
		name      string
		errs      []error
		policy    flow.Policy
		once      bool
		wantCode  string
		wantCalls int
		wantSlept time.Duration
	}{
		{name: "done at once", wantCalls: 1},
		{name: "waits sleep their After and rerun", errs: []error{wait(time.Minute, "r"), wait(2*time.Minute, "r")}, wantCalls: 3, wantSlept: 3 * time.Minute},
		{name: "a reason's budget ends the waits", errs: []error{wait(time.Minute, "r"), wait(time.Minute, "r"), wait(time.Minute, "r")},
			policy: flow.Policy{Waits: map[string]flow.WaitPolicy{"r": {Budget: 2 * time.Minute}}}, wantCode: "WAIT_BUDGET_EXHAUSTED", wantCalls: 3, wantSlept: 2 * time.Minute},
		{name: "budgets are per reason", errs: []error{wait(time.Minute, "a"), wait(time.Minute, "b"), wait(time.Minute, "a")},
			policy: flow.Policy{Waits: map[string]flow.WaitPolicy{"a": {Budget: 2 * time.Minute}, "b": {Budget: time.Minute}}}, wantCalls: 4, wantSlept: 3 * time.Minute},
		{name: "backoff paces a reason instead of After", errs: []error{wait(time.Second, "r"), wait(time.Second, "r"), wait(time.Second, "r")},
			policy: flow.Policy{Waits: map[string]flow.WaitPolicy{"r": {Budget: time.Hour, Backoff: hostforge.Backoff{First: 10 * time.Second, Max: 30 * time.Second}}}}, wantCalls: 4, wantSlept: 60 * time.Second},
		{name: "custom exhaustion failure", errs: []error{wait(time.Minute, "r"), wait(time.Minute, "r")},
			policy: flow.Policy{Waits: map[string]flow.WaitPolicy{"r": {Budget: time.Minute, Exhausted: func(step string, w *hostforge.Wait, _, _ time.Duration) error {
				return fatal.New("%s: %s", step, w.Detail)
			}}}}, wantCode: "FLOW_TEST_FATAL", wantCalls: 2, wantSlept: time.Minute},
		{name: "retryable failure reruns after the retry backoff", errs: []error{testCode.New("once"), testCode.New("twice")},
			policy: flow.Policy{MaxAttempts: 3}, wantCalls: 3, wantSlept: 30 * time.Second},
		{name: "attempt budget ends retries", errs: []error{testCode.New("1"), testCode.New("2"), testCode.New("3")},
			policy: flow.Policy{MaxAttempts: 2}, wantCode: "FLOW_TEST_FLAKY", wantCalls: 2, wantSlept: 10 * time.Second},
		{name: "non-retryable failure returns at once", errs: []error{fatal.New("no")}, wantCode: "FLOW_TEST_FATAL", wantCalls: 1},
		{name: "Once returns a retryable failure at once", errs: []error{testCode.New("once")}, once: true, wantCode: "FLOW_TEST_FLAKY", wantCalls: 1},
		{name: "an unclassified error is a failure", errs: []error{errors.New("boom")}, wantCode: "UNCLASSIFIED", wantCalls: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, calls := scripted("s", c.errs...)
			rt, clk, _ := local(t, st)
			r := flow.Runner{RT: rt, Policy: c.policy}
			var o out
			run := r.Run
			if c.once {
				run = r.Once
			}
			err := run(context.Background(), "s", in{N: 4}, &o)
			if got := hostforge.CodeOf(err); got != c.wantCode {
				t.Fatalf("code = %q (%v), want %q", got, err, c.wantCode)
			}
			if *calls != c.wantCalls {
				t.Fatalf("calls = %d, want %d", *calls, c.wantCalls)
			}
			if slept := clk.Now().Sub(t0); slept != c.wantSlept {
				t.Fatalf("slept %s, want %s", slept, c.wantSlept)
			}
			if c.wantCode == "" && o.Twice != 8 {
				t.Fatalf("output %+v", o)
			}
		})
	}
}

// A meter carries one reason's budget across several runs; Clamp lowers it.
func TestMeterSpansCalls(t *testing.T) {
	p := flow.Policy{Waits: map[string]flow.WaitPolicy{"lock": {Budget: 3 * time.Minute}}}
	st, _ := scripted("s", hostforge.RetryAfter(time.Minute, "lock", "held"), hostforge.RetryAfter(time.Minute, "lock", "held"),
		nil, hostforge.RetryAfter(time.Minute, "lock", "held"), hostforge.RetryAfter(time.Minute, "lock", "held"))
	rt, _, _ := local(t, st)
	r := flow.Runner{RT: rt, Policy: p}
	m := p.Meter("lock")
	if err := r.Once(context.Background(), "s", in{}, nil, m); err != nil {
		t.Fatal(err)
	}
	if m.Waited() != 2*time.Minute {
		t.Fatalf("waited %s", m.Waited())
	}
	err := r.Once(context.Background(), "s", in{}, nil, m)
	if !flow.WaitBudgetExhausted.Is(err) || !strings.Contains(err.Error(), "held") {
		t.Fatalf("second run = %v, want the shared budget exhausted", err)
	}
	if got := p.Meter("lock").Clamp(-time.Second).Budget(); got != 0 {
		t.Fatalf("clamped past a deadline: budget %s", got)
	}
	if got := p.Meter("lock").Clamp(time.Hour).Budget(); got != 3*time.Minute {
		t.Fatalf("clamp raised the budget to %s", got)
	}
}

func TestTableRefusesBadRegistrations(t *testing.T) {
	a, _ := scripted("a")
	for name, steps := range map[string][]flow.Step{
		"duplicate":   {a, a},
		"no name":     {flow.Bind("", time.Second, func(context.Context, in) (out, error) { return out{}, nil })},
		"no bound":    {flow.Bind("b", 0, func(context.Context, in) (out, error) { return out{}, nil })},
		"no function": {{Name: "c", Attempt: time.Second}},
	} {
		if _, err := flow.NewTable(steps...); err == nil {
			t.Errorf("%s: NewTable accepted it", name)
		}
	}
	b, _ := scripted("b")
	t1, t2 := flow.MustTable(a), flow.MustTable(b)
	m, err := flow.Merge(t1, t2)
	if err != nil || strings.Join(m.StepNames(), ",") != "a,b" {
		t.Fatalf("Merge = %v, %v", m.StepNames(), err)
	}
	if _, err := flow.Merge(t1, t1); err == nil {
		t.Fatal("Merge accepted a step twice")
	}
}

func TestDispatchJSON(t *testing.T) {
	st, _ := scripted("s", hostforge.RetryAfter(time.Minute, "r", "later"))
	tab := flow.MustTable(st)
	ctx := context.Background()
	if b, err := tab.Dispatch(ctx, "s", []byte(`{"n":3}`)); b != nil || err == nil {
		t.Fatalf("a wait returned output %s, %v", b, err)
	} else if _, ok := hostforge.AsWait(err); !ok {
		t.Fatalf("wait came back as %v", err)
	}
	b, err := tab.Dispatch(ctx, "s", []byte(`{"n":3}`))
	if err != nil || string(b) != `{"twice":6}` {
		t.Fatalf("Dispatch = %s, %v", b, err)
	}
	for _, bad := range []struct{ step, in string }{{"nope", `{}`}, {"s", `{`}, {"s", `{"n":"x"}`}} {
		if _, err := tab.Dispatch(ctx, bad.step, []byte(bad.in)); hostforge.CodeOf(err) != "UNCLASSIFIED" {
			t.Errorf("Dispatch(%s, %s) = %v, want UNCLASSIFIED", bad.step, bad.in, err)
		}
	}
}

// Local reports every step and sleep, and a value that does not survive
// JSON fails under RoundTrip as it would under a remote runtime.
func TestLocalEventsAndRoundTrip(t *testing.T) {
	st, _ := scripted("s", hostforge.RetryAfter(time.Minute, "r", "later"))
	leak := flow.Bind("leak", time.Minute, func(context.Context, in) (chan int, error) { return make(chan int), nil })
	rt, _, evts := local(t, st, leak)
	rt.Subject = "dev-1"
	if err := (flow.Runner{RT: rt}).Run(context.Background(), "s", in{N: 1}, nil); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range *evts {
		if e.Subject != "dev-1" {
			t.Fatalf("event without subject: %+v", e)
		}
		kinds = append(kinds, e.Kind+":"+e.Outcome.String())
	}
	if got := strings.Join(kinds, " "); got != "step:wait sleep:done step:done" {
		t.Fatalf("events %s", got)
	}
	var ch chan int
	if err := rt.Do(context.Background(), "leak", in{}, &ch); hostforge.CodeOf(err) != "UNCLASSIFIED" {
		t.Fatalf("unserialisable output = %v", err)
	}
	if err := rt.Do(context.Background(), "missing", in{}, nil); hostforge.CodeOf(err) != "UNCLASSIFIED" {
		t.Fatalf("unknown step = %v", err)
	}
}

// A cancelled sleep is CANCELLED, not a bare context error.
func TestLocalSleepCancelled(t *testing.T) {
	rt := &flow.Local{Steps: flow.MustTable(), Clock: clock.Real{}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rt.Sleep(ctx, time.Hour); !hostforge.Cancelled.Is(err) {
		t.Fatalf("Sleep = %v", err)
	}
}

// A step's input may come by pointer (a polling body's, so a large input
// is not copied per poll): the step reads its own copy, with or without
// the JSON round trip, and a nil or mistyped pointer is refused.
func TestStepInputByPointer(t *testing.T) {
	step := flow.Bind("mutates", time.Minute, func(_ context.Context, i in) (out, error) {
		got := 2 * i.N
		i.N = -1 // the step's own copy
		return out{Twice: got}, nil
	})
	for _, rt := range []bool{false, true} {
		v := in{N: 21}
		var o out
		if err := step.Call(context.Background(), &v, &o, rt); err != nil || o.Twice != 42 {
			t.Fatalf("round trip %v: %+v, %v", rt, o, err)
		}
		if v.N != 21 {
			t.Fatalf("round trip %v: the step changed the caller's input to %+v", rt, v)
		}
	}
	for _, bad := range []any{(*in)(nil), &out{}} {
		if err := step.Call(context.Background(), bad, &out{}, false); hostforge.CodeOf(err) != hostforge.Unclassified.Code {
			t.Fatalf("input %T: %v, want UNCLASSIFIED", bad, err)
		}
	}
}
