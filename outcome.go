package hostforge

import (
	"context"
	"errors"
)

// Outcome is what a step came to.
type Outcome int

// The three outcomes of a step.
const (
	Done Outcome = iota
	Waiting
	Failed
)

func (o Outcome) String() string {
	switch o {
	case Done:
		return "done"
	case Waiting:
		return "wait"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// Unclassified is the failure the engine reports for an error that is neither
// a Failure nor a Wait. It is a bug in hostforge or in an adapter.
var Unclassified = Declare(Spec{
	Code:      "UNCLASSIFIED",
	Phase:     "any",
	Owner:     OwnerSDK,
	Retryable: false,
	Action:    "This is a defect in hostforge or in one of its adapters: file a bug with the log lines of this device (they carry the cause), then rerun the enrollment.",
})

// Cancelled is the failure for work stopped by its context (cancellation,
// deadline, worker shutdown) rather than by the systems it talks to.
var Cancelled = Declare(Spec{
	Code:      "CANCELLED",
	Phase:     "any",
	Owner:     OwnerInfraEng,
	Retryable: true,
	Action:    "The run was cancelled or hit its deadline; rerun the enrollment when ready (every step is idempotent).",
})

// Classify sorts err into one of the three outcomes. A nil error is Done; a
// Wait is Waiting; a Failure is Failed with that Failure; a context error is
// Failed as CANCELLED; anything else is Failed as UNCLASSIFIED wrapping err.
// A Failure takes precedence over a Wait when an error chain holds both.
func Classify(err error) (Outcome, *Failure, *Wait) {
	if err == nil {
		return Done, nil, nil
	}
	if f, ok := AsFailure(err); ok {
		return Failed, f, nil
	}
	if w, ok := AsWait(err); ok {
		return Waiting, nil, w
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Failed, Cancelled.Wrap(err, "stopped by its context"), nil
	}
	return Failed, Unclassified.Wrap(err, "an error left a step without a classification"), nil
}

// Classified returns err unchanged when it is nil, a Failure or a Wait, and
// otherwise the Failure that Classify gives it. Phases call it on the way out
// so that nothing unclassified leaves them.
func Classified(err error) error {
	switch o, f, w := Classify(err); o {
	case Done:
		return nil
	case Waiting:
		return w
	default:
		return f
	}
}
