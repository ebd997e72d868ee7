package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
)

// Submitter starts enrollments on Temporal and settles their completion
// proof once they close.
type Submitter struct {
	Client client.Client
	// TaskQueue defaults to DefaultTaskQueue.
	TaskQueue string
	// NetBox is read for the device's device_class at submission.
	NetBox enrollment.NetBox
	// Proofs is the fleet manager's proof store: the operated identity is
	// read from it at submission, and the proof agent writes to it.
	Proofs enrollment.ProofStore
	// ProofWindow and ProofInterval tune the proof agent (see
	// enrollment.ProofAgent); zero takes its defaults.
	ProofWindow, ProofInterval time.Duration
	// Events makes each successful enrollment fire serverRegistered through
	// the workers' extension dispatch (Input.Events).
	Events bool
	// Clock paces the proof agent; default the wall clock.
	Clock clock.Clock
	Log   *slog.Logger
}

// Run is one submitted enrollment.
type Run struct {
	Device     string `json:"device"`
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	Identity   string `json:"identity"`
	// Revision is the device's projected-reference revision at submission.
	Revision   int64 `json:"revision,omitempty"`
	Diagnostic bool  `json:"diagnostic,omitempty"`
	// Durable says the run settles its own proof (see Settlement): Settle
	// waits for that settlement instead of running the agent here.
	Durable bool `json:"durable,omitempty"`
}

// WorkflowID is the workflow ID of a device's enrollment: one per device,
// so Temporal itself refuses a second concurrent enrollment of it.
func WorkflowID(device string) string { return "enroll/" + device }

// Submission is what a submitter reads at submission time: the site's
// configuration and its platform_class_activity_ready gate, snapshotted into
// the request so a later flip cannot change a running execution.
type Submission struct {
	Device             string
	Site               string
	Config             enrollment.SiteConfig
	PlatformClassReady bool
	Params             enrollment.Params
	// Diagnostic marks a run that claims and withdraws no proof.
	Diagnostic bool
}

// Submit builds the request (device_class from NetBox, the site snapshot),
// reads the device's fleet-manager identity and starts the workflow under
// WorkflowID(device). A device with an enrollment running is refused with
// ENROLLMENT_ALREADY_RUNNING. Every error is a *hostforge.Failure.
func (s *Submitter) Submit(ctx context.Context, sub Submission) (Run, error) {
	req, err := enrollment.Submit(ctx, s.NetBox, sub.Device, enrollment.SubmitOptions{Site: sub.Site, Config: sub.Config, PlatformClassReady: sub.PlatformClassReady, Params: sub.Params})
	if err != nil {
		return Run{}, err
	}
	identity, revision := "", int64(0)
	if s.Proofs != nil {
		id, rev, err := s.Proofs.Snapshot(ctx, sub.Device)
		switch {
		case err == nil:
			identity, revision = id, rev
		case errors.Is(err, hostforge.ErrNotFound):
			// No fleet-manager record: the run proves nothing, and says so
			// when it closes (an unclassifiable completion writes nothing).
			s.log().Warn("device has no fleet manager identity; its completion cannot establish proof", "device", sub.Device, "phase", "submit")
		default:
			return Run{}, enrollment.FleetManagerUnavailable.At("submit").Wrap(err, "reading the fleet manager identity of %s", sub.Device)
		}
	}
	id := WorkflowID(sub.Device)
	wr, err := s.startDeviceRun(ctx, sub.Device, id, func(err error, runID string) error {
		return AlreadyRunning.Wrap(err, "device %s: workflow %s is running (run %s)", sub.Device, id, runID)
	}, "the enrollment", WorkflowName, Input{Request: req, Identity: identity, Revision: revision, Diagnostic: sub.Diagnostic,
		// A run that can claim or withdraw proof settles durably.
		Settle: identity != "" && !sub.Diagnostic, ProofWindow: s.ProofWindow, ProofInterval: s.ProofInterval,
		Events: s.Events})
	if err != nil {
		return Run{}, err
	}
	s.log().Info("enrollment submitted", "device", sub.Device, "phase", "submit", "workflow_id", id, "run_id", wr.GetRunID())
	return Run{Device: sub.Device, WorkflowID: id, RunID: wr.GetRunID(), Identity: identity, Revision: revision, Diagnostic: sub.Diagnostic,
		Durable: identity != "" && !sub.Diagnostic}, nil
}

