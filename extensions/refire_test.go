package extensions_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/flow"
)

// contacted lists the tasks the runner was handed since the last call,
// with their delivery IDs.
func (w *world) contacted() map[string][]string {
	out := map[string][]string{}
	reqs := w.runner.Requests()
	for _, r := range reqs[w.seen:] {
		out[r.Task] = append(out[r.Task], r.DeliveryID)
	}
	w.seen = len(reqs)
	return out
}

func delivery(t *testing.T, rep extensions.Report, task string) extensions.Delivery {
	t.Helper()
	for _, d := range rep.Deliveries {
		if d.Task == task {
			return d
		}
	}
	t.Fatalf("no delivery of %s in %s", task, summary(rep))
	return extensions.Delivery{}
}

// Firing an event again runs only what has not succeeded: a success is
// reported skipped with its delivery and time, and not contacted; a
// failed webhook is delivered again with its webhook-id; a failed SSH or
// Ansible task runs again under a new delivery ID, each delivery running
// at most once.
func TestRefireRunsOnlyWhatHasNotSucceeded(t *testing.T) {
	w := newWorld(t, def("alpha", "", "ok:webhook:continue", "hook:webhook:continue", "cmd:ssh:continue", "play:ansible:continue"))
	boom := extensionsfake.Outcome{Err: extensions.TaskFailed.New("exit 1"), Times: 1}
	w.runner.On("hook", boom).On("cmd", boom).On("play", boom)
	ev := serverEvent(t, "evt-again")
	first := w.fire(t, ev)
	if got := summary(first); got != "alpha/ok=succeeded alpha/hook=failed alpha/cmd=failed alpha/play=failed" {
		t.Fatalf("first firing %s", got)
	}
	w.contacted()
	w.clk.Advance(time.Hour)

	again := w.fire(t, ev)
	got := w.contacted()
	if got := summary(again); got != "alpha/ok=skipped alpha/hook=succeeded alpha/cmd=succeeded alpha/play=succeeded" {
		t.Fatalf("re-fire %s", got)
	}
	if len(got["ok"]) != 0 {
		t.Fatalf("the task that succeeded was contacted again: %v", got)
	}
	ok := delivery(t, again, "ok")
	if ok.DeliveryID != delivery(t, first, "ok").DeliveryID || ok.Code != "" ||
		!strings.HasPrefix(ok.Message, "succeeded earlier: delivery "+ok.DeliveryID+" at 2026-01-01T00:00:00Z") {
		t.Errorf("skipped success %+v: want its earlier delivery's ID and time, and no failure code", ok)
	}
	if rec, _, _ := w.store.Execution(context.Background(), ok.DeliveryID); rec.Status != extensions.StatusSucceeded {
		t.Errorf("the earlier success's record became %s", rec.Status)
	}
	if got["hook"][0] != delivery(t, first, "hook").DeliveryID {
		t.Errorf("the webhook was delivered again as %s, want its webhook-id %s", got["hook"][0], delivery(t, first, "hook").DeliveryID)
	}
	for _, task := range []string{"cmd", "play"} {
		if want := extensions.RedeliveryID("evt-again", "alpha", task, 1); got[task][0] != want || delivery(t, again, task).DeliveryID != want {
			t.Errorf("%s ran again as delivery %s, want the new delivery %s", task, got[task][0], want)
		}
	}

	third := w.fire(t, ev)
	if got := summary(third); got != "alpha/ok=skipped alpha/hook=skipped alpha/cmd=skipped alpha/play=skipped" || len(w.contacted()) != 0 {
		t.Fatalf("third firing %s", got)
	}
}

