package enrollment

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/flow"
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

// WaitBudgetExhausted is flow's: a step kept asking to wait for longer
// than its reason's budget.
var WaitBudgetExhausted = flow.WaitBudgetExhausted

// DefaultWaitBudget bounds waits whose reason has no budget of its own.
const DefaultWaitBudget = flow.DefaultWaitBudget

// Workflow names the enrollment in observations (flow.RunStarted and the
// others): the workflow label of its metrics.
const Workflow = "enrollment"

// Parts of the Ironic phase, observed on their own (flow.PhaseEnded) so
// that inspection and cleaning times are told apart; the Result records
// the Ironic phase as one.
const (
	PhaseIronicInspection = "ironic.inspection"
	PhaseIronicIPMISwitch = "ironic.ipmi_switch"
	// PhaseIronicCleaning is cleaning, finalize and the NetBox ironic tag.
	PhaseIronicCleaning = "ironic.cleaning"
)

// execution is one execution of the workflow body.
type execution struct {
	rt       flow.Runtime
	steps    flow.Runner
	req      Request
	instance string
	plan     Plan
	dhcpIn   dhcp.Entry
	res      Result
	// phaseStart is when the phase under way started: where the last one
	// ended (phases run one after the other), on the runtime's clock.
	phaseStart time.Time
	// seen is the last Ironic step's look at the node that found it done,
	// handed to the Ironic step that runs next (ironic.Sighting).
	seen *ironic.Sighting
}

// Enroll is the enrollment workflow body, written once against Runtime. It
// returns the Result in every case, and the Failure as the error when the
// enrollment failed. Every error it returns is a *hostforge.Failure.
//
// The run, each phase that completed or failed and the parts of the Ironic
// phase are reported to the runtime's observer (flow.ObserverOf), with
// their durations on the runtime's clock.
func Enroll(ctx context.Context, rt flow.Runtime, req Request) (Result, error) {
	start := rt.Now(ctx)
	if o := flow.ObserverOf(rt); o != nil {
		o.Observe(flow.RunStarted{Workflow: Workflow})
	}
	f := &execution{rt: rt, steps: flow.Runner{RT: rt, Policy: req.Policy()}, req: req, res: Result{Device: req.Device}, phaseStart: start}
	err := f.enroll(ctx)
	var fl *hostforge.Failure
	if err != nil {
		var w *hostforge.Wait
		_, fl, w = hostforge.Classify(err)
		if fl == nil { // a wait escaped the step loop: report it as the bug it is
			fl = hostforge.Unclassified.New("wait escaped the workflow: %v", w)
		}
		f.res.Failure = fl
		f.res.Enrolled = false
	} else {
		f.res.Enrolled = true
	}
	if o := flow.ObserverOf(rt); o != nil {
		o.Observe(flow.RunEnded{Workflow: Workflow, Took: rt.Now(ctx).Sub(start), Failure: fl})
	}
	if fl != nil {
		return f.res, fl
	}
	return f.res, nil
}

// record appends the phase's fate to the result and reports a phase that
// ran (done or failed) to the observer; the next phase starts now.
func (f *execution) record(ctx context.Context, phase, status, note string) {
	f.res.Phases = append(f.res.Phases, PhaseRecord{Phase: phase, Status: status, Note: note})
	start := f.phaseStart
	f.phaseStart = f.rt.Now(ctx)
	if status != "skipped" {
		observePhase(f.rt, phase, status, f.phaseStart.Sub(start))
	}
}

// observePhase reports one phase's end.
func observePhase(rt flow.Runtime, phase, status string, took time.Duration) {
	if o := flow.ObserverOf(rt); o != nil {
		o.Observe(flow.PhaseEnded{Workflow: Workflow, Phase: phase, Status: status, Took: took})
	}
}

// part reports the end of a part of the Ironic phase that started at
// since, and returns when the next part starts.
func (f *execution) part(ctx context.Context, phase string, err error, since time.Time) time.Time {
	now := f.rt.Now(ctx)
	status := "done"
	if err != nil {
		status = "failed"
	}
	observePhase(f.rt, phase, status, now.Sub(since))
	return now
}

