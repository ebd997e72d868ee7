package temporal_test

import (
	"context"
	"errors"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/extensions"
)

// eventStarts records the event workflows a submitter starts.
type eventStarts struct {
	client.Client
	opts []client.StartWorkflowOptions
	in   []extensions.Events
	err  error
}

func (s *eventStarts) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	if s.err != nil {
		return nil, s.err
	}
	if wf != temporal.ExtensionEventsWorkflowName {
		return nil, errors.New("unexpected workflow")
	}
	s.opts, s.in = append(s.opts, opts), append(s.in, args[0].(extensions.Events))
	return nil, nil
}

// A source's occurrence is one workflow whose ID is its key: delivered
// again while it runs, the running one is used; after it ended, a new run
// fires what has not succeeded.
func TestEventSubmitterStartsOneWorkflowPerOccurrence(t *testing.T) {
	ev, _, err := extensions.NewEvent("netbox/r-1/dcim.device/4/serverDecommissioned", extensions.ServerDecommissioned, []byte(`{"server": {"serverId": 4}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := &eventStarts{}
	sub := temporal.EventSubmitter{Client: c, Queue: "q"}
	if err := sub.Submit(context.Background(), extensions.Events{Key: "netbox/r-1/dcim.device/4", Events: []extensions.Event{ev}}); err != nil {
		t.Fatal(err)
	}
	o := c.opts[0]
	if o.ID != "extensions/netbox/r-1/dcim.device/4" || o.TaskQueue != "q" || o.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING ||
		o.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE || len(c.in[0].Events) != 1 {
		t.Fatalf("started %+v with %+v", o, c.in)
	}
	if err := sub.Submit(context.Background(), extensions.Events{Key: "k"}); !extensions.EventInvalid.Is(err) {
		t.Fatalf("an occurrence without events: %v", err)
	}
	c.err = errors.New("connection refused")
	if err := sub.Submit(context.Background(), extensions.Events{Key: "k", Events: []extensions.Event{ev}}); !temporal.TemporalUnavailable.Is(err) {
		t.Fatalf("Temporal down: %v, want %s", err, temporal.TemporalUnavailable.Code)
	}
}

// The events workflow fires each event in order on the activities, as
// FireEvents does inline.
func TestExtensionEventsWorkflowFiresInOrder(t *testing.T) {
	site := rack()
	d, runner, _ := dispatcher(t, site)
	a, _, _ := extensions.NewEvent("e-1", extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "SN1", "netboxDevice": "d", "ironicNode": "n"}}`))
	b, _, _ := extensions.NewEvent("e-2", extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "SN2", "netboxDevice": "d", "ironicNode": "n"}}`))
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	temporal.Register(env, &temporal.Activities{Exec: d}, temporal.ActivityOptions{}, temporal.ExtensionEvents)
	env.ExecuteWorkflow(temporal.ExtensionEventsWorkflowName, extensions.Events{Key: "k", Events: []extensions.Event{a, b}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var rep extensions.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	reqs := runner.Requests()
	if len(rep.Deliveries) == 0 || len(reqs) != len(rep.Deliveries) {
		t.Fatalf("report %+v, %d requests", rep, len(reqs))
	}
	half := len(reqs) / 2
	for i, r := range reqs {
		want := "e-1"
		if i >= half {
			want = "e-2"
		}
		if r.EventID != want || rep.Deliveries[i].EventID != want {
			t.Fatalf("request %d of event %s (report %s), want %s: the events fire in order", i, r.EventID, rep.Deliveries[i].EventID, want)
		}
	}
}
