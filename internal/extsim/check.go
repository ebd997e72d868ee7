package extsim

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/flow"
)

// CheckOptions swap in deliberately broken parts, to prove the suite
// catches what they break.
type CheckOptions struct {
	WrapStore  func(extensions.Store) extensions.Store
	WrapRunner func(extensions.TaskType, extensions.Runner) extensions.Runner
	WrapSteps  func(flow.Steps) flow.Steps
}

// Verdict is what one schedule did.
type Verdict struct {
	// Problems are the broken promises, each with what showed it.
	Problems []string
	// Unclassified counts failures that were not classified (a subset of
	// Problems).
	Unclassified int
	// Firings counts the event's firings (restarts included).
	Firings int
	// Effects counts the targets' runs; Crashes the attempts whose worker
	// died; Failed the deliveries that failed under the faults;
	// Interrupted the tasks that ended EXTENSION_TASK_INTERRUPTED once the
	// faults cleared (their outcome unknown, left to the operator).
	Effects, Crashes, Failed, Interrupted int
}

// maxRestarts bounds the restarts of a local dispatch that keeps dying.
const maxRestarts = 10

// checker runs one schedule.
type checker struct {
	s     Schedule
	w     *world
	rt    *runtime
	steps flow.Steps
	specs map[string]TaskSpec // by extension/label
	// store is the execution store without faults, for the final check.
	store extensions.Store
	// redeliverFiring is the firing that redelivered (0: none).
	redeliverFiring int
	v               Verdict
}

