package temporal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

// history builds events the way the server records a run: a step that
// waits, a timer, a step that finishes, a step that fails.
func syntheticHistory(t *testing.T, t0 time.Time) []*historypb.HistoryEvent {
	t.Helper()
	conv := temporal.GetDefaultFailureConverter()
	wait := toApplicationError(&hostforge.Wait{Reason: "node_locked", After: 20 * time.Second, Detail: "locked by conductor-2"})
	fail := toApplicationError(enrollment.StatusIneligible.New("device bad-offline-u18 is offline"))
	ts := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(t0.Add(d)) }
	sched := func(id int64, d time.Duration, step string) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventId: id, EventTime: ts(d), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: step}}}}
	}
	started := func(id, of int64, d time.Duration) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventId: id, EventTime: ts(d), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED,
			Attributes: &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: of}}}
	}
	failed := func(id, of int64, d time.Duration, err error) *historypb.HistoryEvent {
		return &historypb.HistoryEvent{EventId: id, EventTime: ts(d), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED,
			Attributes: &historypb.HistoryEvent_ActivityTaskFailedEventAttributes{ActivityTaskFailedEventAttributes: &historypb.ActivityTaskFailedEventAttributes{ScheduledEventId: of, Failure: conv.ErrorToFailure(err)}}}
	}
	return []*historypb.HistoryEvent{
		sched(5, 0, "ironic_inspection"),
		started(6, 5, 100*time.Millisecond),
		failed(7, 5, 400*time.Millisecond, wait),
		{EventId: 8, EventTime: ts(time.Second), EventType: enumspb.EVENT_TYPE_TIMER_STARTED,
			Attributes: &historypb.HistoryEvent_TimerStartedEventAttributes{TimerStartedEventAttributes: &historypb.TimerStartedEventAttributes{StartToFireTimeout: durationpb.New(20 * time.Second)}}},
		sched(9, 21*time.Second, "ironic_inspection"),
		started(10, 9, 21*time.Second),
		{EventId: 11, EventTime: ts(23 * time.Second), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
			Attributes: &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: 9}}},
		sched(12, 24*time.Second, "activate_device"),
		started(13, 12, 24*time.Second),
		failed(14, 12, 25*time.Second, fail),
		{EventId: 15, EventTime: ts(26 * time.Second), EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED},
		// After the close: never reported.
		sched(16, 30*time.Second, "late"),
	}
}

func TestFollowerReportsStepsWaitsFailuresAndTimers(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var got []flow.Event
	f := follower{subject: "cpu-r1-u10", on: func(e flow.Event) { got = append(got, e) }, steps: map[int64]scheduled{}}
	closed := false
	for _, ev := range syntheticHistory(t, t0) {
		if f.event(ev) {
			closed = true
			break
		}
	}
	if !closed {
		t.Fatal("the follower did not see the run close")
	}
	if len(got) != 4 {
		t.Fatalf("%d events, want 4: %+v", len(got), got)
	}
	for _, e := range got {
		if e.Subject != "cpu-r1-u10" {
			t.Errorf("event %+v has subject %q", e, e.Subject)
		}
	}
	if w := got[0]; w.Kind != "step" || w.Step != "ironic_inspection" || w.Outcome != hostforge.Waiting || w.Wait == nil ||
		w.Wait.Reason != "node_locked" || w.Wait.After != 20*time.Second || w.Wait.Detail != "locked by conductor-2" || w.Took != 300*time.Millisecond {
		t.Errorf("the wait: %+v (wait %+v)", w, w.Wait)
	}
	if s := got[1]; s.Kind != "sleep" || s.Took != 20*time.Second || !s.At.Equal(t0.Add(time.Second)) {
		t.Errorf("the timer: %+v", s)
	}
	if d := got[2]; d.Step != "ironic_inspection" || d.Outcome != hostforge.Done || d.Took != 2*time.Second {
		t.Errorf("the finished step: %+v", d)
	}
	if fl := got[3]; fl.Step != "activate_device" || fl.Outcome != hostforge.Failed || fl.Failure == nil || fl.Failure.Code != enrollment.StatusIneligible.Code || fl.Failure.Owner != enrollment.StatusIneligible.Owner {
		t.Errorf("the failure: %+v (failure %+v)", fl, fl.Failure)
	}
}

// A sleep carried by the step after it (delay.go) is reported as a sleep
// when the step is scheduled, before the step; the step's duration runs
// from the start of the attempt that ran it.
func TestFollowerReportsDeferredSleeps(t *testing.T) {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	ts := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(t0.Add(d)) }
	input, err := converter.GetDefaultDataConverter().ToPayloads(json.RawMessage(`{"device":"cpu-r1-u10"}`), Delay{After: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	events := []*historypb.HistoryEvent{
		{EventId: 5, EventTime: ts(0), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityType: &commonpb.ActivityType{Name: "ironic_cleaning"}, Input: input}}},
		// Written when the step closes: the attempt that ran it.
		{EventId: 6, EventTime: ts(40 * time.Second), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED,
			Attributes: &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{ScheduledEventId: 5, Attempt: 2}}},
		{EventId: 7, EventTime: ts(43 * time.Second), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
			Attributes: &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: 5}}},
	}
	var got []flow.Event
	f := follower{subject: "cpu-r1-u10", on: func(e flow.Event) { got = append(got, e) }, steps: map[int64]scheduled{}}
	for _, ev := range events {
		f.event(ev)
	}
	if len(got) != 2 {
		t.Fatalf("%d events, want a sleep and a step: %+v", len(got), got)
	}
	if s := got[0]; s.Kind != "sleep" || s.Took != 40*time.Second || !s.At.Equal(t0) {
		t.Errorf("the sleep: %+v", s)
	}
	if d := got[1]; d.Kind != "step" || d.Step != "ironic_cleaning" || d.Outcome != hostforge.Done || d.Took != 3*time.Second {
		t.Errorf("the step: %+v", d)
	}
}

// A history recorded on a real dev server (a worker restarted mid-run)
// gives one event per activity and per timer, and ends at the close.
func TestFollowerOnRecordedHistory(t *testing.T) {
	fh, err := os.Open(filepath.Join("testdata", "histories", "restart-cpu-u10.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	h, err := client.HistoryFromJSON(fh, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps, sleeps, closed := 0, 0, false
	f := follower{subject: "cpu-r1-u10", steps: map[int64]scheduled{}, on: func(e flow.Event) {
		switch {
		case e.Kind == "sleep":
			sleeps++
		case e.Kind == "step" && e.Step != "" && e.Outcome == hostforge.Done:
			steps++
		default:
			t.Errorf("unexpected event %+v", e)
		}
	}}
	for _, ev := range h.Events {
		if f.event(ev) {
			closed = true
		}
	}
	if steps != 16 || sleeps != 7 || !closed {
		t.Fatalf("%d steps, %d sleeps, closed %v: want the history's 16 activities and 7 timers", steps, sleeps, closed)
	}
}
