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
			Sleep:      site.Clock.Advance,
			Poll:       10 * time.Second, Timeout: time.Hour,
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
