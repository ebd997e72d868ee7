package ironictest

import (
	"context"
	"errors"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// The retire cases: manual cleaning and deletion, as the retire phases
// rely on them (ironic.Decommissioner). They run when Env.Client
// implements it, with the clean steps Env names.

// runRetire runs the retire cases.
func runRetire(t *testing.T, newEnv func(t *testing.T) Env) {
	cases := []struct {
		name string
		fn   func(t *testing.T, env Env, d ironic.Decommissioner)
	}{
		{"manual clean runs from manageable back to manageable", testManualClean},
		{"manual clean with an unsupported step fails the clean", testManualCleanUnsupported},
		{"deleting ports, portgroups and nodes", testDeletions},
		{"deletion refused with an instance or in a failed state", testDeletionRefused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			d, ok := env.Client.(ironic.Decommissioner)
			if !ok {
				t.Skipf("%T does not implement ironic.Decommissioner", env.Client)
			}
			if env.CleanStep.Step == "" || env.UnsupportedCleanStep.Step == "" {
				t.Skip("the environment names no clean steps (Env.CleanStep, Env.UnsupportedCleanStep)")
			}
			c.fn(t, env, d)
		})
	}
}

func manageable(t *testing.T, env Env, name string) ironic.Node {
	t.Helper()
	n := create(t, env, name)
	retry(t, env, "manage", func() error {
		return env.Client.ChangeProvisionState(context.Background(), n.UUID, ironic.ActionManage)
	})
	return waitState(t, env, n.UUID, ironic.StateManageable)
}

func testManualClean(t *testing.T, env Env, d ironic.Decommissioner) {
	ctx := context.Background()
	n := create(t, env, uniq("contract-clean"))
	if err := d.Clean(ctx, n.UUID, []ironic.CleanStep{env.CleanStep}); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("manual clean from enroll: %v, want ErrInvalid (400)", err)
	}
	retry(t, env, "manage", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage) })
	waitState(t, env, n.UUID, ironic.StateManageable)

	retry(t, env, "maintenance on", func() error { return env.Client.SetMaintenance(ctx, n.UUID, true, "contract") })
	if err := d.Clean(ctx, n.UUID, []ironic.CleanStep{env.CleanStep}); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("manual clean in maintenance: %v, want ErrInvalid (400): Ironic refuses it", err)
	}
	retry(t, env, "maintenance off", func() error { return env.Client.SetMaintenance(ctx, n.UUID, false, "") })
	if err := d.Clean(ctx, n.UUID, nil); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("manual clean without steps: %v, want ErrInvalid (400)", err)
	}

	retry(t, env, "manual clean", func() error { return d.Clean(ctx, n.UUID, []ironic.CleanStep{env.CleanStep}) })
	got, err := env.Client.GetNode(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	switch got.ProvisionState {
	case ironic.StateCleaning, ironic.StateCleanWait, ironic.StateManageable:
	default:
		t.Fatalf("right after a manual clean the node is %q, want cleaning, clean wait or (done) manageable", got.ProvisionState)
	}
	if env.CleanRun != nil {
		env.CleanRun(t, got)
	}
	done := waitState(t, env, n.UUID, ironic.StateManageable, ironic.StateCleanFailed)
	if done.ProvisionState != ironic.StateManageable || done.LastError != "" || done.Maintenance {
		t.Fatalf("after the manual clean of %s: %q, last_error %q, maintenance %v; want manageable, no error",
			env.CleanStep, done.ProvisionState, done.LastError, done.Maintenance)
	}
}

func testManualCleanUnsupported(t *testing.T, env Env, d ironic.Decommissioner) {
	ctx := context.Background()
	n := manageable(t, env, uniq("contract-clean-unsupported"))
	retry(t, env, "manual clean", func() error { return d.Clean(ctx, n.UUID, []ironic.CleanStep{env.UnsupportedCleanStep}) })
	failed := waitState(t, env, n.UUID, ironic.StateCleanFailed)
	if failed.LastError == "" {
		t.Fatal("clean failed without a last_error")
	}
	if failed.Maintenance {
		t.Fatalf("a step refused before any step ran set maintenance (%q); Ironic leaves it off", failed.MaintenanceReason)
	}
	retry(t, env, "manage from clean failed", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage) })
	waitState(t, env, n.UUID, ironic.StateManageable)
}

