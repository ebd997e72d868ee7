package ironic_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/verify"
)

// world is one fake site with one host and the phases over its fake Ironic.
type world struct {
	site *fakes.Site
	ir   *fakes.Ironic
	host *fakes.Host
	p    *ironic.Phases
	spec ironic.NodeSpec
	exp  verify.Expectations
	// locks counts node_locked waits seen by the drivers.
	locks int
}

func newWorld(t *testing.T, hs fakes.HostSpec) *world {
	t.Helper()
	site := fakes.NewSite()
	ir := site.AddIronic("ironic-1")
	if hs.Name == "" {
		hs.Name = "h1"
	}
	h := site.AddHost(hs)
	w := &world{site: site, ir: ir, host: h}
	w.p = &ironic.Phases{Verifier: verify.Verifier{}, Client: ir, Credentials: ironic.VaultCredentials{Vault: site.Vault}, Links: site.BMCs, Clock: site.Clock}
	w.spec = ironic.NodeSpec{
		Name: h.Name, Driver: "redfish", BMCAddress: h.OOBIP, Project: "enrol",
		CredentialItem: fakes.AdminItem(h.Name), MonitoringItem: fakes.MonitoringItem,
		Interfaces:   map[string]string{"boot": "redfish-virtual-media", "inspect": "inspector", "management": "redfish", "power": "redfish", "raid": "agent", "network": "noop"},
		CPUArch:      "x86_64",
		Capabilities: map[string]string{"boot_mode": "uefi"},
	}
	if !hs.NoBond {
		w.spec.Bond = &ironic.Bond{Mode: "802.3ad", Miimon: 100, XmitHashPolicy: "layer3+4"}
	}
	var cables []verify.Cable
	for _, n := range h.NICs {
		w.spec.NICs = append(w.spec.NICs, ironic.NIC{Name: n.Name, MAC: n.MAC, Switch: n.Switch, Port: n.Port})
		cables = append(cables, verify.Cable{Interface: n.Name, MAC: n.MAC, Switch: n.Switch, Port: n.Port})
	}
	dev, err := site.NetBox.Device(context.Background(), h.Name)
	if err != nil {
		t.Fatal(err)
	}
	validation, _ := dev.ConfigContext["inspection_validation"].(map[string]any)
	if w.exp, err = verify.ExpectationsFrom(h.Name, validation, cables, false); err != nil {
		t.Fatal(err)
	}
	return w
}

const maxCalls = 2000

// inspect drives the inspection half the way the workflow does: waits
// sleep on the clock, progress is carried, until done or a failure.
func (w *world) inspect(t *testing.T, opts ...func(*ironic.InspectionIn)) (ironic.InspectionOut, error) {
	t.Helper()
	in := ironic.InspectionIn{Spec: w.spec, Inspect: true, Expect: w.expJSON(t)}
	for _, o := range opts {
		o(&in)
	}
	for i := 0; i < maxCalls; i++ {
		out, err := w.p.Inspection(context.Background(), in)
		if wt, ok := hostforge.AsWait(err); ok {
			if wt.Reason == ironic.WaitNodeLocked {
				w.locks++
			}
			w.site.Clock.Advance(wt.After)
			continue
		}
		if err != nil || out.Done {
			return out, err
		}
		in.Progress = out.Progress
		w.site.Clock.Advance(out.Next)
	}
	t.Fatalf("inspection did not finish in %d calls", maxCalls)
	return ironic.InspectionOut{}, nil
}

func (w *world) clean(t *testing.T, deadline time.Duration) (ironic.CleaningOut, error) {
	t.Helper()
	in := ironic.CleaningIn{Spec: w.spec, Deadline: w.site.Clock.Now().Add(deadline)}
	for i := 0; i < maxCalls; i++ {
		out, err := w.p.Cleaning(context.Background(), in)
		if wt, ok := hostforge.AsWait(err); ok {
			if wt.Reason == ironic.WaitNodeLocked {
				w.locks++
			}
			w.site.Clock.Advance(wt.After)
			continue
		}
		if err != nil || out.Done {
			return out, err
		}
		in.Progress = out.Progress
		w.site.Clock.Advance(out.Next)
	}
	t.Fatalf("cleaning did not finish in %d calls", maxCalls)
	return ironic.CleaningOut{}, nil
}

