package fleetsim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// CheckOptions tune Check.
type CheckOptions struct {
	// Wrap, when set, changes the executor before each run — the suite's own
	// tests use it to plant a deliberately broken client and see it caught.
	Wrap func(f *Fleet, e *enrollment.Executor)
	// NoStepChecks checks the invariants only between runs, not after every
	// step (faster, weaker).
	NoStepChecks bool
	// Table is the outcome table (default Outcomes).
	Table *OutcomeTable
}

// Verdict is what one schedule's check found.
type Verdict struct {
	// Problems are the broken promises; none on success.
	Problems []string `json:"problems"`
	// Hosts is the schedule's fleet size.
	Hosts int `json:"hosts"`
	// FailedFaulted counts hosts that failed in the faulted run.
	FailedFaulted int `json:"failed_faulted"`
	// Unclassified counts UNCLASSIFIED failures and panics, in any run.
	Unclassified int `json:"unclassified"`
	// Unexpected counts failures the outcome table does not explain.
	Unexpected int `json:"unexpected"`
	// RerunAsExpected counts hosts that, once the faults cleared, ended as
	// the table says (healthy: converged; broken: their breakage's code).
	RerunAsExpected int `json:"rerun_as_expected"`
	// Crashes counts step attempts whose worker died.
	Crashes int `json:"crashes"`
	// Rotations counts BMCs whose admin password was rotated.
	Rotations int `json:"rotations"`
	// Codes counts the faulted run's failure codes.
	Codes map[string]int `json:"codes,omitempty"`
}

// Check runs one schedule and returns every broken promise it found (none
// on success); CheckSchedule says more.
func Check(ctx context.Context, s Schedule, o CheckOptions) []string {
	return CheckSchedule(ctx, s, o).Problems
}

// CheckSchedule runs one schedule:
//
//  1. The faulted run: the schedule's call faults, lost answers, crashes
//     and host events strike as it goes. Every host ends in the end state
//     or in a classified Failure (never UNCLASSIFIED, never a panic) that
//     the outcome table allows for the schedule's causes, with the table's
//     owner and retryability; the invariants hold after every step, and
//     the password invariant at every crash too.
//  2. The faults clear and the fleet reruns: every host ends as the table
//     says — healthy hosts in the end state, broken ones with their
//     breakage's code.
//  3. A last run of the converged hosts — one of them now owned by Nova,
//     one owned by Nova but stuck in clean failed, one left in deploy
//     failed by an operator — writes nothing anywhere, never touches a
//     Nova-owned node and never recovers the failed one.
//
// Throughout, NetBox keeps every field the SDK does not own (DiffNetBox).
func CheckSchedule(ctx context.Context, s Schedule, o CheckOptions) Verdict {
	if o.Table == nil {
		o.Table = &Outcomes
	}
	c := &checker{s: s, o: o, seen: map[string]bool{}, v: Verdict{Codes: map[string]int{}}}
	c.run(ctx)
	c.v.Problems = c.problems
	return c.v
}

type checker struct {
	s Schedule
	o CheckOptions
	v Verdict

	mu       sync.Mutex
	problems []string
	seen     map[string]bool

	f       *Fleet
	plan    *crashPlan
	before  *fakes.NetBoxState
	monitor map[string]string
	rootPin map[string]bool // nodes seen with a root-device hint
	// dhcpHeld are the host files that held a valid reservation at some
	// durable point: none may go missing.
	dhcpHeld map[string]string
	// owned are Nova-owned nodes and the writes they had when Nova took them.
	owned map[string]int
	// dhcpWasUp is whether the DHCP service ran after the last step.
	dhcpWasUp bool
}

func (c *checker) fail(format string, args ...any) {
	c.report("", fmt.Sprintf(format, args...))
}

// report records a problem once, under the first moment it was seen.
func (c *checker) report(when, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[what] {
		return
	}
	c.seen[what] = true
	if when != "" {
		what = when + ": " + what
	}
	c.problems = append(c.problems, what)
}

