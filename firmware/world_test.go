package firmware_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
)

// worldCatalog is the test site's catalog, shaped after the real captures.
const worldCatalog = `
[host_models.r750]
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["uefi", "bmc"]
[host_models.r750.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
known_firmware = [ { version = "1.13.2", filename = "/fw/r750-bios-1.13.2.exe", default = true } ]
[host_models.r750.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."
known_firmware = [ { version = "7.10.30.00", filename = "/fw/r750-idrac-7.10.exe", default = true } ]

[host_models.sr670]
vendor = "Lenovo"
model = "ThinkSystem SR670 V2"
[host_models.sr670.components.bmc]
current_version_reported_as = "^BMC-Primary"
known_firmware = [ { version = "42S-2.90", filename = "/fw/xcc-2.90.upd", default = true } ]
[host_models.sr670.components.uefi]
current_version_reported_as = "^UEFI"
known_firmware = [ { version = "22J-1.60", script = "/opt/fw/lenovo-uefi.sh", default = true } ]

[host_models.dgx]
vendor = "Nvidia"
model = "DGXH100"
ordering = ["hgxbmc", "uefi", "cx7"]
[host_models.dgx.components.hgxbmc]
current_version_reported_as = "^HGX_FW_BMC_0$"
[[host_models.dgx.components.hgxbmc.known_firmware]]
version = "HGX-23.04"
default = true
pre_update_resets = true
files = [ { filename = "/fw/hgx-part1.fwpkg", sha256 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }, { filename = "/fw/hgx-part2.fwpkg", sha256 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" } ]
[host_models.dgx.components.uefi]
current_version_reported_as = "^HostBIOS_0$"
known_firmware = [ { version = "01.02.00", filename = "/fw/dgx-bios.bin", default = true } ]
[host_models.dgx.components.cx7]
current_version_reported_as = "^CX7_[0-9]+$"
known_firmware = [ { version = "28.47.2682", filename = "/fw/cx7.bin", default = true, power_drains_needed = 1 } ]
`

var t0 = time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)

type world struct {
	t       *testing.T
	clk     *clock.Fake
	store   *firmwarefake.MemStore
	hosts   *firmwarefake.Hosts
	bmcs    *firmwarefake.BMCs
	scout   *firmwarefake.Scout
	scripts *firmwarefake.Scripts
	cat     *firmware.Catalog
	exec    *firmware.Executor
	events  []flow.Event
}

func newWorld(t *testing.T, s firmware.Settings) *world {
	t.Helper()
	w := &world{t: t, clk: clock.NewFake(t0), store: firmwarefake.NewMemStore(), hosts: firmwarefake.NewHosts(), bmcs: firmwarefake.NewBMCs()}
	w.scout = firmwarefake.NewScout(w.store, w.bmcs, w.clk)
	w.scripts = firmwarefake.NewScripts(w.bmcs)
	w.scripts.Register("/opt/fw/lenovo-uefi.sh", w.scripts.Installer("lenovo-uefi-22J-1.60"))
	w.cat = mustParse(t, "world.toml", worldCatalog)
	w.exec = &firmware.Executor{Store: w.store, Hosts: w.hosts, BMC: w.bmcs, Scripts: w.scripts, Catalog: w.cat, Settings: s, Clock: w.clk}
	return w
}

