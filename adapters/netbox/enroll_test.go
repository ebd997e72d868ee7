package netbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
)

func allPhases() enrollment.SiteConfig {
	return enrollment.SiteConfig{
		ConfigureDHCP: true, ConfigureBMC: true, IronicEnrol: true,
		IronicInstances: map[string]string{intent.ClassCPUBaremetal: "ironic-cpu", intent.ClassGPUCompute: "ironic-gpu"},
		EnrolProject:    "baremetal-enrol",
	}
}

// Bad NetBox data read over HTTP is classified where the workflow classifies
// it: each case ends in a Failure naming the device and the field, with an
// owner and an operator action, and never a panic.
func TestEnrollBadDataOverHTTP(t *testing.T) {
	tests := []struct {
		name      string
		spec      fakes.HostSpec
		mutate    func(st *fakes.NetBoxState)
		fault     func(emu *netboxhttp.Server)
		wantCode  string
		wantField string
	}{
		{name: "DeviceNotFound", spec: fakes.HostSpec{Name: "other"}, wantCode: enrollment.DeviceNotFound.Code, wantField: "h1"},
		{name: "NoOOBIP", spec: fakes.HostSpec{Name: "h1", NoOOB: true}, wantCode: enrollment.DataInvalid.Code, wantField: "oob_ip"},
		{name: "PeerNotASwitchInterface", spec: fakes.HostSpec{Name: "h1"}, mutate: func(st *fakes.NetBoxState) {
			for _, i := range st.DeviceInterfaces(st.DeviceByName("h1").ID) {
				if i.Name == "eth1" {
					st.Cables[i.CableID].B = []fakes.NBTermination{{ObjectType: "dcim.frontport", ObjectID: 99999, DeviceID: st.DeviceByName("leaf-2").ID, Name: "fp1"}}
				}
			}
		}, wantCode: enrollment.DataInvalid.Code, wantField: "interfaces.eth1.cable"},
		{name: "UnknownStatus", spec: fakes.HostSpec{Name: "h1"}, mutate: func(st *fakes.NetBoxState) {
			st.DeviceByName("h1").Status = "reserved"
		}, wantCode: enrollment.DataInvalid.Code, wantField: "status"},
		{name: "IronicSettingsWronglyTyped", spec: fakes.HostSpec{Name: "h1", ConfigContext: map[string]any{"ironic_settings": "redfish"}},
			wantCode: enrollment.DataInvalid.Code, wantField: "config_context.ironic_settings"},
		{name: "BondMiimonWronglyTyped", spec: fakes.HostSpec{Name: "h1"}, mutate: func(st *fakes.NetBoxState) {
			st.DeviceByName("h1").ConfigContext["ironic_settings"].(map[string]any)["bond"] = map[string]any{"mode": "802.3ad", "miimon": "fast"}
		}, wantCode: enrollment.DataInvalid.Code, wantField: "config_context.ironic_settings.bond.miimon"},
		{name: "NTPServersWronglyTyped", spec: fakes.HostSpec{Name: "h1", ConfigContext: map[string]any{"ntp-servers": "10.0.0.11"}},
			wantCode: enrollment.DataInvalid.Code, wantField: "config_context.ntp-servers"},
		{name: "Forbidden", spec: fakes.HostSpec{Name: "h1"}, fault: func(emu *netboxhttp.Server) { emu.FailNext(1, 403, "") },
			wantCode: enrollment.NetBoxUnauthorized.Code, wantField: "h1"},
		{name: "Unauthorized", spec: fakes.HostSpec{Name: "h1"}, fault: func(emu *netboxhttp.Server) { emu.FailNext(1, 401, "") },
			wantCode: enrollment.NetBoxUnauthorized.Code, wantField: "h1"},
		{name: "5xxBurstPastTheRetryBudget", spec: fakes.HostSpec{Name: "h1"}, fault: func(emu *netboxhttp.Server) { emu.FailNext(100, 503, "") },
			wantCode: enrollment.NetBoxUnavailable.Code, wantField: "h1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			site := fakes.NewSite()
			site.AddHost(tc.spec)
			if tc.mutate != nil {
				_ = site.NetBox.Update(func(st *fakes.NetBoxState) error { tc.mutate(st); return nil })
			}
			c, emu := serve(t, site, netboxhttp.Options{}, netbox.Config{RetryMax: 2})
			if tc.fault != nil {
				tc.fault(emu)
			}
			exec := enrolltest.Executor(site, nil)
			exec.NetBox = c
			req := enrollment.NewRequest("h1", intent.ClassCPUBaremetal, "lab1", allPhases(), true, enrollment.Params{MaxAttemptsOverride: 1})
			before := site.Calls()
			res, err := enrollment.Enroll(context.Background(), &flow.Local{Steps: exec, Log: exec.Log, Clock: site.Clock, RoundTrip: true}, req)
			t.Logf("result %+v err %v", res.Phases, err)
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != tc.wantCode {
				t.Fatalf("Enroll = %v, want %s", err, tc.wantCode)
			}
			if f.Owner == "" || f.Action == "" {
				t.Errorf("failure %s has no owner or action", f.Code)
			}
			if !strings.Contains(f.Error(), tc.wantField) {
				t.Errorf("failure %q does not name %q", f.Error(), tc.wantField)
			}
			if w := site.Calls().Sub(before)[fakes.SysNetBox].Writes; w != 0 {
				t.Errorf("%d NetBox writes before the failure, want none", w)
			}
		})
	}
}

// A frontend interface without a MAC is not bad data at the read: the spec
// creates Ironic ports only for NICs that have one, so the adapter reports
// the MAC as empty, the status gate passes, and the later phases decide.
func TestInterfaceWithoutMACReadsAsEmpty(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		for _, i := range st.DeviceInterfaces(st.DeviceByName("h1").ID) {
			if i.Name == "eth0" {
				i.MAC = ""
			}
		}
		return nil
	})
	c, _ := serve(t, site, netboxhttp.Options{}, netbox.Config{})
	d, err := c.Device(context.Background(), "h1")
	if err != nil {
		t.Fatal(err)
	}
	eth0, _ := d.Interface("eth0")
	eth1, _ := d.Interface("eth1")
	if eth0.MAC != "" || eth1.MAC == "" {
		t.Fatalf("eth0 MAC %q, eth1 MAC %q; want eth0 empty and eth1 set", eth0.MAC, eth1.MAC)
	}
	exec := enrolltest.Executor(site, nil)
	exec.NetBox = c
	cfg := allPhases()
	cfg.ConfigureDHCP, cfg.ConfigureBMC, cfg.IronicEnrol = false, false, false
	req := enrollment.NewRequest("h1", intent.ClassCPUBaremetal, "lab1", cfg, true, enrollment.Params{})
	res, err := enrollment.Enroll(context.Background(), &flow.Local{Steps: exec, Log: exec.Log, Clock: site.Clock}, req)
	if err != nil {
		t.Fatalf("Enroll with NetBox phases only = %v; a missing MAC is not a read failure", err)
	}
	if len(res.Phases) < 2 || res.Phases[1].Phase != enrollment.PhaseStatusGate || res.Phases[1].Status != "done" {
		t.Errorf("phases = %+v, want the status gate done", res.Phases)
	}
}
