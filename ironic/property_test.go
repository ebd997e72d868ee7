package ironic_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// TestInvariantsUnderRandomFaults runs the Ironic phases as the workflow does
// (inspection, cleaning, finalize, with whole-attempt reruns) over random
// starting states and fault schedules, and checks the never-do list after
// every run.
func TestInvariantsUnderRandomFaults(t *testing.T) {
	starts := []string{"", ironic.StateEnroll, ironic.StateManageable, ironic.StateInspectFailed, ironic.StateCleanFailed,
		ironic.StateDeployFailed, ironic.StateError, ironic.StateActive, ironic.StateAvailable}
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w := newWorld(t, fakes.HostSpec{NoBond: r.IntN(3) == 0})
			w.ir.Timing.InspectWait = time.Duration(1+r.IntN(10)) * time.Minute
			start := starts[r.IntN(len(starts))]
			owned := r.IntN(3) == 0
			swRAID := r.IntN(4) == 0
			hint := map[string]any{"serial": "S6XXNX0T000001"}
			if start != "" {
				if _, err := w.inspect(t, func(in *ironic.InspectionIn) { in.Inspect = false }); err != nil {
					t.Fatal(err)
				}
				w.ir.SetState(w.host.Name, start)
				w.ir.SetProperty(w.host.Name, "root_device", hint)
				if start == ironic.StateCleanFailed {
					w.ir.SetMaintenanceFlag(w.host.Name, true, "clean failure")
				}
				if owned {
					w.ir.SetInstance(w.host.Name, "inst-1")
				}
			}
			w.spec.SoftwareRAID = swRAID
			// Random faults.
			if r.IntN(3) == 0 {
				w.site.Inject(fakes.SysIronic, "provision", 1+r.IntN(2), hostforge.ErrUnavailable)
			}
			if r.IntN(3) == 0 && start != "" {
				w.ir.HoldLock(w.host.Name, "conductor-x", time.Duration(r.IntN(20))*time.Minute)
			}
			if r.IntN(3) == 0 && start != "" {
				w.ir.FailInspection(w.host.Name, 1)
			}
			if r.IntN(3) == 0 && start != "" {
				w.ir.FailCleaning(w.host.Name, 1)
			}
			if r.IntN(5) == 0 && start != "" {
				w.ir.IgnorePowerOn(w.host.Name, 1)
			}
			before := 0
			if start != "" {
				before = len(w.ir.Writes(w.host.Name))
			}
			err := w.enrol(t, r.IntN(2) == 0)

			n, exists := w.ir.Node(w.host.Name)
			if !exists {
				t.Fatalf("no node after the run (err %v)", err)
			}
			writes := w.ir.Writes(w.host.Name)[before:]
			// Nova-owned nodes are never mutated, power-cycled or recovered.
			if owned && start != "" && len(writes) != 0 {
				t.Fatalf("owned node (start %s) written: %+v", start, writes)
			}
			// deploy failed / error are never recovered.
			if start == ironic.StateDeployFailed || start == ironic.StateError {
				if n.ProvisionState != start || len(writes) != 0 {
					t.Fatalf("%s node touched: now %s, writes %+v", start, n.ProvisionState, writes)
				}
			}
			// Ironic never gets the shared monitoring credential.
			mon, _ := w.site.Vault.Item(context.Background(), fakes.MonitoringItem)
			for _, k := range []string{"redfish_password", "ipmi_password", "redfish_username", "ipmi_username"} {
				if v := w.ir.DriverInfoSecret(w.host.Name, k); v != "" && (v == mon["password"] || v == mon["username"]) {
					t.Fatalf("driver_info %s holds the monitoring credential", k)
				}
			}
			// PXE on exactly one port, the first frontend NIC's.
			if ports := w.ir.Ports(w.host.Name); len(ports) > 0 {
				pxe := 0
				for _, p := range ports {
					if p.PXEEnabled {
						pxe++
						if p.Address != w.spec.NICs[0].MAC {
							t.Fatalf("PXE on %s, not the first NIC", p.Address)
						}
					}
				}
				if pxe != 1 {
					t.Fatalf("%d PXE ports", pxe)
				}
			}
			// The root-device hint is never stripped from a non-software-RAID node.
			if start != "" && !swRAID {
				if _, ok := n.Properties["root_device"]; !ok {
					t.Fatalf("root_device stripped from a non-software-RAID node")
				}
			}
			// Maintenance is restored iff the manage recovering clean failed fails:
			// a restore is always directly preceded by the clear (the manage in
			// between failed), and never follows a manage that was accepted.
			for i, wr := range writes {
				if wr.Op == "maintenance" && strings.HasPrefix(wr.Detail, "true") {
					if i == 0 || writes[i-1].Op != "maintenance" || !strings.HasPrefix(writes[i-1].Detail, "false") {
						t.Fatalf("maintenance set without a failed manage right before: %+v", writes)
					}
				}
			}
			if hostforge.CodeOf(err) == ironic.RecoveryFailed.Code || (err != nil && strings.Contains(err.Error(), "maintenance restored")) {
				if !n.Maintenance {
					t.Fatalf("manage failed but maintenance not restored: %v", err)
				}
			}
			if err == nil && n.ProvisionState != ironic.StateAvailable && n.ProvisionState != ironic.StateActive && !(owned && n.ProvisionState == ironic.StateManageable) {
				t.Fatalf("success but node in %s", n.ProvisionState)
			}
		})
	}
}

// enrol runs inspection, cleaning and finalize with up to three attempts
// per half on retryable failures, as the workflow does.
func (w *world) enrol(t *testing.T, inspect bool) error {
	t.Helper()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if _, err = w.inspect(t, func(in *ironic.InspectionIn) { in.Inspect = inspect }); err == nil {
			break
		}
		if f, ok := hostforge.AsFailure(err); !ok || !f.Retryable {
			return err
		}
		w.site.Clock.Advance(time.Minute)
	}
	if err != nil {
		return err
	}
	for attempt := 0; attempt < 3; attempt++ {
		if _, err = w.clean(t, 3*time.Hour); err == nil {
			break
		}
		if c := hostforge.CodeOf(err); c != ironic.CleaningFailed.Code && c != ironic.Unavailable.Code {
			return err
		}
		w.site.Clock.Advance(time.Minute)
	}
	if err != nil {
		return err
	}
	_, err = w.p.Finalize(context.Background(), ironic.FinalizeIn{Spec: w.spec})
	return err
}
