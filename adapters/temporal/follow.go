package temporal

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
)

// Follow reports a run as it happens, as flow.Local's OnEvent does for an
// inline run: one "step" event per finished activity (done, a wait, or a
// failure, with its Wait or Failure) and one "sleep" event per durable
// timer or sleep deferred into the next step (delay.go), each with the
// device as Subject. It reads the workflow's history with long polls and
// returns when the run closes (nil) or ctx ends (its error). Events a worker replays are in the history once, so each is
// reported once, whichever worker ran it.
//
// A run that continues as new is followed into the run it continued as:
// that run replays its journal without scheduling anything, so each step
// and sleep is still reported once.
func (s *Submitter) Follow(ctx context.Context, run Run, onEvent func(flow.Event)) error {
	runID := run.RunID
	for hops := 0; hops < maxChain; hops++ {
		it := s.Client.GetWorkflowHistory(ctx, run.WorkflowID, runID, true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		f := follower{subject: run.Device, on: onEvent, steps: map[int64]scheduled{}}
		next, closed := "", false
		for !closed && it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return TemporalUnavailable.At("follow").Wrap(err, "reading the history of %s", run.WorkflowID)
			}
			if closed = f.event(ev); closed {
				next = ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
			}
		}
		if !closed {
			return ctx.Err()
		}
		if next == "" {
			return nil
		}
		runID = next
	}
	return TemporalUnavailable.At("follow").New("%s continued as new more than %d times", run.WorkflowID, maxChain)
}

type scheduled struct {
	step    string
	started time.Time
}

type follower struct {
	subject string
	on      func(flow.Event)
	steps   map[int64]scheduled
}

// event reports one history event; true when the run closed.
func (f *follower) event(ev *historypb.HistoryEvent) bool {
	at := ev.GetEventTime().AsTime()
	switch ev.GetEventType() {
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
		a := ev.GetActivityTaskScheduledEventAttributes()
		if d := ScheduledDelay(a); d > 0 {
			// The sleep before the step, deferred into its activity.
			f.emit(flow.Event{Kind: "sleep", At: at, Took: d})
		}
		f.steps[ev.GetEventId()] = scheduled{step: a.GetActivityType().GetName(), started: at}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
		id := ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()
		if s, ok := f.steps[id]; ok {
			s.started = at
			f.steps[id] = s
		}
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
		s := f.take(ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId())
		f.emit(flow.Event{Kind: "step", Step: s.step, Outcome: hostforge.Done, At: at, Took: at.Sub(s.started)})
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
		a := ev.GetActivityTaskFailedEventAttributes()
		s := f.take(a.GetScheduledEventId())
		err := fromActivityError(s.step, temporal.GetDefaultFailureConverter().FailureToError(a.GetFailure()))
		f.emit(outcomeEvent(s, at, err))
	case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
		a := ev.GetActivityTaskTimedOutEventAttributes()
		s := f.take(a.GetScheduledEventId())
		err := fromActivityError(s.step, temporal.GetDefaultFailureConverter().FailureToError(a.GetFailure()))
		f.emit(outcomeEvent(s, at, err))
	case enumspb.EVENT_TYPE_TIMER_STARTED:
		f.emit(flow.Event{Kind: "sleep", At: at, Took: ev.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration()})
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return true
	}
	return false
}

func (f *follower) take(id int64) scheduled {
	s := f.steps[id]
	delete(f.steps, id)
	return s
}

func (f *follower) emit(e flow.Event) {
	if f.on != nil {
		e.Subject = f.subject
		f.on(e)
	}
}

func outcomeEvent(s scheduled, at time.Time, err error) flow.Event {
	e := flow.Event{Kind: "step", Step: s.step, At: at, Took: at.Sub(s.started)}
	o, fl, w := hostforge.Classify(err)
	e.Outcome = o
	if w != nil {
		e.Wait = w
	}
	if fl != nil {
		e.Failure = fl
	}
	return e
}
