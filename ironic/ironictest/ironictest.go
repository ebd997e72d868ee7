// Package ironictest is the contract suite every ironic.Client passes: the
// in-memory fake, adapters/ironic against a real Ironic, and a user's own
// client. It checks what the phases rely on — nodes (read whole or by
// field, with Ironic's provision_updated_at), ports, portgroups,
// traits, maintenance, power, every provision action the phases use, the
// errors Ironic gives (404, 400 on an invalid transition, 409 duplicate, 409
// NodeLocked), clean failed → manage recovery, the inventory after an
// inspection, and what retirement relies on: manual cleaning and the
// deletion of ports, portgroups and nodes, refused where Ironic refuses it.
package ironictest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// Env is one Ironic under test and the hooks the suite needs to drive it.
type Env struct {
	Client ironic.Client
	// Driver and Interfaces are used for every node the suite creates
	// (e.g. fake-hardware with inspect "inspector" against a real Ironic).
	Driver     string
	Interfaces map[string]string
	// DriverInfo is merged into created nodes' driver_info.
	DriverInfo map[string]any
	// Sleep lets time pass: a fake clock's Advance, or a real sleep.
	Sleep func(d time.Duration)
	// Poll is the pause between state probes (default 1 s).
	Poll time.Duration
	// Timeout bounds each wait for a provision state, in Sleep's time (default 2 min).
	Timeout time.Duration
	// Inspect, when set, is called once the node is in inspect wait (or
	// inspecting) and makes the inspection finish: post IPA data to the
	// inspector. The fake finishes by itself. macs are the node's ports.
	Inspect func(t *testing.T, node ironic.Node, macs []string)
	// HoldLock makes the node locked by another operation long enough for
	// the next write to be refused with NodeLocked. nil skips that test.
	HoldLock func(t *testing.T, node ironic.Node)
	// CleanFail brings a MANAGEABLE node to clean failed. nil skips that test.
	CleanFail func(t *testing.T, node ironic.Node)
	// NoInventory: inspection here stores no inventory (Ironic's fake
	// inspect interface); the inventory check is skipped.
	NoInventory bool
	// Cleanup deletes what the suite created; may be nil.
	Cleanup func(t *testing.T, nodeUUID string)
	// CleanStep is a manual clean step the suite's nodes run to the end,
	// and UnsupportedCleanStep one their interfaces do not have (see
	// retire.go). Either empty skips the retire cases.
	CleanStep, UnsupportedCleanStep ironic.CleanStep
	// CleanRun, when set, is called once a manual clean of CleanStep was
	// accepted and makes it run where something outside Ironic must (a
	// ramdisk answering the agent's API). The fake runs it by itself.
	CleanRun func(t *testing.T, node ironic.Node)
}

// Run runs the suite. newEnv is called once per subtest.
func Run(t *testing.T, newEnv func(t *testing.T) Env) {
	t.Run("nodes", func(t *testing.T) { testNodes(t, newEnv(t)) })
	t.Run("ports and portgroups", func(t *testing.T) { testPorts(t, newEnv(t)) })
	t.Run("traits maintenance power", func(t *testing.T) { testTraitsMaintenancePower(t, newEnv(t)) })
	t.Run("provision walk", func(t *testing.T) { testProvision(t, newEnv(t)) })
	t.Run("field selection", func(t *testing.T) { testFields(t, newEnv(t)) })
	t.Run("node locked", func(t *testing.T) {
		env := newEnv(t)
		if env.HoldLock == nil {
			t.Skip("no way to hold a node lock in this environment")
		}
		testLocked(t, env)
	})
	t.Run("clean failed recovery", func(t *testing.T) {
		env := newEnv(t)
		if env.CleanFail == nil {
			t.Skip("no way to fail a cleaning in this environment")
		}
		testCleanFailed(t, env)
	})
	runRetire(t, newEnv)
}

var seq = time.Now().UnixNano() % 1_000_000

func uniq(prefix string) string {
	seq++
	return fmt.Sprintf("%s-%d", prefix, seq)
}

func uniqMAC() string {
	seq++
	return fmt.Sprintf("02:ee:%02x:%02x:%02x:%02x", (seq>>24)&0xff, (seq>>16)&0xff, (seq>>8)&0xff, seq&0xff)
}

