package ironic_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// ironicCalls is what the phases asked of the fake Ironic since before:
// node reads, and every write by operation.
func (w *world) ironicCalls(before fakes.Calls) (reads int, writes map[string]int) {
	d := w.site.Calls().Sub(before)[fakes.SysIronic]
	return d.Ops["get_node"], d.WriteOps
}

// inspected takes the host through the inspection half (run_inspection
// off) and returns its last look at the node.
func (w *world) inspected(t *testing.T) *ironic.Sighting {
	t.Helper()
	out, err := w.inspect(t, func(in *ironic.InspectionIn) { in.Inspect = false })
	if err != nil {
		t.Fatal(err)
	}
	if out.Seen == nil || out.Seen.Node.UUID == "" || out.Seen.Node.ProvisionState != ironic.StateManageable || out.Seen.Node.PowerState != ironic.PowerOn {
		t.Fatalf("the inspection half ended without its look at the node: %+v", out.Seen)
	}
	return out.Seen
}

// The cleaning half starts on the inspection half's last look at the node
// when it is fresh: its first call writes (credentials, trait, provide)
// without reading the node first; its guard read was the inspection
// half's last poll. A look older than FreshLook — a rerun
// after a wait, a resumed workflow — is not trusted: the start reads.
func TestCleaningStartsOnAFreshSighting(t *testing.T) {
	for _, tt := range []struct {
		name  string
		age   time.Duration
		reads int
	}{
		{"just taken", 0, 0},
		{"as old as FreshLook", 2 * time.Second, 0},
		{"older than FreshLook", 3 * time.Second, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, fakes.HostSpec{})
			seen := w.inspected(t)
			w.site.Clock.Advance(tt.age)
			before := w.site.Calls()
			out, err := w.p.Cleaning(context.Background(), ironic.CleaningIn{Spec: w.spec, Deadline: w.site.Clock.Now().Add(time.Hour), Seen: seen})
			if err != nil || !out.Progress.Started {
				t.Fatalf("cleaning start: %+v %v", out, err)
			}
			reads, writes := w.ironicCalls(before)
			if reads != tt.reads {
				t.Errorf("%d node reads at the cleaning start, want %d", reads, tt.reads)
			}
			if writes["update_node"] != 1 || writes["provision"] != 1 {
				t.Errorf("writes %v, want one PATCH and provide", writes)
			}
			if n := w.node(t); n.ProvisionState != ironic.StateCleaning && n.ProvisionState != ironic.StateCleanWait {
				t.Errorf("node in %s after provide", n.ProvisionState)
			}
		})
	}
}

// A sighting answers the guards as a read does: a node it shows owned by
// Nova is never written (manageable with an instance: enrolment-satisfied,
// left alone; in enroll with one: refused), one it shows in flight is
// waited for, and one
// that needs recovery (clean failed) is read, since recovery restores the
// maintenance reason a sighting does not carry. A sighting from a clock
// ahead of this one proves nothing and is read past.
func TestSightingKeepsTheGuards(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	seen := w.inspected(t)
	now := w.site.Clock.Now()
	look := func(mod func(*ironic.NodeStatus)) *ironic.Sighting {
		s := &ironic.Sighting{At: now, Node: seen.Node}
		mod(&s.Node)
		return s
	}
	start := func(s *ironic.Sighting) (int, map[string]int, error) {
		before := w.site.Calls()
		_, err := w.p.Cleaning(context.Background(), ironic.CleaningIn{Spec: w.spec, Deadline: now.Add(time.Hour), Seen: s})
		reads, writes := w.ironicCalls(before)
		return reads, writes, err
	}

	reads, writes, err := start(look(func(n *ironic.NodeStatus) { n.InstanceUUID = "nova-instance" }))
	if err != nil || reads != 0 || len(writes) != 0 {
		t.Errorf("a satisfied node: %v, %d reads, writes %v; want nothing", err, reads, writes)
	}
	reads, writes, err = start(look(func(n *ironic.NodeStatus) { n.ProvisionState, n.InstanceUUID = ironic.StateEnroll, "nova-instance" }))
	wantCode(t, err, ironic.NodeOwned.Code)
	if reads != 0 || len(writes) != 0 {
		t.Errorf("an owned node: %d reads, writes %v; want none", reads, writes)
	}

	reads, writes, err = start(look(func(n *ironic.NodeStatus) {
		n.ProvisionState, n.TargetProvisionState = ironic.StateVerifying, ironic.StateManageable
	}))
	if wt, ok := hostforge.AsWait(err); !ok || wt.Reason != ironic.WaitStateUnstable {
		t.Errorf("a node in flight: %v, want a %s wait", err, ironic.WaitStateUnstable)
	}
	if reads != 0 || len(writes) != 0 {
		t.Errorf("a node in flight: %d reads, writes %v; want none", reads, writes)
	}

	w.ir.SetState(w.host.Name, ironic.StateCleanFailed)
	w.ir.SetMaintenanceFlag(w.host.Name, true, "clean failed")
	reads, _, _ = start(look(func(n *ironic.NodeStatus) { n.ProvisionState, n.Maintenance = ironic.StateCleanFailed, true }))
	if reads == 0 {
		t.Error("a clean failed node was recovered without a read")
	}
	if n := w.node(t); n.ProvisionState == ironic.StateCleanFailed && !n.Maintenance {
		t.Error("clean failed node left without maintenance")
	}

	w.ir.SetState(w.host.Name, ironic.StateManageable)
	ahead := look(func(*ironic.NodeStatus) {})
	ahead.At = now.Add(time.Minute)
	if reads, _, err = start(ahead); err != nil || reads != 1 {
		t.Errorf("a sighting from a clock ahead: %d reads (%v), want 1", reads, err)
	}
}

