package temporal

import (
	"context"

	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge/enrollment"
)

// WorkflowName is the registered workflow type of an enrollment.
const WorkflowName = "hostforge.enroll"

// DefaultTaskQueue is the task queue workers poll and submitters use when
// none is configured.
const DefaultTaskQueue = "hostforge-enrollment"

// Input is the workflow's input: the request with its snapshot, and the
// operated identity the completion proof is scoped to.
type Input struct {
	Request enrollment.Request `json:"request"`
	// Identity is the device's fleet-manager identity at submission.
	Identity string `json:"identity,omitempty"`
	// Diagnostic marks a run that claims and withdraws no proof.
	Diagnostic bool `json:"diagnostic,omitempty"`
}

// Workflow is the enrollment workflow.
type Workflow struct {
	Activities ActivityOptions
}

// Enroll runs enrollment.Enroll on a Runtime bound to ctx. On failure it
// returns the Failure as an ApplicationError (type = code, NonRetryable =
// !Retryable, details = the Failure and then the Result).
func (w *Workflow) Enroll(ctx workflow.Context, in Input) (enrollment.Result, error) {
	rt := NewRuntime(ctx, w.Activities)
	res, err := enrollment.Enroll(context.Background(), rt, in.Request)
	if err != nil {
		workflow.GetLogger(ctx).Warn("enrollment failed", "device", in.Request.Device, "code", res.Failure.Code)
		return res, toApplicationError(err, res)
	}
	return res, nil
}

// WorkflowRegisterOptions registers the workflow under WorkflowName; use it
// with a worker or a replayer that registers Workflow.Enroll itself.
func WorkflowRegisterOptions() workflow.RegisterOptions {
	return workflow.RegisterOptions{Name: WorkflowName}
}