func (f *execution) enroll(ctx context.Context) error {
	site := f.req.Snapshot.Site

	// Routing preflight: pure, before any step touches anything.
	inst, err := Route(f.req)
	if err != nil {
		f.record(ctx, PhaseRouting, "failed", "")
		return err
	}
	f.instance, f.res.Instance = inst, inst
	f.record(ctx, PhaseRouting, "done", inst)

	// 0. NetBox status gate.
	var ri ReadIntentOut
	if err := f.run(ctx, StepReadIntent, ReadIntentIn{Device: f.req.Device}, &ri); err != nil {
		f.record(ctx, PhaseStatusGate, "failed", "")
		return err
	}
	if err := statusGate(ri.Device); err != nil {
		f.record(ctx, PhaseStatusGate, "failed", string(ri.Device.Status))
		return err
	}
	if f.plan, err = buildPlan(f.req, ri.Device); err == nil && site.ConfigureDHCP {
		// Every enabled phase's input is mapped before anything is written,
		// so bad NetBox data changes nothing.
		f.dhcpIn, err = dhcpEntry(f.plan)
	}
	if err != nil {
		f.record(ctx, PhaseStatusGate, "failed", "invalid NetBox data")
		return err
	}
	f.record(ctx, PhaseStatusGate, "done", string(ri.Device.Status))
	dev := f.plan.Device

	// 0b. Platform class.
	if f.req.Snapshot.PlatformClassActivityReady {
		var pc platformclass.Result
		in := RecordPlatformClassIn{
			Inputs: platformClassInputs(dev),
			Target: platformclass.Target{DeviceID: dev.ID, Device: dev.Name, NetBoxValue: dev.PlatformClass},
		}
		if err := f.run(ctx, StepRecordPlatformClass, in, &pc); err != nil {
			f.record(ctx, PhasePlatformClass, "failed", "")
			return err
		}
		f.res.PlatformClass = pc.Effective
		f.record(ctx, PhasePlatformClass, "done", pc.Effective)
	} else {
		f.res.PlatformClass = dev.PlatformClass
		f.record(ctx, PhasePlatformClass, "skipped", "platform_class_activity_ready is false")
	}

	// 1. DHCP.
	if site.ConfigureDHCP {
		if err := f.run(ctx, StepConfigureDHCP, f.dhcpIn, nil); err != nil {
			f.record(ctx, PhaseDHCP, "failed", "")
			return err
		}
		f.record(ctx, PhaseDHCP, "done", "")
	} else {
		f.record(ctx, PhaseDHCP, "skipped", "enrollment_configure_dhcp is off")
	}

	// 2. BMC, then the ipmi_exporter tag ("BMC configuration completed").
	if site.ConfigureBMC {
		// The phase's start time names this run of it: a forced cold
		// reset happens once per run, however often the step reruns.
		if err := f.run(ctx, StepConfigureBMC, bmcTarget(f.req, f.plan, f.rt.Now(ctx)), nil); err != nil {
			f.record(ctx, PhaseBMC, "failed", "")
			return err
		}
		if err := f.tag(ctx, intent.TagIPMIExporter); err != nil {
			f.record(ctx, PhaseBMC, "failed", "tagging")
			return err
		}
		f.record(ctx, PhaseBMC, "done", "")
	} else {
		f.record(ctx, PhaseBMC, "skipped", "enrollment_configure_bmc is off")
	}

	// 3. NetBox activation: always runs.
	var act ActivateOut
	if err := f.run(ctx, StepActivateDevice, ActivateIn{Device: dev.Name}, &act); err != nil {
		f.record(ctx, PhaseActivation, "failed", "")
		return err
	}
	if act.Changed {
		f.record(ctx, PhaseActivation, "done", "staged → active")
	} else {
		f.record(ctx, PhaseActivation, "done", "left "+string(act.Before))
	}

	// 4-7. Ironic.
	if !site.IronicEnrol {
		f.record(ctx, PhaseIronic, "skipped", "enrollment_ironic_enrol is off")
		return nil
	}
	if err := f.ironic(ctx); err != nil {
		f.record(ctx, PhaseIronic, "failed", "")
		return err
	}
	f.record(ctx, PhaseIronic, "done", f.res.ProvisionState)
	return nil
}

// tag ensures one tag, using the tags read at the start of the attempt.
func (f *execution) tag(ctx context.Context, slug string) error {
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

// run runs one step under the request's retry policy: a wait sleeps and
// reruns the same step within its reason's budget; a retryable failure
// reruns it after a backoff within the attempt budget.
func (f *execution) run(ctx context.Context, step string, in, out any) error {
	return f.steps.Run(ctx, step, in, out)
}

// WaitReasonNodeLocked is the wait reason of a locked Ironic node; its budget
// is the site's NodeLockMaxWait.
const WaitReasonNodeLocked = ironic.WaitNodeLocked

// Policy is the request's retry policy: its attempt budget, and the wait
// budgets per reason — the node lock on the site's NodeLockMaxWait (then
// IRONIC_NODE_LOCKED naming the holder and state last read live) and the
// BMC phase's waits on theirs (bmc.Waits: bmc_busy, bmc_unreachable,
// bmc_reset, idrac_job_schedule, idrac_job_run). The policy travels with
// the request, so every runtime spends the same budgets and raises the
// same failures.
func (r Request) Policy() flow.Policy {
	lock := r.Snapshot.Site.NodeLockMaxWait.D()
	if lock <= 0 {
		lock = DefaultNodeLockMaxWait
	}
	waits := map[string]flow.WaitPolicy{
		WaitReasonNodeLocked: {Budget: lock, Backoff: ironic.LockBackoff, Exhausted: ironic.LockWaitExhausted},
	}
	for _, w := range bmc.Waits() {
		waits[w.Reason] = flow.WaitPolicy{Budget: w.Budget, Backoff: w.Backoff, Exhausted: w.Exhausted}
	}
	return flow.Policy{
		MaxAttempts: r.maxAttempts(),
		Retry:       flow.DefaultRetry,
		Waits:       waits,
	}
}
