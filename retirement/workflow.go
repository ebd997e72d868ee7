package retirement

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// Phase names, in the workflow's order.
const (
	PhaseGate   = "retire_gate"
	PhaseErase  = ironic.PhaseErase
	PhaseIronic = ironic.PhaseRemoveNode
	PhaseDHCP   = dhcp.RemovePhaseName
	PhaseBMC    = bmc.PhaseRetire
	PhaseLedger = "retire_ledger"
	PhaseNetBox = "retire_netbox"
	PhaseEvents = "retire_extensions"
)

// Result is how one retirement ended.
type Result struct {
	Device string `json:"device"`
	// Run is the retirement's run: the request's, or the one a resumed
	// retirement started (the run the device's journal names).
	Run string `json:"run"`
	// Resumed is true when the run resumed an earlier retirement.
	Resumed bool `json:"resumed,omitempty"`
	// Retired is true when every step completed.
	Retired bool `json:"retired"`
	// Instance and Node are the Ironic instance and node the host was.
	Instance string `json:"instance,omitempty"`
	Node     string `json:"node,omitempty"`
	// Erase is what became of the erase: "metadata", "full", "skipped
	// (--no-erase)", "none (no node)" or "none (kept by an earlier
	// retirement)".
	Erase string `json:"erase,omitempty"`
	// NoErase records the operator's --no-erase.
	NoErase bool `json:"no_erase,omitempty"`
	// KeptNode is true when the node stays in Ironic (retire.keep_node).
	KeptNode bool `json:"kept_node,omitempty"`
	// Archived names the vault item holding the BMC credential until
	// ArchivedUntil.
	Archived      string    `json:"archived,omitempty"`
	ArchivedUntil time.Time `json:"archived_until,omitzero"`
	// Phases lists each phase in order with what became of it.
	Phases []PhaseRecord `json:"phases"`
	// Deliveries are the extension tasks' deliveries of the run's events.
	Deliveries []Delivery `json:"deliveries,omitempty"`
	// Failure is set when the retirement failed.
	Failure *hostforge.Failure `json:"failure,omitempty"`
}