func (w *world) node(t *testing.T) ironic.Node {
	t.Helper()
	n, ok := w.ir.Node(w.host.Name)
	if !ok {
		t.Fatalf("node %s does not exist", w.host.Name)
	}
	return n
}

func (w *world) adminPassword(t *testing.T) string {
	t.Helper()
	it, err := w.site.Vault.Item(context.Background(), fakes.AdminItem(w.host.Name))
	if err != nil {
		t.Fatal(err)
	}
	return it["password"]
}

func ops(writes []fakes.IronicWrite, op string) []string {
	var out []string
	for _, w := range writes {
		if w.Op == op {
			out = append(out, w.Detail)
		}
	}
	return out
}

func wantCode(t *testing.T, err error, code string) *hostforge.Failure {
	t.Helper()
	f, ok := hostforge.AsFailure(err)
	if !ok || f.Code != code {
		t.Fatalf("error = %v, want failure %s", err, code)
	}
	return f
}

func TestInspectionFreshHost(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.spec.RootDevice = map[string]any{"serial": "S6XXNX0T000001"}
	out, err := w.inspect(t)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Progress.Prelude.Created || out.Progress.Reused || !out.Progress.Verified {
		t.Fatalf("progress = %+v, want created, inspected and verified", out.Progress)
	}
	n := w.node(t)
	if n.ProvisionState != ironic.StateManageable || n.PowerState != ironic.PowerOn {
		t.Fatalf("node %s / %s, want manageable and powered on", n.ProvisionState, n.PowerState)
	}
	if n.Driver != "redfish" || n.DriverInfo["redfish_address"] != "https://"+w.host.OOBIP || n.Owner != "enrol" || n.Lessee != "enrol" {
		t.Fatalf("node = %+v", n)
	}
	if got := w.ir.DriverInfoSecret(n.Name, "redfish_password"); got != w.adminPassword(t) {
		t.Fatalf("Ironic got password %q, want the per-host admin password", got)
	}
	if n.Interfaces["raid"] != "agent" || n.Interfaces["network"] != "noop" || n.Properties["capabilities"] != "boot_mode:uefi" {
		t.Fatalf("interfaces/properties = %v / %v", n.Interfaces, n.Properties)
	}
	ports := w.ir.Ports(n.Name)
	if len(ports) != len(w.host.NICs) {
		t.Fatalf("%d ports, want %d", len(ports), len(w.host.NICs))
	}
	for _, p := range ports {
		first := p.Address == w.spec.NICs[0].MAC
		if p.PXEEnabled != first {
			t.Errorf("port %s pxe=%v, want PXE only on the first NIC", p.Address, p.PXEEnabled)
		}
		if p.PortgroupUUID == "" || p.LocalLinkConnection["switch_id"] != ironic.PlaceholderSwitchID || p.LocalLinkConnection["switch_info"] == "" {
			t.Errorf("port %+v: want it in the portgroup with a recorded link", p)
		}
	}
	// Rerun on the converged node: the inventory is reused, nothing is inspected again.
	before := len(ops(w.ir.Writes(n.Name), "provision"))
	out, err = w.inspect(t)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Progress.Reused || len(ops(w.ir.Writes(n.Name), "provision")) != before {
		t.Fatalf("rerun: reused=%v, provision writes %v", out.Progress.Reused, ops(w.ir.Writes(n.Name), "provision"))
	}
	if !w.node(t).HasTrait("HW_ARCH_X86_64") {
		t.Fatalf("traits = %v", w.node(t).Traits)
	}
	// force_inspection inspects again.
	out, err = w.inspect(t, func(in *ironic.InspectionIn) { in.Force = true })
	if err != nil || out.Progress.Reused || out.Progress.InspectedAt.IsZero() {
		t.Fatalf("forced: %+v %v", out.Progress, err)
	}
}

func TestInspectionMiscabledHostFailsVerification(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.host.NICs[1].Port = "swp63" // really wired elsewhere than NetBox says
	_, err := w.inspect(t)
	if err == nil {
		t.Fatal("a miscabled host verified")
	}
	f, _ := hostforge.AsFailure(err)
	if f == nil || !strings.Contains(f.Error(), "swp63") {
		t.Fatalf("failure %v does not name the port really heard", err)
	}
}

