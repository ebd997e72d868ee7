package temporal

import (
	"context"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/retirement"
)

// RetireAlreadyRunning refuses a second concurrent retirement of a device.
var RetireAlreadyRunning = hostforge.Declare(hostforge.Spec{
	Code:      "RETIRE_ALREADY_RUNNING",
	Phase:     "submit",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: true,
	Action:    "A retirement of this device is already running (the message names its workflow ID): let it finish or cancel it, then submit again. Nothing was started.",
})

// RetireWorkflowName is the registered workflow type of a retirement.
const RetireWorkflowName = "hostforge.retire"

// RetireWorkflowID is the workflow ID of a device's retirement: one per
// device, so a second concurrent retirement of it is refused.
func RetireWorkflowID(device string) string { return "retire/" + device }

// Retirement is the retirement workflow: retirement.Workflow on the
// Temporal runtime, firing its events with announce on the same runtime —
// the extension dispatch's steps are activities of the retirement's own
// workflow, so its deliveries are part of the one resumable run. Workers
// register it beside the retirement's steps and the dispatch's.
func Retirement(announce retirement.Announcer) Definition {
	w := retirement.Workflow{Announce: announce}
	return Define(RetireWorkflowName, func(ctx context.Context, rt flow.Runtime, req retirement.Request) (retirement.Result, error) {
		return w.Run(ctx, rt, req)
	})
}

// SubmitRetirement starts a retirement under RetireWorkflowID(device). A
// device with a retirement running is refused with RETIRE_ALREADY_RUNNING. The run's follow and wait are Follow and
// WaitRetirement. Every error is a *hostforge.Failure.
func (s *Submitter) SubmitRetirement(ctx context.Context, req retirement.Request) (Run, error) {
	id := RetireWorkflowID(req.Device)
	wr, err := s.startDeviceRun(ctx, req.Device, id, func(err error, runID string) error {
		return RetireAlreadyRunning.Wrap(err, "device %s: workflow %s is running (run %s)", req.Device, id, runID)
	}, "the retirement", RetireWorkflowName, req)
	if err != nil {
		return Run{}, err
	}
	s.log().Info("retirement submitted", "device", req.Device, "phase", "submit", "workflow_id", id, "run_id", wr.GetRunID(), "run", req.Run)
	return Run{Device: req.Device, WorkflowID: id, RunID: wr.GetRunID(), Identity: req.Identity}, nil
}

// WaitRetirement blocks until the retirement closes and returns its Result
// and Failure.
func (s *Submitter) WaitRetirement(ctx context.Context, run Run) (retirement.Result, *hostforge.Failure) {
	var res retirement.Result
	if f := s.awaitResult(ctx, run, &res); f != nil {
		res.Failure = f
		return res, f
	}
	return res, nil
}