func create(t *testing.T, env Env, name string) ironic.Node {
	t.Helper()
	di := map[string]any{"redfish_address": "https://192.0.2.10", "redfish_username": "admin", "redfish_password": "s3cret-contract"}
	for k, v := range env.DriverInfo {
		di[k] = v
	}
	n, err := env.Client.CreateNode(context.Background(), ironic.NodeCreate{
		Name: name, Driver: env.Driver, Interfaces: env.Interfaces, DriverInfo: di,
		Properties: map[string]any{"cpu_arch": "x86_64"}, ResourceClass: "baremetal",
	})
	if err != nil {
		t.Fatalf("CreateNode(%s): %v", name, err)
	}
	// A standalone Ironic refuses owner/lessee on create; a patch sets them.
	if n, err = env.Client.UpdateNode(context.Background(), n.UUID, []ironic.PatchOp{ironic.Add("/owner", "proj"), ironic.Add("/lessee", "proj")}); err != nil {
		t.Fatalf("setting owner and lessee: %v", err)
	}
	if env.Cleanup != nil {
		t.Cleanup(func() { env.Cleanup(t, n.UUID) })
	}
	return n
}

func waitState(t *testing.T, env Env, uuid string, want ...string) ironic.Node {
	t.Helper()
	poll, timeout := env.Poll, env.Timeout
	if poll <= 0 {
		poll = time.Second
	}
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	var n ironic.Node
	var err error
	for waited := time.Duration(0); waited <= timeout; waited += poll {
		n, err = env.Client.GetNode(context.Background(), uuid)
		if err != nil {
			t.Fatalf("GetNode: %v", err)
		}
		for _, w := range want {
			if n.ProvisionState == w && n.Reservation == "" && (n.TargetProvisionState == "" || w != ironic.StateManageable && w != ironic.StateAvailable) {
				return n
			}
		}
		env.Sleep(poll)
	}
	t.Fatalf("node %s: still %q (target %q, last_error %q) after %s, want %v", uuid, n.ProvisionState, n.TargetProvisionState, n.LastError, timeout, want)
	return n
}

// retry runs a write until it is not refused with NodeLocked (a real
// Ironic releases the lock a moment after a state appears).
func retry(t *testing.T, env Env, what string, fn func() error) {
	t.Helper()
	poll, timeout := env.Poll, env.Timeout
	if poll <= 0 {
		poll = time.Second
	}
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	var err error
	for waited := time.Duration(0); waited <= timeout; waited += poll {
		if err = fn(); !ironic.IsNodeLocked(err) {
			break
		}
		env.Sleep(poll)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func testNodes(t *testing.T, env Env) {
	ctx := context.Background()
	name := uniq("contract-node")
	n := create(t, env, name)
	if n.UUID == "" || n.Name != name || n.ProvisionState != ironic.StateEnroll || n.Driver != env.Driver {
		t.Fatalf("created node = %+v, want name %s in enroll with driver %s", n, name, env.Driver)
	}
	byName, err := env.Client.GetNode(ctx, name)
	if err != nil || byName.UUID != n.UUID {
		t.Fatalf("GetNode(name) = %+v, %v", byName, err)
	}
	if byName.Owner != "proj" || byName.ResourceClass != "baremetal" || byName.Properties["cpu_arch"] != "x86_64" {
		t.Fatalf("node fields lost on create: %+v", byName)
	}
	if pw := byName.DriverInfo["redfish_password"]; pw == "s3cret-contract" {
		t.Fatalf("the password is readable back (%v); Ironic masks it", pw)
	}
	if _, err := env.Client.GetNode(ctx, uniq("missing")); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("GetNode(missing) error = %v, want ErrNotFound", err)
	}
	_, err = env.Client.CreateNode(ctx, ironic.NodeCreate{Name: name, Driver: env.Driver, Interfaces: env.Interfaces})
	if !errors.Is(err, hostforge.ErrConflict) || ironic.IsNodeLocked(err) {
		t.Fatalf("duplicate name error = %v, want a conflict that is not NodeLocked", err)
	}
	hint := map[string]any{"serial": "S6XXNX0T000001"}
	u, err := env.Client.UpdateNode(ctx, n.UUID, []ironic.PatchOp{
		ironic.Add("/properties/root_device", hint),
		ironic.Add("/driver_info/redfish_username", "root"),
	})
	if err != nil {
		t.Fatalf("UpdateNode: %v", err)
	}
	if !sameJSON(u.Properties["root_device"], hint) || u.DriverInfo["redfish_username"] != "root" {
		t.Fatalf("update not applied: properties %v driver_info %v", u.Properties, u.DriverInfo)
	}
	u, err = env.Client.UpdateNode(ctx, n.UUID, []ironic.PatchOp{ironic.Remove("/properties/root_device")})
	if err != nil {
		t.Fatalf("UpdateNode(remove): %v", err)
	}
	if _, ok := u.Properties["root_device"]; ok {
		t.Fatalf("root_device not removed: %v", u.Properties)
	}
	if _, err := env.Client.Inventory(ctx, n.UUID); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("Inventory before inspection error = %v, want ErrNotFound", err)
	}
}