func TestInspectionRunInspectionOff(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.host.NICs[1].Port = "swp63"
	out, err := w.inspect(t, func(in *ironic.InspectionIn) { in.Inspect = false })
	if err != nil || out.Progress.Verified || !out.Progress.InspectedAt.IsZero() {
		t.Fatalf("run_inspection=false: %+v %v", out.Progress, err)
	}
}

func TestLinkGuard(t *testing.T) {
	for _, tt := range []struct {
		name, link string
		code       string
	}{
		{"all down aborts", "down", ironic.LinkDown.Code},
		{"unknown fails open", "unknown", ""},
		{"up passes", "up", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, fakes.HostSpec{})
			w.ir.Timing.InspectWait = 30 * time.Minute
			for i := range w.host.NICs {
				w.host.NICs[i].Link = tt.link
			}
			out, err := w.inspect(t)
			if tt.code == "" {
				if tt.link == "unknown" && err == nil {
					return
				}
				if err != nil || !out.Progress.Link.Passed && tt.link == "up" {
					t.Fatalf("got %+v %v", out.Progress.Link, err)
				}
				return
			}
			f := wantCode(t, err, tt.code)
			if !strings.Contains(f.Message, "check switch/cabling/optics") {
				t.Fatalf("message %q lacks the diagnosis", f.Message)
			}
			if n := w.node(t); n.ProvisionState != ironic.StateInspectFailed {
				t.Fatalf("inspection not aborted: %s", n.ProvisionState)
			}
		})
	}
}

func TestNovaGuard(t *testing.T) {
	for _, tt := range []struct {
		state, instance string
		code            string
	}{
		{ironic.StateActive, "inst-1", ""},
		{ironic.StateAvailable, "", ""},
		{ironic.StateManageable, "inst-1", ""},
		{ironic.StateInspectFailed, "inst-1", ironic.NodeOwned.Code},
		{ironic.StateCleanFailed, "inst-1", ironic.NodeOwned.Code},
		{ironic.StateDeployFailed, "", ironic.NeedsReview.Code},
		{ironic.StateError, "", ironic.NeedsReview.Code},
	} {
		t.Run(tt.state+"/"+tt.instance, func(t *testing.T) {
			w := newWorld(t, fakes.HostSpec{})
			if _, err := w.inspect(t); err != nil {
				t.Fatal(err)
			}
			w.ir.SetState(w.host.Name, tt.state)
			w.ir.SetInstance(w.host.Name, tt.instance)
			w.ir.SetMaintenanceFlag(w.host.Name, tt.state == ironic.StateCleanFailed, "clean failure")
			before := len(w.ir.Writes(w.host.Name))
			out, err := w.inspect(t)
			if tt.code != "" {
				wantCode(t, err, tt.code)
			} else if err != nil || !out.Progress.Prelude.Satisfied || !out.Progress.Verified {
				t.Fatalf("satisfied node: %+v %v", out.Progress, err)
			}
			if _, err := w.clean(t, time.Hour); tt.code == "" && err != nil {
				t.Fatalf("cleaning a satisfied node: %v", err)
			}
			if got := w.ir.Writes(w.host.Name)[before:]; len(got) != 0 {
				t.Fatalf("node in %s with instance %q was written: %+v", tt.state, tt.instance, got)
			}
		})
	}
}