// Check runs one schedule: the event fired under its faults (fired again
// after each crash of a local process), then fired again once the faults
// cleared, once more, and with a redelivery when the schedule asks; it
// returns every broken promise (see the package documentation).
func Check(ctx context.Context, s Schedule, opts CheckOptions) (v Verdict) {
	c := &checker{s: s, specs: map[string]TaskSpec{}}
	defer func() {
		if r := recover(); r != nil {
			c.v.Problems = append(c.v.Problems, fmt.Sprintf("panicked: %v\n%s", r, debug.Stack()))
			v = c.v
		}
	}()
	if err := c.build(opts); err != nil {
		c.problem("building the schedule's world: %v", err)
		return c.v
	}
	ev, _, err := extensions.NewEvent(fmt.Sprintf("evt-%d", s.Seed), extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "SN-1"}}`))
	if err != nil {
		c.problem("event: %v", err)
		return c.v
	}

	// Under the faults: a local process that dies is restarted, and
	// fires the event again.
	for restarts := 0; ; restarts++ {
		rep, _ := c.fire(ctx, ev, "faulted") // its error is checked: classified
		c.count(rep)
		if !c.rt.died || restarts == maxRestarts {
			break
		}
		c.rt.died = false
	}
	c.w.faults.clear()

	converged, err := c.fire(ctx, ev, "converge")
	if err != nil {
		c.problem("firing again after the faults cleared: %v", err)
	}
	c.converged(converged)
	before := len(c.w.effects)
	again, err := c.fire(ctx, ev, "again")
	if err != nil {
		c.problem("firing a converged event again: %v", err)
	}
	for _, e := range c.w.effects[before:] {
		c.problem("a converged event fired again contacted %s/%s (delivery %s)", e.Extension, e.Task, e.Delivery)
	}
	c.settled(converged, again)
	if s.Redeliver != "" {
		c.redeliver(ctx, ev, again)
	}
	c.final(ctx, ev.ID)
	c.v.Effects, c.v.Crashes = len(c.w.effects), c.w.crashes
	return c.v
}

func (c *checker) problem(format string, args ...any) {
	c.v.Problems = append(c.v.Problems, fmt.Sprintf(format, args...))
}

func (c *checker) build(opts CheckOptions) error {
	c.w = &world{sched: c.s, faults: &faults{pending: append(c.s.Faults[:0:0], c.s.Faults...)}, clk: clock.NewFake(clock.Epoch)}
	var exts []*extensions.Extension
	for _, x := range c.s.Extensions {
		e, err := extension(x)
		if err != nil {
			return err
		}
		exts = append(exts, e)
		for _, t := range x.Tasks {
			c.specs[x.Name+"/"+t.Label] = t
		}
	}
	reg, err := extensions.NewRegistry(exts...)
	if err != nil {
		return err
	}
	c.store = newStore()
	var store extensions.Store = faultStore{Store: c.store, w: c.w}
	if opts.WrapStore != nil {
		store = opts.WrapStore(store)
	}
	runners := map[extensions.TaskType]extensions.Runner{}
	for _, tt := range taskTypes {
		r := c.w.target(shortType(tt))
		if opts.WrapRunner != nil {
			r = opts.WrapRunner(tt, r)
		}
		runners[tt] = r
	}
	d := extensions.NewDispatcher(reg, runners, store)
	c.steps = flow.Steps(d)
	if opts.WrapSteps != nil {
		c.steps = opts.WrapSteps(c.steps)
	}
	c.rt = &runtime{local: &flow.Local{Steps: c.steps, Clock: c.w.clk, RoundTrip: true}, steps: c.steps, w: c.w}
	return nil
}

// fire fires the event once and checks what every firing promises: the
// failure policy, classified failures.
func (c *checker) fire(ctx context.Context, ev extensions.Event, phase string) (extensions.Report, error) {
	c.w.mu.Lock()
	c.w.firing++
	firing := c.w.firing
	c.w.mu.Unlock()
	c.v.Firings++
	rep, err := extensions.Fire(ctx, c.rt, ev)
	if err != nil && !(c.rt.died && err == error(processDied)) {
		c.classified(fmt.Sprintf("%s firing %d: dispatch", phase, firing), err)
	}
	for _, d := range rep.Deliveries {
		where := fmt.Sprintf("%s firing %d: %s/%s", phase, firing, d.Extension, d.Task)
		switch {
		case d.Status == extensions.StatusFailed:
			c.classified(where, &hostforge.Failure{Spec: hostforge.Spec{Code: d.Code}, Message: d.Message})
			if d.Code == extensions.TaskInterrupted.Code && !d.TaskType.AtMostOnce() {
				c.problem("%s: a %s ended %s; only SSH and Ansible tasks run at most once", where, d.TaskType, d.Code)
			}
		case d.Status == extensions.StatusSkipped && d.Code != "":
			c.classified(where, &hostforge.Failure{Spec: hostforge.Spec{Code: d.Code}, Message: d.Message})
		case d.Status == extensions.StatusSkipped && !strings.HasPrefix(d.Message, "succeeded earlier: delivery "):
			c.problem("%s: skipped without a failure code nor an earlier success: %q", where, d.Message)
		}
	}
	c.failurePolicy(rep, firing, phase)
	return rep, err
}

// classified checks that a failure carries a declared code.
func (c *checker) classified(where string, err error) {
	f, ok := hostforge.AsFailure(err)
	if !ok || f.Code == hostforge.Unclassified.Code {
		c.v.Unclassified++
		c.problem("%s: an unclassified failure: %v", where, err)
		return
	}
	if _, ok := hostforge.Lookup(f.Code); !ok {
		c.v.Unclassified++
		c.problem("%s: failure code %s is not declared", where, f.Code)
	}
}

// failurePolicy: once a task whose failurePolicy is fail failed, none of
// its extension's later tasks runs in that firing.
func (c *checker) failurePolicy(rep extensions.Report, firing int, phase string) {
	stopped := map[string]string{}
	for _, d := range rep.Deliveries {
		if by, ok := stopped[d.Extension]; ok {
			if d.Status == extensions.StatusSucceeded {
				c.problem("%s firing %d: %s/%s succeeded after %s failed with failurePolicy fail", phase, firing, d.Extension, d.Task, by)
			}
			for _, e := range c.w.effects {
				if e.Firing == firing && e.Extension == d.Extension && e.Task == d.Task {
					c.problem("%s firing %d: %s/%s ran (delivery %s) after %s failed with failurePolicy fail", phase, firing, d.Extension, d.Task, e.Delivery, by)
				}
			}
			continue
		}
		if d.Status == extensions.StatusFailed && !c.specs[d.Extension+"/"+d.Task].Continue {
			stopped[d.Extension] = d.Task
		}
	}
}

func (c *checker) count(rep extensions.Report) {
	for _, d := range rep.Deliveries {
		if d.Status == extensions.StatusFailed {
			c.v.Failed++
		}
	}
}

// converged: once the faults cleared, every task has succeeded (now or
// before), or is an SSH or Ansible delivery whose outcome is unknown
// (interrupted, for the operator to redeliver), or was not run because
// such a task stopped its extension.
func (c *checker) converged(rep extensions.Report) {
	if len(rep.Deliveries) != len(c.specs) {
		c.problem("converge: %d deliveries reported, %d tasks bound", len(rep.Deliveries), len(c.specs))
	}
	interrupted := map[string]bool{}
	for _, d := range rep.Deliveries {
		key := d.Extension + "/" + d.Task
		switch {
		case d.Status == extensions.StatusSucceeded, d.Status == extensions.StatusSkipped && d.Code == "":
		case d.Status == extensions.StatusFailed && d.Code == extensions.TaskInterrupted.Code:
			interrupted[key] = true
			c.v.Interrupted++
		case d.Status == extensions.StatusSkipped && d.Code == extensions.TaskFailed.Code && c.stoppedByInterrupted(d, interrupted):
		default:
			c.problem("converge: %s ended %s %s %q once the faults cleared", key, d.Status, d.Code, d.Message)
		}
	}
}

func (c *checker) stoppedByInterrupted(d extensions.Delivery, interrupted map[string]bool) bool {
	for key := range interrupted {
		if strings.HasPrefix(key, d.Extension+"/") && strings.Contains(d.Message, "task "+strings.TrimPrefix(key, d.Extension+"/")+" of extension") {
			return true
		}
	}
	return false
}

// settled: a converged event fired again reports every success skipped
// and every interrupted delivery interrupted again, running nothing.
func (c *checker) settled(converged, again extensions.Report) {
	if len(again.Deliveries) != len(converged.Deliveries) {
		c.problem("again: %d deliveries, the converged firing %d", len(again.Deliveries), len(converged.Deliveries))
		return
	}
	for i, d := range again.Deliveries {
		was := converged.Deliveries[i]
		ok := false
		switch {
		case was.Status == extensions.StatusSucceeded || (was.Status == extensions.StatusSkipped && was.Code == ""):
			ok = d.Status == extensions.StatusSkipped && d.Code == ""
		default:
			ok = d.Status == was.Status && d.Code == was.Code && d.DeliveryID == was.DeliveryID
		}
		if !ok {
			c.problem("again: %s/%s is %s %s, after %s %s", d.Extension, d.Task, d.Status, d.Code, was.Status, was.Code)
		}
	}
}

// redeliver: a redelivery runs the named task once, under a delivery ID
// it never had, unless an earlier task of its extension fails and stops
// it (an interrupted one, whose failure policy is fail); besides, it runs
// only tasks the settled firing reported not run, each once.
func (c *checker) redeliver(ctx context.Context, ev extensions.Event, settled extensions.Report) {
	earlier := map[string]bool{}
	for _, e := range c.w.effects {
		earlier[e.Delivery] = true
	}
	notRun := map[string]bool{}
	for _, d := range settled.Deliveries {
		if d.Status == extensions.StatusSkipped && d.Code != "" {
			notRun[d.Extension+"/"+d.Task] = true
		}
	}
	before := len(c.w.effects)
	ev.Redeliver = []string{c.s.Redeliver}
	c.redeliverFiring = c.w.firing + 1
	rep, err := c.fire(ctx, ev, "redeliver")
	if err != nil {
		c.problem("redeliver %s: %v", c.s.Redeliver, err)
		return
	}
	var named extensions.Delivery
	for _, d := range rep.Deliveries {
		if d.Extension+"/"+d.Task == c.s.Redeliver {
			named = d
		}
	}
	stopped := named.Status == extensions.StatusSkipped && named.Code == extensions.TaskFailed.Code
	if named.Status != extensions.StatusSucceeded && !stopped {
		c.problem("redeliver %s: %s %s %q", c.s.Redeliver, named.Status, named.Code, named.Message)
	}
	runs := map[string]int{}
	for _, e := range c.w.effects[before:] {
		key := e.Extension + "/" + e.Task
		runs[key]++
		switch {
		case key == c.s.Redeliver && (earlier[e.Delivery] || stopped):
			c.problem("redeliver %s ran it under delivery %s, which is not new (or it was reported not run)", key, e.Delivery)
		case key != c.s.Redeliver && !notRun[key]:
			c.problem("redeliver %s also contacted %s (delivery %s), which had succeeded or was interrupted", c.s.Redeliver, key, e.Delivery)
		}
	}
	for key, n := range runs {
		if n > 1 {
			c.problem("redeliver %s contacted %s %d times", c.s.Redeliver, key, n)
		}
	}
	if !stopped && runs[c.s.Redeliver] != 1 {
		c.problem("redeliver %s contacted it %d times, want once", c.s.Redeliver, runs[c.s.Redeliver])
	}
}

// final checks what holds over the whole schedule: an SSH or Ansible
// delivery ran at most once; every webhook retry of a delivery carried
// its webhook-id — the task's delivery ID, which only a redelivery
// changes; no record is left started or running; a record of a delivery
// that ran counts its runs (at least one, and a webhook's at least the
// times its delivery ID reached the receiver in firings that recorded it).
func (c *checker) final(ctx context.Context, eventID string) {
	runs := map[string]int{}
	for _, e := range c.w.effects {
		key := e.Extension + "/" + e.Task
		if e.Type.AtMostOnce() {
			runs[e.Delivery]++
			if runs[e.Delivery] == 2 {
				c.problem("%s (%s) ran twice with delivery ID %s", key, e.Type, e.Delivery)
			}
			continue
		}
		gen := 0
		if e.Firing == c.redeliverFiring && key == c.s.Redeliver {
			gen = 1
		}
		if want := extensions.RedeliveryID(eventID, e.Extension, e.Task, gen); e.WebhookID != want {
			c.problem("webhook %s was delivered with webhook-id %s, want its delivery ID %s on every retry", key, e.WebhookID, want)
		}
	}
	recs, err := c.store.Executions(ctx, extensions.Query{})
	if err != nil {
		c.problem("reading the records: %v", err)
	}
	for _, r := range recs {
		if r.Status == extensions.StatusStarted || r.Status == extensions.StatusRunning {
			c.problem("the record of %s/%s (delivery %s) is left %s", r.Extension, r.Task, r.DeliveryID, r.Status)
		}
		ran := r.Status == extensions.StatusSucceeded || (r.Status == extensions.StatusFailed && !strings.HasPrefix(r.Message, extensions.TaskInterrupted.Code))
		if ran && r.Attempts < 1 {
			c.problem("the record of %s/%s (delivery %s) ended %s with %d attempts", r.Extension, r.Task, r.DeliveryID, r.Status, r.Attempts)
		}
		if r.Status == extensions.StatusSkipped && r.Attempts != 0 {
			c.problem("the record of %s/%s (delivery %s) was skipped with %d attempts", r.Extension, r.Task, r.DeliveryID, r.Attempts)
		}
	}
}
