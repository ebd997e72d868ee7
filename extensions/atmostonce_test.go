package extensions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions"
)

// interruptedCode is the outcome of a delivery that was started and did
// not finish.
const interruptedCode = "EXTENSION_TASK_INTERRUPTED"

// dyingRunner runs the task's effect (the fake runner records it), then
// the process running it dies before the outcome is known: its context
// ends, as when a worker is stopped mid-task.
type dyingRunner struct {
	w      *world
	task   string
	cancel context.CancelFunc
	died   bool
}

func (r *dyingRunner) Run(ctx context.Context, req extensions.Request) (extensions.Result, error) {
	res, err := r.w.runner.Run(ctx, req)
	if req.Task == r.task && !r.died {
		r.died = true
		r.cancel()
		return extensions.Result{}, ctx.Err()
	}
	return res, err
}

// An SSH or Ansible task whose worker died after its effect began is not
// run again when its event is fired again (a restart resuming the
// dispatch): it ends EXTENSION_TASK_INTERRUPTED, the target having seen one
// run; a webhook cut off the same way is delivered again with its
// webhook-id.
func TestRestartAfterTheEffectDoesNotRunAnSSHTaskTwice(t *testing.T) {
	for _, typ := range []string{"ssh", "ansible", "webhook"} {
		t.Run(typ, func(t *testing.T) {
			w := newWorld(t, def("alpha", "", "once:"+typ+":continue", "after:webhook"))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			dying := &dyingRunner{w: w, task: "once", cancel: cancel}
			for _, tt := range []extensions.TaskType{extensions.TaskWebhook, extensions.TaskSSH, extensions.TaskAnsible} {
				w.d.Runners[tt] = dying
			}
			ev := serverEvent(t, "evt-restart")
			if _, err := extensions.Fire(ctx, w.rt, ev); hostforge.CodeOf(err) != hostforge.Cancelled.Code {
				t.Fatalf("the dying dispatch ended %v, want it cancelled", err)
			}
			rep := w.fire(t, ev) // the restarted worker fires the event again
			runs := 0
			for _, r := range w.runner.Requests() {
				if r.Task == "once" {
					runs++
				}
			}
			d := rep.Deliveries[0]
			if typ == "webhook" {
				if runs != 2 || d.Status != extensions.StatusSucceeded {
					t.Fatalf("webhook: %d deliveries, status %s; want it delivered again with the same webhook-id", runs, d.Status)
				}
				return
			}
			if runs != 1 {
				t.Fatalf("the %s task ran %d times for delivery %s, want once", typ, runs, d.DeliveryID)
			}
			if d.Status != extensions.StatusFailed || d.Code != interruptedCode {
				t.Fatalf("the %s task ended %s %s, want failed %s", typ, d.Status, d.Code, interruptedCode)
			}
			rec, ok, _ := w.store.Execution(context.Background(), d.DeliveryID)
			if !ok || rec.Status != extensions.StatusFailed || !strings.HasPrefix(rec.Message, interruptedCode+":") {
				t.Fatalf("record %+v, want it failed %s", rec, interruptedCode)
			}
			if rep.Deliveries[1].Status != extensions.StatusSucceeded {
				t.Errorf("the next task (continue) ended %s", rep.Deliveries[1].Status)
			}
		})
	}
}
