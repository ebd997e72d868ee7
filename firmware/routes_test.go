package firmware_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
)

// Route precedence from a checking step: the on-host agent's packaged
// script, then the entry's script, then the pre-update resets (not on a
// repeat), then the upload.
func TestRoutePrecedence(t *testing.T) {
	entry := func(extra string) string {
		return "vendor = \"Lenovo\"\nmodel = \"ThinkSystem SR670 V2\"\n[components.uefi]\nknown_firmware = [ { version = \"22J-1.70\", filename = \"/fw/u.bin\", default = true" + extra + " } ]\n"
	}
	cases := []struct {
		name   string
		over   string
		scout  bool
		repeat bool
		want   firmware.Substate
	}{
		{"a packaged agent script wins over the entry's script", entry(", script = \"/opt/u.sh\""), true, false, firmware.WaitingForScoutUpgrade},
		{"the entry's script wins over pre-update resets", entry(", script = \"/opt/u.sh\", pre_update_resets = true"), false, false, firmware.WaitingForScript},
		{"pre-update resets before the upload", entry(", pre_update_resets = true"), false, false, firmware.InitialReset},
		{"the repeat skips pre-update resets", entry(", pre_update_resets = true"), false, true, firmware.WaitingForUpload},
		{"otherwise the upload", entry(""), false, false, firmware.WaitingForUpload},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, firmware.Settings{})
			fb := w.lenovo("m1", firmware.HostReady)
			fb.SetMember(fakesMember("BMC-Primary", "42S-2.90"))
			w.exec.Catalog = firmware.Merge(w.cat, mustParse(t, "over.toml", c.over))
			if c.scout {
				s := firmwarefake.NewScoutScripts()
				s.Add("Lenovo", "ThinkSystem SR670 V2", firmware.UEFI, firmware.ScoutScript{Path: "lenovo/uefi/upgrade.sh", ExecutionTimeout: time.Minute, DownloadTimeout: time.Minute})
				w.exec.Scout, w.exec.ScoutScripts = w.scout, s
			}
			sub := firmware.CheckingFirmware
			step := firmware.StepCheckingFirmware
			if c.repeat {
				sub, step = firmware.CheckingFirmwareRepeat, firmware.StepCheckingFirmwareRepeat
			}
			ctx := context.Background()
			rec, err := w.store.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: sub, EnteredAt: t0})
			if err != nil {
				t.Fatal(err)
			}
			rt := &flow.Local{Steps: w.exec.Steps(), Clock: w.clk, RoundTrip: true}
			var p firmware.Progress
			if err := rt.Do(ctx, step, firmware.StepInput{MachineID: "m1", Revision: rec.Revision}, &p); err != nil {
				t.Fatal(err)
			}
			if p.Substate != c.want {
				t.Fatalf("checking chose %s, want %s", p.Substate, c.want)
			}
		})
	}
}

// Restore turns lockdown back on unless the host's profile keeps it off.
func TestRestoreLockdown(t *testing.T) {
	for _, keepOff := range []bool{false, true} {
		t.Run(map[bool]string{false: "lockdown back on", true: "profile keeps lockdown off"}[keepOff], func(t *testing.T) {
			w := newWorld(t, firmware.Settings{})
			fb := w.dell("m1", firmware.HostReady)
			w.hosts.Change("m1", func(h *firmware.Host) { h.DisableLockdown = keepOff })
			w.request("m1")
			if res, err := w.update("m1"); err != nil || res.Outcome != firmware.OutcomeDone {
				t.Fatalf("Update = %+v, %v", res, err)
			}
			if got := fb.State().Lockdown; got == keepOff {
				t.Fatalf("lockdown %v at the end", got)
			}
		})
	}
}

