package enrollment

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

// ironicAttemptLimit bounds one attempt's polling, whatever the phases say:
// a node that neither finishes nor fails for this long is a stuck workflow.
const ironicAttemptLimit = 6 * time.Hour

// ironic runs phases 4-7 from the workflow body: the inspection half with
// whole-attempt reruns, the optional IPMI switch, the cleaning half with
// reruns of its start, finalize and the NetBox ironic tag.
//
// Each part (inspection, the IPMI switch, cleaning with finalize and the
// tag) is reported to the observer as a phase of its own.
func (f *execution) ironic(ctx context.Context) error {
	site := f.req.Snapshot.Site
	since := f.phaseStart
	err := f.ironicInspection(ctx)
	since = f.part(ctx, PhaseIronicInspection, err, since)
	if err != nil {
		return err
	}
	spec := ironicSpec(f.req, f.plan)
	if site.SwitchToIPMIAfterInspection {
		var sw ironic.SwitchResult
		lock := f.newLockMeter(ctx, time.Time{})
		err := f.ironicRun(ctx, StepIronicSwitchIPMI, IronicNodeIn{Instance: f.instance, Spec: spec}, &sw, lock)
		since = f.part(ctx, PhaseIronicIPMISwitch, err, since)
		if err != nil {
			return err
		}
	}
	if site.SwitchToIPMIAfterInspection {
		f.seen = nil // the switch rewrote the node
	}
	err = f.ironicCleaningToTag(ctx)
	f.part(ctx, PhaseIronicCleaning, err, since)
	return err
}

// ironicCleaningToTag runs the cleaning half, finalize and the tag.
func (f *execution) ironicCleaningToTag(ctx context.Context) error {
	if err := f.ironicCleaning(ctx); err != nil {
		return err
	}
	var fin ironic.FinalizeOut
	if err := f.ironicRun(ctx, StepIronicFinalize, IronicNodeIn{Instance: f.instance, Spec: ironicSpec(f.req, f.plan), Seen: f.seen}, &fin, f.newLockMeter(ctx, time.Time{})); err != nil {
		return err
	}
	f.res.ProvisionState = fin.Node.ProvisionState
	f.res.Node = fin.Node.UUID
	tag := f.req.Snapshot.Site.IronicTag
	if tag == "" {
		tag = intent.DefaultIronicTag
	}
	return f.tag(ctx, tag)
}

// ironicInspection runs the inspection half; a retryable failure (unexpected
// state, inspection failed or timed out, power-on timeout, Ironic down)
// reruns the whole attempt — re-reading NetBox, the prelude recovering the
// node — within the request's attempt budget. Each attempt has its own
// node-lock budget, so lock time and inspection failures never share one.
func (f *execution) ironicInspection(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := f.inspectionAttempt(ctx, attempt)
		if err == nil {
			return nil
		}
		fl, ok := hostforge.AsFailure(err)
		if !ok || !fl.Retryable || fl.Code == ironic.NodeLocked.Code || fl.Code == WaitBudgetExhausted.Code || attempt >= f.steps.Policy.Attempts() {
			return err
		}
		if err := f.rt.Sleep(ctx, f.steps.Policy.RetryAfter(attempt)); err != nil {
			return err
		}
	}
}

func (f *execution) inspectionAttempt(ctx context.Context, attempt int) error {
	if attempt > 1 {
		if err := f.refreshPlan(ctx); err != nil {
			return err
		}
	}
	exp, err := ironicExpectations(f.plan)
	if err != nil {
		return err
	}
	// The Ironic phases carry the expectations opaquely; their Verifier
	// (verify.Verifier) reads them back.
	expJSON, err := json.Marshal(exp)
	if err != nil {
		return invalid(f.plan.Device.Name, "config_context.inspection_validation", "cannot be encoded: %v", err)
	}
	in := IronicInspectionIn{Instance: f.instance, In: ironic.InspectionIn{
		Spec:    ironicSpec(f.req, f.plan),
		Inspect: f.req.Params.InspectionEnabled(),
		Force:   f.req.Params.ForceInspection,
		Expect:  expJSON,
	}}
	lock := f.newLockMeter(ctx, time.Time{})
	start := f.rt.Now(ctx)
	var out ironic.InspectionOut // one per attempt, not per poll
	for {
		out = ironic.InspectionOut{}
		if err := f.ironicRun(ctx, StepIronicInspection, &in, &out, lock); err != nil {
			return err
		}
		in.In.Progress = out.Progress
		f.res.ProvisionState = out.Node.ProvisionState
		if out.Done {
			f.seen = out.Seen
			return nil
		}
		if f.rt.Now(ctx).Sub(start) > ironicAttemptLimit {
			return WaitBudgetExhausted.New("step %s polled for %s without finishing; last: %s (%s)", StepIronicInspection, ironicAttemptLimit, out.Note, out.Node.ProvisionState)
		}
		if err := f.rt.Sleep(ctx, out.Next); err != nil {
			return err
		}
	}
}

// ironicCleaning runs the cleaning half within the overall cleaning
// deadline. clean failed (or Ironic being down) reruns the start within the
// attempt budget; anything else fails at once.
func (f *execution) ironicCleaning(ctx context.Context) error {
	deadline := f.rt.Now(ctx).Add(f.req.Snapshot.Site.CleaningDeadline.D())
	if f.req.Snapshot.Site.CleaningDeadline <= 0 {
		deadline = f.rt.Now(ctx).Add(DefaultCleaningDeadline)
	}
	for attempt := 1; ; attempt++ {
		err := f.cleaningAttempt(ctx, attempt, deadline)
		if err == nil {
			return nil
		}
		code := hostforge.CodeOf(err)
		if (code != ironic.CleaningFailed.Code && code != ironic.Unavailable.Code) || attempt >= f.steps.Policy.Attempts() {
			return err
		}
		pause := f.steps.Policy.RetryAfter(attempt)
		if left := deadline.Sub(f.rt.Now(ctx)); left < pause {
			return err
		}
		if err := f.rt.Sleep(ctx, pause); err != nil {
			return err
		}
	}
}

