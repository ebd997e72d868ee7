package extensions

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
)

// Default task timeouts: what a task whose timeout option is 0 gets. The
// SSH and Ansible runners apply the same ones.
const (
	DefaultSSHTimeout     = 60 * time.Second
	DefaultAnsibleTimeout = time.Hour
)

// Margins of one run beyond the task's own timeout.
const (
	// sshMargin: the SSH runner bounds connecting and logging in by its
	// login timeout, each at most the task's timeout; plus rendering and
	// the vault read.
	sshMargin = 15 * time.Second
	// ansibleMargin: the playbook's timeout covers fetching the bundle;
	// then the killed process's wait delay, reading its outputs, rendering.
	ansibleMargin = time.Minute
)

// AtMostOnce reports whether the task type's effect must not be repeated:
// an SSH command or a playbook runs at most once per delivery. A webhook
// is delivered at least once, every retry with the same webhook-id.
func (t TaskType) AtMostOnce() bool { return t == TaskSSH || t == TaskAnsible }

// ownTimeout is an at-most-once task's own timeout (0 for a webhook,
// which is delivered at least once).
func ownTimeout(t *BoundTask) time.Duration {
	switch {
	case t.ssh != nil && t.ssh.Timeout > 0:
		return time.Duration(t.ssh.Timeout) * time.Second
	case t.ansible != nil && t.ansible.ExecutionTimeout > 0:
		return time.Duration(t.ansible.ExecutionTimeout) * time.Second
	}
	return defaultTimeout(t.TaskType)
}

func defaultTimeout(tt TaskType) time.Duration {
	switch tt {
	case TaskSSH:
		return DefaultSSHTimeout
	case TaskAnsible:
		return DefaultAnsibleTimeout
	}
	return 0
}

// runBound is the longest one run of an at-most-once task may take: its
// own timeout and what its runner does around it.
func runBound(tt TaskType, timeout time.Duration) time.Duration {
	switch tt {
	case TaskSSH:
		return 3*timeout + sshMargin // connect, log in, run: each within the timeout
	case TaskAnsible:
		return timeout + ansibleMargin
	}
	return MaxTaskAttempt
}

// runCallPolicy is how a remote runtime runs extensions.run: an SSH or
// Ansible task's call is never started a second time (its loss reaches
// Fire as flow.AttemptLost), is bounded by the task's own run, and is
// declared lost only once that bound passed — a worker cut off from the
// orchestrator keeps running the command until the task's timeout kills
// it, so declaring it lost sooner would let an outcome be recorded while
// the effect may still be under way. A webhook's lost call is run again
// with the same delivery ID.
func runCallPolicy(in RunIn) flow.CallPolicy {
	if !in.Task.TaskType.AtMostOnce() {
		return flow.CallPolicy{}
	}
	b := MaxTaskAttempt // a plan from before tasks carried their timeout
	if in.Task.Timeout > 0 {
		b = runBound(in.Task.TaskType, in.Task.Timeout)
	}
	return flow.CallPolicy{AtMostOnce: true, Timeout: b, Heartbeat: b}
}

// startEffect is the write-ahead of an at-most-once task: the delivery is
// recorded started before its runner is called. A delivery that was
// started already — by an attempt whose worker was lost, before a
// restart, or whose answer was lost — is not run again: it ends
// EXTENSION_TASK_INTERRUPTED.
func (d *Dispatcher) startEffect(ctx context.Context, in RunIn) error {
	e := Execution{DeliveryID: in.DeliveryID, EventID: in.Event.ID, Stage: in.Event.Stage, Extension: in.Task.Extension,
		Task: in.Task.Task, TaskType: in.Task.TaskType, Status: StatusStarted, StartedAt: in.startedAt(), Attempts: in.Task.Attempts + 1,
		Message: "started: the task's effect may have begun; this delivery is never run again"}
	prior, ok, err := d.Store.StartDelivery(ctx, e)
	switch {
	case err != nil:
		return err
	case !ok && prior.Status == StatusStarted:
		return interrupted(prior)
	case !ok:
		return TaskInterrupted.New("delivery %s of extension %s task %s ended %s already; it is not run again", prior.DeliveryID, prior.Extension, prior.Task, prior.Status)
	}
	return nil
}

// unstart takes the write-ahead back when the runner answered with a wait:
// it did not begin the effect, and will be called again. Should this write
// fail, the next call finds the delivery started and ends it interrupted,
// the cautious outcome.
func (d *Dispatcher) unstart(ctx context.Context, in RunIn) {
	e := Execution{DeliveryID: in.DeliveryID, EventID: in.Event.ID, Stage: in.Event.Stage, Extension: in.Task.Extension,
		Task: in.Task.Task, TaskType: in.Task.TaskType, Status: StatusRunning, StartedAt: in.startedAt(), Attempts: in.Task.Attempts + 1}
	if err := d.Store.PutExecution(ctx, e); err != nil {
		d.log().Warn("the write-ahead of a delivery that waits could not be taken back; its next attempt ends interrupted", "delivery", in.DeliveryID, "error", err)
	}
}

// startedAt is when the delivery was taken up; a run input from before
// the field existed gets the event's fire time.
func (in RunIn) startedAt() time.Time {
	if !in.StartedAt.IsZero() {
		return in.StartedAt
	}
	return in.Deadline.Add(-in.Event.deadline())
}

// interrupted is the failure of a delivery left started.
func interrupted(e Execution) *hostforge.Failure {
	return TaskInterrupted.New("delivery %s of extension %s task %s was started at %s and did not finish: its outcome is unknown, and it is not run again",
		e.DeliveryID, e.Extension, e.Task, e.StartedAt.UTC().Format(time.RFC3339))
}

// maxLostRuns bounds the calls of extensions.run for one delivery whose
// calls the runtime keeps losing.
const maxLostRuns = 3

// runTask runs one delivery's run step and counts its calls. A call the
// runtime lost without starting it again (an at-most-once call whose
// worker died) is followed by a new call, which asks the delivery's
// record: it ends interrupted when the lost call had started the effect,
// and runs the task when it had not.
func runTask(ctx context.Context, rt flow.Runtime, in RunIn, budget time.Duration) (RunOut, int, error) {
	runner := flow.Runner{RT: rt, Policy: runPolicy(budget)}
	var out RunOut
	err := runner.Once(ctx, StepRun, in, &out)
	calls := 1
	for ; flow.AttemptLost.Is(err) && calls < maxLostRuns; calls++ {
		out = RunOut{}
		err = runner.Once(ctx, StepRun, in, &out)
	}
	if flow.AttemptLost.Is(err) {
		return RunOut{}, calls, TaskInterrupted.Wrap(err, "delivery %s of extension %s task %s: %d calls were lost; its outcome is unknown", in.DeliveryID, in.Task.Extension, in.Task.Task, maxLostRuns)
	}
	return out, calls, err
}
