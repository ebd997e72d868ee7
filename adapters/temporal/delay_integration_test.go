//go:build integration

package temporal_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/flow"
)

// TestDeferredSleepOnDevServer runs a poll that waits twice on the real
// server: the server honours the deferring attempt's NextRetryDelay (it
// starts the step's retry no sooner than the sleep, so the runtime sleeps
// no timer for the rest), writes no event for the retry, and the history
// is as long as historyModel says.
func TestDeferredSleepOnDevServer(t *testing.T) {
	addr := devServer(t)
	const wait = 2 * time.Second
	var runs atomic.Int32
	steps := flow.MustTable(
		flow.Bind("poll", time.Minute, func(_ context.Context, in pollIn) (struct{}, error) {
			if int(runs.Add(1)) <= in.Waits {
				return struct{}{}, hostforge.RetryAfter(wait, "not_yet", "not yet")
			}
			return struct{}{}, nil
		}),
	)
	c := dial(t, addr)
	defer c.Close()
	queue := "it-deferred-" + time.Now().Format("150405.000")
	w := worker.New(c, queue, worker.Options{WorkerStopTimeout: time.Second})
	temporal.Register(w, &temporal.Activities{Exec: steps, HeartbeatEvery: 500 * time.Millisecond}, temporal.ActivityOptions{Heartbeat: 3 * time.Second, StartToClose: time.Minute}, pollWorkflow)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: queue, TaskQueue: queue}, "test.poll", pollIn{Waits: 2})
	if err != nil {
		t.Fatal(err)
	}
	var out pollOut
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 3 || out.Code != "" || out.Elapsed < 2*wait {
		t.Fatalf("%d runs of the step ending %q after %s; want 3 runs, done, after %s", runs.Load(), out.Code, out.Elapsed, 2*wait)
	}
	m := historyModel{}
	m.start()
	events, timers, retries := 0, 0, 0
	scheduled := map[int64]time.Time{}
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			timers++
			m.timer()
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			m.sleep()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			m.activity()
			if d := temporal.ScheduledDelay(ev.GetActivityTaskScheduledEventAttributes()); d > 0 {
				scheduled[ev.GetEventId()] = ev.GetEventTime().AsTime().Add(d)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := ev.GetActivityTaskStartedEventAttributes()
			due, deferred := scheduled[a.GetScheduledEventId()]
			if !deferred {
				continue
			}
			retries++
			if a.GetAttempt() != 2 || a.GetLastFailure().GetApplicationFailureInfo().GetType() != temporal.DelayErrorType {
				t.Errorf("deferred step started at attempt %d after %v; want attempt 2 after its deferral", a.GetAttempt(), a.GetLastFailure())
			}
			if at := ev.GetEventTime().AsTime(); at.Before(due) {
				t.Errorf("deferred step started %s before its delay was over", due.Sub(at))
			}
		}
	}
	if timers != 0 || retries != 2 {
		t.Errorf("%d timers and %d deferred steps; want no timer and 2", timers, retries)
	}
	if got := m.closed(); got != events {
		t.Errorf("the server recorded %d events, historyModel says %d", events, got)
	}
	t.Logf("%d events, %d deferred steps", events, retries)
}