func TestRecovery(t *testing.T) {
	t.Run("inspect failed once is rerun and recovered", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		w.ir.Timing.InspectWait = time.Minute
		if _, err := w.inspect(t, func(in *ironic.InspectionIn) { in.Inspect = false }); err != nil {
			t.Fatal(err)
		}
		w.ir.FailInspection(w.host.Name, 1)
		_, err := w.inspect(t)
		wantCode(t, err, ironic.InspectionFailed.Code)
		out, err := w.inspect(t)
		if err != nil || out.Progress.Prelude.Recovered != ironic.StateInspectFailed {
			t.Fatalf("rerun: %+v %v", out.Progress.Prelude, err)
		}
	})
	t.Run("clean failed: maintenance cleared, manage, not restored", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		w.ir.FailCleaning(w.host.Name, 1)
		_, err := w.clean(t, 3*time.Hour)
		wantCode(t, err, ironic.CleaningFailed.Code)
		if n := w.node(t); n.ProvisionState != ironic.StateCleanFailed || !n.Maintenance {
			t.Fatalf("after a clean failure: %s maintenance=%v", n.ProvisionState, n.Maintenance)
		}
		out, err := w.clean(t, 3*time.Hour)
		if err != nil || out.Progress.Prelude.Recovered != ironic.StateCleanFailed {
			t.Fatalf("rerun of the start: %+v %v", out.Progress.Prelude, err)
		}
		if n := w.node(t); n.ProvisionState != ironic.StateAvailable || n.Maintenance {
			t.Fatalf("after recovery: %s maintenance=%v", n.ProvisionState, n.Maintenance)
		}
	})
	t.Run("clean failed: a failed manage restores maintenance", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		w.ir.SetState(w.host.Name, ironic.StateCleanFailed)
		w.ir.SetMaintenanceFlag(w.host.Name, true, "clean failure")
		w.site.Inject(fakes.SysIronic, "provision", 1, errors.New("500: "+hostforge.ErrUnavailable.Error()))
		w.site.Inject(fakes.SysIronic, "provision", 1, hostforge.ErrUnavailable)
		_, err := w.clean(t, time.Hour)
		f := wantCode(t, err, ironic.Unavailable.Code)
		if !strings.Contains(f.Message, "maintenance restored") {
			t.Fatalf("message %q does not say maintenance was restored", f.Message)
		}
		if n := w.node(t); !n.Maintenance || n.MaintenanceReason != "clean failure" || n.ProvisionState != ironic.StateCleanFailed {
			t.Fatalf("after the failed manage: %s maintenance=%v %q", n.ProvisionState, n.Maintenance, n.MaintenanceReason)
		}
	})
}

func TestNodeLocked(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	if _, err := w.inspect(t, func(in *ironic.InspectionIn) { in.Inspect = false }); err != nil {
		t.Fatal(err)
	}
	w.ir.HoldLock(w.host.Name, "conductor-7", 3*time.Minute)
	_, err := w.p.Inspection(context.Background(), ironic.InspectionIn{Spec: w.spec, Expect: w.expJSON(t)})
	wt, ok := hostforge.AsWait(err)
	if !ok || wt.Reason != ironic.WaitNodeLocked || !strings.Contains(wt.Detail, "conductor-7") || !strings.Contains(wt.Detail, "manageable") {
		t.Fatalf("error = %v, want a node_locked wait naming the holder and the state", err)
	}
	if _, err := w.inspect(t); err != nil {
		t.Fatalf("after the lock clears: %v", err)
	}
	if w.locks == 0 {
		t.Fatal("the driver never saw the lock")
	}
}

func TestTimeouts(t *testing.T) {
	t.Run("power on never happens", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		if _, err := w.inspect(t, func(in *ironic.InspectionIn) { in.Inspect = false }); err != nil {
			t.Fatal(err)
		}
		w.ir.IgnorePowerOn(w.host.Name, 1)
		_, err := w.inspect(t, func(in *ironic.InspectionIn) { in.Force = true })
		wantCode(t, err, ironic.PowerOnTimeout.Code)
		if n := w.node(t); n.ProvisionState != ironic.StateInspectFailed {
			t.Fatalf("inspection not aborted: %s", n.ProvisionState)
		}
	})
	t.Run("inspection never ends", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		w.ir.Timing.InspectWait = 5 * time.Hour
		_, err := w.inspect(t)
		wantCode(t, err, ironic.InspectionTimeout.Code)
	})
	t.Run("cleaning hangs on a maintenance node until the deadline", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		in := ironic.CleaningIn{Spec: w.spec, Deadline: w.site.Clock.Now().Add(time.Hour)}
		out, err := w.p.Cleaning(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		w.site.Clock.Advance(time.Minute)
		w.ir.SetMaintenanceFlag(w.host.Name, true, "someone")
		in.Progress = out.Progress
		for err == nil && !out.Done {
			w.site.Clock.Advance(out.Next)
			out, err = w.p.Cleaning(context.Background(), in)
			in.Progress = out.Progress
		}
		wantCode(t, err, ironic.CleaningTimeout.Code)
	})
}

