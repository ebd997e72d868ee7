package firmware_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
)

// The fleet's compliance per model counts each host once (exhausted,
// updating, not in the catalog, drifted, unmatched, compliant), and lists
// the hosts with unmatched components.
func TestFleetReport(t *testing.T) {
	w := newWorld(t, firmware.Settings{MaxRetries: 1})
	ctx := context.Background()
	compliant := func(fb *fakes.FirmwareBMC) {
		fb.SetMember(fakes.FirmwareMember{ID: "Installed-159-1.8.2__BIOS.Setup.1-1", Version: "1.13.2", State: "Enabled"})
		fb.SetMember(fakes.FirmwareMember{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "7.10.30.00", State: "Enabled"})
	}
	compliant(w.dell("d-ok", firmware.HostReady))
	w.dell("d-drift", firmware.HostReady)
	w.dell("d-upd", firmware.HostReady)
	w.dell("d-exh", firmware.HostReady)
	w.add("g-unmatched", firmware.HostReady, fakes.NewFirmwareBMC(w.clk, "NVIDIA", "DGXH100", "AMI", []fakes.FirmwareMember{
		{ID: "HGX_FW_BMC_0", Version: "HGX-23.04"}, {ID: "HostBIOS_0", Version: "01.02.00"}}))
	other := fakes.NewFirmwareBMC(w.clk, "Lenovo", "ThinkSystem SR650", "Lenovo", []fakes.FirmwareMember{{ID: "UEFI", Version: "1"}})
	w.add("l-other", firmware.HostReady, other)
	x := &firmware.Explorer{Store: w.store, Hosts: w.hosts, BMC: w.bmcs, Catalog: w.cat, Clock: w.clk}
	if _, err := x.Explore(ctx); err != nil {
		t.Fatal(err)
	}
	w.dell("d-never", firmware.HostReady) // never read
	if _, err := w.store.CreateRequest(ctx, firmware.Request{MachineID: "d-upd", Initiator: "t", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.CreateRequest(ctx, firmware.Request{MachineID: "d-exh", Initiator: "t", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.PutUpdate(ctx, firmware.HostUpdate{MachineID: "d-exh", Substate: firmware.FailedFirmwareUpgrade, RetryCount: 1}); err != nil {
		t.Fatal(err)
	}
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk, Catalog: w.cat, Settings: firmware.Settings{MaxRetries: 1}}
	lines, unmatched, err := op.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []firmware.ModelReport{
		{Vendor: "", Model: "", Hosts: 1},
		{Vendor: "Dell", Model: "PowerEdge R750", Hosts: 4, Compliant: 1, Drifted: 1, Updating: 1, Exhausted: 1},
		{Vendor: "Lenovo", Model: "ThinkSystem SR650", Hosts: 1, NotInCatalog: 1},
		{Vendor: "Nvidia", Model: "DGXH100", Hosts: 1, Unmatched: 1},
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("report\n got %+v\nwant %+v", lines, want)
	}
	if len(unmatched) != 1 || unmatched[0].MachineID != "g-unmatched" {
		t.Errorf("unmatched %+v", unmatched)
	}
}
