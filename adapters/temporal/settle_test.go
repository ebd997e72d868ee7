package temporal_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
)

// closeAfter is a StepAwaitClose that reports the run open for n probes,
// then closed with the status and output.
type closeAfter struct {
	n      int
	probes int
	out    temporal.AwaitCloseOut
}

func (c *closeAfter) step() flow.Step {
	return flow.Bind(temporal.StepAwaitClose, time.Minute, func(ctx context.Context, in temporal.AwaitCloseIn) (temporal.AwaitCloseOut, error) {
		c.probes++
		if c.probes <= c.n {
			return temporal.AwaitCloseOut{}, hostforge.RetryAfter(5*time.Second, temporal.WaitEnrollmentRunning, "running")
		}
		return c.out, nil
	})
}

// TestSettlementWorkflow runs the settlement under the SDK's test
// environment: it waits durably for the close (sleeps carried by the
// probes after them), then settles
// against the ledger with the window derived from the recorded close time.
func TestSettlementWorkflow(t *testing.T) {
	const ref = "ironic-cpu/node-1"
	res := enrollment.Result{Device: "cpu-u10", Instance: "ironic-cpu", Node: "node-1", Enrolled: true, ProvisionState: "available",
		Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseIronic, Status: "done"}}}
	out, _ := json.Marshal(res)
	tests := []struct {
		name       string
		projection string
		status     enrollment.CompletionStatus
		closedAgo  time.Duration
		wantAction string
		wantCode   string
	}{
		{"a qualifying close establishes proof", ref, enrollment.CompletionCompleted, 0, enrollment.ProofEstablished, ""},
		{"a projection that never matches is rejected", "ironic-cpu/other", enrollment.CompletionCompleted, 0, enrollment.ProofRejectedAct, enrollment.ProofRejected.Code},
		{"the window runs from the recorded close", ref, enrollment.CompletionCompleted, time.Hour, enrollment.ProofRejectedAct, enrollment.ProofRejected.Code},
		{"a failed run submits the failure write", ref, enrollment.CompletionFailed, 0, enrollment.ProofFailureWrite, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := fakes.NewSite()
			site.Proofs.Register("cpu-u10", "fm-7")
			site.Proofs.SetReference("cpu-u10", tt.projection)
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.SetStartTime(site.Clock.Now())
			sleeps := 0
			followSleeps(env, site.Clock, func(time.Duration) { sleeps++ }, nil)
			closes := &closeAfter{n: 3, out: temporal.AwaitCloseOut{Status: tt.status, ClosedAt: site.Clock.Now().Add(-tt.closedAgo)}}
			if tt.status == enrollment.CompletionCompleted {
				closes.out.Output = out
			}
			steps, err := flow.Merge(flow.MustTable(closes.step()), enrollment.ProofSteps(site.Proofs))
			if err != nil {
				t.Fatal(err)
			}
			temporal.Register(env, &temporal.Activities{Exec: steps}, temporal.ActivityOptions{}, temporal.Settlement)
			env.ExecuteWorkflow(temporal.SettleWorkflowName, temporal.SettleInput{Device: "cpu-u10", Identity: "fm-7", WorkflowID: "enroll/cpu-u10", RunID: "r1",
				Window: 2 * time.Minute, Interval: 15 * time.Second})
			if !env.IsWorkflowCompleted() {
				t.Fatal("settlement did not complete")
			}
			var got enrollment.ProofOutcome
			err = env.GetWorkflowError()
			if err == nil {
				_ = env.GetWorkflowResult(&got)
			}
			if code := hostforge.CodeOf(temporalFailure(err)); code != tt.wantCode {
				t.Fatalf("settlement error %v, want code %q", err, tt.wantCode)
			}
			if err == nil && got.Action != tt.wantAction {
				t.Fatalf("outcome %+v, want %s", got, tt.wantAction)
			}
			if closes.probes != 4 || sleeps < 3 {
				t.Fatalf("%d close probes and %d sleeps; want 4 probes paced by durable sleeps", closes.probes, sleeps)
			}
			rec, _ := site.Proofs.Record("cpu-u10")
			if rec.Valid() != (tt.wantAction == enrollment.ProofEstablished) {
				t.Fatalf("proof %+v after %s", rec.Proof, tt.wantAction)
			}
		})
	}
}

func temporalFailure(err error) error {
	if f := temporal.FailureOf(err); f != nil {
		return f
	}
	return nil
}

// TestEnrollmentStartsItsSettlement: with Input.Settle the enrollment
// starts the settlement child (abandoned on close) before its first step,
// named after the run, carrying the snapshot.
func TestEnrollmentStartsItsSettlement(t *testing.T) {
	site, exec, req := world(t, "cpu-u10")
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(site.Clock.Now())
	followSleeps(env, site.Clock, nil, nil)
	temporal.Register(env, &temporal.Activities{Exec: exec}, temporal.ActivityOptions{}, temporal.Enrollment)
	var got temporal.SettleInput
	var childID string
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in temporal.SettleInput) (enrollment.ProofOutcome, error) {
		got, childID = in, workflow.GetInfo(ctx).WorkflowExecution.ID
		return enrollment.ProofOutcome{}, nil
	}, workflow.RegisterOptions{Name: temporal.SettleWorkflowName})
	env.ExecuteWorkflow(temporal.WorkflowName, temporal.Input{Request: req, Identity: "fm-7", Revision: 4, Settle: true, ProofWindow: time.Minute})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if got.Device != "cpu-u10" || got.Identity != "fm-7" || got.Since != 4 || got.Window != time.Minute || got.WorkflowID == "" ||
		childID != temporal.SettleWorkflowID(got.WorkflowID, got.RunID) {
		t.Fatalf("settlement started with %+v as %s", got, childID)
	}
}

// Closes without a client reads through the worker's own client; outside
// a worker's activity there is none, and the probe fails classified rather
// than panicking.
func TestClosesWithoutAClientOutsideAWorker(t *testing.T) {
	_, err := temporal.Closes{}.AwaitClose(context.Background(), temporal.AwaitCloseIn{WorkflowID: "enroll/cpu-u10", RunID: "r1"})
	if f, ok := hostforge.AsFailure(err); !ok || f.Code != temporal.TemporalUnavailable.Code {
		t.Fatalf("AwaitClose without a client: %v, want %s", err, temporal.TemporalUnavailable.Code)
	}
}