func TestCleaningAndFinalize(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	w.spec.TargetRAIDConfig = map[string]any{"logical_disks": []any{map[string]any{"size_gb": "MAX", "raid_level": "1"}}}
	if _, err := w.inspect(t); err != nil {
		t.Fatal(err)
	}
	w.ir.SetMaintenanceFlag(w.host.Name, true, "left over")
	out, err := w.clean(t, 3*time.Hour)
	if err != nil || !out.Done {
		t.Fatalf("cleaning: %+v %v", out, err)
	}
	n := w.node(t)
	if n.ProvisionState != ironic.StateAvailable || n.Maintenance || n.TargetRAIDConfig == nil {
		t.Fatalf("after cleaning: %+v", n)
	}
	fin, err := w.p.Finalize(context.Background(), ironic.FinalizeIn{Spec: w.spec})
	if err != nil || !fin.PoweredOn {
		t.Fatalf("finalize: %+v %v", fin, err)
	}
	// Already available: cleaning is skipped, finalize does not churn power.
	w.site.Clock.Advance(time.Minute)
	out, err = w.clean(t, time.Hour)
	if err != nil || !out.Progress.Skipped {
		t.Fatalf("second cleaning: %+v %v", out.Progress, err)
	}
	if fin, err = w.p.Finalize(context.Background(), ironic.FinalizeIn{Spec: w.spec}); err != nil || fin.PoweredOn {
		t.Fatalf("second finalize: %+v %v", fin, err)
	}
}

func TestSwitchToIPMI(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	if _, err := w.inspect(t); err != nil {
		t.Fatal(err)
	}
	res, err := w.p.SwitchToIPMI(context.Background(), w.spec)
	if err != nil || !res.Switched {
		t.Fatalf("switch: %+v %v", res, err)
	}
	n := w.node(t)
	if n.Driver != "ipmi" || n.DriverInfo["ipmi_address"] != w.host.OOBIP || n.Interfaces["power"] != "ipmitool" || n.Interfaces["boot"] != "ipxe" {
		t.Fatalf("after the switch: %+v", n)
	}
	if got := w.ir.DriverInfoSecret(n.Name, "ipmi_password"); got != w.adminPassword(t) {
		t.Fatalf("ipmi password %q is not the per-host admin credential", got)
	}
	if _, ok := n.DriverInfo["redfish_password"]; ok {
		t.Fatalf("redfish credentials left behind: %v", n.DriverInfo)
	}
	res, err = w.p.SwitchToIPMI(context.Background(), w.spec)
	if err != nil || res.Switched || res.Skipped != "driver ipmi" {
		t.Fatalf("second switch: %+v %v", res, err)
	}
	// Prelude convergence now keys credentials off the ipmi driver.
	if _, err := w.p.Prelude(context.Background(), w.spec); err != nil {
		t.Fatal(err)
	}
	w.ir.SetInstance(n.Name, "inst-9")
	w.ir.SetState(n.Name, ironic.StateManageable)
	if res, _ := w.p.SwitchToIPMI(context.Background(), w.spec); res.Switched || !strings.Contains(res.Skipped, "inst-9") {
		t.Fatalf("owned node: %+v", res)
	}
}

func TestRootDeviceAndRAIDInterface(t *testing.T) {
	hint := map[string]any{"serial": "S6XXNX0T000001"}
	for _, tt := range []struct {
		name     string
		spec     map[string]any
		swRAID   bool
		wantKept bool
	}{
		{"NetBox stops setting it: kept", nil, false, true},
		{"software RAID: removed", nil, true, false},
		{"NetBox sets it: converged", map[string]any{"serial": "OTHER"}, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, fakes.HostSpec{})
			if _, err := w.inspect(t, func(in *ironic.InspectionIn) { in.Inspect = false }); err != nil {
				t.Fatal(err)
			}
			w.ir.SetProperty(w.host.Name, "root_device", hint)
			w.spec.RootDevice, w.spec.SoftwareRAID = tt.spec, tt.swRAID
			w.spec.TargetRAIDConfig = map[string]any{"logical_disks": []any{}}
			w.spec.Interfaces["raid"] = "redfish"
			if _, err := w.p.Prelude(context.Background(), w.spec); err != nil {
				t.Fatal(err)
			}
			n := w.node(t)
			got, has := n.Properties["root_device"]
			if has != tt.wantKept {
				t.Fatalf("root_device = %v (present %v), want present %v", got, has, tt.wantKept)
			}
			if tt.spec != nil && got.(map[string]any)["serial"] != "OTHER" {
				t.Fatalf("root_device = %v, want NetBox's", got)
			}
			if n.Interfaces["raid"] != "redfish" {
				t.Fatalf("raid_interface = %s, want synced to redfish", n.Interfaces["raid"])
			}
		})
	}
}

