package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/flow"
)

// Durable settlement.
//
// An enrollment submitted with Input.Settle starts, as its very first
// command, a child workflow (SettleWorkflowName, ID SettleWorkflowID) with
// ParentClosePolicy ABANDON: Temporal records the child with the
// enrollment, so once the enrollment exists its settlement does, whatever
// happens to the process that submitted it. The child polls the
// enrollment's close on durable timers (StepAwaitClose), then runs
// enrollment.SettleProof with the close time Temporal recorded: each
// compare-and-set or failure write is an activity against the ledger
// (enrollment.ProofSteps) and each pause a durable timer, so a worker
// restart mid-window resumes it. Its result is the enrollment.ProofOutcome;
// a rejected proof fails it with ENROLLMENT_COMPLETION_PROOF_REJECTED.

// SettleWorkflowName is the registered workflow type of a settlement.
const SettleWorkflowName = "hostforge.settle"

// StepAwaitClose reads whether an enrollment run has closed.
const StepAwaitClose = "settle.await_close"

// WaitEnrollmentRunning is the wait reason of a settlement whose enrollment
// is still running.
const WaitEnrollmentRunning = "enrollment_running"

// Settlement pacing defaults.
const (
	// DefaultSettleMaxWait bounds how long a settlement waits for its
	// enrollment to close: an enrollment's own budgets (a 3 h cleaning
	// deadline, a 15 min lock budget, a 1 h inspection per attempt) end it
	// far sooner. At one probe a minute this keeps the settlement's history
	// under 20,000 events, well inside Temporal's limit.
	DefaultSettleMaxWait = 48 * time.Hour
	// awaitAttempt bounds one close probe: two Temporal frontend calls.
	awaitAttempt = 2 * time.Minute
)

// SettlePoll paces the close probes: 5 s doubling to 1 min.
var SettlePoll = hostforge.Backoff{First: 5 * time.Second, Max: time.Minute}

// SettleWorkflowID is the workflow ID of a run's settlement.
func SettleWorkflowID(workflowID, runID string) string {
	return "settle/" + workflowID + "/" + runID
}

// SettleInput is a settlement's input: the run to wait for and what its
// completion is settled as.
type SettleInput struct {
	Device     string `json:"device"`
	Identity   string `json:"identity"`
	Since      int64  `json:"since"`
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
	Diagnostic bool   `json:"diagnostic,omitempty"`
	// Window and Interval tune the proof agent (zero: its defaults).
	Window   time.Duration `json:"window,omitempty"`
	Interval time.Duration `json:"interval,omitempty"`
	// MaxWait bounds the wait for the close (DefaultSettleMaxWait when zero).
	MaxWait time.Duration `json:"max_wait,omitempty"`
}

// AwaitCloseIn names the enrollment run a settlement waits for.
type AwaitCloseIn struct {
	WorkflowID string `json:"workflow_id"`
	RunID      string `json:"run_id"`
}

// AwaitCloseOut is how the run closed.
type AwaitCloseOut struct {
	Status   enrollment.CompletionStatus `json:"status"`
	ClosedAt time.Time                   `json:"closed_at"`
	// Output is the run's result when it completed.
	Output json.RawMessage `json:"output,omitempty"`
}

// Settlement is the settlement workflow. A worker registers it beside
// Enrollment, with SettleSteps among its activities.
var Settlement = Define(SettleWorkflowName, Settle)

// Settle is the settlement's body on any runtime: wait for the run's close
// (StepAwaitClose), then settle its completion proof.
func Settle(ctx context.Context, rt flow.Runtime, in SettleInput) (enrollment.ProofOutcome, error) {
	maxWait := in.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultSettleMaxWait
	}
	runner := flow.Runner{RT: rt, Policy: flow.Policy{MaxAttempts: 1, Waits: map[string]flow.WaitPolicy{
		WaitEnrollmentRunning: {Budget: maxWait, Backoff: SettlePoll},
	}}}
	var closed AwaitCloseOut
	if err := runner.Once(ctx, StepAwaitClose, AwaitCloseIn{WorkflowID: in.WorkflowID, RunID: in.RunID}, &closed); err != nil {
		return enrollment.ProofOutcome{Action: enrollment.ProofNoAction}, err
	}
	c := enrollment.Completion{
		Device: in.Device, Identity: in.Identity, Since: in.Since, Run: in.WorkflowID + "/" + in.RunID,
		Status: closed.Status, ClosedAt: closed.ClosedAt, Diagnostic: in.Diagnostic, Output: closed.Output,
	}
	return enrollment.SettleProof(ctx, rt, enrollment.SettleRequest{Completion: c, Window: in.Window, Interval: in.Interval})
}

