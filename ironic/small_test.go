package ironic_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

func TestArchTraitAndStates(t *testing.T) {
	for in, want := range map[string]string{"x86_64": "HW_ARCH_X86_64", "aarch64": "HW_ARCH_AARCH64", "": ""} {
		if got := ironic.ArchTrait(in); got != want {
			t.Errorf("ArchTrait(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tt := range []struct {
		n         ironic.Node
		satisfied bool
		stable    bool
	}{
		{ironic.Node{ProvisionState: ironic.StateActive}, true, true},
		{ironic.Node{ProvisionState: ironic.StateAvailable}, true, true},
		{ironic.Node{ProvisionState: ironic.StateManageable}, false, true},
		{ironic.Node{ProvisionState: ironic.StateManageable, InstanceUUID: "i"}, true, true},
		{ironic.Node{ProvisionState: ironic.StateManageable, TargetProvisionState: ironic.StateAvailable}, false, false},
		{ironic.Node{ProvisionState: ironic.StateCleanWait}, false, false},
	} {
		if ironic.Satisfied(tt.n) != tt.satisfied || ironic.Stable(tt.n) != tt.stable {
			t.Errorf("%+v: satisfied %v stable %v", tt.n, ironic.Satisfied(tt.n), ironic.Stable(tt.n))
		}
	}
}

func TestIsNodeLocked(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("x: %w", ironic.ErrNodeLocked), true},
		{fmt.Errorf("409 Node abc is locked by host c1: %w", hostforge.ErrConflict), true},
		{fmt.Errorf("409 A port with MAC address already exists: %w", hostforge.ErrConflict), false},
		{errors.New("is locked by host but not a conflict"), false},
	} {
		if got := ironic.IsNodeLocked(tt.err); got != tt.want {
			t.Errorf("IsNodeLocked(%v) = %v", tt.err, got)
		}
	}
}

func TestRedfishAddressOverrideAndExtras(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.spec.RedfishAddressOverride = "http://127.0.0.1:8000"
	w.spec.DriverInfoExtras = map[string]any{"redfish_system_id": "/redfish/v1/Systems/1", "redfish_password": "operator-extra"}
	if _, err := w.p.Prelude(context.Background(), w.spec); err != nil {
		t.Fatal(err)
	}
	n := w.node(t)
	if n.DriverInfo["redfish_address"] != "http://127.0.0.1:8000" || n.DriverInfo["redfish_system_id"] != "/redfish/v1/Systems/1" {
		t.Fatalf("driver_info = %v", n.DriverInfo)
	}
	if w.ir.DriverInfoSecret(n.Name, "redfish_password") != w.adminPassword(t) {
		t.Fatal("an operator extra overrode the managed password")
	}
}

func TestNoCredentialSourceAndInventoryErrors(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.p.Credentials = nil
	// Phases wired without a credential source is a defect of the wiring,
	// not a vault item for an operator to create.
	_, err := w.p.Prelude(context.Background(), w.spec)
	wantCode(t, err, hostforge.Unclassified.Code)

	w = newWorld(t, fakes.HostSpec{})
	if _, err := w.inspect(t); err != nil {
		t.Fatal(err)
	}
	w.ir.SetInventory(w.host.Name, []byte("not json"))
	w.ir.SetState(w.host.Name, ironic.StateAvailable) // satisfied: only the cached inventory is verified
	_, err = w.inspect(t)
	wantCode(t, err, ironic.InventoryMissing.Code)
	w.site.Inject(fakes.SysIronic, "inventory", 1, hostforge.ErrUnavailable)
	_, err = w.inspect(t)
	wantCode(t, err, ironic.Unavailable.Code)
}

func TestLinkObservationFailure(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.spec.BMCAddress = "10.99.99.99" // no BMC answers there
	_, err := w.inspect(t)
	wantCode(t, err, ironic.LinkObservationFailed.Code)
}

// An unwired guard never passes silently: it fails until a reader is wired
// or the deployment opts out explicitly. An unwired verifier fails too.
func TestUnwiredGuardAndVerifierFail(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.p.Links = nil
	_, err := w.inspect(t)
	wantCode(t, err, ironic.LinkGuardUnwired.Code)
	w.p.NoLinkGuard = true
	if _, err := w.inspect(t); err != nil {
		t.Fatalf("with NoLinkGuard the guard is skipped: %v", err)
	}
	w = newWorld(t, fakes.HostSpec{})
	w.p.Verifier = nil
	_, err = w.inspect(t)
	wantCode(t, err, ironic.VerifierMissing.Code)
}
