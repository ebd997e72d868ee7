package fwsim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
)

// Catalog is the simulated site's host firmware catalog. Its four models
// and their inventory Ids are shaped after the real captures (Dell R750
// iDRAC9, Lenovo SR670 V2 XCC, NVIDIA DGX H100 on AMI MegaRAC, Supermicro
// SYS-821GE-TNHR); every install route and activation is used:
//
//   - Dell: uefi by upload + ForceRestart, bmc by upload (the iDRAC
//     activates itself), cpldmb by upload + one power drain;
//   - Lenovo: bmc by upload + BMC reset (a BMC-Primary-Pending member
//     while staged), uefi by the entry's local script;
//   - DGX: hgxbmc by two artifacts after pre-update resets, + off/on;
//     combinedbmcuefi and uefi by upload + ForceRestart; cx7 by the
//     on-host agent + one power drain (half the DGX have no CX7 member:
//     the component is unmatched and flagged);
//   - Supermicro: explicit start; bmc by upload + BMC reset, uefi by
//     upload + ForceRestart.
const Catalog = `
[host_models.dell_r750]
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["uefi", "bmc", "cpldmb"]
[host_models.dell_r750.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
known_firmware = [ { version = "1.13.2", filename = "/fw/dell/bios-1.13.2.exe", default = true } ]
[host_models.dell_r750.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."
known_firmware = [ { version = "7.10.30.00", filename = "/fw/dell/idrac-7.10.30.00.exe", default = true } ]
[host_models.dell_r750.components.cpldmb]
current_version_reported_as = "^Installed-.*__CPLD.Embedded."
known_firmware = [ { version = "1.0.7", filename = "/fw/dell/cpld-1.0.7.exe", default = true, power_drains_needed = 1 } ]

[host_models.lenovo_sr670v2]
vendor = "Lenovo"
model = "ThinkSystem SR670 V2"
[host_models.lenovo_sr670v2.components.bmc]
current_version_reported_as = "^BMC-Primary"
known_firmware = [ { version = "42S-2.90", filename = "/fw/lenovo/xcc-2.90.upd", default = true } ]
[host_models.lenovo_sr670v2.components.uefi]
current_version_reported_as = "^UEFI"
known_firmware = [ { version = "22J-1.60", script = "/opt/fw/lenovo-uefi-1.60.sh", default = true } ]

[host_models.dgxh100]
vendor = "Nvidia"
model = "DGXH100"
ordering = ["hgxbmc", "combinedbmcuefi", "uefi", "cx7"]
[host_models.dgxh100.components.hgxbmc]
current_version_reported_as = "^HGX_FW_BMC_0$"
[[host_models.dgxh100.components.hgxbmc.known_firmware]]
version = "HGX-23.04"
default = true
pre_update_resets = true
files = [ { filename = "/fw/nvidia/hgx-23.04-a.fwpkg", sha256 = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e" }, { filename = "/fw/nvidia/hgx-23.04-b.fwpkg", sha256 = "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a" } ]
[host_models.dgxh100.components.combinedbmcuefi]
current_version_reported_as = "^HostBMC_0$"
known_firmware = [ { version = "24.01.05", filename = "/fw/nvidia/hostbmc-24.01.05.bin", default = true } ]
[host_models.dgxh100.components.uefi]
current_version_reported_as = "^HostBIOS_0$"
known_firmware = [ { version = "01.02.00", filename = "/fw/nvidia/hostbios-01.02.00.bin", default = true } ]
[host_models.dgxh100.components.cx7]
current_version_reported_as = "^CX7_[0-9]+$"
known_firmware = [ { version = "28.47.2682", files = [ { url = "https://fw.example.invalid/cx7-28.47.2682.bin", sha256 = "c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7" } ], default = true, power_drains_needed = 1 } ]

[host_models.smc_821ge]
vendor = "Supermicro"
model = "SYS-821GE-TNHR"
explicit_start_needed = true
[host_models.smc_821ge.components.bmc]
current_version_reported_as = "^BMC$"
known_firmware = [ { version = "01.03.05", filename = "/fw/smc/bmc-01.03.05.bin", default = true } ]
[host_models.smc_821ge.components.uefi]
current_version_reported_as = "^BIOS$"
known_firmware = [ { version = "BIOS Date: 01/15/2024 Ver 1.6", filename = "/fw/smc/bios-1.6.bin", default = true } ]
`