func (c *checker) options(f *Fleet, hook func(flow.Event)) Options {
	e := f.Executor(nil)
	if c.o.Wrap != nil {
		c.o.Wrap(f, e)
	}
	o := Options{Exec: e, PlatformClassOff: c.s.PlatformClassOff, OnEvent: hook}
	if !c.s.Concurrent {
		o.Workers = 1
	}
	return f.Prepare(o)
}

func (c *checker) run(ctx context.Context) {
	f, err := Build(c.s.Fleet)
	if err != nil {
		c.fail("building the fleet: %v", err)
		return
	}
	c.f = f
	c.v.Hosts = len(f.Names)
	c.plan = newCrashPlan()
	c.before = SnapshotNetBox(f.Site.NetBox)
	c.rootPin = map[string]bool{}
	c.dhcpHeld = map[string]string{}
	c.owned = map[string]int{}
	c.dhcpWasUp = f.Site.DHCP.Active()
	c.monitor, _ = f.Site.Vault.Peek(fakes.MonitoringItem)
	table := c.o.Table

	// 1. The faulted run.
	var steps atomic.Int64
	var fmu sync.Mutex
	faultsDue := append([]Fault(nil), c.s.Faults...)
	var eventsDue []HostEvent
	for _, ev := range c.s.Events {
		if ev.Before {
			ev.Apply(f, ev.Host)
		} else {
			eventsDue = append(eventsDue, ev)
		}
	}
	c.noteDHCP("")
	inject := func(at int64) {
		fmu.Lock()
		defer fmu.Unlock()
		kept := faultsDue[:0]
		for _, ft := range faultsDue {
			switch {
			case int64(ft.AtStep) > at:
				kept = append(kept, ft)
			case ft.Kind == FaultCrash:
				c.plan.arm(ft.Op, ft.N)
			case ft.Kind.Lost():
				f.Site.InjectLost(ft.System, ft.Op, ft.N, ft.Kind.Err(ft.System, ft.Op))
			default:
				f.Site.Inject(ft.System, ft.Op, ft.N, ft.Kind.Err(ft.System, ft.Op))
			}
		}
		faultsDue = kept
	}
	plant := func(device string) {
		fmu.Lock()
		defer fmu.Unlock()
		kept := eventsDue[:0]
		for _, ev := range eventsDue {
			if ev.Host == device && f.node(device) != nil {
				ev.Apply(f, device)
			} else {
				kept = append(kept, ev)
			}
		}
		eventsDue = kept
	}
	hook := func(e flow.Event) {
		if e.Kind != "step" {
			return
		}
		if cr := c.plan.crashed(e.Subject); cr != nil {
			// The worker died: what it left is no durable point of the
			// workflow, but no password may be lost even here.
			c.passwords(fmt.Sprintf("faulted run, %s of %s crashed %s", e.Step, e.Subject, cr.Where()))
			return
		}
		inject(steps.Add(1))
		plant(e.Subject)
		c.afterStep("faulted run", e)
	}
	inject(0)
	opts := c.options(f, hook)
	opts.crashes = c.plan
	faulted := f.Run(ctx, opts)
	c.v.Crashes = c.plan.Tripped()
	for _, h := range faulted.Outcomes {
		c.classified("faulted run", h)
		if h.Failure != nil {
			c.v.FailedFaulted++
			c.v.Codes[h.Failure.Code]++
		}
		if h.Panic == nil {
			if err := match(h.Failure, table.Allowed(c.s, f, h.Device)); err != nil {
				c.v.Unexpected++
				c.fail("faulted run: %s ended %v; it said: %s", h.Device, err, describe(h))
			}
		}
	}
	c.invariants("after the faulted run", true, "")

	// 2. Faults clear; rerun.
	f.Site.ClearFaults()
	c.plan.disarm()
	for _, ev := range c.s.Events {
		if ev.Clear != nil && (ev.Before || f.node(ev.Host) != nil) {
			ev.Clear(f, ev.Host)
		}
	}
	stepHook := func(e flow.Event) {
		if e.Kind == "step" {
			c.afterStep("rerun", e)
		}
	}
	opts = c.options(f, stepHook)
	rerun := f.Run(ctx, opts)
	var converged []string
	for _, h := range rerun.Outcomes {
		c.classified("rerun", h)
		if h.Panic != nil {
			continue
		}
		want := table.Final(c.s, f, h.Device)
		if err := match(h.Failure, []Outcome{want}); err != nil {
			if want == Converges {
				c.fail("rerun: %s did not converge after the faults cleared: %s", h.Device, describe(h))
			} else {
				c.fail("rerun: broken host %s ended %v; it said: %s", h.Device, err, describe(h))
			}
		} else {
			c.v.RerunAsExpected++
		}
		if EndedOK(h, rerun.Config.IronicEnrol) {
			converged = append(converged, h.Device)
		}
	}
	c.invariants("after the rerun", true, "")
	c.dhcpUp("after the rerun")
	for _, name := range f.Names {
		if m, ok := f.Site.BMCs.Of(name); ok && m.PasswordChanges(fakes.FakeFactoryUser) > 0 {
			c.v.Rotations++
		}
	}

	// 3. The converged hosts once more: Nova takes one, Nova holds another
	// whose cleaning failed, an operator's deploy fails on a third; nothing
	// may be written.
	if len(converged) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(c.s.Seed, 0x6e6f7661))
	rng.Shuffle(len(converged), func(i, j int) { converged[i], converged[j] = converged[j], converged[i] })
	var nova, stuck, deployFailed string
	if rerun.Config.IronicEnrol {
		nova = converged[0]
		if ir, n := f.nodeOf(nova); n != nil {
			ir.SetState(nova, ironic.StateActive)
			ir.SetInstance(nova, "nova-instance-"+nova)
			c.owned[nova] = len(ir.Writes(nova))
		}
		if len(converged) > 1 && rng.IntN(2) == 0 {
			stuck = converged[1]
			if ir, n := f.nodeOf(stuck); n != nil {
				// An instance whose teardown failed in cleaning: the
				// scheduler still holds the node.
				ir.SetState(stuck, ironic.StateCleanFailed)
				ir.SetMaintenanceFlag(stuck, true, "clean failure")
				ir.SetInstance(stuck, "nova-instance-"+stuck)
				c.owned[stuck] = len(ir.Writes(stuck))
			}
		}
		if rest := converged[len(c.owned):]; len(rest) > 0 && rng.IntN(2) == 0 {
			deployFailed = rest[0]
			if ir, n := f.nodeOf(deployFailed); n != nil {
				ir.SetState(deployFailed, ironic.StateDeployFailed)
			}
		}
	}
	sort.Strings(converged)
	before := f.Site.Calls()
	opts = c.options(f, stepHook)
	opts.Hosts = converged
	last := f.Run(ctx, opts)
	for sys, t := range f.Site.Calls().Sub(before) {
		if t.Writes > 0 {
			c.fail("converged rerun: %d write(s) to %s: %v", t.Writes, sys, t.WriteOps)
		}
	}
	for _, h := range last.Outcomes {
		c.classified("converged rerun", h)
		switch h.Device {
		case deployFailed:
			if h.Failure == nil {
				c.fail("converged rerun: %s in deploy failed did not stop the workflow", h.Device)
			}
			if _, n := f.nodeOf(h.Device); n != nil && n.ProvisionState != ironic.StateDeployFailed {
				c.fail("converged rerun: %s was moved out of deploy failed (now %s): only a human recovers it", h.Device, n.ProvisionState)
			}
		case nova:
			if h.Failure != nil || !h.Result.Enrolled {
				c.fail("converged rerun: Nova-owned %s should be enrolment-satisfied: %s", h.Device, describe(h))
			}
		case stuck:
			if err := match(h.Failure, []Outcome{outcome(ironic.NodeOwned.Code, hostforge.OwnerInfraEng, false)}); err != nil {
				c.fail("converged rerun: Nova-owned %s in clean failed ended %v", h.Device, err)
			}
		default:
			if !EndedOK(h, last.Config.IronicEnrol) {
				c.fail("converged rerun: %s left the end state: %s", h.Device, describe(h))
			}
		}
	}
	c.invariants("after the converged rerun", true, "")
	c.dhcpUp("after the converged rerun")
}

