package extensions

import (
	"fmt"
	"time"
)

// DeadlineWarnings lists the tasks whose own timeout the stage deadline
// cuts short: an SSH task's timeout, an Ansible task's executionTimeout
// (its default when unset) or a webhook's timeout longer than the
// deadline, each a warning at the option's JSON path. The deadline bounds
// every task of an event (no task runs past it), so such a task is
// stopped by the deadline before its own timeout; validation says so
// rather than letting it happen silently.
func (x *Extension) DeadlineWarnings(deadline time.Duration) Problems {
	if deadline <= 0 {
		deadline = DefaultStageDeadline
	}
	var out Problems
	for _, s := range Stages() {
		for _, t := range x.stages[s] {
			own, opt := time.Duration(0), ""
			switch {
			case t.ssh != nil:
				own, opt = ownTimeout(t), "timeout"
			case t.ansible != nil:
				own, opt = ownTimeout(t), "executionTimeout"
			case t.webhook != nil:
				own, opt = time.Duration(max(t.webhook.Timeout, 30))*time.Second, "timeout"
			}
			if own <= deadline {
				continue
			}
			out = append(out, Problem{Path: t.Path + ".options." + opt, Warning: true,
				Message: fmt.Sprintf("the task may run %s, longer than the stage deadline %s (extensions.stage_deadline, or --stage-deadline): the deadline stops it first; raise the deadline or lower the timeout", own, deadline)})
		}
	}
	return out
}