// The R750 bmc default an operator's runtime override brings
// (Config.CatalogChangeAt), and its image.
const (
	dellNextBMC      = "7.20.10.00"
	dellNextBMCImage = "/fw/dell/idrac-7.20.10.00.exe"
)

// Profile is one of the simulated models.
type Profile string

// The profiles.
const (
	ProfileDell       Profile = "dell-r750"
	ProfileLenovo     Profile = "lenovo-sr670v2"
	ProfileDGX        Profile = "nvidia-dgxh100"
	ProfileSupermicro Profile = "supermicro-821ge"
)

// Profiles in the order hosts cycle through them.
var Profiles = []Profile{ProfileDell, ProfileLenovo, ProfileDGX, ProfileSupermicro}

// Fault is what is wrong with one host.
type Fault string

// Host faults. The first four exhaust the retry budget; the others are
// ridden out.
const (
	FaultNone Fault = ""
	// FaultNeverActivates: an image stages but no reset activates it.
	FaultNeverActivates Fault = "never_activates"
	// FaultVersionString: the firmware reports "<version>.0", not the
	// catalog's string (drift by exact equality never clears).
	FaultVersionString Fault = "version_string"
	// FaultTaskException: every update task of the first component ends
	// in Exception.
	FaultTaskException Fault = "task_exception"
	// FaultAgentSilent: the on-host agent never reports (DGX with CX7
	// only; other profiles get FaultTaskException).
	FaultAgentSilent Fault = "agent_silent"
	// FaultBMCFlaky: the BMC answers 503 to a few calls.
	FaultBMCFlaky Fault = "bmc_flaky"
	// FaultUploadFlaky: two uploads fail transiently.
	FaultUploadFlaky Fault = "upload_flaky"
)

// exhausting reports faults that end with the retry budget spent.
func (f Fault) exhausting() bool {
	switch f {
	case FaultNeverActivates, FaultVersionString, FaultTaskException, FaultAgentSilent:
		return true
	}
	return false
}

var hostFaults = []Fault{FaultNeverActivates, FaultVersionString, FaultTaskException, FaultAgentSilent, FaultBMCFlaky, FaultUploadFlaky}

// image is one artifact of the catalog and what it installs.
type image struct {
	key        string
	targets    []string
	version    string
	activation fakes.Activation
	taskTime   time.Duration
	pending    bool
}

// member is an inventory member of a profile: its current (drifted)
// version and the catalog's.
type member struct {
	id, old, current, state string
}

type profileDef struct {
	manufacturer, model, vendor string
	members                     []member
	images                      []image
}