func describe(h HostOutcome) string {
	switch {
	case h.Panic != nil:
		return fmt.Sprintf("panic: %v", h.Panic)
	case h.Failure != nil:
		return h.Failure.Error()
	}
	return fmt.Sprintf("enrolled=%v provision_state=%q", h.Result.Enrolled, h.Result.ProvisionState)
}

// classified: every host ends in the end state or a classified Failure.
func (c *checker) classified(pass string, h HostOutcome) {
	switch {
	case h.Panic != nil:
		c.v.Unclassified++
		c.fail("%s: %s panicked: %v", pass, h.Device, h.Panic)
	case h.Failure == nil:
		if !h.Result.Enrolled {
			c.fail("%s: %s neither enrolled nor failed", pass, h.Device)
		}
	case h.Failure.Code == hostforge.Unclassified.Code:
		c.v.Unclassified++
		c.fail("%s: %s failed UNCLASSIFIED: %v", pass, h.Device, h.Failure)
	default:
		spec, ok := hostforge.Lookup(h.Failure.Code)
		if !ok {
			c.fail("%s: %s failed with undeclared code %s", pass, h.Device, h.Failure.Code)
		} else if spec.Owner == "" || spec.Action == "" {
			c.fail("%s: %s failed with %s, which names no owner or action", pass, h.Device, h.Failure.Code)
		}
	}
}

