package ironic_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/hostforge/hostforge"
	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/ironic"
)

// nodes is a NodeSource over a map; a listing carries no maintenance
// reason, as Ironic's field-limited listing.
type nodes struct {
	m     map[string]ironic.Node
	gets  int
	maint []string
}

func (n *nodes) ListNodes(context.Context) ([]ironic.Node, error) {
	var out []ironic.Node
	for _, x := range n.m {
		x.MaintenanceReason, x.DriverInfo = "", nil
		out = append(out, x)
	}
	return out, nil
}

func (n *nodes) GetNode(_ context.Context, ident string, _ ...string) (ironic.Node, error) {
	n.gets++
	for _, x := range n.m {
		if x.UUID == ident || x.Name == ident {
			return x, nil
		}
	}
	return ironic.Node{}, fmt.Errorf("node %s: %w", ident, hostforge.ErrNotFound)
}

func (n *nodes) SetMaintenance(_ context.Context, ident string, on bool, reason string) error {
	for k, x := range n.m {
		if x.UUID == ident {
			x.Maintenance, x.MaintenanceReason = on, reason
			n.m[k] = x
			n.maint = append(n.maint, fmt.Sprintf("%s:%v:%s", x.Name, on, reason))
			return nil
		}
	}
	return hostforge.ErrNotFound
}

func TestFirmwareHosts(t *testing.T) {
	a := &nodes{m: map[string]ironic.Node{
		"r1": {UUID: "u-r1", Name: "r1", ProvisionState: "available", DriverInfo: map[string]any{"redfish_address": "https://10.0.0.1:8443/redfish/v1"}},
		"a1": {UUID: "u-a1", Name: "a1", ProvisionState: "active", InstanceUUID: "inst-1", DriverInfo: map[string]any{"redfish_address": "10.0.0.2"}},
		"x1": {UUID: "u-x1", Name: "x1", ProvisionState: "active"},
		"f1": {UUID: "u-f1", Name: "f1", ProvisionState: "clean failed"},
	}}
	b := &nodes{m: map[string]ironic.Node{
		"m1": {UUID: "u-m1", Name: "m1", ProvisionState: "available", Maintenance: true, MaintenanceReason: "DC ops: PSU swap"},
		"u1": {UUID: "u-u1", Name: "u1", ProvisionState: "available", Maintenance: true, MaintenanceReason: ironicapi.UpdateReason("")},
		"":   {UUID: "u-anon", ProvisionState: "enroll"},
	}}
	h := &ironicapi.FirmwareHosts{Instances: []ironicapi.Instance{{Name: "gpu", Source: a}, {Name: "cpu", Source: b}}}
	ctx := context.Background()
	got, err := h.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []firmware.Host{
		{MachineID: "a1", State: firmware.HostAssigned, InstanceID: "inst-1"},
		{MachineID: "f1", State: firmware.HostOther, Unhealthy: true},
		{MachineID: "m1", State: firmware.HostReady, InMaintenance: true},
		{MachineID: "r1", State: firmware.HostReady},
		{MachineID: "u1", State: firmware.HostReady, UpdateReport: true},
		{MachineID: "x1", State: firmware.HostOther},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("List\n got %+v\nwant %+v", got, want)
	}

	// The report is maintenance with the update's reason, and only ours is cleared.
	if err := h.SetUpdateReport(ctx, "r1", firmware.ReportName); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := h.Get(ctx, "r1"); !r.UpdateReport || r.InMaintenance {
		t.Errorf("after SetUpdateReport: %+v", r)
	}
	if err := h.SetUpdateReport(ctx, "m1", firmware.ReportName); err != nil {
		t.Fatal(err)
	}
	if err := h.ClearUpdateReport(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	if n := b.m["m1"]; !n.Maintenance || n.MaintenanceReason != "DC ops: PSU swap" {
		t.Errorf("another reason's maintenance was touched: %+v", n)
	}
	if err := h.ClearUpdateReport(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := h.Get(ctx, "r1"); r.UpdateReport || r.InMaintenance {
		t.Errorf("after ClearUpdateReport: %+v", r)
	}
	wantWrites := []string{"r1:true:" + ironicapi.UpdateReason(firmware.ReportName), "r1:false:"}
	if !reflect.DeepEqual(a.maint, wantWrites) || len(b.maint) != 0 {
		t.Errorf("maintenance writes %v / %v, want %v / none", a.maint, b.maint, wantWrites)
	}
	if _, ok, err := h.Get(ctx, "nope"); ok || err != nil {
		t.Errorf("Get(nope) = %v, %v", ok, err)
	}
	for m, want := range map[string]string{"r1": "10.0.0.1:8443", "a1": "10.0.0.2"} {
		if got, err := h.BMCAddress(ctx, m); got != want || err != nil {
			t.Errorf("BMCAddress(%s) = %q, %v; want %q", m, got, err, want)
		}
	}
	if _, err := h.BMCAddress(ctx, "x1"); !firmware.BMCRefused.Is(err) {
		t.Errorf("a node without an address: %v", err)
	}
}

func TestFirmwareHostsRefusesDuplicateNames(t *testing.T) {
	a := &nodes{m: map[string]ironic.Node{"h": {UUID: "1", Name: "h", ProvisionState: "available"}}}
	b := &nodes{m: map[string]ironic.Node{"h": {UUID: "2", Name: "h", ProvisionState: "available"}}}
	h := &ironicapi.FirmwareHosts{Instances: []ironicapi.Instance{{Name: "a", Source: a}, {Name: "b", Source: b}}}
	if _, err := h.List(context.Background()); !ironic.Rejected.Is(err) {
		t.Fatalf("List = %v; want a refusal naming both instances", err)
	}
}