// Wait blocks until the run closes and returns its Result and Failure.
func (s *Submitter) Wait(ctx context.Context, run Run) (enrollment.Result, *hostforge.Failure) {
	var res enrollment.Result
	if f := s.awaitResult(ctx, run, &res); f != nil {
		res.Failure = f
		return res, f
	}
	return res, nil
}

// Settle returns the run's settlement once it is done. A durable run
// (Run.Durable) settles itself in its settlement workflow, which survives
// this process: Settle only waits for its result. For any other run it
// waits for the close, then runs the completion-proof agent here; the
// close time Temporal recorded bounds the compare-and-set retries. The
// error is nil or a *hostforge.Failure.
func (s *Submitter) Settle(ctx context.Context, run Run) (enrollment.ProofOutcome, error) {
	if run.Durable {
		return s.awaitSettlement(ctx, run)
	}
	var raw json.RawMessage
	getErr := s.Client.GetWorkflow(ctx, run.WorkflowID, run.RunID).Get(ctx, &raw)
	if ctx.Err() != nil {
		return enrollment.ProofOutcome{}, hostforge.Cancelled.Wrap(ctx.Err(), "waiting for %s to close", run.WorkflowID)
	}
	info, err := describeChain(ctx, s.Client, run.WorkflowID, run.RunID)
	if err != nil {
		return enrollment.ProofOutcome{}, TemporalUnavailable.Wrap(err, "reading how %s closed", run.WorkflowID)
	}
	c := enrollment.Completion{
		Device:     run.Device,
		Identity:   run.Identity,
		Since:      run.Revision,
		Run:        run.WorkflowID + "/" + run.RunID,
		Status:     completionStatus(info.GetStatus()),
		ClosedAt:   info.GetCloseTime().AsTime(),
		Diagnostic: run.Diagnostic,
	}
	if getErr == nil {
		c.Output = raw
	}
	agent := &enrollment.ProofAgent{Store: s.Proofs, Clock: s.clock(), Window: s.ProofWindow, Interval: s.ProofInterval, Log: s.Log}
	return agent.Settle(ctx, c)
}

// awaitSettlement waits for the run's settlement workflow and returns its outcome.
func (s *Submitter) awaitSettlement(ctx context.Context, run Run) (enrollment.ProofOutcome, error) {
	var out enrollment.ProofOutcome
	err := s.Client.GetWorkflow(ctx, SettleWorkflowID(run.WorkflowID, run.RunID), "").Get(ctx, &out)
	if err == nil {
		return out, nil
	}
	if ctx.Err() != nil {
		return out, hostforge.Cancelled.Wrap(ctx.Err(), "waiting for the settlement of %s", run.WorkflowID)
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		var fl hostforge.Failure
		_ = detailsOf(app, &fl, &out)
	}
	return out, FailureOf(err)
}

func completionStatus(st enumspb.WorkflowExecutionStatus) enrollment.CompletionStatus {
	switch st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return enrollment.CompletionCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return enrollment.CompletionFailed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return enrollment.CompletionCanceled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return enrollment.CompletionTerminated
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return enrollment.CompletionTimedOut
	}
	// Running or continued-as-new: not a closed enrollment the agent knows.
	return enrollment.CompletionStatus(st.String())
}

func (s *Submitter) taskQueue() string {
	if s.TaskQueue == "" {
		return DefaultTaskQueue
	}
	return s.TaskQueue
}

func (s *Submitter) clock() clock.Clock {
	if s.Clock == nil {
		return clock.Real{}
	}
	return s.Clock
}

func (s *Submitter) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