func TestNetworking(t *testing.T) {
	t.Run("no bond: standalone ports", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{NoBond: true})
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		for _, p := range w.ir.Ports(w.host.Name) {
			if p.PortgroupUUID != "" {
				t.Fatalf("port %+v in a portgroup", p)
			}
		}
	})
	t.Run("MAC owned by another node", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		other, err := w.ir.CreateNode(context.Background(), ironic.NodeCreate{Name: "other", Driver: "redfish"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.ir.CreatePort(context.Background(), ironic.Port{NodeUUID: other.UUID, Address: w.spec.NICs[1].MAC}); err != nil {
			t.Fatal(err)
		}
		_, err = w.inspect(t)
		wantCode(t, err, ironic.PortConflict.Code)
	})
	t.Run("a created node's ports cost no port read", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{NICs: 4})
		before := w.site.Calls()[fakes.SysIronic]
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		after := w.site.Calls()[fakes.SysIronic]
		for _, op := range []string{"port_by_address", "list_ports", "list_portgroups"} {
			if n := after.Ops[op] - before.Ops[op]; n != 0 {
				t.Errorf("%d %s calls for a node the attempt created, want 0", n, op)
			}
		}
		if n := after.Ops["create_port"] - before.Ops["create_port"]; n != 4 {
			t.Errorf("%d ports created, want 4", n)
		}
	})
	t.Run("an existing node's ports are read in one list and reused", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{NICs: 4})
		n, err := w.ir.CreateNode(context.Background(), ironic.NodeCreate{Name: w.host.Name, Driver: "redfish", DriverInfo: map[string]any{"redfish_address": "https://" + w.host.OOBIP}})
		if err != nil {
			t.Fatal(err)
		}
		// An earlier attempt created the first port, without its link.
		if _, err := w.ir.CreatePort(context.Background(), ironic.Port{NodeUUID: n.UUID, Address: w.spec.NICs[0].MAC, PXEEnabled: true}); err != nil {
			t.Fatal(err)
		}
		before := w.site.Calls()[fakes.SysIronic]
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		after := w.site.Calls()[fakes.SysIronic]
		if d := after.Ops["list_ports"] - before.Ops["list_ports"]; d != 1 {
			t.Errorf("%d port lists, want 1", d)
		}
		if d := after.Ops["port_by_address"] - before.Ops["port_by_address"]; d != 0 {
			t.Errorf("%d port lookups by MAC, want 0", d)
		}
		ports := w.ir.Ports(w.host.Name)
		if len(ports) != 4 {
			t.Fatalf("%d ports, want 4", len(ports))
		}
		for _, p := range ports {
			if p.LocalLinkConnection["port_id"] == "" {
				t.Errorf("port %s without its link", p.Address)
			}
		}
	})
	t.Run("a port whose answer was lost is found by the next attempt and reused", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		w.site.InjectLost(fakes.SysIronic, "create_port", 1, hostforge.ErrUnavailable)
		_, err := w.inspect(t)
		wantCode(t, err, ironic.Unavailable.Code)
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		if got := len(w.ir.Ports(w.host.Name)); got != len(w.spec.NICs) {
			t.Fatalf("%d ports, want %d", got, len(w.spec.NICs))
		}
	})
	t.Run("skip_cable_verification: uncabled port without link, repaired later", func(t *testing.T) {
		w := newWorld(t, fakes.HostSpec{})
		w.spec.SkipCableVerification = true
		w.exp.SkipCableVerification = true
		sw, port := w.spec.NICs[1].Switch, w.spec.NICs[1].Port
		w.spec.NICs[1].Switch, w.spec.NICs[1].Port = "", ""
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		for _, p := range w.ir.Ports(w.host.Name) {
			if p.Address == w.spec.NICs[1].MAC && len(p.LocalLinkConnection) != 0 {
				t.Fatalf("uncabled port got a link: %+v", p)
			}
		}
		w.spec.NICs[1].Switch, w.spec.NICs[1].Port = sw, port // cabled in NetBox now
		if _, err := w.inspect(t); err != nil {
			t.Fatal(err)
		}
		for _, p := range w.ir.Ports(w.host.Name) {
			if p.Address == w.spec.NICs[1].MAC && p.LocalLinkConnection["port_id"] != port {
				t.Fatalf("link not repaired on a manageable node: %+v", p)
			}
		}
	})
}

