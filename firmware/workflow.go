package firmware

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
)

// UpdateInput starts one machine's update workflow.
type UpdateInput struct {
	MachineID string `json:"machine_id"`
}

// Outcomes of an update workflow.
const (
	// OutcomeDone: the host was handed back with nothing left to update,
	// or it had no request.
	OutcomeDone = "done"
	// OutcomeExhausted: the update failed and spent its retry budget.
	OutcomeExhausted = "exhausted"
)

// UpdateResult is how a machine's update workflow ended.
type UpdateResult struct {
	MachineID string       `json:"machine_id"`
	Outcome   string       `json:"outcome"`
	Failure   *FailureInfo `json:"failure,omitempty"`
	// Uploads counts the firmware pushes sent during the update: one per
	// artifact and try, plus one for every push sent again because the
	// BMC showed no sign of the earlier one.
	Uploads int `json:"uploads,omitempty"`
}

// UpdatePolicy is the body's step policy: a step fails only when the
// store does not answer (every BMC, host or agent error is booked in the
// record by the step itself), so a few reruns ride out a blip.
var UpdatePolicy = flow.Policy{MaxAttempts: 5, Retry: hostforge.Backoff{First: 5 * time.Second, Max: 2 * time.Minute}}

// Update is one machine's firmware update workflow, written once against
// the shared runtime (flow.Local inline, Temporal durably). It loads the
// machine's update record — creating it when a request waits — and runs
// the step of its substate until the host is handed back or the update
// exhausts its retries. Every timed wait (a poll interval, a reset pause,
// the 30-minute new-firmware wait, the 60-minute retry interval) is a
// Sleep on the runtime until the record's NotBefore: steps never sleep.
//
// The body keeps nothing the record does not: rerun after a worker
// restart, it resumes where the record is. Run at most one body per
// machine at a time (under Temporal, use the machine ID as workflow ID).
//
// The run and the time spent in each substate (flow.PhaseEnded, phase =
// the substate) are reported to the runtime's observer (flow.ObserverOf).
func Update(ctx context.Context, rt flow.Runtime, in UpdateInput) (UpdateResult, error) {
	start := rt.Now(ctx)
	if o := flow.ObserverOf(rt); o != nil {
		o.Observe(flow.RunStarted{Workflow: Workflow})
	}
	res, err := update(ctx, rt, in, &substateClock{rt: rt, since: start})
	if o := flow.ObserverOf(rt); o != nil {
		_, f, _ := hostforge.Classify(err)
		o.Observe(flow.RunEnded{Workflow: Workflow, Took: rt.Now(ctx).Sub(start), Failure: f})
	}
	return res, err
}

// Workflow names the firmware update in observations: the workflow label
// of its metrics.
const Workflow = "firmware"

func update(ctx context.Context, rt flow.Runtime, in UpdateInput, sc *substateClock) (UpdateResult, error) {
	res := UpdateResult{MachineID: in.MachineID}
	r := flow.Runner{RT: rt, Policy: UpdatePolicy}
	var p Progress
	if err := r.Run(ctx, StepLoad, StepInput{MachineID: in.MachineID}, &p); err != nil {
		return res, err
	}
	sc.enter(ctx, p)
	for {
		res.Uploads = max(res.Uploads, p.Uploads)
		switch {
		case p.Done:
			res.Outcome = OutcomeDone
			return res, nil
		case p.Exhausted:
			res.Outcome, res.Failure = OutcomeExhausted, p.Failure
			msg := "no failure recorded"
			if p.Failure != nil {
				msg = p.Failure.Code + ": " + p.Failure.Message
			}
			sc.end(ctx, "failed")
			return res, RetriesExhausted.New("machine %s: %s", in.MachineID, msg)
		}
		if d := p.NotBefore.Sub(rt.Now(ctx)); d > 0 {
			if err := rt.Sleep(ctx, d); err != nil {
				sc.end(ctx, "failed")
				return res, err
			}
		}
		step, ok := stepOf[p.Substate]
		if !ok {
			return res, hostforge.Unclassified.New("machine %s: update record in unknown substate %q", in.MachineID, p.Substate)
		}
		if err := r.Run(ctx, step, StepInput{MachineID: in.MachineID, Revision: p.Revision}, &p); err != nil {
			sc.end(ctx, "failed")
			return res, err
		}
		sc.enter(ctx, p)
	}
}

// substateClock times the substates a run goes through, as the body sees
// them: a substate starts when a step's progress first shows it and ends
// when one shows another, or the run ends in it.
type substateClock struct {
	rt    flow.Runtime
	cur   Substate
	since time.Time
	known bool
}

// enter notes the progress a step returned: leaving a substate reports
// it done.
func (c *substateClock) enter(ctx context.Context, p Progress) {
	if !c.known {
		c.cur, c.known = p.Substate, true
		return
	}
	if p.Substate == c.cur && !p.Done {
		return
	}
	c.end(ctx, "done")
	c.cur, c.known = p.Substate, !p.Done
}

// end reports the current substate's end with status.
func (c *substateClock) end(ctx context.Context, status string) {
	if !c.known {
		return
	}
	now := c.rt.Now(ctx)
	if o := flow.ObserverOf(c.rt); o != nil {
		o.Observe(flow.PhaseEnded{Workflow: Workflow, Phase: string(c.cur), Status: status, Took: now.Sub(c.since)})
	}
	c.since, c.known = now, false
}
