package temporal_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/enrollment"
)

// TestReplayRecordedHistories replays histories recorded on a real Temporal
// dev server (testdata/histories: *-deferred.json by today's runtime,
// regenerated with HOSTFORGE_RECORD_HISTORIES=1 scripts/integration; the
// others by the runtime before sleeps rode in the next step, which slept
// on timers). A change to the workflow body or the runtime that schedules
// different commands for the same history fails here, before it strands
// running enrollments.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("found %d recorded histories, want the 4 the integration tests record", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			opts := temporal.ActivityOptions{}
			if strings.HasPrefix(filepath.Base(f), "continued-") {
				// Recorded with a low threshold, so that the runs of one
				// enrollment continue as new (TestContinueAsNewOnDevServer).
				opts.ContinueAsNewAt = 40
			}
			r.RegisterWorkflowWithOptions(temporal.Enrollment.Func(opts), temporal.WorkflowRegisterOptions())
			h, exec := loadHistory(t, f)
			if err := r.ReplayWorkflowHistoryWithOptions(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)), h, worker.ReplayWorkflowHistoryOptions{OriginalExecution: exec}); err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}

// loadHistory reads a recorded history and the execution it ran as: a run
// that started its settlement named itself in the child's workflow ID
// (settle/<workflow ID>/<run ID>), which the replay must reproduce.
func loadHistory(t *testing.T, file string) (*historypb.History, workflow.Execution) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var exec workflow.Execution
	for _, ev := range h.GetEvents() {
		if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil && strings.HasPrefix(a.GetWorkflowId(), "settle/") {
			id := strings.TrimPrefix(a.GetWorkflowId(), "settle/")
			i := strings.LastIndexByte(id, '/')
			exec = workflow.Execution{ID: id[:i], RunID: id[i+1:]}
		}
	}
	return h, exec
}

// TestReplayDetectsNondeterminism: the replayer does fail on a workflow
// that schedules something else for the same history, so the test above
// can fail.
func TestReplayDetectsNondeterminism(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(otherWorkflow, temporal.WorkflowRegisterOptions())
	err := r.ReplayWorkflowHistoryFromJSONFile(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)), filepath.Join("testdata", "histories", "failed-bad-offline.json"))
	if err == nil {
		t.Fatal("a workflow with another step order replayed cleanly")
	}
}

// otherWorkflow is the enrollment with its first step renamed.
func otherWorkflow(ctx workflow.Context, in temporal.Input) (enrollment.Result, error) {
	rt := temporal.NewRuntime(ctx, temporal.ActivityOptions{})
	var out enrollment.ReadIntentOut
	err := rt.Do(context.Background(), "read_intent_v2", enrollment.ReadIntentIn{Device: in.Request.Device}, &out)
	return enrollment.Result{Device: in.Request.Device}, err
}