// dell adds a drifted R750 (BIOS 1.8.2, iDRAC 6.00.30.00).
func (w *world) dell(machine string, state firmware.HostState) *fakes.FirmwareBMC {
	fb := fakes.NewFirmwareBMC(w.clk, "Dell Inc.", "PowerEdge R750", "Dell", []fakes.FirmwareMember{
		{ID: "Current-159-1.8.2__BIOS.Setup.1-1", Version: "1.8.2", State: "Enabled"},
		{ID: "Installed-159-1.8.2__BIOS.Setup.1-1", Version: "1.8.2", State: "Enabled"},
		{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "6.00.30.00", State: "Enabled"},
		{ID: "Previous-25227-4.40.29.00__iDRAC.Embedded.1-1", Version: "4.40.29.00", State: "Enabled"},
	})
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateHostReboot})
	fb.AddImage("/fw/r750-idrac-7.10.exe", fakes.FirmwareImage{Targets: []string{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"}, Version: "7.10.30.00", Activation: fakes.ActivateSelf, TaskTime: 10 * time.Minute})
	w.add(machine, state, fb)
	return fb
}

// lenovo adds a drifted SR670 V2 (XCC 42S-2.83 with a pending bank, UEFI 22J-1.51).
func (w *world) lenovo(machine string, state firmware.HostState) *fakes.FirmwareBMC {
	fb := fakes.NewFirmwareBMC(w.clk, "Lenovo", "ThinkSystem SR670 V2", "Lenovo", []fakes.FirmwareMember{
		{ID: "BMC-Primary", Version: "42S-2.83", State: "Enabled"},
		{ID: "BMC-Backup", Version: "42S-2.83", State: "StandbySpare"},
		{ID: "UEFI", Version: "22J-1.51", State: "Enabled"},
	})
	fb.AddImage("/fw/xcc-2.90.upd", fakes.FirmwareImage{Targets: []string{"BMC-Primary"}, Version: "42S-2.90", Activation: fakes.ActivateBMCReset, ShowPending: true})
	fb.AddImage("lenovo-uefi-22J-1.60", fakes.FirmwareImage{Targets: []string{"UEFI"}, Version: "22J-1.60", Activation: fakes.ActivateHostReboot})
	w.add(machine, state, fb)
	return fb
}

// dgx adds a drifted DGX H100 with one CX7 card behind.
func (w *world) dgx(machine string, state firmware.HostState) *fakes.FirmwareBMC {
	fb := fakes.NewFirmwareBMC(w.clk, "NVIDIA", "DGXH100", "AMI", []fakes.FirmwareMember{
		{ID: "HGX_FW_BMC_0", Version: "HGX-22.10-1-rc57"},
		{ID: "HostBIOS_0", Version: "01.02.00"},
		{ID: "CX7_0", Version: "28.47.2682"},
		{ID: "CX7_1", Version: "28.39.1002"},
	})
	// The two HGX packages: the first moves nothing by itself, the second
	// carries the version; both need an off/on cycle.
	fb.AddImage("/fw/hgx-part1.fwpkg", fakes.FirmwareImage{Targets: nil, Version: "", Activation: fakes.ActivatePowerCycle})
	fb.AddImage("/fw/hgx-part2.fwpkg", fakes.FirmwareImage{Targets: []string{"HGX_FW_BMC_0"}, Version: "HGX-23.04", Activation: fakes.ActivatePowerCycle})
	fb.AddImage("/fw/cx7.bin", fakes.FirmwareImage{Targets: []string{"CX7_0", "CX7_1"}, Version: "28.47.2682", Activation: fakes.ActivateACCycle})
	w.add(machine, state, fb)
	return fb
}

func (w *world) add(machine string, state firmware.HostState, fb *fakes.FirmwareBMC) {
	h := firmware.Host{MachineID: machine, State: state}
	if state == firmware.HostAssigned {
		h.InstanceID = "inst-" + machine
	}
	w.hosts.Put(h)
	w.bmcs.Add(machine, fb)
}

func (w *world) runtime() *flow.Local {
	return &flow.Local{Steps: w.exec.Steps(), Clock: w.clk, RoundTrip: true, Subject: "test",
		OnEvent: func(e flow.Event) { w.events = append(w.events, e) }}
}

// request creates an operator request.
func (w *world) request(machine string) {
	w.t.Helper()
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk}
	if _, err := op.RequestUpdate(context.Background(), machine, "operator test", "CHG-1"); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) update(machine string) (firmware.UpdateResult, error) {
	return firmware.Update(context.Background(), w.runtime(), firmware.UpdateInput{MachineID: machine})
}

// steps lists the steps run, in order, without repeats of the same step.
func (w *world) steps() []string {
	var out []string
	for _, e := range w.events {
		if e.Kind == "step" && (len(out) == 0 || out[len(out)-1] != e.Step) {
			out = append(out, e.Step)
		}
	}
	return out
}

func (w *world) record(machine string) (firmware.HostUpdate, bool) {
	u, ok, err := w.store.Update(context.Background(), machine)
	if err != nil {
		w.t.Fatal(err)
	}
	return u, ok
}

// handedBack asserts the host is compliant and handed back: no request,
// no record, no report, lockdown on.
func (w *world) handedBack(machine string) {
	w.t.Helper()
	ctx := context.Background()
	if _, ok, _ := w.store.Request(ctx, machine); ok {
		w.t.Error("request left")
	}
	if u, ok := w.record(machine); ok {
		w.t.Errorf("update record left: %+v", u)
	}
	h, _, _ := w.hosts.Get(ctx, machine)
	if h.UpdateReport {
		w.t.Error("update health report left")
	}
	st := w.bmcs.Of(machine).State()
	if !st.Lockdown {
		w.t.Error("lockdown left off")
	}
	inv, _ := w.bmcs.Inventory(ctx, machine)
	if r := firmware.Drift(w.cat, inv); r.Drifted {
		w.t.Errorf("still drifted: %q", summary(r))
	}
}

func fakesMember(id, version string) fakes.FirmwareMember {
	return fakes.FirmwareMember{ID: id, Version: version}
}

func fakesImage(target, version, end string) fakes.FirmwareImage {
	return fakes.FirmwareImage{Targets: []string{target}, Version: version, Activation: fakes.ActivateHostReboot, TaskEnd: end}
}
