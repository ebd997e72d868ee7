package enrollment_test

import (
	"testing"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// A test deployment enrols hosts with Ironic's fake-hardware driver: the
// plan accepts it, and the node is created with it and reaches available.
func TestIronicFakeHardwareDriver(t *testing.T) {
	settings := map[string]any{
		"driver": ironic.DriverFakeHardware, "interface_type": "25gbase-x-sfp28",
		"interfaces":     map[string]any{"inspect": "inspector", "raid": "fake", "network": "noop"},
		"bond":           map[string]any{"mode": "802.3ad", "miimon": 100},
		"resource_class": "baremetal", "cpu_arch": "x86_64",
	}
	w := newIronicWorld(t, fakes.HostSpec{Name: "h1", ConfigContext: map[string]any{"ironic_settings": settings}})
	res, err := w.enroll(t, enrollment.Params{})
	if err != nil || res.ProvisionState != ironic.StateAvailable {
		t.Fatalf("result %+v, %v", res, err)
	}
	n, ok := w.ir.Node("h1")
	if !ok || n.Driver != ironic.DriverFakeHardware || n.Interfaces["raid"] != "fake" || n.Interfaces["inspect"] != "inspector" {
		t.Fatalf("node %+v, want fake-hardware with raid fake and inspect inspector", n)
	}
}
