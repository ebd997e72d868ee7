package temporal_test

import (
	"testing"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/enrollment"
)

// TestStartToCloseCoversEveryAttempt: the start-to-close timeout the
// worker registers for each enrollment step is at least the longest
// attempt the step documents, so Temporal never cuts a legitimate attempt
// short (and retries it, rebooting a host into an iDRAC job again).
func TestStartToCloseCoversEveryAttempt(t *testing.T) {
	exec := &enrollment.Executor{}
	timeouts := temporal.StepTimeouts(exec)
	for step, budget := range enrollment.AttemptBudgets() {
		got, ok := timeouts[step]
		if !ok {
			t.Errorf("step %s is not registered", step)
			continue
		}
		if got < budget {
			t.Errorf("step %s: start-to-close %s, but one attempt may take %s", step, got, budget)
		}
	}
	if len(timeouts) != len(enrollment.AttemptBudgets()) {
		t.Errorf("%d steps registered, %d documented", len(timeouts), len(enrollment.AttemptBudgets()))
	}
}
