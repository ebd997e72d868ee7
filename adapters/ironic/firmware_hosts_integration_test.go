//go:build integration

package ironic_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/ironic"
)

// Against the real Ironic: nodes are listed as managed hosts, and the
// update health report is maintenance set and cleared there, never over
// an operator's own maintenance.
func TestFirmwareHostsOnRealIronic(t *testing.T) {
	c := connect(t, env(t, "HOSTFORGE_IRONIC_URL"))
	ctx := context.Background()
	var b [3]byte
	_, _ = rand.Read(b[:])
	ours, theirs := "it-fwh-"+hex.EncodeToString(b[:]), "it-fwh-ops-"+hex.EncodeToString(b[:])
	for _, name := range []string{ours, theirs} {
		n, err := c.CreateNode(ctx, ironic.NodeCreate{Name: name, Driver: "fake-hardware", DriverInfo: map[string]any{"redfish_address": "https://192.0.2.7:8443"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.SetMaintenance(context.Background(), n.UUID, false, "")
			_ = c.DeleteNode(context.Background(), n.UUID)
		})
	}
	if err := c.SetMaintenance(ctx, theirs, true, "DC ops: PSU swap"); err != nil {
		t.Fatal(err)
	}
	h := &adapter.FirmwareHosts{Instances: []adapter.Instance{{Name: "it", Source: c}}}
	list, err := h.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]firmware.Host{}
	for _, x := range list {
		found[x.MachineID] = x
	}
	if x := found[ours]; x.MachineID == "" || x.State != firmware.HostOther || x.InMaintenance || x.UpdateReport {
		t.Errorf("our enrolling node: %+v", x)
	}
	if x := found[theirs]; !x.InMaintenance || x.UpdateReport {
		t.Errorf("the node in an operator's maintenance: %+v", x)
	}
	if err := h.SetUpdateReport(ctx, ours, firmware.ReportName); err != nil {
		t.Fatal(err)
	}
	n, err := c.GetNode(ctx, ours)
	if err != nil || !n.Maintenance || n.MaintenanceReason != adapter.UpdateReason(firmware.ReportName) {
		t.Fatalf("after SetUpdateReport: %+v, %v", n, err)
	}
	if x, _, _ := h.Get(ctx, ours); !x.UpdateReport {
		t.Errorf("Get: %+v", x)
	}
	if err := h.SetUpdateReport(ctx, theirs, firmware.ReportName); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ours, theirs} {
		if err := h.ClearUpdateReport(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := c.GetNode(ctx, ours); n.Maintenance {
		t.Error("the update's maintenance was not cleared")
	}
	if n, _ := c.GetNode(ctx, theirs); !n.Maintenance || n.MaintenanceReason != "DC ops: PSU swap" {
		t.Errorf("the operator's maintenance was touched: %+v", n)
	}
	if addr, err := h.BMCAddress(ctx, ours); addr != "192.0.2.7:8443" || err != nil {
		t.Errorf("BMCAddress = %q, %v", addr, err)
	}
}
