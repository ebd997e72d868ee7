package redfish_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// sized pads the rig's BMC to bmc.MaxCollection members in every
// collection an attempt reads: account slots, boot options, job queue.
func (r *rig) sized(t *testing.T, vendor string) {
	t.Helper()
	sys := map[string]string{"dell": "System.Embedded.1", "lenovo": "1", "ami": "DGX", "supermicro": "1"}[vendor]
	colls := []string{"/redfish/v1/AccountService/Accounts", "/redfish/v1/Systems/" + sys + "/BootOptions"}
	if vendor == "dell" {
		colls = append(colls, "/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs")
	}
	for _, c := range colls {
		if err := r.emu.Pad(c, bmc.MaxCollection); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAttemptRequestsWithinBound: on BMCs sized like real ones, no attempt
// of the phase makes more Redfish requests than bmc.MaxRequestsPerAttempt,
// the figure behind the step's Temporal timeout (bmc.AttemptBound). The
// scenarios are the heaviest attempts: a drifted BMC converged from its
// factory password with a forced reset, a lost answer to the password
// change, and busy answers.
func TestAttemptRequestsWithinBound(t *testing.T) {
	scenarios := []struct {
		name  string
		setup func(r *rig)
	}{
		{"drifted", func(*rig) {}},
		{"busy", func(r *rig) { r.emu.Busy(3, "busy") }},
		{"lost password answer", func(r *rig) {
			r.emu.LoseAnswers(http.MethodPatch, "/AccountService/Accounts/2", 1)
		}},
	}
	heaviest := 0
	for _, v := range []string{"dell", "lenovo", "ami", "supermicro"} {
		for _, sc := range scenarios {
			for _, rotate := range []bool{false, true} {
				if rotate && v == "supermicro" {
					continue
				}
				r := newRig(t, v)
				if rotate {
					r = rotationRig(t, v, false)
				}
				r.sized(t, v)
				sc.setup(r)
				r.tg.ForceRestart, r.tg.RunID = true, "run-1"
				for i := 0; ; i++ {
					before := len(r.emu.Requests())
					_, err := r.cfg.Configure(context.Background(), r.tg)
					n := len(r.emu.Requests()) - before
					heaviest = max(heaviest, n)
					if n > bmc.MaxRequestsPerAttempt {
						t.Errorf("%s/%s/rotate=%v: attempt %d made %d requests, more than bmc.MaxRequestsPerAttempt (%d)", v, sc.name, rotate, i, n, bmc.MaxRequestsPerAttempt)
					}
					if w, ok := hostforge.AsWait(err); ok && i < 1000 {
						r.site.Clock.Advance(w.After)
						continue
					}
					if bmc.PasswordUnconfirmed.Is(err) {
						continue // the rerun of a retryable failure is an attempt too
					}
					if err != nil {
						t.Errorf("%s/%s/rotate=%v: %v", v, sc.name, rotate, err)
					}
					break
				}
			}
		}
	}
	t.Logf("heaviest attempt: %d requests (bound %d)", heaviest, bmc.MaxRequestsPerAttempt)
}

// TestLinkReadRequestsWithinBound: one link read for the Ironic guard, on
// a host with MaxCollection NICs, stays within bmc.LinkReadRequests.
func TestLinkReadRequestsWithinBound(t *testing.T) {
	for _, v := range []string{"dell", "lenovo", "ami", "supermicro"} {
		r := newRig(t, v)
		sys := map[string]string{"dell": "System.Embedded.1", "lenovo": "1", "ami": "DGX", "supermicro": "1"}[v]
		if err := r.emu.Pad("/redfish/v1/Systems/"+sys+"/EthernetInterfaces", bmc.MaxCollection); err != nil {
			t.Fatal(err)
		}
		reader := &bmc.LinkReader{Connector: r.cfg.Connector, Vault: r.site.Vault}
		before := len(r.emu.Requests())
		if _, err := reader.FrontendLinks(context.Background(), r.tg.Address, r.tg.AdminItem, []string{"b8:3f:d2:90:97:c4"}); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if n := len(r.emu.Requests()) - before; n > bmc.LinkReadRequests {
			t.Errorf("%s: a link read made %d requests, more than bmc.LinkReadRequests (%d)", v, n, bmc.LinkReadRequests)
		}
	}
}
