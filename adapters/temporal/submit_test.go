package temporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
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
	"github.com/hostforge/hostforge/retirement"
)

// fakeClient is the part of client.Client the submitter uses.
type fakeClient struct {
	client.Client
	startErr error
	opts     client.StartWorkflowOptions
	input    temporal.Input
	arg      any // the workflow's argument, whatever its type
	output   any
	runErr   error
	status   enumspb.WorkflowExecutionStatus
	closed   time.Time
	// chain lists the runs of a continue-as-new chain (each but the last
	// continued as the next); reused makes the workflow ID's latest run
	// another chain's.
	chain  []string
	reused bool
}

func (c *fakeClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if c.startErr != nil {
		return nil, c.startErr
	}
	c.opts, c.arg = opts, args[0]
	c.input, _ = args[0].(temporal.Input)
	return &fakeRun{c: c}, nil
}

func (c *fakeClient) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	return &fakeRun{c: c}
}

func (c *fakeClient) DescribeWorkflowExecution(_ context.Context, id, run string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	info := &workflowpb.WorkflowExecutionInfo{Status: c.status, CloseTime: timestamppb.New(c.closed)}
	if n := len(c.chain); n > 0 {
		info.FirstRunId = c.chain[0]
		info.Execution = &commonpb.WorkflowExecution{WorkflowId: id, RunId: run}
		switch i := slices.Index(c.chain, run); {
		case run == "" && c.reused:
			info = &workflowpb.WorkflowExecutionInfo{Status: enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, FirstRunId: "another-chain"}
		case run == "":
			info.Execution.RunId = c.chain[n-1]
		case i < 0:
			return nil, serviceerror.NewNotFound("no such run")
		case i < n-1:
			info.Status = enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
		}
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{WorkflowExecutionInfo: info}, nil
}

// GetWorkflowHistory answers the close event of a run of the chain.
func (c *fakeClient) GetWorkflowHistory(_ context.Context, _, run string, _ bool, _ enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	it := &events{}
	if i := slices.Index(c.chain, run); i >= 0 && i < len(c.chain)-1 {
		it.evs = append(it.evs, &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
			Attributes: &historypb.HistoryEvent_WorkflowExecutionContinuedAsNewEventAttributes{
				WorkflowExecutionContinuedAsNewEventAttributes: &historypb.WorkflowExecutionContinuedAsNewEventAttributes{NewExecutionRunId: c.chain[i+1]}}})
	}
	return it
}

type events struct{ evs []*historypb.HistoryEvent }

func (e *events) HasNext() bool { return len(e.evs) > 0 }
func (e *events) Next() (*historypb.HistoryEvent, error) {
	ev := e.evs[0]
	e.evs = e.evs[1:]
	return ev, nil
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

// TestSettleFollowsContinuedRuns: a run that continued as new is settled
// with how the last run of its chain closed — found as the workflow ID's
// latest run, or by walking the chain when the ID has been reused since.
func TestSettleFollowsContinuedRuns(t *testing.T) {
	ctx := context.Background()
	site, _, _ := world(t, "cpu-u10")
	site.Proofs.Register("cpu-u10", "fm-7")
	res := enrollment.Result{Device: "cpu-u10", Instance: "ironic-cpu", Node: "node-1", Enrolled: true, ProvisionState: "available",
		Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseIronic, Status: "done"}}}
	now := clock.Epoch.Add(time.Hour)
	for _, tt := range []struct {
		name   string
		reused bool
		status enumspb.WorkflowExecutionStatus
		runErr error
		want   string
	}{
		{"the latest run ends the chain", false, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil, enrollment.ProofEstablished},
		{"the ID was reused: the chain is walked", true, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil, enrollment.ProofEstablished},
		{"the chain's last run failed", true, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, errors.New("failed"), enrollment.ProofFailureWrite},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site.Proofs.SetReference("cpu-u10", "")
			site.Proofs.SetReference("cpu-u10", "ironic-cpu/node-1")
			rec, _ := site.Proofs.Record("cpu-u10")
			run := temporal.Run{Device: "cpu-u10", WorkflowID: "enroll/cpu-u10", RunID: "run-1", Identity: "fm-7", Revision: rec.Revision}
			fc := &fakeClient{output: res, runErr: tt.runErr, status: tt.status, closed: now.Add(-time.Second),
				chain: []string{"run-1", "run-2", "run-3"}, reused: tt.reused}
			sub := &temporal.Submitter{Client: fc, Proofs: site.Proofs, Clock: clock.NewFake(now), ProofWindow: 10 * time.Minute}
			out, err := sub.Settle(ctx, run)
			if err != nil || out.Action != tt.want {
				t.Fatalf("outcome %+v err %v, want %s", out, err, tt.want)
			}
			closes := temporal.Closes{Client: fc}
			got, err := closes.AwaitClose(ctx, temporal.AwaitCloseIn{WorkflowID: run.WorkflowID, RunID: run.RunID})
			if err != nil || got.Status != map[bool]enrollment.CompletionStatus{true: enrollment.CompletionCompleted, false: enrollment.CompletionFailed}[tt.runErr == nil] {
				t.Fatalf("AwaitClose = %+v, %v", got, err)
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

// A retirement starts one at a time per device, under its own workflow ID:
// a second while one runs is RETIRE_ALREADY_RUNNING naming the running
// run, Temporal down is TEMPORAL_UNAVAILABLE; its wait returns the result.
func TestSubmitRetirementRefusesDuplicates(t *testing.T) {
	ctx := context.Background()
	req := retirement.Request{Device: "cpu-u10", Run: "r-1", Identity: "fm-7"}
	fc := &fakeClient{output: retirement.Result{Device: "cpu-u10", Retired: true}}
	sub := &temporal.Submitter{Client: fc, TaskQueue: "q-retire"}
	run, err := sub.SubmitRetirement(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if fc.opts.ID != "retire/cpu-u10" || fc.opts.TaskQueue != "q-retire" ||
		fc.opts.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL ||
		fc.opts.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE || !fc.opts.WorkflowExecutionErrorWhenAlreadyStarted {
		t.Fatalf("start options %+v do not refuse a second concurrent retirement", fc.opts)
	}
	if got, ok := fc.arg.(retirement.Request); !ok || got.Device != req.Device || got.Run != req.Run {
		t.Fatalf("workflow argument %#v, want the request", fc.arg)
	}
	if run.WorkflowID != "retire/cpu-u10" || run.RunID != "run-1" || run.Identity != "fm-7" {
		t.Fatalf("run %+v", run)
	}
	res, f := sub.WaitRetirement(ctx, run)
	if f != nil || !res.Retired || res.Device != "cpu-u10" {
		t.Fatalf("wait = %+v, %v", res, f)
	}

	for _, tt := range []struct {
		name, code, msg string
		err             error
	}{
		{"already running", temporal.RetireAlreadyRunning.Code, "workflow retire/cpu-u10 is running (run run-0)", serviceerror.NewWorkflowExecutionAlreadyStarted("running", "", "run-0")},
		{"temporal down", temporal.TemporalUnavailable.Code, "starting the retirement of cpu-u10", serviceerror.NewUnavailable("down")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sub.Client = &fakeClient{startErr: tt.err}
			_, err := sub.SubmitRetirement(ctx, req)
			if hostforge.CodeOf(err) != tt.code || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %s saying %q", err, tt.code, tt.msg)
			}
		})
	}
}
