package temporal

import (
	"context"
	"errors"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hostforge/hostforge"
)

// oneAtATime is the start options of a workflow that runs once per ID at a
// time: a start while a run of the ID is open fails with
// WorkflowExecutionAlreadyStarted; a closed run's ID may run again.
func oneAtATime(id, queue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                                       id,
		TaskQueue:                                queue,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}
}

// startDeviceRun starts workflow with input as the device's one run at a
// time under id. A run already open is the failure running makes of the
// error and the open run's ID (each workflow raises its own code there, so
// the failure catalogue lists the place); any other error is
// TEMPORAL_UNAVAILABLE "starting <what> of <device>".
func (s *Submitter) startDeviceRun(ctx context.Context, device, id string, running func(err error, runID string) error, what, workflow string, input any) (client.WorkflowRun, error) {
	wr, err := s.Client.ExecuteWorkflow(ctx, oneAtATime(id, s.taskQueue()), workflow, input)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, running(err, started.RunId)
		}
		return nil, TemporalUnavailable.Wrap(err, "starting %s of %s", what, device)
	}
	return wr, nil
}

// awaitResult blocks until the run closes and reads its result into res:
// a completed run's value, or what a failed run's failure carries in its
// details. It returns the run's Failure, nil when it completed.
func (s *Submitter) awaitResult(ctx context.Context, run Run, res any) *hostforge.Failure {
	err := s.Client.GetWorkflow(ctx, run.WorkflowID, run.RunID).Get(ctx, res)
	if err == nil {
		return nil
	}
	f := FailureOf(err)
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		var fl hostforge.Failure
		_ = detailsOf(app, &fl, res)
	}
	return f
}