// Redeliver runs exactly the tasks it names (by label, or
// extension/label), each under a new delivery ID; a name that matches no
// task refuses the firing before anything runs.
func TestRedeliverRunsTheNamedTaskUnderANewDeliveryID(t *testing.T) {
	w := newWorld(t, def("alpha", "", "a1:webhook", "a2:ssh"), def("beta", "", "a1:webhook"))
	ev := serverEvent(t, "evt-redo")
	w.fire(t, ev)
	w.contacted()

	ev.Redeliver = []string{"alpha/a1"}
	rep := w.fire(t, ev)
	got := w.contacted()
	if len(got) != 1 || got["a1"][0] != extensions.RedeliveryID("evt-redo", "alpha", "a1", 1) {
		t.Fatalf("redeliver alpha/a1 contacted %v", got)
	}
	if summary(rep) != "alpha/a1=succeeded alpha/a2=skipped beta/a1=skipped" {
		t.Fatalf("report %s", summary(rep))
	}
	ev.Redeliver = []string{"a2"}
	w.fire(t, ev)
	ev.Redeliver = []string{"a2"}
	w.fire(t, ev)
	if got := w.contacted(); len(got) != 1 || len(got["a2"]) != 2 || got["a2"][0] != extensions.RedeliveryID("evt-redo", "alpha", "a2", 1) || got["a2"][1] != extensions.RedeliveryID("evt-redo", "alpha", "a2", 2) {
		t.Fatalf("two redeliveries of a2 contacted %v", got)
	}

	ev.Redeliver = []string{"a3"}
	if _, err := extensions.Fire(context.Background(), w.rt, ev); !extensions.EventInvalid.Is(err) {
		t.Fatalf("redeliver of an unknown task: %v, want %s", err, extensions.EventInvalid.Code)
	}
	if len(w.contacted()) != 0 {
		t.Fatal("a refused firing contacted a task")
	}
}

// A delivery left started (its worker died mid-command) is reported
// interrupted by every later firing and never run again; its record is
// finished as interrupted; a failure policy of fail stops the extension's
// later tasks; redelivering it runs it under a new delivery ID.
func TestInterruptedDeliveryIsNeverRunAgain(t *testing.T) {
	w := newWorld(t, def("alpha", "", "cmd:ssh", "after:webhook"))
	ev := serverEvent(t, "evt-int")
	started := extensions.Execution{DeliveryID: extensions.DeliveryID("evt-int", "alpha", "cmd"), EventID: "evt-int", Stage: extensions.ServerRegisteredStage,
		Extension: "alpha", Task: "cmd", TaskType: extensions.TaskSSH, Status: extensions.StatusStarted, StartedAt: w.clk.Now()}
	if _, ok, err := w.store.StartDelivery(context.Background(), started); !ok || err != nil {
		t.Fatal(ok, err)
	}
	for i := range 2 {
		rep := w.fire(t, ev)
		if got := w.contacted(); len(got) != 0 {
			t.Fatalf("firing %d contacted %v", i, got)
		}
		d := delivery(t, rep, "cmd")
		if d.Status != extensions.StatusFailed || d.Code != extensions.TaskInterrupted.Code || d.DeliveryID != started.DeliveryID || !strings.Contains(d.Message, "was started at 2026-01-01T00:00:00Z") {
			t.Fatalf("firing %d: %+v", i, d)
		}
		if after := delivery(t, rep, "after"); after.Status != extensions.StatusSkipped || !strings.HasPrefix(after.Message, "not run: task cmd") {
			t.Errorf("firing %d: the task after it %+v, want not run (failurePolicy fail)", i, after)
		}
		rec, _, _ := w.store.Execution(context.Background(), started.DeliveryID)
		if rec.Status != extensions.StatusFailed || !strings.HasPrefix(rec.Message, extensions.TaskInterrupted.Code+": ") || rec.FinishedAt.IsZero() {
			t.Fatalf("firing %d: record %+v", i, rec)
		}
	}
	ev.Redeliver = []string{"cmd"}
	rep := w.fire(t, ev)
	got := w.contacted()
	if summary(rep) != "alpha/cmd=succeeded alpha/after=succeeded" || got["cmd"][0] != extensions.RedeliveryID("evt-int", "alpha", "cmd", 1) {
		t.Fatalf("redelivery: %s, contacted %v", summary(rep), got)
	}
}

