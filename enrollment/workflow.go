package enrollment

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/platformclass"
)

// Result is how one enrollment ended.
type Result struct {
	Device string `json:"device"`
	// Instance is the Ironic instance the device was routed to.
	Instance string `json:"instance,omitempty"`
	// Enrolled is true when every enabled phase completed.
	Enrolled bool `json:"enrolled"`
	// ProvisionState is the Ironic node's final provision state, when the
	// Ironic phases ran.
	ProvisionState string `json:"provision_state,omitempty"`
	// Node is the Ironic node UUID the Ironic phases ended on, when they ran;
	// with Instance it is the reference completion proof compares.
	Node string `json:"node,omitempty"`
	// PlatformClass is the effective platform class, when recorded.
	PlatformClass string `json:"platform_class,omitempty"`
	// Phases lists each phase in order with what became of it.
	Phases []PhaseRecord `json:"phases"`
	// Failure is set when the enrollment failed.
	Failure *hostforge.Failure `json:"failure,omitempty"`
}

// PhaseRecord is one phase's fate in a run.
type PhaseRecord struct {
	Phase string `json:"phase"`
	// Status is "done", "skipped" or "failed".
	Status string `json:"status"`
	// Note says why it was skipped or what it changed.
	Note string `json:"note,omitempty"`
}

// Phase names, in the workflow's order.
const (
	PhaseRouting       = "resolve_ironic_instance"
	PhaseStatusGate    = "netbox_status_gate"
	PhasePlatformClass = platformclass.Phase
	PhaseDHCP          = StepConfigureDHCP
	PhaseBMC           = StepConfigureBMC
	PhaseActivation    = StepActivateDevice
	PhaseIronic        = "ironic"
)

// WaitBudgetExhausted is raised when a step kept asking to wait for longer
// than its reason's budget.
var WaitBudgetExhausted = hostforge.Declare(hostforge.Spec{
	Code:      "WAIT_BUDGET_EXHAUSTED",
	Phase:     "any",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: true,
	Action:    "A system stayed busy for the whole wait budget (the message names the step, the reason and the last state seen): check that system, then rerun.",
})

// DefaultWaitBudget bounds waits whose reason has no budget of its own.
const DefaultWaitBudget = 30 * time.Minute

// flow is one execution of the workflow body.
type flow struct {
	rt       Runtime
	req      Request
	instance string
	plan     Plan
	dhcpIn   dhcp.Entry
	res      Result
}

// Enroll is the enrollment workflow body, written once against Runtime. It
// returns the Result in every case, and the Failure as the error when the
// enrollment failed. Every error it returns is a *hostforge.Failure.
func Enroll(ctx context.Context, rt Runtime, req Request) (Result, error) {
	f := &flow{rt: rt, req: req, res: Result{Device: req.Device}}
	err := f.enroll(ctx)
	if err != nil {
		_, fl, w := hostforge.Classify(err)
		if fl == nil { // a wait escaped the step loop: report it as the bug it is
			fl = hostforge.Unclassified.New("wait escaped the workflow: %v", w)
		}
		f.res.Failure = fl
		f.res.Enrolled = false
		return f.res, fl
	}
	f.res.Enrolled = true
	return f.res, nil
}

func (f *flow) record(phase, status, note string) {
	f.res.Phases = append(f.res.Phases, PhaseRecord{Phase: phase, Status: status, Note: note})
}

func (f *flow) enroll(ctx context.Context) error {
	site := f.req.Snapshot.Site

	// Routing preflight: pure, before any step touches anything.
	inst, err := Route(f.req)
	if err != nil {
		f.record(PhaseRouting, "failed", "")
		return err
	}
	f.instance, f.res.Instance = inst, inst
	f.record(PhaseRouting, "done", inst)

	// 0. NetBox status gate.
	var ri ReadIntentOut
	if err := f.run(ctx, StepReadIntent, ReadIntentIn{Device: f.req.Device}, &ri); err != nil {
		f.record(PhaseStatusGate, "failed", "")
		return err
	}
	if err := statusGate(ri.Device); err != nil {
		f.record(PhaseStatusGate, "failed", string(ri.Device.Status))
		return err
	}
	if f.plan, err = buildPlan(f.req, ri.Device); err == nil && site.ConfigureDHCP {
		// Every enabled phase's input is mapped before anything is written,
		// so bad NetBox data changes nothing.
		f.dhcpIn, err = dhcpEntry(f.plan)
	}
	if err != nil {
		f.record(PhaseStatusGate, "failed", "invalid NetBox data")
		return err
	}
	f.record(PhaseStatusGate, "done", string(ri.Device.Status))
	dev := f.plan.Device

	// 0b. Platform class.
	if f.req.Snapshot.PlatformClassActivityReady {
		var pc platformclass.Result
		in := RecordPlatformClassIn{
			Inputs: platformClassInputs(dev),
			Target: platformclass.Target{DeviceID: dev.ID, Device: dev.Name, NetBoxValue: dev.PlatformClass},
		}
		if err := f.run(ctx, StepRecordPlatformClass, in, &pc); err != nil {
			f.record(PhasePlatformClass, "failed", "")
			return err
		}
		f.res.PlatformClass = pc.Effective
		f.record(PhasePlatformClass, "done", pc.Effective)
	} else {
		f.res.PlatformClass = dev.PlatformClass
		f.record(PhasePlatformClass, "skipped", "platform_class_activity_ready is false")
	}

	// 1. DHCP.
	if site.ConfigureDHCP {
		if err := f.run(ctx, StepConfigureDHCP, f.dhcpIn, nil); err != nil {
			f.record(PhaseDHCP, "failed", "")
			return err
		}
		f.record(PhaseDHCP, "done", "")
	} else {
		f.record(PhaseDHCP, "skipped", "enrollment_configure_dhcp is off")
	}

	// 2. BMC, then the ipmi_exporter tag ("BMC configuration completed").
	if site.ConfigureBMC {
		if err := f.run(ctx, StepConfigureBMC, bmcTarget(f.req, f.plan), nil); err != nil {
			f.record(PhaseBMC, "failed", "")
			return err
		}
		if err := f.tag(ctx, intent.TagIPMIExporter); err != nil {
			f.record(PhaseBMC, "failed", "tagging")
			return err
		}
		f.record(PhaseBMC, "done", "")
	} else {
		f.record(PhaseBMC, "skipped", "enrollment_configure_bmc is off")
	}

	// 3. NetBox activation: always runs.
	var act ActivateOut
	if err := f.run(ctx, StepActivateDevice, ActivateIn{Device: dev.Name}, &act); err != nil {
		f.record(PhaseActivation, "failed", "")
		return err
	}
	if act.Changed {
		f.record(PhaseActivation, "done", "staged → active")
	} else {
		f.record(PhaseActivation, "done", "left "+string(act.Before))
	}

	// 4-7. Ironic.
	if !site.IronicEnrol {
		f.record(PhaseIronic, "skipped", "enrollment_ironic_enrol is off")
		return nil
	}
	if err := f.ironic(ctx); err != nil {
		f.record(PhaseIronic, "failed", "")
		return err
	}
	f.record(PhaseIronic, "done", f.res.ProvisionState)
	return nil
}