// afterStep checks a durable point: the state a step that completed left.
func (c *checker) afterStep(pass string, e flow.Event) {
	if e.Step == enrollment.StepConfigureDHCP {
		if e.Outcome == hostforge.Done {
			c.noteDHCP(e.Subject)
		}
		c.dhcpOutcome(fmt.Sprintf("%s, after %s of %s", pass, e.Step, e.Subject), e.Failure)
	}
	c.mu.Lock()
	c.dhcpWasUp = c.f.Site.DHCP.Active()
	c.mu.Unlock()
	if c.o.NoStepChecks {
		return
	}
	when := fmt.Sprintf("%s, after %s of %s", pass, e.Step, e.Subject)
	host := ""
	if c.s.Concurrent {
		// Only the step's host is at a durable point; the others may be in
		// the middle of a step.
		host = e.Subject
	}
	c.invariants(when, false, host)
}

// invariants checks the state every durable point must hold: NetBox data
// intact (the whole of it between runs, the devices' owned fields after a
// step), the Ironic never-do list, PXE on one port, the passwords, the
// DHCP reservations — of every host, or of host alone when it is set.
func (c *checker) invariants(when string, full bool, host string) {
	f := c.f
	if full {
		now := SnapshotNetBox(f.Site.NetBox)
		for _, d := range DiffNetBox(c.before, now, intent.TagIPMIExporter, intent.DefaultIronicTag) {
			c.report(when, d)
		}
	} else {
		for _, d := range c.quickNetBox() {
			c.report(when, d)
		}
	}
	for _, name := range f.Names {
		if host != "" && name != host {
			continue
		}
		ir, n := f.nodeOf(name)
		if n == nil {
			continue
		}
		if b, broken := f.Broken[name]; broken && n.ProvisionState == ironic.StateAvailable && (!b.NetBoxBreakage() || !c.s.PlatformClassOff) {
			c.report(when, fmt.Sprintf("broken host %s (%s) reached available", name, b))
		}
		if n.ProvisionState == ironic.StateCleanFailed && !n.Maintenance {
			c.report(when, fmt.Sprintf("%s is clean failed with maintenance off: a cleared maintenance flag was not restored", name))
		}
		for _, key := range []string{"redfish_username", "redfish_password", "ipmi_username", "ipmi_password"} {
			v := ir.DriverInfoSecret(name, key)
			if v != "" && c.monitor != nil && (v == c.monitor[bmc.FieldPassword] || v == c.monitor[bmc.FieldUsername]) {
				c.report(when, fmt.Sprintf("%s: Ironic driver_info %s holds the shared monitoring credential", name, key))
			}
		}
		_, pinned := n.Properties["root_device"]
		c.mu.Lock()
		had := c.rootPin[name]
		c.rootPin[name] = had || pinned
		w, owned := c.owned[name]
		c.mu.Unlock()
		if had && !pinned {
			c.report(when, fmt.Sprintf("%s lost its root-device hint (not a software-RAID node)", name))
		}
		if owned {
			if got := ir.Writes(name); len(got) != w {
				c.report(when, fmt.Sprintf("Nova-owned %s was written: %v", name, got[w:]))
			}
		}
		c.pxe(when, ir, name)
	}
	c.passwords(when)
	c.reservations(when, host)
}

