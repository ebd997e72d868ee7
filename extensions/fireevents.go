package extensions

import (
	"context"

	"github.com/hostforge/hostforge/flow"
)

// Events are events one source occurrence fires, in order: a NetBox
// device leaving service fires serverDecommissioned then serverDeleteDNS.
// Key identifies the occurrence (its dispatch's workflow ID under
// Temporal: one dispatch of an occurrence at a time); every event keeps
// its own stable ID, so the occurrence delivered again fires nothing new.
type Events struct {
	Key    string  `json:"key"`
	Events []Event `json:"events"`
}

// FireEvents is the workflow body that fires a source's events one after
// the other (each dispatched by Fire, with its own event ID). Its report
// lists every event's deliveries, each naming its event and stage; the
// report's EventID and Stage are the first event's. Its error is set only
// when dispatch itself could not proceed; the events after it are then
// not fired.
//
// The whole dispatch is one run for the runtime's observer.
func FireEvents(ctx context.Context, rt flow.Runtime, in Events) (Report, error) {
	return observed(ctx, rt, func() (Report, error) { return fireEvents(ctx, rt, in) })
}

func fireEvents(ctx context.Context, rt flow.Runtime, in Events) (Report, error) {
	rep := Report{Deliveries: []Delivery{}}
	for i, ev := range in.Events {
		r, err := fire(ctx, rt, ev)
		if i == 0 {
			rep.EventID, rep.Stage = r.EventID, r.Stage
		}
		rep.Deliveries = append(rep.Deliveries, r.Deliveries...)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// Submitter hands a source's events to dispatch: under Temporal, a
// workflow of FireEvents per occurrence; in process, FireEvents on the
// dispatcher's local runtime. Submit returns once the events are
// accepted (a Temporal workflow started, an in-process queue taken them),
// not once they are dispatched; an occurrence already being dispatched is
// accepted without starting a second dispatch. Errors are
// *hostforge.Failure values.
type Submitter interface {
	Submit(ctx context.Context, evs Events) error
}

// Bound reports whether any active extension binds a task to one of the
// stages: a source whose stages nothing binds builds no events.
func (d *Dispatcher) Bound(stages ...Stage) bool {
	reg := d.Registry()
	for _, s := range stages {
		if len(reg.Tasks(s)) > 0 {
			return true
		}
	}
	return false
}