func testPorts(t *testing.T, env Env) {
	ctx := context.Background()
	n := create(t, env, uniq("contract-ports"))
	m1, m2 := uniqMAC(), uniqMAC()
	pg, err := env.Client.CreatePortgroup(ctx, ironic.Portgroup{NodeUUID: n.UUID, Name: uniq("contract-bond"), Address: m1, Mode: "802.3ad", Properties: map[string]any{"miimon": 100}})
	if err != nil {
		t.Fatalf("CreatePortgroup: %v", err)
	}
	if pg.UUID == "" || pg.Mode != "802.3ad" || pg.Address != m1 {
		t.Fatalf("portgroup = %+v", pg)
	}
	pgs, err := env.Client.ListPortgroups(ctx, n.UUID)
	if err != nil || len(pgs) != 1 || pgs[0].UUID != pg.UUID {
		t.Fatalf("ListPortgroups = %+v, %v", pgs, err)
	}
	llc := map[string]string{"switch_id": ironic.PlaceholderSwitchID, "port_id": "swp1", "switch_info": "leaf-1"}
	p1, err := env.Client.CreatePort(ctx, ironic.Port{NodeUUID: n.UUID, PortgroupUUID: pg.UUID, Address: m1, PXEEnabled: true, LocalLinkConnection: llc})
	if err != nil {
		t.Fatalf("CreatePort: %v", err)
	}
	if p1.Address != m1 || !p1.PXEEnabled || p1.PortgroupUUID != pg.UUID || p1.LocalLinkConnection["port_id"] != "swp1" {
		t.Fatalf("port = %+v", p1)
	}
	p2, err := env.Client.CreatePort(ctx, ironic.Port{NodeUUID: n.UUID, PortgroupUUID: pg.UUID, Address: m2, PXEEnabled: false})
	if err != nil {
		t.Fatalf("CreatePort(2): %v", err)
	}
	if p2.PXEEnabled || len(p2.LocalLinkConnection) != 0 {
		t.Fatalf("second port = %+v, want no PXE and no link", p2)
	}
	_, err = env.Client.CreatePort(ctx, ironic.Port{NodeUUID: n.UUID, Address: m1})
	if !errors.Is(err, hostforge.ErrConflict) || ironic.IsNodeLocked(err) {
		t.Fatalf("duplicate MAC error = %v, want a conflict that is not NodeLocked", err)
	}
	found, err := env.Client.PortByAddress(ctx, m2)
	if err != nil || found.UUID != p2.UUID || found.NodeUUID != n.UUID {
		t.Fatalf("PortByAddress = %+v, %v", found, err)
	}
	if _, err := env.Client.PortByAddress(ctx, uniqMAC()); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("PortByAddress(unknown) error = %v, want ErrNotFound", err)
	}
	up, err := env.Client.UpdatePort(ctx, p2.UUID, []ironic.PatchOp{ironic.Add("/local_link_connection", map[string]string{"switch_id": ironic.PlaceholderSwitchID, "port_id": "swp2", "switch_info": "leaf-2"})})
	if err != nil || up.LocalLinkConnection["switch_info"] != "leaf-2" {
		t.Fatalf("UpdatePort = %+v, %v", up, err)
	}
	ports, err := env.Client.ListPorts(ctx, n.UUID)
	if err != nil || len(ports) != 2 {
		t.Fatalf("ListPorts = %+v, %v", ports, err)
	}
	pxe := 0
	for _, p := range ports {
		if p.PXEEnabled {
			pxe++
		}
	}
	if pxe != 1 {
		t.Fatalf("%d PXE-enabled ports, want 1: %+v", pxe, ports)
	}
}

