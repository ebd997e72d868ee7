package fleetsim

import (
	"context"
	"sync"
	"time"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
)

// WorkerLossDelay is how long the runtime takes to notice that the worker
// running a step attempt died and to start the attempt again elsewhere:
// Temporal's heartbeat timeout as the adapter sets it (one minute).
const WorkerLossDelay = time.Minute

// crashPlan holds the crashes a schedule armed and the attempt each host is
// running, so the checker can tell a crashed attempt's state apart.
type crashPlan struct {
	mu      sync.Mutex
	armed   []*armedCrash
	running map[string]*fakes.Crash
	// Tripped counts the attempts whose worker died.
	tripped int
}

type armedCrash struct {
	step  string
	after int
	held  bool
	spent bool
}

func newCrashPlan() *crashPlan { return &crashPlan{running: map[string]*fakes.Crash{}} }

// arm adds a crash of the next attempt of step ("*": any step) that makes
// at least after writes.
func (p *crashPlan) arm(step string, after int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = append(p.armed, &armedCrash{step: step, after: after})
}

// disarm withdraws every crash not yet spent.
func (p *crashPlan) disarm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = nil
}

// take hands an armed crash to an attempt of step.
func (p *crashPlan) take(step string) *armedCrash {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.armed {
		if !a.held && !a.spent && (a.step == "*" || a.step == step) {
			a.held = true
			return a
		}
	}
	return nil
}

func (p *crashPlan) begin(host string, c *fakes.Crash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[host] = c
}

// end records how the attempt with a crash ended: a crash that did not
// trip (the attempt wrote less) goes back to the plan.
func (p *crashPlan) end(host string, a *armedCrash, c *fakes.Crash) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, host)
	a.held = false
	if c.Tripped() {
		a.spent = true
		p.tripped++
	}
}

// crashed returns the crash of the host's running attempt when its worker
// died, else nil.
func (p *crashPlan) crashed(host string) *fakes.Crash {
	p.mu.Lock()
	c := p.running[host]
	p.mu.Unlock()
	if c != nil && c.Tripped() {
		return c
	}
	return nil
}

// Tripped is the number of attempts whose worker died.
func (p *crashPlan) Tripped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tripped
}

// crashRuntime runs each step attempt the plan arms a crash for with a
// worker that dies after the armed number of writes. A dead worker's
// attempt returns nothing to the workflow: whatever the step made of its
// calls failing is dropped, and after WorkerLossDelay the same attempt runs
// again with the same input — the workflow resumes from its last durable
// point, as under Temporal, where the activity is retried on another
// worker and the workflow's history keeps everything before it.
type crashRuntime struct {
	flow.Runtime
	plan *crashPlan
	host string
}

func (r crashRuntime) Do(ctx context.Context, step string, in, out any) error {
	for {
		a := r.plan.take(step)
		if a == nil {
			return r.Runtime.Do(ctx, step, in, out)
		}
		cctx, c := fakes.WithCrash(ctx, a.after)
		r.plan.begin(r.host, c)
		err := r.Runtime.Do(cctx, step, in, out)
		c.Release()
		r.plan.end(r.host, a, c)
		if !c.Tripped() {
			return err
		}
		if err := r.Runtime.Sleep(ctx, WorkerLossDelay); err != nil {
			return err
		}
	}
}