// tag ensures one tag, using the tags read at the start of the attempt.
func (f *flow) tag(ctx context.Context, slug string) error {
	var out TagOut
	in := TagIn{DeviceID: f.plan.Device.ID, Device: f.plan.Device.Name, Current: f.plan.Device.Tags, Tags: []string{slug}}
	if err := f.run(ctx, StepTagDevice, in, &out); err != nil {
		return err
	}
	f.plan.Device.Tags = append(f.plan.Device.Tags, out.Added...)
	return nil
}

// Route resolves the Ironic instance that manages the request's device class.
func Route(req Request) (string, error) {
	if req.DeviceClass == "" {
		return "", RoutingUnresolved.New("device %s: the request carries no device_class", req.Device)
	}
	inst, ok := req.Snapshot.Site.IronicInstances[req.DeviceClass]
	if !ok || inst == "" {
		return "", RoutingUnresolved.New("device %s: no Ironic instance manages device_class %q", req.Device, req.DeviceClass)
	}
	return inst, nil
}

// statusGate admits staged and active devices only.
func statusGate(d intent.Device) error {
	switch d.Status {
	case intent.StatusStaged, intent.StatusActive:
		return nil
	}
	if !d.Status.Known() {
		return invalid(d.Name, "status", "%q is not a NetBox device status", d.Status)
	}
	return StatusIneligible.New("device %s is %s in NetBox; only staged or active devices are enrolled", d.Name, d.Status)
}

// run runs one step under the retry policy: a wait sleeps and reruns the same
// step, within its reason's budget; a retryable failure reruns it after a
// backoff within the attempt budget; anything else returns.
func (f *flow) run(ctx context.Context, step string, in, out any) error {
	return f.loop(ctx, step, in, out, nil, true)
}

// loop is the one step runner of the workflow body. A wait sleeps and reruns
// the step: a node_locked wait, when a lock meter is given, on the meter's
// backoff within its budget (then IRONIC_NODE_LOCKED naming the holder and
// state the step read live); any other wait for its After within its
// reason's budget. A failure returns, unless retryFailures and it is
// retryable within the request's attempt budget (then it reruns after a
// backoff).
func (f *flow) loop(ctx context.Context, step string, in, out any, lock *lockMeter, retryFailures bool) error {
	attempts := 0
	waited := map[string]time.Duration{}
	for {
		err := f.rt.Do(ctx, step, in, out)
		o, fl, w := hostforge.Classify(err)
		var after time.Duration
		switch o {
		case hostforge.Done:
			return nil
		case hostforge.Failed:
			attempts++
			if !retryFailures || !fl.Retryable || attempts >= f.req.maxAttempts() {
				return fl
			}
			after = retryBackoff(attempts)
		case hostforge.Waiting:
			if w.Reason == WaitReasonNodeLocked && lock != nil {
				lock.n++
				after = lockBackoff(lock.n)
				if lock.waited+after > lock.budget {
					return ironic.NodeLocked.Wrap(w, "step %s: node stayed locked for %s (budget %s); last seen: %s", step, lock.waited, lock.budget, w.Detail)
				}
				lock.waited += after
				break
			}
			after = w.After
			budget := f.waitBudget(w.Reason)
			if waited[w.Reason]+after > budget {
				return WaitBudgetExhausted.Wrap(w, "step %s waited %s for %s, past its %s budget; last: %s", step, waited[w.Reason], w.Reason, budget, w.Detail)
			}
			waited[w.Reason] += after
		}
		if err := f.rt.Sleep(ctx, after); err != nil {
			return err
		}
	}
}

// WaitReasonNodeLocked is the wait reason of a locked Ironic node; its budget
// is the site's NodeLockMaxWait.
const WaitReasonNodeLocked = "node_locked"

func (f *flow) waitBudget(reason string) time.Duration {
	if reason == WaitReasonNodeLocked {
		return f.req.Snapshot.Site.NodeLockMaxWait.D()
	}
	return DefaultWaitBudget
}

// retryBackoff is the pause before retry n (1-based): 10s, 20s, 40s, ... capped at 5m.
func retryBackoff(n int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	if d > 5*time.Minute {
		d = 5 * time.Minute
	}
	return d
}