func testTraitsMaintenancePower(t *testing.T, env Env) {
	ctx := context.Background()
	n := create(t, env, uniq("contract-traits"))
	if err := env.Client.SetTraits(ctx, n.UUID, []string{"CUSTOM_STALE", "HW_ARCH_X86_64"}); err != nil {
		t.Fatalf("SetTraits: %v", err)
	}
	got, err := env.Client.GetNode(ctx, n.UUID)
	if err != nil || !got.HasTrait("HW_ARCH_X86_64") || !got.HasTrait("CUSTOM_STALE") || len(got.Traits) != 2 {
		t.Fatalf("traits = %v, %v", got.Traits, err)
	}
	if err := env.Client.SetMaintenance(ctx, n.UUID, true, "contract"); err != nil {
		t.Fatalf("SetMaintenance(on): %v", err)
	}
	got, _ = env.Client.GetNode(ctx, n.UUID)
	if !got.Maintenance || got.MaintenanceReason != "contract" {
		t.Fatalf("maintenance = %v %q", got.Maintenance, got.MaintenanceReason)
	}
	if err := env.Client.SetMaintenance(ctx, n.UUID, false, ""); err != nil {
		t.Fatalf("SetMaintenance(off): %v", err)
	}
	got, _ = env.Client.GetNode(ctx, n.UUID)
	if got.Maintenance {
		t.Fatalf("maintenance still on")
	}
	retry(t, env, "power on", func() error { return env.Client.ChangePowerState(ctx, n.UUID, ironic.PowerOn) })
	waitPower(t, env, n.UUID, ironic.PowerOn)
	retry(t, env, "power off", func() error { return env.Client.ChangePowerState(ctx, n.UUID, ironic.PowerOff) })
	waitPower(t, env, n.UUID, ironic.PowerOff)
}

func waitPower(t *testing.T, env Env, uuid, want string) {
	t.Helper()
	for i := 0; i < 120; i++ {
		n, err := env.Client.GetNode(context.Background(), uuid)
		if err != nil {
			t.Fatalf("GetNode: %v", err)
		}
		if n.PowerState == want && n.TargetPowerState == "" {
			return
		}
		env.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("node %s never reached %s", uuid, want)
}

func testProvision(t *testing.T, env Env) {
	ctx := context.Background()
	n := create(t, env, uniq("contract-walk"))
	mac := uniqMAC()
	if _, err := env.Client.CreatePort(ctx, ironic.Port{NodeUUID: n.UUID, Address: mac, PXEEnabled: true}); err != nil {
		t.Fatalf("CreatePort: %v", err)
	}
	err := env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionProvide)
	if !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("provide from enroll error = %v, want ErrInvalid (400)", err)
	}
	retry(t, env, "manage", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage) })
	waitState(t, env, n.UUID, ironic.StateManageable)

	raid := map[string]any{"logical_disks": []any{map[string]any{"size_gb": "MAX", "raid_level": "1", "is_root_volume": true}}}
	retry(t, env, "set RAID config", func() error { return env.Client.SetRAIDConfig(ctx, n.UUID, raid) })

	retry(t, env, "inspect", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionInspect) })
	if env.Inspect != nil {
		n2 := waitState(t, env, n.UUID, ironic.StateInspectWait, ironic.StateManageable)
		if n2.ProvisionState == ironic.StateInspectWait {
			env.Inspect(t, n2, []string{mac})
		}
	}
	waitState(t, env, n.UUID, ironic.StateManageable)
	if !env.NoInventory {
		checkInventory(t, env, n.UUID)
	}

	retry(t, env, "provide", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionProvide) })
	waitState(t, env, n.UUID, ironic.StateAvailable)
	retry(t, env, "manage from available", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage) })
	waitState(t, env, n.UUID, ironic.StateManageable)
	err = env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionAbort)
	if !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("abort from manageable error = %v, want ErrInvalid (400)", err)
	}
}

