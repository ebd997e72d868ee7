package extensions

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"

	"github.com/hostforge/hostforge/flow"
)

// NewEventID returns a fresh random event ID (a version 4 UUID): the ID of
// an event whose source gives none, so that a later event with the same
// payload is a new event, never a re-fire of this one.
func NewEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// RedeliveryID is the delivery ID of the n-th redelivery of a task for an
// event (n ≥ 1; n 0 is DeliveryID): each redelivery — asked for with
// Event.Redeliver, or a new run of an SSH or Ansible task whose delivery
// failed — is a new delivery, stable per (event, extension, task, n).
func RedeliveryID(eventID, extension, task string, n int) string {
	if n <= 0 {
		return DeliveryID(eventID, extension, task)
	}
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(n))
	return deliveryUUID("hostforge-redelivery", eventID, extension, task, string(k[:]))
}

// redelivers reports whether the event's Redeliver list names the task:
// by its label, or as extension/label.
func redelivers(names []string, b Bound) bool {
	for _, n := range names {
		if n == b.Task.Label || n == b.Extension.Name+"/"+b.Task.Label {
			return true
		}
	}
	return false
}

// CheckRedeliver refuses names (Event.Redeliver) that match no task the
// registry's active extensions bind to the stage: a typo must not fire
// the event with nothing redelivered.
func CheckRedeliver(r *Registry, stage Stage, names []string) error {
	bound := r.Tasks(stage)
	for _, n := range names {
		found := false
		for _, b := range bound {
			if redelivers([]string{n}, b) {
				found = true
				break
			}
		}
		if !found {
			return EventInvalid.New("redeliver %q: no active extension binds a task of that label (or extension/label) to %s", n, stage)
		}
	}
	return nil
}

// earlierRecords returns the records of an event's earlier firings by
// delivery ID.
func (d *Dispatcher) earlierRecords(ctx context.Context, eventID string) (map[string]Execution, error) {
	recs, err := d.Store.Executions(ctx, Query{EventID: eventID})
	if err != nil {
		return nil, err
	}
	out := make(map[string]Execution, len(recs))
	for _, r := range recs {
		r.Outputs = nil // a decision needs none; the plan is kept in workflow histories
		out[r.DeliveryID] = r
	}
	return out, nil
}

// latestDelivery is the task's last delivery for the event: the highest n
// whose RedeliveryID has a record (-1 and nil when none has).
func latestDelivery(recs map[string]Execution, eventID, extension, task string) (int, *Execution) {
	n, latest := -1, (*Execution)(nil)
	for k := 0; k <= len(recs); k++ {
		r, ok := recs[RedeliveryID(eventID, extension, task, k)]
		if !ok {
			break
		}
		n, latest = k, &r
	}
	return n, latest
}

// wasInterrupted reports whether a record is a delivery started and not
// finished: left started, or recorded EXTENSION_TASK_INTERRUPTED.
func wasInterrupted(e *Execution) bool {
	return e.Status == StatusStarted || (e.Status == StatusFailed && strings.HasPrefix(e.Message, TaskInterrupted.Code+":"))
}

// decide is what this firing does with one task, given the records of the
// event's earlier firings:
//
//	no earlier delivery                 run, under DeliveryID
//	named by Redeliver                  run, under the next RedeliveryID (a
//	                                    delivery left started is recorded
//	                                    interrupted first: Abandoned)
//	succeeded                           skip: reported skipped, not contacted
//	started and not finished, or        report interrupted, not run
//	  ended interrupted
//	SSH or Ansible that failed          run, under the next RedeliveryID: a
//	                                    delivery runs at most once
//	anything else (a webhook that       run again under the same ID (its
//	  failed, running, skipped)           webhook-id; an SSH or Ansible task
//	                                      left running never began its effect)
func decide(p *PlannedTask, recs map[string]Execution, eventID string, redeliver bool) {
	n, latest := latestDelivery(recs, eventID, p.Extension, p.Task)
	p.DeliveryID = RedeliveryID(eventID, p.Extension, p.Task, max(n, 0))
	switch {
	case latest == nil:
	case redeliver:
		p.DeliveryID = RedeliveryID(eventID, p.Extension, p.Task, n+1)
		if latest.Status == StatusStarted {
			p.Abandoned = latest
		}
	case latest.Status == StatusSucceeded, wasInterrupted(latest):
		p.Earlier = latest
	case latest.Status == StatusFailed && p.TaskType.AtMostOnce():
		p.DeliveryID = RedeliveryID(eventID, p.Extension, p.Task, n+1)
	default:
		p.Attempts = latest.Attempts // delivered again under the same ID
	}
}

// earlierDelivery reports a task an earlier firing decides: a success is
// skipped and not contacted; a delivery started and not finished is
// reported interrupted (and recorded so, when it was left started).
func earlierDelivery(ctx context.Context, store flow.Runner, p PlannedTask, now time.Time) (Delivery, error) {
	e := *p.Earlier
	del := Delivery{EventID: e.EventID, Stage: e.Stage, Extension: p.Extension, Task: p.Task, TaskType: p.TaskType, DeliveryID: e.DeliveryID}
	if e.Status == StatusSucceeded {
		del.Status = StatusSkipped
		del.Message = "succeeded earlier: delivery " + e.DeliveryID + " at " + e.FinishedAt.UTC().Format(time.RFC3339) +
			"; not run again (redeliver the task to run it under a new delivery ID)"
		return del, nil
	}
	f := interrupted(e)
	if e.Status == StatusStarted {
		if err := recordInterrupted(ctx, store, e, now); err != nil {
			return del, err
		}
	} else {
		f.Message = strings.TrimPrefix(e.Message, TaskInterrupted.Code+": ")
	}
	del.Status, del.Code, del.Message = StatusFailed, f.Code, f.Message
	return del, nil
}

// recordInterrupted finishes the record of a delivery left started: it
// failed EXTENSION_TASK_INTERRUPTED.
func recordInterrupted(ctx context.Context, store flow.Runner, e Execution, now time.Time) error {
	e.Status, e.FinishedAt, e.Message, e.Outputs = StatusFailed, now, failureText(interrupted(e)), nil
	return store.Run(ctx, StepRecord, RecordIn{Execution: e}, nil)
}