// startSettlement is the enrollment's prelude: with Input.Settle it starts
// the settlement child and waits until Temporal has recorded it, so the
// settlement exists before the enrollment can close.
func startSettlement(ctx workflow.Context, in Input) {
	if !in.Settle {
		return
	}
	info := workflow.GetInfo(ctx)
	id, run := info.WorkflowExecution.ID, info.WorkflowExecution.RunID
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        SettleWorkflowID(id, run),
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	f := workflow.ExecuteChildWorkflow(cctx, SettleWorkflowName, SettleInput{
		Device: in.Request.Device, Identity: in.Identity, Since: in.Revision, WorkflowID: id, RunID: run,
		Diagnostic: in.Diagnostic, Window: in.ProofWindow, Interval: in.ProofInterval,
	})
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		// The enrollment still runs; its completion is not settled, so it
		// proves nothing (proof fails closed).
		workflow.GetLogger(ctx).Error("settlement not started: this run's completion proof will not be settled", "device", in.Request.Device, "error", err.Error())
	}
}

// Closes reads enrollment runs' closes from Temporal: the settlement's
// StepAwaitClose.
type Closes struct {
	// Client reads the run; nil takes the client of the worker running the
	// activity (activity.GetClient).
	Client client.Client
	// Poll is the After of the wait a running enrollment returns (the
	// settlement's backoff paces the probes; this is its first pause).
	Poll time.Duration
}

// AwaitClose is one probe: a wait while the run is open, its close status,
// time and result once it has closed.
func (c Closes) AwaitClose(ctx context.Context, in AwaitCloseIn) (AwaitCloseOut, error) {
	poll := c.Poll
	if poll <= 0 {
		poll = SettlePoll.First
	}
	cl := c.Client
	if cl == nil && activity.IsActivity(ctx) {
		cl = activity.GetClient(ctx)
	}
	if cl == nil {
		return AwaitCloseOut{}, TemporalUnavailable.At(enrollment.PhaseProof).New("reading how %s closed: no Temporal client (Closes.Client is nil and this is not a worker's activity)", in.WorkflowID)
	}
	// A run that continued as new closes with the last run of its chain.
	info, err := describeChain(ctx, cl, in.WorkflowID, in.RunID)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return AwaitCloseOut{}, TemporalUnavailable.At(enrollment.PhaseProof).Wrap(err, "the enrollment run %s/%s does not exist", in.WorkflowID, in.RunID)
		}
		if ctx.Err() != nil {
			return AwaitCloseOut{}, ctx.Err()
		}
		return AwaitCloseOut{}, hostforge.RetryAfter(poll, WaitEnrollmentRunning, "reading how %s closed: %v", in.WorkflowID, err)
	}
	st := info.GetStatus()
	if st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || st == enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED {
		return AwaitCloseOut{}, hostforge.RetryAfter(poll, WaitEnrollmentRunning, "enrollment %s/%s is running", in.WorkflowID, in.RunID)
	}
	out := AwaitCloseOut{Status: completionStatus(st), ClosedAt: info.GetCloseTime().AsTime()}
	if st == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		var raw json.RawMessage
		if err := cl.GetWorkflow(ctx, in.WorkflowID, info.GetExecution().GetRunId()).Get(ctx, &raw); err != nil {
			return AwaitCloseOut{}, hostforge.RetryAfter(poll, WaitEnrollmentRunning, "reading the result of %s: %v", in.WorkflowID, err)
		}
		out.Output = raw
	}
	return out, nil
}

// SettleSteps are the settlement's activities: the close probe on Temporal
// (through c; nil uses the client of the worker running it) and the proof
// steps on the ledger. A worker merges them with the enrollment's steps
// (flow.Merge, or a Workflow of RegisterWorkflows) and registers Settlement.
func SettleSteps(c client.Client, store enrollment.ProofStore) (*flow.Table, error) {
	closes := Closes{Client: c}
	return flow.Merge(
		flow.MustTable(flow.Bind(StepAwaitClose, awaitAttempt, closes.AwaitClose)),
		enrollment.ProofSteps(store),
	)
}
