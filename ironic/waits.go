package ironic

import (
	"time"

	"github.com/hostforge/hostforge"
)

// The policy of WaitNodeLocked, which every workflow that runs Ironic
// phases (enrollment, retirement) gives the reason within its node-lock
// budget.

// LockBackoff paces the waits for a locked node: 10 s doubling to 60 s.
var LockBackoff = hostforge.Backoff{First: 10 * time.Second, Max: time.Minute}

// LockWaitExhausted is IRONIC_NODE_LOCKED once a step has waited its whole
// node-lock budget, naming the holder and state the last wait saw.
func LockWaitExhausted(step string, last *hostforge.Wait, waited, budget time.Duration) error {
	return NodeLocked.Wrap(last, "step %s: node stayed locked for %s (budget %s); last seen: %s", step, waited, budget, last.Detail)
}
