package firmware_test

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
)

const exampleCatalog = `
[host_models.r750]
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["uefi", "bmc"]
[host_models.r750.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
known_firmware = [ { version = "1.13.2", filename = "/fw/bios-1.13.2.exe", default = true } ]
[host_models.r750.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."
known_firmware = [ { version = "7.10.30.00", filename = "/fw/idrac-7.10.exe", default = true } ]
`

// Drift of one host's inventory against the catalog.
func ExampleDrift() {
	cat, err := firmware.ParseCatalog("site.toml", []byte(exampleCatalog))
	if err != nil {
		fmt.Println(err)
		return
	}
	inv := firmware.Inventory{
		Identity: firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750"},
		Entries: []firmware.InventoryEntry{
			{ID: "Installed-159-1.13.2__BIOS.Setup.1-1", Version: "1.13.2", State: "Enabled"},
			{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "6.00.30.00", State: "Enabled"},
			{ID: "Previous-25227-4.40.29.00__iDRAC.Embedded.1-1", Version: "4.40.29.00", State: "Enabled"},
		},
	}
	r := firmware.Drift(cat, inv)
	fmt.Println(r.Vendor, r.Model, "drifted:", r.Drifted)
	for _, c := range r.Components {
		fmt.Println(c.Component, c.Status, *c.Desired, c.Reported[0].Version)
	}
	// Output:
	// Dell PowerEdge R750 drifted: true
	// uefi ok 1.13.2 1.13.2
	// bmc drifted 7.10.30.00 6.00.30.00
}

// The update ceiling takes total and unhealthy hosts together.
func ExampleCeiling() {
	pct, abs := 20, 5
	fmt.Println(firmware.Ceiling(nil, &pct, firmware.Fleet{Total: 100, Unhealthy: 10}))
	fmt.Println(firmware.Ceiling(&abs, &pct, firmware.Fleet{Total: 100, Unhealthy: 10}))
	fmt.Println(firmware.Ceiling(nil, nil, firmware.Fleet{Total: 100}))
	// Output:
	// 10
	// 5
	// 0
}

// One pass of the update manager, then the update workflow of the host it
// selected, inline on virtual time against fakes.
func ExampleUpdate() {
	ctx := context.Background()
	clk := clock.NewFake(clock.Epoch)
	cat, _ := firmware.ParseCatalog("site.toml", []byte(exampleCatalog))

	// The world: one Ready Dell host whose BIOS and iDRAC are behind.
	bmc := fakes.NewFirmwareBMC(clk, "Dell Inc.", "PowerEdge R750", "Dell", []fakes.FirmwareMember{
		{ID: "Installed-159-1.8.2__BIOS.Setup.1-1", Version: "1.8.2", State: "Enabled"},
		{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "6.00.30.00", State: "Enabled"},
	})
	bmc.AddImage("/fw/bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateHostReboot})
	bmc.AddImage("/fw/idrac-7.10.exe", fakes.FirmwareImage{Targets: []string{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"}, Version: "7.10.30.00", Activation: fakes.ActivateSelf})
	bmcs := firmwarefake.NewBMCs()
	bmcs.Add("m-1", bmc)
	hosts := firmwarefake.NewHosts(firmware.Host{MachineID: "m-1", State: firmware.HostReady})
	store := firmwarefake.NewMemStore()
	inv, _ := bmcs.Inventory(ctx, "m-1")
	m, _ := cat.ForHost(inv.Identity)
	_ = store.PutObserved(ctx, firmware.Observed{MachineID: "m-1", Identity: inv.Identity, Reported: m.Readings(inv.Entries), At: clk.Now()})

	// The pass selects the drifted host.
	ceiling := 10
	settings := firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: &ceiling}
	mgr := &firmware.Manager{Store: store, Hosts: hosts, Catalog: cat, Settings: settings, Clock: clk}
	rep, _ := mgr.Pass(ctx)
	fmt.Println("started:", rep.Started)

	// Its workflow runs inline; the 30-second polls and the resets' pauses
	// are slept on the fake clock.
	exec := &firmware.Executor{Store: store, Hosts: hosts, BMC: bmcs, Catalog: cat, Settings: settings, Clock: clk}
	rt := &flow.Local{Steps: exec.Steps(), Clock: clk}
	res, err := firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: "m-1"})
	fmt.Println(res.Outcome, err)
	fmt.Println("BIOS", bmc.Version("Installed-159-1.8.2__BIOS.Setup.1-1"), "iDRAC", bmc.Version("Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"))
	fmt.Println("resets:", bmc.State().Resets)
	// Output:
	// started: [m-1]
	// done <nil>
	// BIOS 1.13.2 iDRAC 7.10.30.00
	// resets: [ForceRestart]
}
