package extensions

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
)

// Workflow names extension dispatch in observations: the workflow label of
// its metrics.
const Workflow = "extensions"

// DeliveryEnded is one delivery's end, reported to the runtime's observer
// (flow.Observer) by the dispatch body: what adapters/metrics counts by
// stage, task type and status. Latency is from the event's dispatch to the
// delivery's record — the time a receiver waited for it, tasks before it
// in the event, retries and waits included; zero for a skipped task.
type DeliveryEnded struct {
	Stage    Stage
	TaskType TaskType
	Status   ExecStatus
	// Code is the failure code of a failed or skipped delivery.
	Code    string
	Latency time.Duration
}

func observeDelivery(rt flow.Runtime, stage Stage, d Delivery, latency time.Duration) {
	if o := flow.ObserverOf(rt); o != nil {
		o.Observe(DeliveryEnded{Stage: stage, TaskType: d.TaskType, Status: d.Status, Code: d.Code, Latency: latency})
	}
}

// observed runs a dispatch body, reporting its start and end.
func observed(ctx context.Context, rt flow.Runtime, body func() (Report, error)) (Report, error) {
	start := rt.Now(ctx)
	if o := flow.ObserverOf(rt); o != nil {
		o.Observe(flow.RunStarted{Workflow: Workflow})
	}
	rep, err := body()
	if o := flow.ObserverOf(rt); o != nil {
		_, f, _ := hostforge.Classify(err)
		o.Observe(flow.RunEnded{Workflow: Workflow, Took: rt.Now(ctx).Sub(start), Failure: f})
	}
	return rep, err
}