func (f *execution) cleaningAttempt(ctx context.Context, attempt int, deadline time.Time) error {
	if attempt > 1 {
		if err := f.refreshPlan(ctx); err != nil {
			return err
		}
	}
	in := IronicCleaningIn{Instance: f.instance, In: ironic.CleaningIn{Spec: ironicSpec(f.req, f.plan), Deadline: deadline, Seen: f.seen}}
	f.seen = nil // an attempt after this one reads the node
	lock := f.newLockMeter(ctx, deadline)
	var out ironic.CleaningOut // one per attempt, not per poll
	for {
		out = ironic.CleaningOut{}
		if err := f.ironicRun(ctx, StepIronicCleaning, &in, &out, lock); err != nil {
			return err
		}
		in.In.Progress = out.Progress
		in.In.Seen = nil // only the start uses it
		f.res.ProvisionState = out.Node.ProvisionState
		if out.Done {
			f.seen = out.Seen
			return nil
		}
		if err := f.rt.Sleep(ctx, out.Next); err != nil {
			return err
		}
	}
}

// refreshPlan re-reads NetBox: every rerun of an Ironic attempt re-resolves
// the device's intent.
func (f *execution) refreshPlan(ctx context.Context) error {
	var ri ReadIntentOut
	if err := f.run(ctx, StepReadIntent, ReadIntentIn{Device: f.req.Device}, &ri); err != nil {
		return err
	}
	p, err := buildPlan(f.req, ri.Device)
	if err != nil {
		return err
	}
	f.plan = p
	return nil
}

// newLockMeter starts an attempt's node-lock budget: the site's
// NodeLockMaxWait, clamped to the time left before deadline when one is given.
func (f *execution) newLockMeter(ctx context.Context, deadline time.Time) *flow.Meter {
	m := f.steps.Policy.Meter(WaitReasonNodeLocked)
	if !deadline.IsZero() {
		m.Clamp(deadline.Sub(f.rt.Now(ctx)))
	}
	return m
}

// ironicRun runs one Ironic step until it is done or fails: node_locked
// waits back off on the attempt's lock meter within its budget, other waits
// sleep their After within their budget, and failures return at once: the
// callers decide about whole-attempt reruns.
func (f *execution) ironicRun(ctx context.Context, step string, in, out any, lock *flow.Meter) error {
	return f.steps.Once(ctx, step, in, out, lock)
}

// ironicSpec maps the plan to the Ironic phases' node spec: the single place
// where NetBox's ironic_settings become Ironic's node.
func ironicSpec(req Request, p Plan) ironic.NodeSpec {
	site := req.Snapshot.Site.WithDefaults()
	s := p.Ironic
	if s == nil {
		return ironic.NodeSpec{Name: p.Device.Name, CredentialItem: AdminItem(p.Device.Name), MonitoringItem: site.MonitoringItem}
	}
	spec := ironic.NodeSpec{
		Name:                   p.Device.Name,
		CredentialItem:         AdminItem(p.Device.Name),
		MonitoringItem:         site.MonitoringItem,
		Driver:                 s.Driver,
		Interfaces:             s.Interfaces,
		BMCAddress:             p.Device.OOBIP,
		RedfishAddressOverride: s.RedfishAddressOverride,
		DriverInfoExtras:       s.IronicDriverInfo,
		Project:                req.Snapshot.Site.EnrolProject,
		ResourceClass:          s.ResourceClass,
		Capabilities:           s.Capabilities,
		CPUArch:                s.CPUArch,
		RootDevice:             s.RootDevice,
		SoftwareRAID:           s.SoftwareRAID,
		TargetRAIDConfig:       s.TargetRAIDConfig,
		SkipCableVerification:  s.SkipCableVerification,
	}
	if s.Bond != nil {
		spec.Bond = &ironic.Bond{Mode: s.Bond.Mode, Miimon: s.Bond.Miimon, XmitHashPolicy: s.Bond.XmitHashPolicy}
	}
	for _, n := range p.Frontend {
		spec.NICs = append(spec.NICs, ironic.NIC{Name: n.Name, MAC: n.MAC, Switch: n.Switch, Port: n.Port})
	}
	return spec
}

// ironicExpectations builds verification's expectations from the plan: the
// inspection_validation block and one cable per frontend NIC (the physical
// switch port: LLDP speaks for it, never for the LAG parent).
func ironicExpectations(p Plan) (verify.Expectations, error) {
	cables := make([]verify.Cable, 0, len(p.Frontend))
	for _, n := range p.Frontend {
		cables = append(cables, verify.Cable{Interface: n.Name, MAC: n.MAC, Switch: n.Switch, Port: n.PhysicalPort})
	}
	skip := p.Ironic != nil && p.Ironic.SkipCableVerification
	exp, err := verify.ExpectationsFrom(p.Device.Name, p.InspectionValidation, cables, skip)
	if err != nil {
		if _, ok := hostforge.AsFailure(err); ok {
			return exp, err
		}
		return exp, invalid(p.Device.Name, "config_context.inspection_validation", "%v", err)
	}
	return exp, nil
}
