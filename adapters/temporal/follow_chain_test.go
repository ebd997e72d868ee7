package temporal

import (
	"context"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hostforge/hostforge/flow"
)

// chainClient serves the histories of a continue-as-new chain by run ID.
type chainClient struct {
	client.Client
	runs map[string][]*historypb.HistoryEvent
	read []string
}

func (c *chainClient) GetWorkflowHistory(_ context.Context, _, run string, _ bool, _ enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	c.read = append(c.read, run)
	return &eventList{evs: c.runs[run]}
}

type eventList struct{ evs []*historypb.HistoryEvent }

func (e *eventList) HasNext() bool { return len(e.evs) > 0 }
func (e *eventList) Next() (*historypb.HistoryEvent, error) {
	ev := e.evs[0]
	e.evs = e.evs[1:]
	return ev, nil
}

// TestFollowAcrossContinueAsNew: Follow reads a run that continued as new
// into the run it continued as, reporting each step and sleep once, and
// returns when the chain's last run closes.
func TestFollowAcrossContinueAsNew(t *testing.T) {
	step := func(id int64, name string) []*historypb.HistoryEvent {
		return []*historypb.HistoryEvent{
			{EventId: id, EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
				ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: name}}}},
			{EventId: id + 1, EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, Attributes: &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{
				ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: id}}},
		}
	}
	run1 := append(step(5, "ironic_inspection"),
		&historypb.HistoryEvent{EventId: 8, EventType: enumspb.EVENT_TYPE_TIMER_STARTED, Attributes: &historypb.HistoryEvent_TimerStartedEventAttributes{
			TimerStartedEventAttributes: &historypb.TimerStartedEventAttributes{StartToFireTimeout: durationpb.New(20 * time.Second)}}},
		&historypb.HistoryEvent{EventId: 12, EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, Attributes: &historypb.HistoryEvent_WorkflowExecutionContinuedAsNewEventAttributes{
			WorkflowExecutionContinuedAsNewEventAttributes: &historypb.WorkflowExecutionContinuedAsNewEventAttributes{NewExecutionRunId: "run-2"}}})
	run2 := append(step(5, "ironic_inspection"), &historypb.HistoryEvent{EventId: 9, EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED})
	c := &chainClient{runs: map[string][]*historypb.HistoryEvent{"run-1": run1, "run-2": run2}}
	s := &Submitter{Client: c}
	var got []string
	err := s.Follow(context.Background(), Run{Device: "cpu-u10", WorkflowID: "enroll/cpu-u10", RunID: "run-1"}, func(e flow.Event) {
		got = append(got, e.Kind+" "+e.Step)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"step ironic_inspection", "sleep ", "step ironic_inspection"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("events %q, want %q", got, want)
	}
	if len(c.read) != 2 || c.read[1] != "run-2" {
		t.Fatalf("runs read %v, want run-1 then run-2", c.read)
	}
}
