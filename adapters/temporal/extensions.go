package temporal

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/extensions"
)

// Workflow types of extension dispatch.
const (
	// ExtensionsWorkflowName dispatches one event: extensions.Fire.
	ExtensionsWorkflowName = "hostforge.extensions.fire"
	// ServerRegisteredWorkflowName fires serverRegistered for an enrolled
	// host: extensions.FireServerRegistered.
	ServerRegisteredWorkflowName = "hostforge.extensions.server_registered"
)

// Extensions is extension dispatch of one event (extensions.Fire) on
// Temporal: each step (plan, begin, run, record) an activity of the
// dispatcher, so every delivery is durable and its outcome recorded once.
var Extensions = Define(ExtensionsWorkflowName, extensions.Fire)

// ServerRegistered fires serverRegistered for an enrolled host
// (extensions.FireServerRegistered): the event built from NetBox and the
// node's inventory by an activity, then dispatched as Extensions is.
var ServerRegistered = Define(ServerRegisteredWorkflowName, extensions.FireServerRegistered)

// ExtensionsWorkflowID is the workflow ID of an event's dispatch: one
// dispatch per event at a time. The serverRegistered event of an
// enrollment is its run's (extensions.ServerRegisteredEventID), so every
// run that enrolls the host fires an event of its own.
func ExtensionsWorkflowID(eventID string) string { return "extensions/" + eventID }

// startServerRegistered starts the serverRegistered dispatch of an
// enrollment run that succeeded on an Ironic node (the event is the run's), as a child workflow that
// outlives the enrollment (ParentClosePolicy ABANDON): the enrollment does
// not wait for the extensions, and their failures never fail it. The
// enrollment waits only for the child to start. A dispatch of the same
// event that is still running is left to finish.
func startServerRegistered(ctx workflow.Context, res enrollment.Result) {
	if !res.Enrolled || res.Node == "" || res.Failure != nil {
		return
	}
	host := extensions.Enrolled{Device: res.Device, Instance: res.Instance, Node: res.Node, Run: workflow.GetInfo(ctx).WorkflowExecution.RunID,
		BMCHostname: res.Done(enrollment.PhaseBMC)}
	id := ExtensionsWorkflowID(extensions.ServerRegisteredEventID(host.Run))
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            id,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	})
	child := workflow.ExecuteChildWorkflow(cctx, ServerRegisteredWorkflowName, host)
	var started workflow.Execution
	if err := child.GetChildWorkflowExecution().Get(ctx, &started); err != nil {
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			workflow.GetLogger(ctx).Info("serverRegistered dispatch already running", "workflow_id", id)
			return
		}
		workflow.GetLogger(ctx).Warn("serverRegistered dispatch did not start", "workflow_id", id, "error", err)
		return
	}
	workflow.GetLogger(ctx).Info("serverRegistered dispatch started", "workflow_id", id, "run_id", started.RunID)
}

// ExtensionEventsWorkflowName fires a source's events in order:
// extensions.FireEvents.
const ExtensionEventsWorkflowName = "hostforge.extensions.fire_events"

// ExtensionEvents fires the events one source occurrence gives (a NetBox
// device leaving service: serverDecommissioned, then serverDeleteDNS; an
// Ironic deploy transition: serverInstanceUpdate) on Temporal, each
// dispatched as Extensions is.
var ExtensionEvents = Define(ExtensionEventsWorkflowName, extensions.FireEvents)

// EventSubmitter is the extensions.Submitter of a worker: each occurrence
// is an ExtensionEvents workflow whose ID is ExtensionsWorkflowID of its
// key, so an occurrence delivered again while its dispatch runs starts
// nothing, and one delivered after it ended dispatches again what has not
// succeeded (its events' IDs are the same).
type EventSubmitter struct {
	Client client.Client
	Queue  string
}

// Submit starts the occurrence's workflow, or finds it running.
func (s EventSubmitter) Submit(ctx context.Context, evs extensions.Events) error {
	if evs.Key == "" || len(evs.Events) == 0 {
		return extensions.EventInvalid.New("an occurrence without a key or without events")
	}
	id := ExtensionsWorkflowID(evs.Key)
	_, err := s.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: s.Queue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE, WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING},
		ExtensionEventsWorkflowName, evs)
	if err != nil {
		return TemporalUnavailable.At(extensions.Phase).Wrap(err, "starting the dispatch %s on task queue %s", id, s.Queue)
	}
	return nil
}