// quickNetBox checks what a step may change on a host's device — status,
// tags, platform_class — without copying the whole state.
func (c *checker) quickNetBox() []string {
	var out []string
	c.f.Site.NetBox.View(func(st *fakes.NetBoxState) {
		for id, b := range c.before.Devices {
			a := st.Devices[id]
			if a == nil || len(b.TagIDs) == 0 {
				continue // switches carry no tags; the full diff covers them
			}
			if a.Status != b.Status && (b.Status != string(intent.StatusStaged) || a.Status != string(intent.StatusActive)) {
				out = append(out, fmt.Sprintf("netbox: device %s status %s → %s; enrollment only moves staged → active", b.Name, b.Status, a.Status))
			}
			has := map[int]bool{}
			for _, t := range a.TagIDs {
				has[t] = true
			}
			for _, t := range b.TagIDs {
				if !has[t] {
					out = append(out, fmt.Sprintf("netbox: device %s lost tag %s", b.Name, tagSlug(c.before, t)))
				}
			}
			bpc, _ := b.CustomFields["platform_class"].(string)
			apc, _ := a.CustomFields["platform_class"].(string)
			if bpc != "" && apc != bpc {
				out = append(out, fmt.Sprintf("netbox: device %s: populated platform_class %q was overwritten with %q", b.Name, bpc, apc))
			}
		}
	})
	return out
}

// pxe: PXE on exactly one port, the first frontend NIC's.
func (c *checker) pxe(when string, ir *fakes.Ironic, name string) {
	h, _ := c.f.Site.Host(name)
	var pxe []string
	for _, p := range ir.Ports(name) {
		if p.PXEEnabled {
			pxe = append(pxe, p.Address)
		}
	}
	sort.Strings(pxe)
	if len(pxe) > 1 {
		c.report(when, fmt.Sprintf("%s has PXE on %d ports %v", name, len(pxe), pxe))
	}
	if len(pxe) == 1 && h != nil && len(h.NICs) > 0 && pxe[0] != h.NICs[0].MAC {
		c.report(when, fmt.Sprintf("%s PXE-boots from %s, not its first frontend NIC %s", name, pxe[0], h.NICs[0].MAC))
	}
}

// passwords: the vault never loses the only copy of a working password.
// The password each BMC takes now — and the one a reset-to-apply BMC will
// take after its next cold reset — is in the host's vault item (as its
// password or pending_password) or is the site's factory password.
func (c *checker) passwords(when string) {
	f := c.f
	for _, name := range f.Names {
		m, ok := f.Site.BMCs.Of(name)
		if !ok {
			continue
		}
		// The BMC first, then the vault: a rotation writes the vault ahead
		// of the BMC, so a step running meanwhile (concurrent schedules)
		// cannot make a kept promise look broken.
		now, staged := m.Password(fakes.FakeFactoryUser), m.StagedPassword(fakes.FakeFactoryUser)
		factory, _ := f.Site.Vault.Peek(fakes.FactoryItem)
		admin, _ := f.Site.Vault.Peek(fakes.AdminItem(name))
		held := map[string]bool{factory[bmc.FieldPassword]: true, admin[bmc.FieldPassword]: true, admin[bmc.FieldPendingPassword]: true}
		delete(held, "")
		if now != "" && !held[now] {
			c.report(when, fmt.Sprintf("the BMC of %s takes an admin password no vault item holds: its only copy was lost", name))
		}
		if staged != "" && !held[staged] {
			c.report(when, fmt.Sprintf("the BMC of %s applies on its next cold reset an admin password no vault item holds: its only copy was lost", name))
		}
	}
}