// Convergence on a sighting learns the node's root-device hint from the
// credentials' PATCH answer: a hint that drifted is rewritten by a second
// PATCH and reported, one that did not costs nothing more.
func TestConvergeOnASightingFindsDriftInThePatchAnswer(t *testing.T) {
	for _, drift := range []bool{false, true} {
		w := newWorld(t, fakes.HostSpec{})
		w.spec.RootDevice = map[string]any{"serial": "S6XXNX0T000001"}
		seen := w.inspected(t)
		if drift {
			w.spec.RootDevice = map[string]any{"serial": "S6XXNX0T000002"}
		}
		before := w.site.Calls()
		out, err := w.p.Cleaning(context.Background(), ironic.CleaningIn{Spec: w.spec, Deadline: w.site.Clock.Now().Add(time.Hour), Seen: seen})
		if err != nil {
			t.Fatal(err)
		}
		reads, writes := w.ironicCalls(before)
		trait := "trait " + ironic.ArchTrait(w.spec.CPUArch)
		patches, reported := 1, []string{"credentials", trait}
		if drift {
			patches, reported = 2, []string{"credentials", "root_device", trait}
		}
		if reads != 0 || writes["update_node"] != patches {
			t.Errorf("drift %v: %d reads, %d PATCHes; want 0 and %d", drift, reads, writes["update_node"], patches)
		}
		if !slices.Equal(out.Progress.Prelude.Changes, reported) {
			t.Errorf("drift %v: changes %v, want %v", drift, out.Progress.Prelude.Changes, reported)
		}
		if got := w.node(t).Properties["root_device"]; !sameHint(got, w.spec.RootDevice) {
			t.Errorf("drift %v: root_device %v, want %v", drift, got, w.spec.RootDevice)
		}
	}
}

func sameHint(got any, want map[string]any) bool {
	m, ok := got.(map[string]any)
	return ok && len(m) == len(want) && m["serial"] == want["serial"]
}

// Finalize decides on the cleaning half's last look when it is fresh: a
// node seen powered on is left alone, one seen off is powered on, one seen
// owned is never touched — without reading the node (the fake, like
// Ironic, leaves a cleaned node off). A stale look is read past.
func TestFinalizeOnASighting(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.inspected(t)
	out, err := w.clean(t, time.Hour)
	if err != nil || out.Seen == nil || out.Seen.Node.ProvisionState != ironic.StateAvailable {
		t.Fatalf("cleaning: %+v %v", out, err)
	}
	finalize := func(s *ironic.Sighting) (ironic.FinalizeOut, int, map[string]int) {
		t.Helper()
		before := w.site.Calls()
		fin, err := w.p.Finalize(context.Background(), ironic.FinalizeIn{Spec: w.spec, Seen: s})
		if err != nil {
			t.Fatal(err)
		}
		reads, writes := w.ironicCalls(before)
		return fin, reads, writes
	}
	with := func(mod func(*ironic.NodeStatus)) *ironic.Sighting {
		s := *out.Seen
		mod(&s.Node)
		return &s
	}

	if out.Seen.Node.PowerState != ironic.PowerOff {
		t.Fatalf("cleaning left the node %s", out.Seen.Node.PowerState)
	}
	if fin, reads, writes := finalize(with(func(n *ironic.NodeStatus) { n.PowerState = ironic.PowerOn })); fin.PoweredOn || reads != 0 || len(writes) != 0 {
		t.Errorf("seen on: %+v, %d reads, writes %v; want nothing", fin, reads, writes)
	}
	if fin, reads, writes := finalize(with(func(n *ironic.NodeStatus) { n.InstanceUUID = "nova-instance" })); fin.PoweredOn || reads != 0 || len(writes) != 0 {
		t.Errorf("seen owned: %+v, %d reads, writes %v; want nothing", fin, reads, writes)
	}
	if fin, reads, writes := finalize(out.Seen); !fin.PoweredOn || reads != 0 || writes["power"] != 1 {
		t.Errorf("seen off: %+v, %d reads, writes %v; want power on without a read", fin, reads, writes)
	}
	w.site.Clock.Advance(time.Minute)
	if fin, reads, _ := finalize(with(func(n *ironic.NodeStatus) { n.PowerState = ironic.PowerOff })); fin.PoweredOn || reads != 1 {
		t.Errorf("a stale look: %+v, %d reads; want the node read (on) and left alone", fin, reads)
	}
}
