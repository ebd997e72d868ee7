package extensionsfake

import (
	"context"
	"sync"

	"github.com/hostforge/hostforge/extensions"
)

// Outcome is what the fake runner does for one task.
type Outcome struct {
	// Err fails the delivery (a *hostforge.Failure, or a *hostforge.Wait).
	Err error
	// Times limits Err to the first Times calls (0: every call).
	Times int
	// Result is returned on success.
	Result extensions.Result
}

// Runner records every request it is handed and answers with the outcome
// scripted for the task's label (success with an empty message otherwise).
// It is safe for concurrent use.
type Runner struct {
	mu       sync.Mutex
	requests []extensions.Request
	outcomes map[string]Outcome
	calls    map[string]int
}

// NewRunner returns a runner that succeeds at everything.
func NewRunner() *Runner {
	return &Runner{outcomes: map[string]Outcome{}, calls: map[string]int{}}
}

// On scripts the outcome of the task labelled task.
func (r *Runner) On(task string, o Outcome) *Runner {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.outcomes[task] = o
	return r
}

// Run records the request and returns the scripted outcome.
func (r *Runner) Run(ctx context.Context, req extensions.Request) (extensions.Result, error) {
	if err := ctx.Err(); err != nil {
		return extensions.Result{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	r.calls[req.Task]++
	o, ok := r.outcomes[req.Task]
	if ok && o.Err != nil && (o.Times == 0 || r.calls[req.Task] <= o.Times) {
		return o.Result, o.Err
	}
	return o.Result, nil
}

// Requests returns a copy of the requests received, in order.
func (r *Runner) Requests() []extensions.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]extensions.Request(nil), r.requests...)
}

// Reset forgets the recorded requests.
func (r *Runner) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests, r.calls = nil, map[string]int{}
}