func testDeletions(t *testing.T, env Env, d ironic.Decommissioner) {
	ctx := context.Background()
	n := manageable(t, env, uniq("contract-delete"))
	m1, m2 := uniqMAC(), uniqMAC()
	pg, err := env.Client.CreatePortgroup(ctx, ironic.Portgroup{NodeUUID: n.UUID, Name: uniq("contract-bond"), Address: m1, Mode: "active-backup"})
	if err != nil {
		t.Fatalf("CreatePortgroup: %v", err)
	}
	p1, err := env.Client.CreatePort(ctx, ironic.Port{NodeUUID: n.UUID, PortgroupUUID: pg.UUID, Address: m1, PXEEnabled: true})
	if err != nil {
		t.Fatalf("CreatePort: %v", err)
	}
	p2, err := env.Client.CreatePort(ctx, ironic.Port{NodeUUID: n.UUID, Address: m2})
	if err != nil {
		t.Fatalf("CreatePort: %v", err)
	}
	// Ironic refuses it: PortgroupNotEmpty (400), or on a SQLite database
	// the foreign key of the port (500). Either way the portgroup stays.
	if err := d.DeletePortgroup(ctx, pg.UUID); err == nil {
		t.Fatal("deleting a portgroup with a port succeeded; Ironic refuses it")
	}
	if pgs, err := env.Client.ListPortgroups(ctx, n.UUID); err != nil || len(pgs) != 1 {
		t.Fatalf("portgroups after a refused deletion: %+v, %v; want it kept", pgs, err)
	}
	retry(t, env, "delete port", func() error { return d.DeletePort(ctx, p1.UUID) })
	if err := d.DeletePort(ctx, p1.UUID); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("deleting a deleted port: %v, want ErrNotFound", err)
	}
	retry(t, env, "delete portgroup", func() error { return d.DeletePortgroup(ctx, pg.UUID) })
	if pgs, err := env.Client.ListPortgroups(ctx, n.UUID); err != nil || len(pgs) != 0 {
		t.Fatalf("portgroups after deletion: %+v, %v", pgs, err)
	}
	if ports, err := env.Client.ListPorts(ctx, n.UUID); err != nil || len(ports) != 1 || ports[0].UUID != p2.UUID {
		t.Fatalf("ports after deleting one: %+v, %v; want only %s", ports, err, p2.Address)
	}
	retry(t, env, "delete node", func() error { return d.DeleteNode(ctx, n.UUID) })
	if _, err := env.Client.GetNode(ctx, n.UUID); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("GetNode after deletion: %v, want ErrNotFound", err)
	}
	if _, err := env.Client.PortByAddress(ctx, m2); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("the deleted node's port %s: %v, want ErrNotFound (ports go with their node)", m2, err)
	}
	if err := d.DeleteNode(ctx, n.UUID); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("deleting a deleted node: %v, want ErrNotFound", err)
	}
}

func testDeletionRefused(t *testing.T, env Env, d ironic.Decommissioner) {
	ctx := context.Background()
	n := manageable(t, env, uniq("contract-delete-refused"))
	const instance = "5c0e1c52-7d10-4a0e-9b39-3c3b4d6e7f80"
	if _, err := env.Client.UpdateNode(ctx, n.UUID, []ironic.PatchOp{ironic.Add("/instance_uuid", instance)}); err != nil {
		t.Fatalf("setting instance_uuid: %v", err)
	}
	err := d.DeleteNode(ctx, n.UUID)
	if !errors.Is(err, hostforge.ErrConflict) || ironic.IsNodeLocked(err) {
		t.Fatalf("deleting a node with an instance: %v, want a conflict (409) that is not NodeLocked", err)
	}
	if _, err := env.Client.UpdateNode(ctx, n.UUID, []ironic.PatchOp{ironic.Remove("/instance_uuid")}); err != nil {
		t.Fatalf("removing instance_uuid: %v", err)
	}

	retry(t, env, "manual clean", func() error { return d.Clean(ctx, n.UUID, []ironic.CleanStep{env.UnsupportedCleanStep}) })
	waitState(t, env, n.UUID, ironic.StateCleanFailed)
	err = d.DeleteNode(ctx, n.UUID)
	if !errors.Is(err, hostforge.ErrConflict) || ironic.IsNodeLocked(err) {
		t.Fatalf("deleting a clean failed node: %v, want a conflict (409): Ironic deletes only enroll, manageable, available", err)
	}
	// In maintenance Ironic deletes a node in any state.
	retry(t, env, "maintenance on", func() error { return env.Client.SetMaintenance(ctx, n.UUID, true, "contract") })
	retry(t, env, "delete node in maintenance", func() error { return d.DeleteNode(ctx, n.UUID) })
	if _, err := env.Client.GetNode(ctx, n.UUID); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("GetNode after deletion: %v, want ErrNotFound", err)
	}
}