// PhaseRecord is one phase's fate in a run.
type PhaseRecord struct {
	Phase string `json:"phase"`
	// Status is "done", "skipped" or "failed".
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

// Retire is the retirement workflow body without extensions: Workflow{}.Run.
func Retire(ctx context.Context, rt flow.Runtime, req Request) (Result, error) {
	return Workflow{}.Run(ctx, rt, req)
}

// Workflow is the retirement body, written once against flow.Runtime. Its
// Announce fires the run's events on the same runtime (nil: a request
// whose site has events fails with RETIRE_NOT_WIRED before anything is
// touched).
type Workflow struct {
	Announce Announcer
}

// execution is one execution of the body.
type execution struct {
	rt       flow.Runtime
	steps    flow.Runner
	req      Request
	announce Announcer
	site     SiteConfig
	dev      intent.Device
	journal  Journal
	instance string
	node     ironic.RetireGateOut
	lines    []string
	res      Result
}

// Run retires one device. It returns the Result in every case, and the
// Failure as the error when the retirement failed; every error is a
// *hostforge.Failure. Nothing is written before the gate passed: the
// NetBox status, the journal and the Ironic node (refused with
// RETIRE_NODE_IN_USE when a tenant holds it) are read first.
func (w Workflow) Run(ctx context.Context, rt flow.Runtime, req Request) (Result, error) {
	x := &execution{rt: rt, steps: flow.Runner{RT: rt, Policy: req.Policy()}, req: req, announce: w.Announce,
		site: req.Snapshot.WithDefaults(), res: Result{Device: req.Device, Run: req.Run, NoErase: req.Params.NoErase}}
	err := x.run(ctx)
	if err != nil {
		_, f, wt := hostforge.Classify(err)
		if f == nil {
			f = hostforge.Unclassified.New("wait escaped the workflow: %v", wt)
		}
		x.res.Failure, x.res.Retired = f, false
		return x.res, f
	}
	x.res.Retired = true
	return x.res, nil
}

func (x *execution) record(phase, status, note string) {
	x.res.Phases = append(x.res.Phases, PhaseRecord{Phase: phase, Status: status, Note: note})
}

// fail records a phase's failure and returns err.
func (x *execution) fail(phase string, err error) error {
	x.record(phase, "failed", hostforge.CodeOf(err))
	return err
}

func (x *execution) run(ctx context.Context) error {
	if err := x.req.validate(); err != nil {
		return x.fail(PhaseGate, err)
	}
	if x.site.Events && x.announce == nil {
		return x.fail(PhaseGate, NotWired.At(PhaseGate).New("device %s: the site fires extension events, but the workflow has no announcer", x.req.Device))
	}
	if err := x.gate(ctx); err != nil {
		return x.fail(PhaseGate, err)
	}
	steps := []struct {
		phase string
		fn    func(context.Context) (status, note string, err error)
	}{
		{PhaseErase, x.erase},
		{PhaseIronic, x.removeNode},
		{PhaseDHCP, x.dhcp},
		{PhaseBMC, x.bmc},
		{PhaseLedger, x.ledger},
		{PhaseNetBox, x.netbox},
		{PhaseEvents, x.events},
	}
	for _, s := range steps {
		status, note, err := s.fn(ctx)
		if err != nil {
			return x.fail(s.phase, err)
		}
		x.record(s.phase, status, note)
	}
	return nil
}

// gate reads NetBox and Ironic and decides, writing nothing.
func (x *execution) gate(ctx context.Context) error {
	var rd ReadOut
	if err := x.steps.Run(ctx, StepRead, ReadIn{Device: x.req.Device}, &rd); err != nil {
		return err
	}
	x.dev, x.journal = rd.Device, rd.Journal
	switch x.dev.Status {
	case intent.StatusDecommissioning:
	case intent.StatusOffline:
		if last := x.journal.LastRetired(); last != "" {
			// Set offline by a retirement: this run resumes it.
			x.res.Run, x.res.Resumed = last, last != x.req.Run
		} else if !x.req.Params.Force {
			return DeviceOffline.New("device %s is offline and its journal names no retirement", x.dev.Name)
		}
	default:
		if !x.dev.Status.Known() {
			return DataInvalid.New("device %s: status: %q is not a NetBox device status", x.dev.Name, x.dev.Status)
		}
		return StatusIneligible.New("device %s is %s in NetBox; only a decommissioning device is retired", x.dev.Name, x.dev.Status)
	}
	if x.site.ConfigureBMC && x.dev.OOBIP == "" {
		return DataInvalid.New("device %s: oob_ip: no out-of-band address; the BMC's retirement needs one", x.dev.Name)
	}
	if !x.site.IronicEnrol {
		return nil
	}
	inst, err := x.req.route()
	if err != nil {
		return err
	}
	x.instance, x.res.Instance = inst, inst
	in := IronicGateIn{Instance: inst, In: ironic.RetireIn{Name: x.dev.Name, Inventory: x.site.Events}}
	if err := x.ironicRun(ctx, StepIronicGate, in, &x.node, nil); err != nil {
		return err
	}
	x.res.Node = x.node.Node.UUID
	return nil
}

func (x *execution) lockMeter(ctx context.Context, deadline time.Time) *flow.Meter {
	m := x.steps.Policy.Meter(ironic.WaitNodeLocked)
	if !deadline.IsZero() {
		m.Clamp(deadline.Sub(x.rt.Now(ctx)))
	}
	return m
}

// ironicRun runs one Ironic step until it is done or fails; node_locked
// waits spend the meter given (a fresh one when nil).
func (x *execution) ironicRun(ctx context.Context, step string, in, out any, lock *flow.Meter) error {
	if lock == nil {
		lock = x.lockMeter(ctx, time.Time{})
	}
	return x.steps.Once(ctx, step, in, out, lock)
}

// erase runs the erase within the erase deadline; RETIRE_ERASE_FAILED
// (clean failed) reruns the attempt, whose first call recovers the node,
// within the attempt budget.
func (x *execution) erase(ctx context.Context) (string, string, error) {
	switch {
	case !x.site.IronicEnrol:
		x.res.Erase = "none (no Ironic enrolment at this site)"
		return "skipped", "enrollment_ironic_enrol is off", nil
	case x.req.Params.NoErase:
		x.res.Erase = "skipped (--no-erase)"
		x.lines = append(x.lines, "erase: skipped (--no-erase)")
		return "skipped", "--no-erase", nil
	case !x.node.Present:
		x.res.Erase = "none (no node)"
		return "skipped", "no Ironic node", nil
	case x.node.Retired():
		x.res.Erase = "none (kept by an earlier retirement)"
		return "skipped", "node kept by an earlier retirement", nil
	}
	deadline := x.rt.Now(ctx).Add(x.site.EraseDeadline)
	steps := x.site.Erase.Steps()
	for attempt := 1; ; attempt++ {
		out, err := x.eraseAttempt(ctx, steps, deadline)
		if err == nil {
			if out.Erased {
				x.res.Erase = string(x.site.Erase)
				x.lines = append(x.lines, "erase: "+string(x.site.Erase)+" (manual clean "+stepList(steps)+")")
				return "done", out.Note, nil
			}
			x.res.Erase = "none (" + out.Note + ")"
			return "skipped", out.Note, nil
		}
		if hostforge.CodeOf(err) != ironic.EraseFailed.Code || attempt >= x.steps.Policy.Attempts() {
			return "", "", err
		}
		pause := x.steps.Policy.RetryAfter(attempt)
		if deadline.Sub(x.rt.Now(ctx)) < pause {
			return "", "", err
		}
		if err := x.rt.Sleep(ctx, pause); err != nil {
			return "", "", err
		}
	}
}

func (x *execution) eraseAttempt(ctx context.Context, steps []ironic.CleanStep, deadline time.Time) (ironic.EraseOut, error) {
	in := IronicEraseIn{Instance: x.instance, In: ironic.EraseIn{Name: x.dev.Name, Steps: steps, Deadline: deadline}}
	lock := x.lockMeter(ctx, deadline)
	var out ironic.EraseOut
	for {
		out = ironic.EraseOut{}
		if err := x.ironicRun(ctx, StepErase, &in, &out, lock); err != nil {
			return out, err
		}
		in.In.Progress = out.Progress
		if out.Done {
			return out, nil
		}
		if err := x.rt.Sleep(ctx, out.Next); err != nil {
			return out, err
		}
	}
}

func stepList(steps []ironic.CleanStep) string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

// removeNode deletes (or keeps) the node, polling while a manage it
// requested settles.
func (x *execution) removeNode(ctx context.Context) (string, string, error) {
	if !x.site.IronicEnrol {
		return "skipped", "enrollment_ironic_enrol is off", nil
	}
	if !x.node.Present {
		x.lines = append(x.lines, "Ironic: no node")
		return "done", "no node", nil
	}
	in := IronicRemoveIn{Instance: x.instance, In: ironic.RemoveIn{Name: x.dev.Name, KeepNode: x.site.KeepNode}}
	lock := x.lockMeter(ctx, time.Time{})
	start := x.rt.Now(ctx)
	for {
		var out ironic.RemoveOut
		if err := x.ironicRun(ctx, StepRemoveNode, &in, &out, lock); err != nil {
			return "", "", err
		}
		if out.Done {
			x.res.KeptNode = out.Kept
			if out.Kept {
				x.lines = append(x.lines, fmt.Sprintf("Ironic: node %s kept on %s, manageable, in maintenance (retired)", x.node.Node.UUID, x.instance))
			} else {
				x.lines = append(x.lines, fmt.Sprintf("Ironic: node %s deleted from %s", x.node.Node.UUID, x.instance))
			}
			return "done", out.Note, nil
		}
		if x.rt.Now(ctx).Sub(start) > x.site.EraseDeadline {
			return "", "", ironic.RetireNeedsReview.At(PhaseIronic).New("node %s did not settle for its removal within %s (last: %s)", x.dev.Name, x.site.EraseDeadline, out.Note)
		}
		if err := x.rt.Sleep(ctx, out.Next); err != nil {
			return "", "", err
		}
	}
}

func (x *execution) dhcp(ctx context.Context) (string, string, error) {
	if !x.site.ConfigureDHCP {
		return "skipped", "enrollment_configure_dhcp is off", nil
	}
	var out dhcp.Result
	if err := x.steps.Run(ctx, StepDHCP, DHCPIn{Hostname: x.dev.Name}, &out); err != nil {
		return "", "", err
	}
	if out.Changed {
		x.lines = append(x.lines, "DHCP: reservation removed ("+out.Path+")")
		return "done", "reservation removed", nil
	}
	x.lines = append(x.lines, "DHCP: no reservation")
	return "done", "no reservation", nil
}

func (x *execution) bmc(ctx context.Context) (string, string, error) {
	if !x.site.ConfigureBMC {
		return "skipped", "enrollment_configure_bmc is off", nil
	}
	t := bmc.RetireTarget{Device: x.dev.Name, Address: x.dev.OOBIP, AdminItem: bmc.AdminItem(x.dev.Name),
		MonitoringItem: x.site.MonitoringItem, Retention: x.site.ArchiveRetention, Run: x.res.Run}
	var out bmc.RetireResult
	if err := x.steps.Run(ctx, StepBMC, t, &out); err != nil {
		return "", "", err
	}
	x.res.Archived, x.res.ArchivedUntil = out.Archived, out.ArchivedUntil
	note := "monitoring user " + out.MonitoringUser
	if out.Archived != "" {
		note += "; credential archived as " + out.Archived + " until " + out.ArchivedUntil.UTC().Format(time.RFC3339)
	}
	x.lines = append(x.lines, "BMC: "+note)
	return "done", note, nil
}

func (x *execution) ledger(ctx context.Context) (string, string, error) {
	if !x.site.Ledger {
		return "skipped", "no ledger at this site", nil
	}
	var out LedgerOut
	if err := x.steps.Run(ctx, StepLedger, LedgerIn{Device: x.dev.Name, Identity: x.req.Identity, Run: x.res.Run}, &out); err != nil {
		return "", "", err
	}
	switch {
	case !out.Known:
		return "done", "no record", nil
	case out.Replaced != "":
		return "done", "identity replaced (" + out.Replaced + "): left untouched", nil
	case out.Cleared:
		x.lines = append(x.lines, "ledger: completion proof and platform class cleared")
		return "done", "proof and platform class cleared", nil
	}
	return "done", "nothing to clear", nil
}

func (x *execution) netbox(ctx context.Context) (string, string, error) {
	var out NetBoxOut
	if err := x.steps.Run(ctx, StepNetBox, NetBoxIn{Device: x.dev.Name, Run: x.res.Run, Lines: x.lines}, &out); err != nil {
		return "", "", err
	}
	if out.Changed {
		return "done", string(out.Before) + " → offline", nil
	}
	return "done", "left offline", nil
}

// events fires serverDecommissioned, then serverDeleteDNS, unless the run
// announced itself already; it records the announcement once every
// delivery succeeded.
func (x *execution) events(ctx context.Context) (string, string, error) {
	if !x.site.Events {
		return "skipped", "no extensions at this site", nil
	}
	if x.journal.HasAnnounced(x.res.Run) {
		return "done", "announced earlier", nil
	}
	host := Host{Device: x.dev, Instance: x.instance, Node: x.node.Node.UUID, Inventory: x.node.Inventory,
		BMCHostname: bmc.Hostname(x.dev.Name), BMCAddress: x.dev.OOBIP, Zone: x.site.DNSZone}
	var undelivered []string
	for _, stage := range Stages {
		dels, err := x.announce(ctx, x.rt, Announcement{ID: eventID(x.res.Run, stage), Stage: stage, Host: host})
		x.res.Deliveries = append(x.res.Deliveries, dels...)
		if err != nil {
			return "", "", err
		}
		for _, d := range dels {
			if d.Status == DeliveryFailed {
				undelivered = append(undelivered, d.Extension+"/"+d.Task+" ("+d.Stage+", "+d.Code+")")
			}
		}
	}
	if len(undelivered) > 0 {
		return "", "", EventsUndelivered.New("device %s: run %s: %s", x.dev.Name, x.res.Run, strings.Join(undelivered, "; "))
	}
	var out AnnouncedOut
	if err := x.steps.Run(ctx, StepAnnounced, AnnouncedIn{Device: x.dev.Name, Run: x.res.Run, Stages: Stages}, &out); err != nil {
		return "", "", err
	}
	return "done", fmt.Sprintf("%d deliveries", len(x.res.Deliveries)), nil
}
