package hostforge

import (
	"fmt"
	"time"
)

// Wait is the outcome "run this same idempotent attempt again after After".
// A step returns it instead of sleeping; the orchestrator owns the timer.
type Wait struct {
	// After is how long to wait before the next attempt.
	After time.Duration
	// Reason is a short, stable reason key, e.g. "node_locked", "bmc_busy",
	// "provision_state_unstable". Budgets are kept per reason.
	Reason string
	// Detail is for people: "node locked by conductor-2 (provision state manageable)".
	Detail string
}

// RetryAfter returns a Wait.
func RetryAfter(d time.Duration, reason, detailFormat string, args ...any) *Wait {
	return &Wait{After: d, Reason: reason, Detail: fmt.Sprintf(detailFormat, args...)}
}

func (w *Wait) Error() string {
	return fmt.Sprintf("wait %s (%s): %s", w.After, w.Reason, w.Detail)
}

// AsWait returns the Wait in err's chain.
func AsWait(err error) (*Wait, bool) { return asType[*Wait](err) }