func TestWithOverrides(t *testing.T) {
	base := mustParse(t, "world.toml", worldCatalog)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	cases := []struct {
		name  string
		ovs   []firmware.Override
		check func(t *testing.T, c *firmware.Catalog)
		err   bool
	}{
		{"a version is upserted in place", []firmware.Override{
			{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.UEFI, UpdatedAt: at(1), Entry: firmware.Entry{Version: "1.13.2", Default: true, Artifacts: []firmware.Artifact{{URL: "https://fw/new", SHA256: "0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e0e"}}}},
		}, func(t *testing.T, c *firmware.Catalog) {
			m, _ := c.Model("Dell", "PowerEdge R750")
			if k := m.Components[firmware.UEFI].KnownFirmware; len(k) != 1 || k[0].Artifacts[0].URL != "https://fw/new" {
				t.Fatalf("known %+v", k)
			}
		}, false},
		{"a new default clears the old, oldest override first", []firmware.Override{
			{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.UEFI, UpdatedAt: at(2), Entry: firmware.Entry{Version: "1.15", Default: true}},
			{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.UEFI, UpdatedAt: at(1), Entry: firmware.Entry{Version: "1.14", Default: true}},
		}, func(t *testing.T, c *firmware.Catalog) {
			m, _ := c.Model("Dell", "PowerEdge R750")
			if d, _ := m.Components[firmware.UEFI].Default(); d.Version != "1.15" || len(m.Components[firmware.UEFI].KnownFirmware) != 3 {
				t.Fatalf("default %s of %+v", d.Version, m.Components[firmware.UEFI].KnownFirmware)
			}
		}, false},
		{"a new component takes the built-in matcher and joins the ordering", []firmware.Override{
			{Vendor: "Dell Inc.", Model: "PowerEdge R750", Component: firmware.CPLDMB, UpdatedAt: at(1), Entry: firmware.Entry{Version: "1.0.7", Default: true}},
		}, func(t *testing.T, c *firmware.Catalog) {
			m, _ := c.Model("Dell", "PowerEdge R750")
			comp := m.Components[firmware.CPLDMB]
			if comp == nil || comp.CurrentVersionReportedAs != `^Installed-.*__CPLD.Embedded.` || !comp.Matches("Installed-27763-1.0.5__CPLD.Embedded.1") {
				t.Fatalf("component %+v", comp)
			}
			if !reflect.DeepEqual(m.Ordering, []firmware.ComponentType{firmware.UEFI, firmware.BMC, firmware.CPLDMB}) {
				t.Fatalf("ordering %v", m.Ordering)
			}
		}, false},
		{"a new model from the built-in table (DGX H100, spelled otherwise)", []firmware.Override{
			{Vendor: "NVIDIA", Model: "dgx-h100", Component: firmware.HGXBMC, UpdatedAt: at(1), Entry: firmware.Entry{Version: "HGX-23.04", Default: true}},
		}, func(t *testing.T, c *firmware.Catalog) {
			m, ok := c.Model("Nvidia", "dgx-h100")
			if !ok || !m.Components[firmware.HGXBMC].Matches("HGX_FW_BMC_0") {
				t.Fatalf("model %+v", m)
			}
		}, false},
		{"no matcher given and none built in", []firmware.Override{
			{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.CX7, UpdatedAt: at(1), Entry: firmware.Entry{Version: "28.47", Default: true}},
		}, nil, true},
		{"a bad matcher", []firmware.Override{
			{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.CX7, Matcher: "(", UpdatedAt: at(1), Entry: firmware.Entry{Version: "28.47"}},
		}, nil, true},
		{"an unknown component type", []firmware.Override{
			{Vendor: "Dell", Model: "PowerEdge R750", Component: "fpga", Matcher: "x", UpdatedAt: at(1), Entry: firmware.Entry{Version: "1"}},
		}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := base.WithOverrides(c.ovs)
			if c.err {
				if !firmware.CatalogInvalid.Is(err) {
					t.Fatalf("WithOverrides = %v, want FIRMWARE_CATALOG_INVALID", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, got)
			if m, _ := base.Model("Dell", "PowerEdge R750"); len(m.Components[firmware.UEFI].KnownFirmware) != 1 {
				t.Fatal("WithOverrides changed its base")
			}
		})
	}
}

// Overrides in the store reach the workflow: a new default is installed.
func TestOverridesReachTheWorkflow(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m1", firmware.HostReady)
	fb.SetMember(fakesMember("Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", "7.10.30.00"))
	fb.AddImage("/fw/bios-1.15.exe", fakesImage("Installed-159-1.8.2__BIOS.Setup.1-1", "1.15", ""))
	ctx := context.Background()
	if err := w.store.PutOverride(ctx, firmware.Override{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.UEFI, UpdatedAt: t0,
		Entry: firmware.Entry{Version: "1.15", Default: true, Artifacts: []firmware.Artifact{{Filename: "/fw/bios-1.15.exe"}}}}); err != nil {
		t.Fatal(err)
	}
	w.request("m1")
	if res, err := w.update("m1"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	if v := fb.Version("Installed-159-1.8.2__BIOS.Setup.1-1"); v != "1.15" {
		t.Fatalf("BIOS %s, want the override's 1.15", v)
	}
}
