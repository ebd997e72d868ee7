package flow

import (
	"time"

	"github.com/hostforge/hostforge"
)

// CallPolicy is how a remote runtime runs one call of a step. By default a
// call whose worker was lost (it died, stopped heartbeating or ran out of
// time) is started again on another worker: a step is one idempotent
// attempt, so running it twice is safe. A call whose effect must not be
// repeated (an SSH command, a playbook) is AtMostOnce: the runtime never
// starts it a second time, and reports the loss to the body as
// AttemptLost; the body then asks the step's own record what happened.
type CallPolicy struct {
	// AtMostOnce forbids the runtime to start the call again once it may
	// have begun.
	AtMostOnce bool
	// Timeout bounds the call when it is set (the step's Attempt bounds it
	// otherwise): the call's own budget, when it is known from its input.
	Timeout time.Duration
	// Heartbeat is how long the call may go without a heartbeat before the
	// runtime declares its worker lost (the runtime's default when 0). An
	// at-most-once call sets it to its own timeout: a worker cut off from
	// the orchestrator keeps running the effect until that timeout ends it,
	// and declaring it lost sooner would report an outcome while the effect
	// may still be under way.
	Heartbeat time.Duration
}

// AttemptLost is what a remote runtime returns for an AtMostOnce call it
// lost: it did not start the call again, and whether its effect happened
// is unknown.
var AttemptLost = hostforge.Declare(hostforge.Spec{
	Code:      "STEP_ATTEMPT_LOST",
	Phase:     "any",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "A step whose effect must not be repeated lost its worker mid-call (it died, stopped heartbeating or ran out of time; the message names the step) and was not started again; the workflow decides what that means (an extension task ends EXTENSION_TASK_INTERRUPTED). If it keeps happening, check the workers' logs and their connection to the orchestrator.",
})

// BindOption configures a step as Bind registers it.
type BindOption[I any] struct {
	policy func(I) CallPolicy
}

// PerCall declares the step's call policy as a function of its input (a
// pure function: under Temporal it runs in the workflow), beside the step
// where Bind registers it.
func PerCall[I any](policy func(I) CallPolicy) BindOption[I] {
	return BindOption[I]{policy: policy}
}

// perCall adapts a typed policy to any input: the value, a pointer to it,
// or anything that decodes into it through JSON. An input it cannot read
// is treated as at most once, the cautious answer.
func perCall[I any](policy func(I) CallPolicy, decode func(any) (any, error)) func(any) CallPolicy {
	return func(in any) CallPolicy {
		switch v := in.(type) {
		case I:
			return policy(v)
		case *I:
			if v != nil {
				return policy(*v)
			}
		}
		if d, err := decode(in); err == nil {
			if v, ok := d.(I); ok {
				return policy(v)
			}
		}
		return CallPolicy{AtMostOnce: true}
	}
}

// Policy returns the call policy of one call of s with input in: the
// zero CallPolicy (rerun a lost call) unless the step declared one.
func (s Step) Policy(in any) CallPolicy {
	if s.policy == nil {
		return CallPolicy{}
	}
	return s.policy(in)
}

// HasPolicy reports whether the step declared a call policy.
func (s Step) HasPolicy() bool { return s.policy != nil }
