package fleetsim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/retirement"
)

// TestRetirePass: enroll a fleet, retire half of it (a share with a
// tenant's instance, refused untouched), retire the retired again (no
// write), and enroll them again to available with fresh credentials.
func TestRetirePass(t *testing.T) {
	f, err := fleetsim.Build(fleetsim.Config{Hosts: 120, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	rep := f.RetirePass(context.Background(), fleetsim.RetireOptions{Wall: clock.Real{}})
	if len(rep.Violations) > 0 {
		t.Fatalf("%d violations:\n%s", len(rep.Violations), strings.Join(rep.Violations, "\n"))
	}
	if rep.Retiring != 60 || rep.InUse < 3 {
		t.Fatalf("retiring %d, in use %d", rep.Retiring, rep.InUse)
	}
	retired := rep.Retiring - rep.InUse
	if rep.Retire.Outcomes["ok"] != retired || rep.Retire.Outcomes[retirement.NodeInUse.Code] != rep.InUse {
		t.Fatalf("retire outcomes %v", rep.Retire.Outcomes)
	}
	if rep.Rerun.Writes != 0 || rep.Rerun.Outcomes["ok"] != retired {
		t.Fatalf("retire rerun: %d writes, outcomes %v", rep.Rerun.Writes, rep.Rerun.Outcomes)
	}
	if rep.Reenroll.Outcomes["ok"] != retired {
		t.Fatalf("re-enroll outcomes %v", rep.Reenroll.Outcomes)
	}
	if rep.Deliveries != 2*retired {
		t.Fatalf("%d deliveries, want two per retired host", rep.Deliveries)
	}
	for _, sys := range []string{"ironic", "dhcp", "bmc", "vault", "netbox", "fleet_manager"} {
		if rep.Retire.CallsPerHost[sys].Writes <= 0 {
			t.Errorf("the retire pass wrote nothing to %s: %v", sys, rep.Retire.CallsPerHost)
		}
	}
}