var profileDefs = map[Profile]profileDef{
	ProfileDell: {
		manufacturer: "Dell Inc.", model: "PowerEdge R750", vendor: "Dell",
		members: []member{
			{id: "Current-159-1.8.2__BIOS.Setup.1-1", old: "1.8.2", current: "1.8.2", state: "Enabled"},
			{id: "Installed-159-1.8.2__BIOS.Setup.1-1", old: "1.8.2", current: "1.13.2", state: "Enabled"},
			{id: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", old: "6.00.30.00", current: "7.10.30.00", state: "Enabled"},
			{id: "Previous-25227-4.40.29.00__iDRAC.Embedded.1-1", old: "4.40.29.00", current: "4.40.29.00", state: "Enabled"},
			{id: "Installed-27763-1.0.5__CPLD.Embedded.1", old: "1.0.5", current: "1.0.7", state: "Enabled"},
		},
		images: []image{
			{key: "/fw/dell/bios-1.13.2.exe", targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, version: "1.13.2", activation: fakes.ActivateHostReboot, taskTime: 4 * time.Minute},
			{key: "/fw/dell/idrac-7.10.30.00.exe", targets: []string{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"}, version: "7.10.30.00", activation: fakes.ActivateSelf, taskTime: 12 * time.Minute},
			{key: "/fw/dell/cpld-1.0.7.exe", targets: []string{"Installed-27763-1.0.5__CPLD.Embedded.1"}, version: "1.0.7", activation: fakes.ActivateACCycle, taskTime: 3 * time.Minute},
			// The bmc default the operator's runtime override brings.
			{key: dellNextBMCImage, targets: []string{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"}, version: dellNextBMC, activation: fakes.ActivateSelf, taskTime: 12 * time.Minute},
		},
	},
	ProfileLenovo: {
		manufacturer: "Lenovo", model: "ThinkSystem SR670 V2", vendor: "Lenovo",
		members: []member{
			{id: "BMC-Primary", old: "42S-2.83", current: "42S-2.90", state: "Enabled"},
			{id: "BMC-Backup", old: "42S-2.83", current: "42S-2.83", state: "StandbySpare"},
			{id: "UEFI", old: "22J-1.51", current: "22J-1.60", state: "Enabled"},
			{id: "GPU1", old: "95.02.39.00.01", current: "95.02.39.00.01", state: "Enabled"},
		},
		images: []image{
			{key: "/fw/lenovo/xcc-2.90.upd", targets: []string{"BMC-Primary"}, version: "42S-2.90", activation: fakes.ActivateBMCReset, taskTime: 6 * time.Minute, pending: true},
			{key: "/opt/fw/lenovo-uefi-1.60.sh", targets: []string{"UEFI"}, version: "22J-1.60", activation: fakes.ActivateHostReboot},
		},
	},
	ProfileDGX: {
		manufacturer: "NVIDIA", model: "DGXH100", vendor: "AMI",
		members: []member{
			{id: "CPLDMB_0", old: "0.2.1.8", current: "0.2.1.8"},
			{id: "HGX_FW_BMC_0", old: "HGX-22.10-1-rc57", current: "HGX-23.04"},
			{id: "HostBIOS_0", old: "01.01.03", current: "01.02.00"},
			{id: "HostBMC_0", old: "23.11.21", current: "24.01.05"},
			{id: "CX7_0", old: "28.39.1002", current: "28.47.2682"},
			{id: "CX7_1", old: "28.47.2682", current: "28.47.2682"},
		},
		images: []image{
			{key: "/fw/nvidia/hgx-23.04-a.fwpkg", version: "", activation: fakes.ActivatePowerCycle, taskTime: 8 * time.Minute},
			{key: "/fw/nvidia/hgx-23.04-b.fwpkg", targets: []string{"HGX_FW_BMC_0"}, version: "HGX-23.04", activation: fakes.ActivatePowerCycle, taskTime: 15 * time.Minute},
			{key: "/fw/nvidia/hostbmc-24.01.05.bin", targets: []string{"HostBMC_0"}, version: "24.01.05", activation: fakes.ActivateHostReboot, taskTime: 10 * time.Minute},
			{key: "/fw/nvidia/hostbios-01.02.00.bin", targets: []string{"HostBIOS_0"}, version: "01.02.00", activation: fakes.ActivateHostReboot, taskTime: 5 * time.Minute},
			// The DGX's MegaRAC offers no AC power cycle: its drain is a
			// power-off held for the drain wait, which activates the card.
			{key: "https://fw.example.invalid/cx7-28.47.2682.bin", targets: []string{"CX7_0", "CX7_1"}, version: "28.47.2682", activation: fakes.ActivatePowerCycle},
		},
	},
	ProfileSupermicro: {
		manufacturer: "Supermicro", model: "SYS-821GE-TNHR", vendor: "Supermicro",
		members: []member{
			{id: "BMC", old: "01.01.01", current: "01.03.05", state: "Enabled"},
			{id: "Staging_BMC", old: "01.01.01", current: "01.01.01", state: "Enabled"},
			{id: "BIOS", old: "BIOS Date: 08/04/2023 Ver 1.4", current: "BIOS Date: 01/15/2024 Ver 1.6", state: "Enabled"},
			{id: "HGX_FW_BMC_0", old: "HGX-22.10-1-rc34", current: "HGX-22.10-1-rc34", state: "Enabled"},
		},
		images: []image{
			{key: "/fw/smc/bmc-01.03.05.bin", targets: []string{"BMC"}, version: "01.03.05", activation: fakes.ActivateBMCReset, taskTime: 7 * time.Minute},
			{key: "/fw/smc/bios-1.6.bin", targets: []string{"BIOS"}, version: "BIOS Date: 01/15/2024 Ver 1.6", activation: fakes.ActivateHostReboot, taskTime: 5 * time.Minute},
		},
	},
}

// Host is one simulated host as built.
type Host struct {
	Machine  string
	Profile  Profile
	Drifted  bool
	Assigned bool
	// Maintenance: in maintenance for another reason at the start, until
	// MaintenanceUntil.
	Maintenance      bool
	MaintenanceUntil time.Duration
	// ApproveAt is when the tenant of an assigned host approves updates
	// on reboot (0: never; the autoreboot period starts it).
	ApproveAt time.Duration
	// WindowAt opens the explicit-start window of a Supermicro host.
	WindowAt time.Duration
	// NoCX7: a DGX without CX7 cards in its inventory (cx7 unmatched).
	NoCX7 bool
	Fault Fault
	// PolicyOff: autoupdate disabled by a per-host override until
	// PolicyOnAt, when an operator clears it.
	PolicyOff  bool
	PolicyOnAt time.Duration
}

// ExpectExhausted says the host must end failed with its budget spent.
func (h Host) ExpectExhausted() bool { return h.Drifted && h.Fault.exhausting() }

func machineName(i, n int) string { return fmt.Sprintf("fw-%0*d", len(fmt.Sprint(n)), i) }

// buildHosts draws the fleet from the seed.
func buildHosts(c Config) []Host {
	rng := rand.New(rand.NewPCG(c.Seed, 0x66776d))
	hosts := make([]Host, c.Hosts)
	for i := range hosts {
		h := Host{Machine: machineName(i, c.Hosts), Profile: Profiles[i%len(Profiles)]}
		h.Drifted = rng.Float64() < c.Drifted
		h.Assigned = rng.Float64() < c.Assigned
		if rng.Float64() < c.Maintenance {
			h.Maintenance = true
			h.MaintenanceUntil = time.Duration(rng.Int64N(int64(18 * time.Hour)))
		}
		if h.Assigned && rng.IntN(3) > 0 {
			h.ApproveAt = time.Duration(1 + rng.Int64N(int64(30*time.Hour)))
		}
		if h.Profile == ProfileSupermicro {
			h.WindowAt = time.Duration(rng.Int64N(int64(24 * time.Hour)))
		}
		h.NoCX7 = h.Profile == ProfileDGX && rng.IntN(2) == 0
		if h.Drifted && rng.Float64() < c.Faulty {
			h.Fault = hostFaults[rng.IntN(len(hostFaults))]
			if h.Fault == FaultAgentSilent && (h.Profile != ProfileDGX || h.NoCX7) {
				h.Fault = FaultTaskException
			}
		}
		if rng.Float64() < c.PolicyOff {
			h.PolicyOff = true
			h.PolicyOnAt = time.Duration(int64(6*time.Hour) + rng.Int64N(int64(12*time.Hour)))
		}
		hosts[i] = h
	}
	return hosts
}

// bmcOf builds a host's fake BMC.
func bmcOf(clk clock.Clock, h Host) *fakes.FirmwareBMC {
	def := profileDefs[h.Profile]
	var ms []fakes.FirmwareMember
	for _, m := range def.members {
		if h.NoCX7 && (m.id == "CX7_0" || m.id == "CX7_1") {
			continue
		}
		v := m.current
		if h.Drifted {
			v = m.old
		}
		ms = append(ms, fakes.FirmwareMember{ID: m.id, Version: v, State: m.state})
	}
	fb := fakes.NewFirmwareBMC(clk, def.manufacturer, def.model, def.vendor, ms)
	if h.Profile == ProfileDGX {
		// As the real capture: no AC power cycle among the reset types, no
		// platform lockdown.
		fb.NoACPowerCycle()
		fb.NoLockdown()
	}
	// The fault hits the first component in the profile's ordering that
	// the host's drift makes the workflow install.
	faulted := firstImage(h)
	for _, img := range def.images {
		fi := fakes.FirmwareImage{Targets: img.targets, Version: img.version, Activation: img.activation, TaskTime: img.taskTime, ShowPending: img.pending}
		if img.key == faulted {
			switch h.Fault {
			case FaultNeverActivates:
				fi.Activation = fakes.ActivateNever
			case FaultVersionString:
				fi.Version += ".0"
			case FaultTaskException:
				fi.TaskEnd = "Exception"
			}
		}
		fb.AddImage(img.key, fi)
	}
	switch h.Fault {
	case FaultBMCFlaky:
		fb.Fail("*", 3, errBusy)
	case FaultUploadFlaky:
		fb.Fail("upload", 2, errBusy)
	}
	return fb
}

// firstImage is the artifact of the first component a drifted host of the
// profile updates by upload (the one faults land on).
func firstImage(h Host) string {
	switch h.Profile {
	case ProfileDell:
		return "/fw/dell/bios-1.13.2.exe"
	case ProfileLenovo:
		return "/fw/lenovo/xcc-2.90.upd"
	case ProfileDGX:
		return "/fw/nvidia/hgx-23.04-b.fwpkg"
	default:
		return "/fw/smc/bmc-01.03.05.bin"
	}
}