func TestSpecValidation(t *testing.T) {
	w := newWorld(t, fakes.HostSpec{})
	for _, tt := range []struct {
		name  string
		edit  func(*ironic.NodeSpec)
		field string
	}{
		{"no name", func(s *ironic.NodeSpec) { s.Name = "" }, "name"},
		{"bad driver", func(s *ironic.NodeSpec) { s.Driver = "ilo" }, "driver"},
		{"no raid", func(s *ironic.NodeSpec) { s.Interfaces = map[string]string{} }, "interfaces.raid"},
		{"no address", func(s *ironic.NodeSpec) { s.BMCAddress = "" }, "bmc_address"},
		{"no NICs", func(s *ironic.NodeSpec) { s.NICs = nil }, "nics"},
		{"bad MAC", func(s *ironic.NodeSpec) { s.NICs = []ironic.NIC{{Name: "eth0", MAC: "zz"}} }, "nics[0].mac"},
		{"duplicate MAC", func(s *ironic.NodeSpec) { s.NICs = []ironic.NIC{s.NICs[0], s.NICs[0]} }, "nics[1].mac"},
		{"bond without first MAC", func(s *ironic.NodeSpec) { s.NICs = []ironic.NIC{{Name: "eth0"}} }, "nics[0].mac"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := w.spec
			spec.Interfaces = map[string]string{"raid": "agent"}
			tt.edit(&spec)
			_, err := w.p.Prelude(context.Background(), spec)
			f := wantCode(t, err, ironic.InputInvalid.Code)
			if !strings.Contains(f.Message, tt.field) {
				t.Fatalf("message %q does not name %s", f.Message, tt.field)
			}
		})
	}
	if _, exists := w.ir.Node(w.host.Name); exists {
		t.Fatal("bad input changed Ironic")
	}
}

func TestClientErrorsAndCredentials(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(w *world)
		code  string
	}{
		{"Ironic down", func(w *world) { w.site.Inject(fakes.SysIronic, "get_node", 1, hostforge.ErrUnavailable) }, ironic.Unavailable.Code},
		{"Ironic refuses the token", func(w *world) { w.site.Inject(fakes.SysIronic, "get_node", 1, hostforge.ErrUnauthorized) }, ironic.Unauthorized.Code},
		{"create rejected", func(w *world) { w.site.Inject(fakes.SysIronic, "create_node", 1, hostforge.ErrInvalid) }, ironic.Rejected.Code},
		{"no credential", func(w *world) { w.site.Vault.Set(fakes.AdminItem("h1"), map[string]string{"username": "x"}) }, ironic.CredentialMissing.Code},
		{"vault down", func(w *world) { w.site.Inject(fakes.SysVault, "item", 1, hostforge.ErrUnavailable) }, ironic.CredentialUnavailable.Code},
		{"monitoring item refused", func(w *world) {
			w.spec.CredentialItem = fakes.MonitoringItem
		}, ironic.CredentialMissing.Code},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, fakes.HostSpec{})
			tt.setup(w)
			_, err := w.p.Prelude(context.Background(), w.spec)
			f := wantCode(t, err, tt.code)
			if pw := w.adminPassword(t); pw != "" && strings.Contains(f.Error(), pw) {
				t.Fatal("a failure carries the password")
			}
		})
	}
	if c := (ironic.Credential{Username: "u", Password: "p4ss"}); strings.Contains(c.String(), "p4ss") {
		t.Fatal("Credential.String leaks the password")
	}
}

// expJSON is the world's expectations as the workflow hands them over.
func (w *world) expJSON(t *testing.T) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(w.exp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
