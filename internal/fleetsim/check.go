package fleetsim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
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
}

// Check runs one schedule and returns every broken promise it found (none
// on success):
//
//  1. A fault-free control run of the same fleet sets each host's expected
//     end: the end state, or the environmental failure of a broken host.
//  2. The faulted run: every host ends in the end state or in a classified
//     Failure (never UNCLASSIFIED, never a panic), and the invariants hold
//     after every step.
//  3. The faults clear and the fleet reruns: every host ends as the control
//     run said.
//  4. A last run of the converged hosts — one of them now owned by Nova,
//     one left in deploy failed by an operator — writes nothing anywhere,
//     never touches the Nova-owned node and never recovers the failed one.
//
// Throughout, NetBox keeps every field the SDK does not own (DiffNetBox).
func Check(ctx context.Context, s Schedule, o CheckOptions) []string {
	c := &checker{s: s, o: o, seen: map[string]bool{}}
	c.run(ctx)
	return c.problems
}

type checker struct {
	s Schedule
	o CheckOptions

	mu       sync.Mutex
	problems []string
	seen     map[string]bool

	f       *Fleet
	before  *fakes.NetBoxState
	monitor map[string]string
	rootPin map[string]bool // nodes seen with a root-device hint
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
	// 1. Control.
	control, err := Build(c.s.Fleet)
	if err != nil {
		c.fail("building the fleet: %v", err)
		return
	}
	copts := c.options(control, nil)
	ctrl := control.Run(ctx, copts)
	ironicOn := copts.SiteConfig.IronicEnrol
	expect := map[string]string{}
	for _, h := range ctrl.Outcomes {
		c.classified("control", h)
		switch {
		case EndedOK(h, ironicOn):
			expect[h.Device] = ""
		case h.Failure != nil:
			expect[h.Device] = h.Failure.Code
			if _, broken := control.Broken[h.Device]; !broken {
				c.fail("control: healthy host %s failed without any fault: %v", h.Device, h.Failure)
			}
		}
	}

	// 2. The faulted run.
	f, _ := Build(c.s.Fleet)
	c.f = f
	c.before = SnapshotNetBox(f.Site.NetBox)
	c.rootPin = map[string]bool{}
	c.monitor, _ = f.Site.Vault.Item(ctx, fakes.MonitoringItem)
	var steps atomic.Int64
	var fmu sync.Mutex
	faultsDue := append([]Fault(nil), c.s.Faults...)
	eventsDue := append([]HostEvent(nil), c.s.Events...)
	inject := func(at int64) {
		fmu.Lock()
		defer fmu.Unlock()
		kept := faultsDue[:0]
		for _, ft := range faultsDue {
			if int64(ft.AtStep) <= at {
				f.Site.Inject(ft.System, ft.Op, ft.N, ft.Kind.Err(ft.System, ft.Op))
			} else {
				kept = append(kept, ft)
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
		inject(steps.Add(1))
		plant(e.Subject)
		if !c.o.NoStepChecks {
			c.invariants(fmt.Sprintf("faulted run, after %s of %s", e.Step, e.Subject), false)
		}
	}
	inject(0)
	opts := c.options(f, hook)
	faulted := f.Run(ctx, opts)
	for _, h := range faulted.Outcomes {
		c.classified("faulted run", h)
	}
	c.invariants("after the faulted run", true)
	c.portInvariants("after the faulted run")

	// 3. Faults clear; rerun.
	for _, ft := range c.s.Faults {
		f.Site.Inject(ft.System, ft.Op, 0, nil)
	}
	for _, ev := range c.s.Events {
		if ev.Clear != nil && f.node(ev.Host) != nil {
			ev.Clear(f, ev.Host)
		}
	}
	stepHook := func(e flow.Event) {
		if e.Kind == "step" && !c.o.NoStepChecks {
			c.invariants(fmt.Sprintf("rerun, after %s of %s", e.Step, e.Subject), false)
		}
	}
	opts = c.options(f, stepHook)
	rerun := f.Run(ctx, opts)
	var converged []string
	for _, h := range rerun.Outcomes {
		c.classified("rerun", h)
		want, known := expect[h.Device]
		got := ""
		if !EndedOK(h, ironicOn) {
			got = "NOT_ENDED"
			if h.Failure != nil {
				got = h.Failure.Code
			}
		}
		switch {
		case !known:
		case got != want && want == "":
			c.fail("rerun: %s did not converge after the faults cleared: %s", h.Device, describe(h))
		case got != want:
			c.fail("rerun: broken host %s ended %q, but %q without faults", h.Device, got, want)
		}
		if got == "" {
			converged = append(converged, h.Device)
		}
	}
	c.invariants("after the rerun", true)
	c.portInvariants("after the rerun")

	// 4. The converged hosts once more: Nova takes one, an operator's deploy
	// fails on another; nothing may be written.
	if len(converged) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(c.s.Seed, 0x6e6f7661))
	var nova, deployFailed string
	novaWrites := 0
	if ironicOn {
		nova = converged[rng.IntN(len(converged))]
		if ir, n := f.nodeOf(nova); n != nil {
			ir.SetState(nova, ironic.StateActive)
			ir.SetInstance(nova, "nova-instance-"+nova)
			novaWrites = len(ir.Writes(nova))
		}
		if len(converged) > 1 && rng.IntN(2) == 0 {
			for deployFailed == "" || deployFailed == nova {
				deployFailed = converged[rng.IntN(len(converged))]
			}
			if ir, n := f.nodeOf(deployFailed); n != nil {
				ir.SetState(deployFailed, ironic.StateDeployFailed)
			}
		}
	}
	before := f.Site.Calls()
	opts = c.options(f, stepHook)
	opts.Hosts = converged
	last := f.Run(ctx, opts)
	for sys, t := range f.Site.Calls().Sub(before) {
		if t.Writes > 0 {
			c.fail("converged rerun: %d write(s) to %s: %v", t.Writes, sys, t.Ops)
		}
	}
	for _, h := range last.Outcomes {
		c.classified("converged rerun", h)
		switch h.Device {
		case deployFailed:
			if h.Failure == nil {
				c.fail("converged rerun: %s in deploy failed did not stop the workflow", h.Device)
			}
			if ir, n := f.nodeOf(h.Device); n != nil && n.ProvisionState != ironic.StateDeployFailed {
				_ = ir
				c.fail("converged rerun: %s was moved out of deploy failed (now %s): only a human recovers it", h.Device, n.ProvisionState)
			}
		case nova:
			if h.Failure != nil || !h.Result.Enrolled {
				c.fail("converged rerun: Nova-owned %s should be enrolment-satisfied: %s", h.Device, describe(h))
			}
			if ir, n := f.nodeOf(h.Device); n != nil {
				if w := ir.Writes(h.Device); len(w) != novaWrites {
					c.fail("converged rerun: Nova-owned %s was written: %v", h.Device, w[novaWrites:])
				}
			}
		default:
			if !EndedOK(h, ironicOn) {
				c.fail("converged rerun: %s left the end state: %s", h.Device, describe(h))
			}
		}
	}
	c.invariants("after the converged rerun", true)
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
		c.fail("%s: %s panicked: %v", pass, h.Device, h.Panic)
	case h.Failure == nil:
		if !h.Result.Enrolled {
			c.fail("%s: %s neither enrolled nor failed", pass, h.Device)
		}
	case h.Failure.Code == hostforge.Unclassified.Code:
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

// invariants checks the state every step must leave: NetBox data intact
// (the whole of it between runs, the devices' owned fields after a step),
// and the Ironic never-do list.
func (c *checker) invariants(when string, full bool) {
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
		c.mu.Unlock()
		if had && !pinned {
			c.report(when, fmt.Sprintf("%s lost its root-device hint (not a software-RAID node)", name))
		}
	}
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

// portInvariants: PXE on exactly one port, the first frontend NIC's.
func (c *checker) portInvariants(when string) {
	f := c.f
	for _, name := range f.Names {
		ir, n := f.nodeOf(name)
		if n == nil {
			continue
		}
		h, _ := f.Site.Host(name)
		var pxe []string
		for _, p := range ir.Ports(name) {
			if p.PXEEnabled {
				pxe = append(pxe, p.Address)
			}
		}
		sort.Strings(pxe)
		if len(pxe) > 1 {
			c.fail("%s: %s has PXE on %d ports %v", when, name, len(pxe), pxe)
		}
		if len(pxe) == 1 && h != nil && len(h.NICs) > 0 && pxe[0] != h.NICs[0].MAC {
			c.fail("%s: %s PXE-boots from %s, not its first frontend NIC %s", when, name, pxe[0], h.NICs[0].MAC)
		}
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
