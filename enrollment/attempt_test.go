package enrollment_test

import (
	"context"
	"testing"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
)

// TestAttemptBudgetsWithinRegisteredTimeouts: every registered step
// documents its longest attempt, and none is longer than the attempt bound
// it is registered with (flow.Step.Attempt, the Temporal start-to-close
// timeout). Raising what a phase does per call without raising the bound
// fails here.
func TestAttemptBudgetsWithinRegisteredTimeouts(t *testing.T) {
	exec := &enrollment.Executor{}
	budgets := enrollment.AttemptBudgets()
	for _, name := range exec.StepNames() {
		st, _ := exec.Step(name)
		b, ok := budgets[name]
		switch {
		case !ok:
			t.Errorf("step %s documents no attempt budget", name)
		case b <= 0:
			t.Errorf("step %s: budget %s", name, b)
		case b > st.Attempt:
			t.Errorf("step %s: one attempt may take %s, past its registered bound %s", name, b, st.Attempt)
		}
	}
	for name := range budgets {
		if _, ok := exec.Step(name); !ok {
			t.Errorf("a budget for %s, which is not a registered step", name)
		}
	}
}

// callCounter records, per step, the most calls one attempt made to each
// system of the fake site.
type callCounter struct {
	flow.Runtime
	site *fakes.Site
	most map[string]map[string]int
}

func (c *callCounter) Do(ctx context.Context, step string, in, out any) error {
	before := c.site.Calls()
	err := c.Runtime.Do(ctx, step, in, out)
	for sys, t := range c.site.Calls().Sub(before) {
		if c.most[step] == nil {
			c.most[step] = map[string]int{}
		}
		c.most[step][sys] = max(c.most[step][sys], t.Reads+t.Writes)
	}
	return err
}

// TestIronicRequestsPerAttempt: enrolling a host with 16 frontend NICs
// through every phase, no Ironic step's attempt makes more Ironic calls
// than the documented bound (each call of the Ironic client is one
// request), and each makes at most one BMC link read.
func TestIronicRequestsPerAttempt(t *testing.T) {
	site := fakes.NewSite()
	site.AddIronic("ironic-cpu")
	site.AddHost(fakes.HostSpec{Name: "h1", NICs: 16})
	exec := enrolltest.Executor(site, nil)
	cfg := enrollment.SiteConfig{ConfigureDHCP: true, ConfigureBMC: true, IronicEnrol: true, SwitchToIPMIAfterInspection: true,
		IronicInstances: map[string]string{intent.ClassCPUBaremetal: "ironic-cpu"}}
	c := &callCounter{Runtime: exec.Local(site.Clock), site: site, most: map[string]map[string]int{}}
	if _, err := enrollment.Enroll(context.Background(), c, enrollment.NewRequest("h1", intent.ClassCPUBaremetal, "lab1", cfg, true, enrollment.Params{})); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{enrollment.StepIronicInspection, enrollment.StepIronicSwitchIPMI, enrollment.StepIronicCleaning, enrollment.StepIronicFinalize} {
		m, ok := c.most[step]
		if !ok {
			t.Fatalf("step %s never ran", step)
		}
		if m[fakes.SysIronic] > enrollment.IronicRequests || m[fakes.SysBMC] > 1 {
			t.Errorf("step %s: an attempt made %d Ironic calls (bound %d) and %d link reads", step, m[fakes.SysIronic], enrollment.IronicRequests, m[fakes.SysBMC])
		}
		t.Logf("%s: heaviest attempt %d Ironic calls", step, m[fakes.SysIronic])
	}
}
