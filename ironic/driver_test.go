package ironic_test

import (
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/ironic"
)

// fake-hardware is accepted next to the real drivers so a test deployment
// (a standalone Ironic with fake power) can be enrolled end to end; anything
// else stays an IRONIC_INPUT_INVALID naming the driver field.
func TestValidDriver(t *testing.T) {
	for _, tt := range []struct {
		driver string
		ok     bool
	}{
		{"redfish", true},
		{"idrac", true},
		{"ipmi", true},
		{ironic.DriverFakeHardware, true},
		{"fake", false},
		{"Redfish", false},
		{"ilo", false},
		{"", false},
	} {
		t.Run(tt.driver, func(t *testing.T) {
			if got := ironic.ValidDriver(tt.driver); got != tt.ok {
				t.Fatalf("ValidDriver(%q) = %v, want %v", tt.driver, got, tt.ok)
			}
			spec := ironic.NodeSpec{
				Name: "h1", Driver: tt.driver, BMCAddress: "10.0.0.5",
				Interfaces: map[string]string{"raid": "fake"},
				NICs:       []ironic.NIC{{Name: "eth0", MAC: "02:00:00:00:00:01"}},
			}
			err := spec.Validate()
			if tt.ok {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			f, isF := hostforge.AsFailure(err)
			if !isF || f.Code != ironic.InputInvalid.Code || !strings.Contains(f.Error(), "driver") {
				t.Fatalf("Validate error %v, want %s naming the driver", err, ironic.InputInvalid.Code)
			}
		})
	}
}
