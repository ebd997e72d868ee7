package flow

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
)

// WaitBudgetExhausted is raised when a step kept asking to wait for longer
// than its reason's budget allows.
var WaitBudgetExhausted = hostforge.Declare(hostforge.Spec{
	Code:      "WAIT_BUDGET_EXHAUSTED",
	Phase:     "any",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: true,
	Action:    "A system stayed busy for the whole wait budget (the message names the step, the reason and the last state seen): check that system, then rerun.",
})

// Defaults of Policy.
const (
	// DefaultWaitBudget bounds the waits of a reason that has no policy.
	DefaultWaitBudget = 30 * time.Minute
	// DefaultMaxAttempts is the attempt budget of a step whose failures are retryable.
	DefaultMaxAttempts = 3
)

// DefaultRetry is the pause between failed attempts: 10 s doubling to 5 min.
var DefaultRetry = hostforge.Backoff{First: 10 * time.Second, Max: 5 * time.Minute}

// Policy is a workflow body's retry policy: how often a retryable failure
// reruns its step, and how long each reason may keep a step waiting.
type Policy struct {
	// MaxAttempts bounds the attempts of a step whose failure is retryable
	// (DefaultMaxAttempts when 0; 1 fails fast).
	MaxAttempts int
	// Retry is the pause between failed attempts (DefaultRetry when zero).
	Retry hostforge.Backoff
	// Waits is the policy of each wait reason. A reason that is not listed
	// sleeps each wait's own After within DefaultWait.
	Waits map[string]WaitPolicy
	// DefaultWait bounds the waits of unlisted reasons (DefaultWaitBudget when 0).
	DefaultWait time.Duration
}

// WaitPolicy is how long one wait reason may keep a step waiting, and how
// the pauses grow.
type WaitPolicy struct {
	// Budget is the total time waits of this reason may add up to.
	Budget time.Duration
	// Backoff, when its First is set, paces repeated waits of the reason
	// (the n-th wait sleeps Backoff.After(n)); otherwise each wait sleeps
	// its own After.
	Backoff hostforge.Backoff
	// Exhausted builds the failure once the budget is spent; nil gives
	// WAIT_BUDGET_EXHAUSTED naming the step, the reason and the last detail.
	Exhausted func(step string, last *hostforge.Wait, waited, budget time.Duration) error
}

func (p Policy) maxAttempts() int {
	if p.MaxAttempts <= 0 {
		return DefaultMaxAttempts
	}
	return p.MaxAttempts
}

// RetryAfter is the pause before rerun n (1-based) of a failed attempt.
func (p Policy) RetryAfter(n int) time.Duration {
	if p.Retry.First <= 0 {
		return DefaultRetry.After(n)
	}
	return p.Retry.After(n)
}

// Attempts is the attempt budget.
func (p Policy) Attempts() int { return p.maxAttempts() }

func (p Policy) wait(reason string) WaitPolicy {
	if wp, ok := p.Waits[reason]; ok {
		return wp
	}
	b := p.DefaultWait
	if b <= 0 {
		b = DefaultWaitBudget
	}
	return WaitPolicy{Budget: b}
}

// Meter is one wait reason's budget, spent across several step calls: an
// Ironic attempt's node-lock budget covers every poll of that attempt. A
// step run without a meter for a reason gets a fresh one.
type Meter struct {
	Reason string
	policy WaitPolicy
	waited time.Duration
	n      int
}

// Meter starts a meter for reason with the policy's budget.
func (p Policy) Meter(reason string) *Meter {
	return &Meter{Reason: reason, policy: p.wait(reason)}
}

// Clamp lowers the meter's budget to d when d is smaller (a negative d
// leaves no budget): a lock budget inside an overall deadline.
func (m *Meter) Clamp(d time.Duration) *Meter {
	if d < m.policy.Budget {
		m.policy.Budget = max(d, 0)
	}
	return m
}

// Waited is the time spent waiting so far.
func (m *Meter) Waited() time.Duration { return m.waited }

// Budget is the meter's budget.
func (m *Meter) Budget() time.Duration { return m.policy.Budget }

// spend books the next wait and returns its pause, or the exhaustion failure.
func (m *Meter) spend(step string, w *hostforge.Wait) (time.Duration, error) {
	m.n++
	after := w.After
	if m.policy.Backoff.First > 0 {
		after = m.policy.Backoff.After(m.n)
	}
	if m.waited+after > m.policy.Budget {
		if m.policy.Exhausted != nil {
			return 0, m.policy.Exhausted(step, w, m.waited, m.policy.Budget)
		}
		return 0, WaitBudgetExhausted.New("step %s waited %s for %s, past its %s budget; last: %s", step, m.waited, w.Reason, m.policy.Budget, w.Detail)
	}
	m.waited += after
	return after, nil
}

// Runner is the one step runner of every workflow body: it calls a step on
// the runtime, sleeps on the runtime for each wait within its reason's
// budget, and reruns a retryable failure within the attempt budget.
type Runner struct {
	RT     Runtime
	Policy Policy
}

// Run runs step until it is done: waits sleep and rerun it, a retryable
// failure reruns it after the retry backoff while attempts remain. Meters
// given for a reason are spent instead of fresh ones.
func (r Runner) Run(ctx context.Context, step string, in, out any, meters ...*Meter) error {
	return r.loop(ctx, step, in, out, true, meters)
}

// Once runs step until it is done or fails: waits sleep and rerun it, but a
// failure returns at once, for bodies that rerun a whole attempt themselves.
func (r Runner) Once(ctx context.Context, step string, in, out any, meters ...*Meter) error {
	return r.loop(ctx, step, in, out, false, meters)
}

func (r Runner) loop(ctx context.Context, step string, in, out any, retryFailures bool, meters []*Meter) error {
	attempts := 0
	fresh := map[string]*Meter{}
	meter := func(reason string) *Meter {
		for _, m := range meters {
			if m != nil && m.Reason == reason {
				return m
			}
		}
		m, ok := fresh[reason]
		if !ok {
			m = r.Policy.Meter(reason)
			fresh[reason] = m
		}
		return m
	}
	for {
		err := r.RT.Do(ctx, step, in, out)
		o, fl, w := hostforge.Classify(err)
		var after time.Duration
		switch o {
		case hostforge.Done:
			return nil
		case hostforge.Failed:
			attempts++
			if !retryFailures || !fl.Retryable || attempts >= r.Policy.maxAttempts() {
				return fl
			}
			after = r.Policy.RetryAfter(attempts)
		case hostforge.Waiting:
			m := meter(w.Reason)
			var err error
			after, err = m.spend(step, w)
			if o := ObserverOf(r.RT); o != nil {
				if err != nil {
					o.Observe(WaitExhausted{Step: step, Reason: w.Reason, Waited: m.waited, Budget: m.policy.Budget})
				} else {
					o.Observe(Waited{Step: step, Reason: w.Reason, Sleep: after, Waited: m.waited, Budget: m.policy.Budget})
				}
			}
			if err != nil {
				return err
			}
		}
		if err := r.RT.Sleep(ctx, after); err != nil {
			return err
		}
	}
}
