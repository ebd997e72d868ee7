package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/intent"
)

// fakeClient is the part of client.Client the submitter uses.
type fakeClient struct {
	client.Client
	startErr error
	opts     client.StartWorkflowOptions
	input    temporal.Input
	output   any
	runErr   error
	status   enumspb.WorkflowExecutionStatus
	closed   time.Time
}

func (c *fakeClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if c.startErr != nil {
		return nil, c.startErr
	}
	c.opts, c.input = opts, args[0].(temporal.Input)
	return &fakeRun{c: c}, nil
}

func (c *fakeClient) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	return &fakeRun{c: c}
}

func (c *fakeClient) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
		Status: c.status, CloseTime: timestamppb.New(c.closed)}}, nil
}

type fakeRun struct{ c *fakeClient }

func (r *fakeRun) GetID() string                  { return r.c.opts.ID }
func (r *fakeRun) GetRunID() string               { return "run-1" }
func (r *fakeRun) GetFirstExecutionRunID() string { return "run-1" }
func (r *fakeRun) Get(ctx context.Context, v any) error {
	return r.GetWithOptions(ctx, v, client.WorkflowRunGetOptions{})
}
func (r *fakeRun) GetWithOptions(_ context.Context, v any, _ client.WorkflowRunGetOptions) error {
	if r.c.runErr != nil {
		return r.c.runErr
	}
	b, err := json.Marshal(r.c.output)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func TestSubmitSnapshotsAndRefusesDuplicates(t *testing.T) {
	ctx := context.Background()
	site, _, _ := world(t, "cpu-u10")
	site.Proofs.Register("cpu-u10", "fm-7")
	cfg := siteConfig()
	fc := &fakeClient{}
	sub := &temporal.Submitter{Client: fc, NetBox: site.NetBox, Proofs: site.Proofs}
	run, err := sub.Submit(ctx, temporal.Submission{Device: "cpu-u10", Site: "lab1", Config: cfg, PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	if fc.opts.ID != "enroll/cpu-u10" || fc.opts.TaskQueue != temporal.DefaultTaskQueue ||
		fc.opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL || !fc.opts.WorkflowExecutionErrorWhenAlreadyStarted {
		t.Fatalf("start options %+v do not refuse a second concurrent enrollment", fc.opts)
	}
	in := fc.input
	if in.Identity != "fm-7" || run.Identity != "fm-7" || !in.Request.Snapshot.PlatformClassActivityReady ||
		in.Request.DeviceClass != intent.ClassCPUBaremetal || in.Request.Snapshot.Site.NodeLockMaxWait.D() != enrollment.DefaultNodeLockMaxWait ||
		!in.Request.Snapshot.Site.IronicEnrol {
		t.Fatalf("input %+v does not carry the snapshot and identity", in)
	}

	tests := []struct {
		name   string
		device string
		err    error
		inject func()
		code   string
	}{
		{name: "already running", device: "cpu-u10", err: serviceerror.NewWorkflowExecutionAlreadyStarted("running", "", "run-0"), code: temporal.AlreadyRunning.Code},
		{name: "temporal down", device: "cpu-u10", err: serviceerror.NewUnavailable("down"), code: temporal.TemporalUnavailable.Code},
		{name: "unknown device", device: "nope", code: enrollment.DeviceNotFound.Code},
		{name: "fleet manager down", device: "cpu-u10", inject: func() { site.Inject("fleet_manager", "snapshot", 1, hostforge.ErrUnavailable) }, code: enrollment.FleetManagerUnavailable.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.inject != nil {
				tt.inject()
			}
			sub.Client = &fakeClient{startErr: tt.err}
			_, err := sub.Submit(ctx, temporal.Submission{Device: tt.device, Site: "lab1", Config: cfg})
			if hostforge.CodeOf(err) != tt.code {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
		})
	}

	// No fleet-manager record: submitted without an identity.
	fc = &fakeClient{}
	sub.Client = fc
	if run, err := sub.Submit(ctx, temporal.Submission{Device: "cpu-u11", Site: "lab1", Config: cfg}); err != nil || run.Identity != "" {
		t.Fatalf("run %+v err %v", run, err)
	}
}

func TestSettleUsesTheRecordedClose(t *testing.T) {
	ctx := context.Background()
	site, _, _ := world(t, "cpu-u10")
	site.Proofs.Register("cpu-u10", "fm-7")
	site.Proofs.SetReference("cpu-u10", "ironic-cpu/node-1")
	res := enrollment.Result{Device: "cpu-u10", Instance: "ironic-cpu", Node: "node-1", Enrolled: true, ProvisionState: "available",
		Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseIronic, Status: "done"}}}
	run := temporal.Run{Device: "cpu-u10", WorkflowID: "enroll/cpu-u10", RunID: "run-1", Identity: "fm-7"}
	now := clock.Epoch.Add(time.Hour)
	tests := []struct {
		name       string
		status     enumspb.WorkflowExecutionStatus
		closed     time.Time
		runErr     error
		wantKind   enrollment.CompletionKind
		wantAction string
		wantCode   string
	}{
		{"completed just now", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, now.Add(-time.Second), nil, enrollment.KindQualifying, enrollment.ProofEstablished, ""},
		{"completed long ago", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, now.Add(-time.Hour), nil, enrollment.KindQualifying, enrollment.ProofRejectedAct, enrollment.ProofRejected.Code},
		{"failed", enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, now, errors.New("workflow failed"), enrollment.KindUnsuccessful, enrollment.ProofFailureWrite, ""},
		{"terminated", enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, now, errors.New("terminated"), enrollment.KindUnsuccessful, enrollment.ProofFailureWrite, ""},
		{"timed out", enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, now, errors.New("timed out"), enrollment.KindUnsuccessful, enrollment.ProofFailureWrite, ""},
		{"continued as new", enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, now, nil, enrollment.KindUnclassifiable, enrollment.ProofNoAction, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site.Proofs.SetReference("cpu-u10", "")
			site.Proofs.SetReference("cpu-u10", "ironic-cpu/node-1")
			rec, _ := site.Proofs.Record("cpu-u10")
			run := run
			run.Revision = rec.Revision // submitted after the flip
			fc := &fakeClient{output: res, runErr: tt.runErr, status: tt.status, closed: tt.closed}
			sub := &temporal.Submitter{Client: fc, Proofs: site.Proofs, Clock: clock.NewFake(now), ProofWindow: 10 * time.Minute}
			out, err := sub.Settle(ctx, run)
			if out.Kind != tt.wantKind || out.Action != tt.wantAction || hostforge.CodeOf(err) != tt.wantCode {
				t.Fatalf("outcome %+v err %v, want %s %s %q", out, err, tt.wantKind, tt.wantAction, tt.wantCode)
			}
			rec, _ = site.Proofs.Record("cpu-u10")
			if rec.Valid() != (tt.wantAction == enrollment.ProofEstablished) {
				t.Fatalf("proof valid=%v after %s", rec.Valid(), tt.wantAction)
			}
		})
	}
}

func TestFailureOf(t *testing.T) {
	f := enrollment.StatusIneligible.New("offline")
	tests := []struct {
		name string
		err  error
		code string
	}{
		{"nil", nil, ""},
		{"application error with details", sdktemporalApp(f), enrollment.StatusIneligible.Code},
		{"canceled", sdktemporalCanceled(), hostforge.Cancelled.Code},
		{"anything else", errors.New("x"), hostforge.Unclassified.Code},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := temporal.FailureOf(tt.err)
			if (got == nil) != (tt.code == "") || (got != nil && got.Code != tt.code) {
				t.Fatalf("FailureOf = %v, want %q", got, tt.code)
			}
		})
	}
}

func sdktemporalApp(f *hostforge.Failure) error {
	return sdktemporal.NewApplicationErrorWithOptions(f.Error(), f.Code, sdktemporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{*f}})
}

func sdktemporalCanceled() error { return sdktemporal.NewCanceledError() }
