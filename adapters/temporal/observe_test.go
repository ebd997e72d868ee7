package temporal_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdklog "go.temporal.io/sdk/log"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/flow"
)

// observations is a flow.Observer that keeps what it is told.
type observations struct {
	mu  sync.Mutex
	got []any
}

func (o *observations) Observe(v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, v)
}

// keys are the observations without their durations (a step's under
// Temporal counts its queueing), in order.
func (o *observations) keys() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, v := range o.got {
		switch v := v.(type) {
		case flow.StepAttempt:
			k := fmt.Sprintf("attempt %s %s", v.Step, v.Outcome)
			if v.Failure != nil {
				k += " " + v.Failure.Code
			}
			if v.Wait != nil {
				k += " " + v.Wait.Reason
			}
			out = append(out, k)
		case flow.Waited:
			out = append(out, fmt.Sprintf("waited %s %s %s", v.Step, v.Reason, v.Sleep))
		case flow.WaitExhausted:
			out = append(out, fmt.Sprintf("exhausted %s %s", v.Step, v.Reason))
		case flow.RunStarted:
			out = append(out, "run "+v.Workflow)
		case flow.RunEnded:
			k := "end " + v.Workflow
			if v.Failure != nil {
				k += " " + v.Failure.Code
			}
			out = append(out, k)
		case flow.PhaseEnded:
			out = append(out, fmt.Sprintf("phase %s %s %s", v.Workflow, v.Phase, v.Status))
		default:
			out = append(out, fmt.Sprintf("%T", v))
		}
	}
	return out
}

// TestReplayReportsNothing: replaying a recorded history — what a worker
// does with a workflow it has not cached, after a restart — reports
// nothing, since the worker that executed it reported it then. The same
// runs executed fresh (TestSameStepsAsLocal) do report.
func TestReplayReportsNothing(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("recorded histories: %v, %v", files, err)
	}
	for _, f := range files {
		obs := &observations{}
		r := worker.NewWorkflowReplayer()
		opts := temporal.ActivityOptions{Observer: obs}
		if strings.HasPrefix(filepath.Base(f), "continued-") {
			opts.ContinueAsNewAt = 40 // as TestReplayRecordedHistories
		}
		r.RegisterWorkflowWithOptions(temporal.Enrollment.Func(opts), temporal.WorkflowRegisterOptions())
		h, exec := loadHistory(t, f)
		if err := r.ReplayWorkflowHistoryWithOptions(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)), h, worker.ReplayWorkflowHistoryOptions{OriginalExecution: exec}); err != nil {
			t.Fatalf("replaying %s: %v", f, err)
		}
		if k := obs.keys(); len(k) > 0 {
			t.Errorf("%s: replay reported %q", filepath.Base(f), k)
		}
	}
}

// scheduled is a periodic job's body as a schedule's workflow runs it: it
// reports its run with the time the schedule meant it to start.
func scheduled(ctx workflow.Context) error {
	at, _ := temporal.ScheduledStart(ctx)
	flow.ObserveScheduleRun(context.Background(), temporal.NewRuntime(ctx, temporal.ActivityOptions{Observer: scheduleObs}), "ironic_projection", at)
	return nil
}

var scheduleObs = &observations{}

// TestScheduledRunReportsItsLag: a workflow a Temporal Schedule started
// reads the schedule's time from TemporalScheduledStartTime and reports
// the run with its lag.
func TestScheduledRunReportsItsLag(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	start := time.Date(2026, 3, 1, 12, 0, 45, 0, time.UTC)
	env.SetStartTime(start)
	if err := env.SetTypedSearchAttributesOnStart(sdktemporal.NewSearchAttributes(
		sdktemporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime").ValueSet(start.Add(-45 * time.Second)))); err != nil {
		t.Fatal(err)
	}
	env.RegisterWorkflow(scheduled)
	env.ExecuteWorkflow(scheduled)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	scheduleObs.mu.Lock()
	defer scheduleObs.mu.Unlock()
	if len(scheduleObs.got) != 1 {
		t.Fatalf("%d observations, want the run", len(scheduleObs.got))
	}
	run, ok := scheduleObs.got[0].(flow.ScheduleRun)
	if !ok || run.Schedule != "ironic_projection" || run.Lag() != 45*time.Second || !run.Started.Equal(start) {
		t.Fatalf("observed %+v, want ironic_projection 45s late", scheduleObs.got[0])
	}
}
