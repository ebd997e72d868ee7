package ironic_test

import (
	"context"
	"testing"
	"time"

	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/ironic"
)

// The manual gate's input comes from the Ironic node: a host is MNNVL
// capable by its trait CUSTOM_MNNVL, its capability mnnvl:true or its
// property mnnvl true; the host says which it was read from. With
// requires_manual_upgrade on, the update of such a host waits in
// WaitingForManualUpgrade (it used to go straight to the upload: nothing
// set the flag outside the fakes).
func TestManualGateFromIronicNodeData(t *testing.T) {
	src := &nodes{m: map[string]ironic.Node{
		"gb1": {UUID: "u-gb1", Name: "gb1", ProvisionState: "available", Traits: []string{"CUSTOM_GPU", "CUSTOM_MNNVL"}},
		"gb2": {UUID: "u-gb2", Name: "gb2", ProvisionState: "available", Properties: map[string]any{"capabilities": "boot_mode:uefi,mnnvl:true"}},
		"gb3": {UUID: "u-gb3", Name: "gb3", ProvisionState: "available", Properties: map[string]any{"mnnvl": "True"}},
		"r1":  {UUID: "u-r1", Name: "r1", ProvisionState: "available", Properties: map[string]any{"capabilities": "mnnvl:false"}},
	}}
	hosts := &ironicapi.FirmwareHosts{Instances: []ironicapi.Instance{{Name: "gpu", Source: src}}}
	ctx := context.Background()
	for m, from := range map[string]string{"gb1": "trait CUSTOM_MNNVL", "gb2": "properties.capabilities mnnvl:true", "gb3": "properties.mnnvl", "r1": ""} {
		h, ok, err := hosts.Get(ctx, m)
		if err != nil || !ok {
			t.Fatal(m, err)
		}
		if h.MNNVL != (from != "") || h.MNNVLFrom != from {
			t.Errorf("%s: MNNVL %v from %q; want %v from %q", m, h.MNNVL, h.MNNVLFrom, from != "", from)
		}
	}

	clk := clock.NewFake(time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC))
	store := firmwarefake.NewMemStore()
	bmcs := firmwarefake.NewBMCs()
	fb := fakes.NewFirmwareBMC(clk, "NVIDIA", "GB200 NVL", "AMI", []fakes.FirmwareMember{{ID: "FW_BMC_0", Version: "1.0"}})
	fb.AddImage("/fw/gb200-bmc.bin", fakes.FirmwareImage{Targets: []string{"FW_BMC_0"}, Version: "1.1", Activation: fakes.ActivateBMCReset})
	bmcs.Add("gb1", fb)
	cat, err := firmware.ParseCatalog("gb200.toml", []byte(`
[host_models.gb200]
vendor = "Nvidia"
model = "GB200 NVL"
[host_models.gb200.components.bmc]
current_version_reported_as = "^FW_BMC_0$"
known_firmware = [ { version = "1.1", filename = "/fw/gb200-bmc.bin", default = true } ]
`))
	if err != nil {
		t.Fatal(err)
	}
	exec := &firmware.Executor{Store: store, Hosts: hosts, BMC: bmcs, Catalog: cat, Clock: clk, Settings: firmware.Settings{RequiresManualUpgrade: true, Recheck: time.Minute}}
	if _, err := store.CreateRequest(ctx, firmware.Request{MachineID: "gb1", Initiator: "test", CreatedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	// The body runs until it waits on the gate: a runtime that ends it at
	// its first sleep of the recheck interval.
	rt := &gateRuntime{Local: flow.Local{Steps: exec.Steps(), Clock: clk}}
	_, _ = firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: "gb1"})
	u, ok, err := store.Update(ctx, "gb1")
	if err != nil || !ok || u.Substate != firmware.WaitingForManualUpgrade {
		t.Fatalf("the MNNVL host's update is %q (%v), want %s", u.Substate, err, firmware.WaitingForManualUpgrade)
	}
	if st := fb.State(); st.Uploads != 0 {
		t.Errorf("%d uploads before the manual procedure was confirmed", st.Uploads)
	}
}

// gateRuntime ends a body at its first sleep of a minute or more.
type gateRuntime struct{ flow.Local }

func (g *gateRuntime) Sleep(ctx context.Context, d time.Duration) error {
	if d >= time.Minute {
		return context.Canceled
	}
	return g.Local.Sleep(ctx, d)
}