// testFields: a read names the fields it wants (Ironic's ?fields=) and gets
// those and nothing else; a name Ironic does not know is a 400; and
// provision_updated_at moves with the provision state, not with power.
func testFields(t *testing.T, env Env) {
	ctx := context.Background()
	n := create(t, env, uniq("contract-fields"))
	got, err := env.Client.GetNode(ctx, n.UUID, "uuid", "provision_state", "provision_updated_at", "raid_interface", "properties")
	if err != nil {
		t.Fatalf("GetNode with fields: %v", err)
	}
	if got.UUID != n.UUID || got.ProvisionState != ironic.StateEnroll || got.Properties["cpu_arch"] != "x86_64" {
		t.Fatalf("GetNode with fields = %+v, want the node's uuid, provision state and properties", got)
	}
	if got.Interfaces["raid"] == "" || len(got.Interfaces) != 1 {
		t.Fatalf("GetNode with fields: interfaces %v, want raid alone", got.Interfaces)
	}
	if got.Name != "" || got.Driver != "" || got.Owner != "" || got.ResourceClass != "" || got.DriverInfo != nil || got.PowerState != "" {
		t.Fatalf("GetNode with fields returned fields it was not asked for: %+v", got)
	}
	if !got.ProvisionUpdatedAt.IsZero() {
		t.Fatalf("a node never moved has provision_updated_at %s, want none", got.ProvisionUpdatedAt)
	}
	if _, err := env.Client.GetNode(ctx, n.UUID, "uuid", "no_such_field"); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("GetNode with an unknown field: %v, want ErrInvalid (400)", err)
	}
	if all, err := env.Client.GetNode(ctx, n.UUID); err != nil || all.Name == "" || all.Driver != env.Driver || all.DriverInfo == nil {
		t.Fatalf("GetNode without fields = %+v, %v; want every field", all, err)
	}

	stamp := func() time.Time {
		t.Helper()
		g, err := env.Client.GetNode(ctx, n.UUID, "provision_state", "provision_updated_at")
		if err != nil {
			t.Fatalf("GetNode: %v", err)
		}
		return g.ProvisionUpdatedAt
	}
	retry(t, env, "manage", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage) })
	waitState(t, env, n.UUID, ironic.StateManageable)
	managed := stamp()
	if managed.IsZero() {
		t.Fatalf("manageable without provision_updated_at")
	}
	retry(t, env, "power on", func() error { return env.Client.ChangePowerState(ctx, n.UUID, ironic.PowerOn) })
	waitPower(t, env, n.UUID, ironic.PowerOn)
	if powered := stamp(); !powered.Equal(managed) {
		t.Fatalf("provision_updated_at moved with a power change: %s → %s", managed, powered)
	}
	env.Sleep(time.Second) // Ironic's clock, not the fake's, must show the move
	retry(t, env, "provide", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionProvide) })
	waitState(t, env, n.UUID, ironic.StateAvailable)
	if provided := stamp(); !provided.After(managed) {
		t.Fatalf("provision_updated_at %s after provide, %s before: want later", provided, managed)
	}
}

func testLocked(t *testing.T, env Env) {
	ctx := context.Background()
	n := create(t, env, uniq("contract-locked"))
	env.HoldLock(t, n)
	_, err := env.Client.UpdateNode(ctx, n.UUID, []ironic.PatchOp{ironic.Add("/properties/contract", "x")})
	if !ironic.IsNodeLocked(err) || !errors.Is(err, hostforge.ErrConflict) {
		t.Fatalf("write to a locked node error = %v, want NodeLocked (a 409 conflict)", err)
	}
	got, gerr := env.Client.GetNode(ctx, n.UUID)
	if gerr != nil {
		t.Fatalf("reading a locked node: %v", gerr)
	}
	if got.Reservation == "" {
		t.Logf("lock already released when read (reservation empty); a real conductor may release it first")
	}
	// The lock clears: the same write then succeeds.
	retry(t, env, "write after the lock clears", func() error {
		_, err := env.Client.UpdateNode(ctx, n.UUID, []ironic.PatchOp{ironic.Add("/properties/contract", "x")})
		return err
	})
}

func testCleanFailed(t *testing.T, env Env) {
	ctx := context.Background()
	n := create(t, env, uniq("contract-cleanfail"))
	retry(t, env, "manage", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage) })
	waitState(t, env, n.UUID, ironic.StateManageable)
	env.CleanFail(t, n)
	got := waitState(t, env, n.UUID, ironic.StateCleanFailed)
	if got.Maintenance {
		retry(t, env, "clear maintenance", func() error { return env.Client.SetMaintenance(ctx, n.UUID, false, "") })
	}
	retry(t, env, "manage from clean failed", func() error { return env.Client.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage) })
	waitState(t, env, n.UUID, ironic.StateManageable)
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func checkInventory(t *testing.T, env Env, uuid string) {
	t.Helper()
	ctx := context.Background()
	var err error
	var inv []byte
	for i := 0; i < 20; i++ { // a real Ironic writes the inventory a moment after manageable
		if inv, err = env.Client.Inventory(ctx, uuid); !errors.Is(err, hostforge.ErrNotFound) {
			break
		}
		env.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("Inventory after inspection: %v", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(inv, &doc); err != nil || len(doc["inventory"]) == 0 {
		t.Fatalf("inventory is not {\"inventory\": ...}: %v %.200s", err, inv)
	}

}