// noteDHCP records the host file of a host whose DHCP step just completed
// (host "": every host file there is, before the run) as a valid
// reservation.
func (c *checker) noteDHCP(host string) {
	d := c.f.Site.DHCP
	cfg := d.Config()
	paths := d.Paths()
	if host != "" {
		paths = []string{c.f.dhcpFile(host)}
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, cfg.Dir+"/") || !strings.HasSuffix(p, cfg.Flavour.Extension()) || strings.Contains(p, "/"+dhcpStalePrefix) || strings.Contains(p, "/.") {
			continue
		}
		if _, ok := d.File(p); !ok {
			continue
		}
		c.mu.Lock()
		if _, ok := c.dhcpHeld[p]; !ok {
			b, _ := d.File(p)
			c.dhcpHeld[p] = string(b)
		}
		c.mu.Unlock()
	}
}

// reservations: a reservation the server held is never removed (a refused
// or failed change restores the host's previous file).
func (c *checker) reservations(when, host string) {
	c.mu.Lock()
	held := make([]string, 0, len(c.dhcpHeld))
	for p := range c.dhcpHeld {
		if host == "" || p == c.f.dhcpFile(host) {
			held = append(held, p)
		}
	}
	c.mu.Unlock()
	sort.Strings(held)
	for _, p := range held {
		if _, ok := c.f.Site.DHCP.File(p); !ok {
			c.report(when, fmt.Sprintf("the DHCP reservation %s, valid before, was removed", p))
		}
	}
}

// dhcpOutcome: a change the config test refused never restarts the
// service, so a service that ran keeps running; a failed restart rolls back
// and restarts the service on the restored file, and when that fails too
// the failure says DHCP is down. Concurrent schedules skip both: another
// host's change may restart the service between a step and this check.
func (c *checker) dhcpOutcome(when string, fl *hostforge.Failure) {
	c.mu.Lock()
	wasUp := c.dhcpWasUp
	c.mu.Unlock()
	if fl == nil || c.s.Concurrent || c.f.Site.DHCP.Active() {
		return
	}
	switch fl.Code {
	case dhcp.ConfigRejected.Code:
		if wasUp {
			c.report(when, "the DHCP service is down after a change its config test refused")
		}
	case dhcp.RestartFailed.Code, dhcp.ServiceInactive.Code:
		if !strings.Contains(fl.Message, "DHCP is down") && !strings.Contains(fl.Message, "DHCP may be down") {
			c.report(when, fmt.Sprintf("the DHCP service is down after a failed change whose failure does not say so: %s", fl.Message))
		}
	}
}

// dhcpUp: once the faults have cleared and the hosts reran, the DHCP
// service runs.
func (c *checker) dhcpUp(when string) {
	if !c.f.Site.DHCP.Active() {
		c.report(when, "the DHCP service is down")
	}
}

// nodeOf finds a host's Ironic node in whichever instance has it.
func (f *Fleet) nodeOf(name string) (*fakes.Ironic, *ironic.Node) {
	insts := make([]string, 0, len(f.Site.Ironic))
	for k := range f.Site.Ironic {
		insts = append(insts, k)
	}
	sort.Strings(insts)
	for _, k := range insts {
		ir := f.Site.Ironic[k]
		if n, ok := ir.Node(name); ok {
			return ir, &n
		}
	}
	return nil, nil
}

func (f *Fleet) node(name string) *ironic.Node {
	_, n := f.nodeOf(name)
	return n
}