// Redelivering a delivery left started records it interrupted before
// the new delivery runs.
func TestRedeliveryFinishesTheDeliveryItReplaces(t *testing.T) {
	w := newWorld(t, def("alpha", "", "cmd:ansible"))
	id := extensions.DeliveryID("evt-ab", "alpha", "cmd")
	if _, _, err := w.store.StartDelivery(context.Background(), extensions.Execution{DeliveryID: id, EventID: "evt-ab", Stage: extensions.ServerRegisteredStage,
		Extension: "alpha", Task: "cmd", TaskType: extensions.TaskAnsible, Status: extensions.StatusStarted, StartedAt: w.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	ev := serverEvent(t, "evt-ab")
	ev.Redeliver = []string{"cmd"}
	w.fire(t, ev)
	old, _, _ := w.store.Execution(context.Background(), id)
	if old.Status != extensions.StatusFailed || !strings.HasPrefix(old.Message, extensions.TaskInterrupted.Code) {
		t.Fatalf("the replaced delivery's record %+v, want it interrupted", old)
	}
}

// A runner's wait is not the effect: an SSH task whose runner asked to be
// called again later runs when called again, and is not interrupted.
func TestAWaitingAtMostOnceTaskIsNotInterrupted(t *testing.T) {
	w := newWorld(t, def("alpha", "", "cmd:ssh"))
	w.runner.On("cmd", extensionsfake.Outcome{Err: hostforge.RetryAfter(time.Second, "host_busy", "later"), Times: 1})
	rep := w.fire(t, serverEvent(t, "evt-wait"))
	if d := delivery(t, rep, "cmd"); d.Status != extensions.StatusSucceeded {
		t.Fatalf("%+v", d)
	}
}

// An at-most-once call that the runtime lost is followed by one that asks
// the record: interrupted when the lost call had begun the effect, run
// when it had not.
func TestALostCallEndsInterruptedOnlyWhenItHadStarted(t *testing.T) {
	for _, tc := range []struct {
		name       string
		lostBefore bool // the call is lost before the step ran at all
		want       string
		runs       int
	}{
		{"lost after the effect", false, extensions.TaskInterrupted.Code, 1},
		{"lost before the step ran", true, "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, def("alpha", "", "cmd:ssh"))
			rt := &losingRuntime{Local: w.rt, before: tc.lostBefore}
			rep, err := extensions.Fire(context.Background(), rt, serverEvent(t, "evt-lost"))
			if err != nil {
				t.Fatal(err)
			}
			d := delivery(t, rep, "cmd")
			if d.Code != tc.want || len(w.runner.Requests()) != tc.runs {
				t.Fatalf("%+v after %d runs, want code %q and %d run", d, len(w.runner.Requests()), tc.want, tc.runs)
			}
		})
	}
}

// losingRuntime loses the first call of extensions.run as a remote
// runtime loses an at-most-once call: not started again, reported lost.
type losingRuntime struct {
	*flow.Local
	before bool
	lost   bool
}

func (r *losingRuntime) Do(ctx context.Context, step string, in, out any) error {
	if step != extensions.StepRun || r.lost {
		return r.Local.Do(ctx, step, in, out)
	}
	r.lost = true
	if !r.before {
		_ = r.Local.Do(ctx, step, in, out)
	}
	return flow.AttemptLost.New("step %s lost its worker", step)
}

// extensions.run declares its call policy beside the step: an SSH or
// Ansible task's call runs at most once, bounded by the task's own
// timeout, its heartbeat as long; a webhook's is the default.
func TestRunStepCallPolicy(t *testing.T) {
	w := newWorld(t, def("alpha", "", "hook:webhook", "cmd:ssh", "play:ansible"))
	st, ok := w.d.Step(extensions.StepRun)
	if !ok || !st.HasPolicy() {
		t.Fatal("extensions.run declares no call policy")
	}
	var plan extensions.PlanOut
	if err := w.rt.Do(context.Background(), extensions.StepPlan, extensions.PlanIn{EventID: "e", Stage: extensions.ServerRegisteredStage}, &plan); err != nil {
		t.Fatal(err)
	}
	want := map[string]flow.CallPolicy{
		"hook": {},
		// timeout 10 s: connect, log in and run, each within it, and a margin
		"cmd": {AtMostOnce: true, Timeout: 45 * time.Second, Heartbeat: 45 * time.Second},
		// no executionTimeout: the default hour, and a margin
		"play": {AtMostOnce: true, Timeout: time.Hour + time.Minute, Heartbeat: time.Hour + time.Minute},
	}
	for _, p := range plan.Tasks {
		if got := st.Policy(extensions.RunIn{Task: p, DeliveryID: p.DeliveryID}); got != want[p.Task] {
			t.Errorf("%s: %+v, want %+v", p.Task, got, want[p.Task])
		}
	}
}

// A plan recorded by an earlier release (a workflow history replayed after
// an upgrade) carries no delivery IDs: the tasks are delivered under
// DeliveryID(event, extension, task), as then.
func TestAPlanWithoutDeliveryIDs(t *testing.T) {
	w := newWorld(t, def("alpha", "", "a1:webhook", "a2:ssh"))
	old := flow.Bind(extensions.StepPlan, time.Minute, func(ctx context.Context, in extensions.PlanIn) (extensions.PlanOut, error) {
		out, err := w.d.Plan(ctx, in)
		for i := range out.Tasks {
			out.Tasks[i].DeliveryID, out.Tasks[i].Timeout = "", 0
		}
		return out, err
	})
	steps := []flow.Step{old}
	for _, n := range w.d.StepNames() {
		if n != extensions.StepPlan {
			st, _ := w.d.Step(n)
			steps = append(steps, st)
		}
	}
	w.rt.Steps = flow.MustTable(steps...)
	rep := w.fire(t, serverEvent(t, "evt-old"))
	for _, d := range rep.Deliveries {
		if d.Status != extensions.StatusSucceeded || d.DeliveryID != extensions.DeliveryID("evt-old", "alpha", d.Task) {
			t.Errorf("%+v", d)
		}
	}
}

// A record counts the runs of its delivery: a webhook delivered again
// under its webhook-id adds to them, an SSH task run again under a new
// delivery ID starts its own count, and the delivery's report says which
// event and stage it belongs to.
func TestRecordsCountAttempts(t *testing.T) {
	w := newWorld(t, def("alpha", "", "hook:webhook:continue", "cmd:ssh:continue"))
	boom := extensionsfake.Outcome{Err: extensions.TaskFailed.New("HTTP 503"), Times: 2}
	w.runner.On("hook", boom).On("cmd", extensionsfake.Outcome{Err: extensions.TaskFailed.New("exit 1"), Times: 1})
	ev := serverEvent(t, "evt-attempts")
	ctx := context.Background()
	attempts := func(rep extensions.Report, task string) int {
		t.Helper()
		d := delivery(t, rep, task)
		if d.EventID != "evt-attempts" || d.Stage != extensions.ServerRegisteredStage {
			t.Fatalf("delivery %+v does not name its event and stage", d)
		}
		rec, ok, err := w.store.Execution(ctx, d.DeliveryID)
		if err != nil || !ok {
			t.Fatalf("no record of %s: %v", d.DeliveryID, err)
		}
		return rec.Attempts
	}
	first := w.fire(t, ev)
	if a, b := attempts(first, "hook"), attempts(first, "cmd"); a != 1 || b != 1 {
		t.Fatalf("first firing: attempts hook %d cmd %d, want 1 and 1", a, b)
	}
	second := w.fire(t, ev)
	if a, b := attempts(second, "hook"), attempts(second, "cmd"); a != 2 || b != 1 {
		t.Fatalf("second firing: attempts hook %d (same webhook-id) cmd %d (a new delivery), want 2 and 1", a, b)
	}
	third := w.fire(t, ev)
	if got := summary(third); got != "alpha/hook=succeeded alpha/cmd=skipped" {
		t.Fatalf("third firing %s", got)
	}
	if a := attempts(third, "hook"); a != 3 {
		t.Fatalf("the webhook's third run is recorded as attempt %d", a)
	}
}
