package fakes_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/ironic/ironictest"
)

func TestIronicContract(t *testing.T) {
	ironictest.Run(t, func(t *testing.T) ironictest.Env {
		site := fakes.NewSite()
		ir := site.AddIronic("ironic-1")
		return ironictest.Env{
			Client: ir, Driver: "redfish",
			Interfaces: map[string]string{"raid": "agent", "inspect": "inspector"},
			// redfish's default deploy interface is direct: the agent erases.
			CleanStep: ironic.EraseMetadata, UnsupportedCleanStep: ironic.CleanStep{Interface: "bios", Step: "factory_reset"},
			Sleep: site.Clock.Advance,
			Poll:  10 * time.Second, Timeout: time.Hour,
			HoldLock: func(t *testing.T, n ironic.Node) { ir.HoldLock(n.Name, "other-conductor", time.Minute) },
			CleanFail: func(t *testing.T, n ironic.Node) {
				ir.FailCleaning(n.Name, 1)
				if err := ir.ChangeProvisionState(context.Background(), n.UUID, ironic.ActionProvide); err != nil {
					t.Fatalf("provide: %v", err)
				}
			},
		}
	})
}

// A host whose frontend links are all down never reaches the inspector or
// the conductor from its ramdisk: inspection and cleaning hang until the
// services' own timeouts, as in a real deployment.
func TestIronicIsolatedHostHangsUntilTimeouts(t *testing.T) {
	ctx := context.Background()
	site := fakes.NewSite()
	ir := site.AddIronic("ironic-1")
	h := site.AddHost(fakes.HostSpec{Name: "h"})
	for i := range h.NICs {
		h.NICs[i].Link = "down"
	}
	n, err := ir.CreateNode(ctx, ironic.NodeCreate{Name: "h", Driver: "redfish", DriverInfo: map[string]any{"redfish_address": "x"}, Interfaces: map[string]string{"raid": "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	state := func() string { got, _ := ir.GetNode(ctx, n.UUID); return got.ProvisionState }
	if err := ir.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage); err != nil {
		t.Fatal(err)
	}
	site.Clock.Advance(time.Minute)
	if err := ir.ChangeProvisionState(ctx, n.UUID, ironic.ActionInspect); err != nil {
		t.Fatal(err)
	}
	site.Clock.Advance(30 * time.Minute)
	if got := state(); got != ironic.StateInspectWait {
		t.Fatalf("after 30m: %s, want inspect wait (the ramdisk cannot report)", got)
	}
	site.Clock.Advance(time.Hour)
	got, _ := ir.GetNode(ctx, n.UUID)
	if got.ProvisionState != ironic.StateInspectFailed || got.LastError == "" {
		t.Fatalf("after the inspector timeout: %s %q", got.ProvisionState, got.LastError)
	}
	// Links back: inspection completes.
	for i := range h.NICs {
		h.NICs[i].Link = "up"
	}
	if err := ir.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage); err != nil {
		t.Fatal(err)
	}
	site.Clock.Advance(time.Minute)
	if err := ir.ChangeProvisionState(ctx, n.UUID, ironic.ActionInspect); err != nil {
		t.Fatal(err)
	}
	site.Clock.Advance(10 * time.Minute)
	if got := state(); got != ironic.StateManageable {
		t.Fatalf("with links up: %s", got)
	}
}

// A node read before a write keeps what it showed, as a decoded answer
// would: the fake shares a node's maps between reads and replaces them on
// every write (copy on write), never modifying one it has shown.
func TestIronicReadsKeepWhatTheyShowed(t *testing.T) {
	ctx := context.Background()
	site := fakes.NewSite()
	ir := site.AddIronic("ironic-1")
	created, err := ir.CreateNode(ctx, ironic.NodeCreate{Name: "h", Driver: "redfish",
		DriverInfo: map[string]any{"redfish_address": "https://10.0.0.1", "redfish_password": "s3cret"},
		Properties: map[string]any{"cpu_arch": "x86_64", "root_device": map[string]any{"serial": "A"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := created.DriverInfo["redfish_password"]; got != "******" {
		t.Fatalf("password shown as %v, want masked", got)
	}
	before, err := ir.GetNode(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ir.UpdateNode(ctx, "h", []ironic.PatchOp{
		{Op: "add", Path: "/properties/root_device", Value: map[string]any{"serial": "B"}},
		{Op: "remove", Path: "/properties/cpu_arch"},
		{Op: "add", Path: "/driver_info/redfish_address", Value: "https://10.0.0.2"},
		{Op: "add", Path: "/driver_info/redfish_password", Value: "n3w"},
		{Op: "add", Path: "/boot_interface", Value: "pxe"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := ir.SetTraits(ctx, "h", []string{"CUSTOM_X"}); err != nil {
		t.Fatal(err)
	}
	ir.SetProperty("h", "memory_mb", 1024)
	after, err := ir.GetNode(ctx, "h")
	if err != nil {
		t.Fatal(err)
	}
	if before.Properties["cpu_arch"] != "x86_64" || before.Properties["root_device"].(map[string]any)["serial"] != "A" ||
		before.DriverInfo["redfish_address"] != "https://10.0.0.1" || before.Interfaces["boot"] != "ipxe" ||
		len(before.Traits) != 0 || before.Properties["memory_mb"] != nil {
		t.Fatalf("a write changed a node read before it: %+v", before)
	}
	if _, ok := after.Properties["cpu_arch"]; ok || after.Properties["root_device"].(map[string]any)["serial"] != "B" ||
		after.DriverInfo["redfish_address"] != "https://10.0.0.2" || after.DriverInfo["redfish_password"] != "******" ||
		after.Interfaces["boot"] != "pxe" || len(after.Traits) != 1 || after.Properties["memory_mb"] != float64(1024) {
		t.Fatalf("a read after the writes does not show them: %+v", after)
	}
	if got := ir.DriverInfoSecret("h", "redfish_password"); got != "n3w" {
		t.Fatalf("stored password %q, want the new one", got)
	}
}
