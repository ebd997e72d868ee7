package fleetsim

import (
	"fmt"
	"math/rand/v2"
	"path"
	"time"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// Kinds of host event: each is a row of the outcome table (Outcomes).
const (
	EventLockShort          = "ironic_lock_short"
	EventLockLong           = "ironic_lock_long"
	EventInspectionFails    = "ironic_inspection_fails_once"
	EventCleaningFails      = "ironic_cleaning_fails_once"
	EventPowerOnLost        = "ironic_power_on_never_happens"
	EventManageRefused      = "ironic_clean_failed_manage_refused"
	EventDHCPPrevious       = "dhcp_previous_reservation"
	EventDHCPStale          = "dhcp_stale_reservation"
	EventDHCPRestartFails   = "dhcp_restart_fails_once"
	dhcpStalePrefix         = "zz-stale-"
	previousReservationNote = "# an earlier reservation of this host\n"
)

// IronicEvents are the host-level faults the fake Ironic offers: a node
// locked by another conductor (briefly, or past the lock budget), an
// inspection or a cleaning that fails once, a power-on that never happens,
// and a clean failed node whose first manage recovery fails.
var IronicEvents = []HostEventMaker{
	func(rng *rand.Rand, host string) HostEvent {
		d := []time.Duration{30 * time.Second, 5 * time.Minute, 20 * time.Minute}[rng.IntN(3)]
		kind := EventLockShort
		if d > time.Minute {
			kind = EventLockLong
		}
		return HostEvent{Host: host, Kind: kind, Name: fmt.Sprintf("node locked by another conductor for %s", d),
			Apply: func(f *Fleet, h string) { f.ironicOf(h).HoldLock(h, "other-conductor-2", d) },
			Clear: func(f *Fleet, h string) { f.ironicOf(h).HoldLock(h, "", 0) }}
	},
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Kind: EventInspectionFails, Name: "inspection fails once",
			Apply: func(f *Fleet, h string) { f.ironicOf(h).FailInspection(h, 1) },
			Clear: func(f *Fleet, h string) { f.ironicOf(h).FailInspection(h, -1) }}
	},
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Kind: EventCleaningFails, Name: "cleaning fails once",
			Apply: func(f *Fleet, h string) { f.ironicOf(h).FailCleaning(h, 1) },
			Clear: func(f *Fleet, h string) { f.ironicOf(h).FailCleaning(h, -1) }}
	},
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Kind: EventPowerOnLost, Name: "power-on never happens once",
			Apply: func(f *Fleet, h string) { f.ironicOf(h).IgnorePowerOn(h, 1) },
			Clear: func(f *Fleet, h string) {
				ir := f.ironicOf(h)
				ir.IgnorePowerOn(h, -1)
				// A ramdisk that never booted leaves the node waiting for a
				// call-back; Ironic's own timeouts (inspect_wait_timeout,
				// clean_callback_timeout) fail it, which the fake leaves to us.
				n, _ := ir.Node(h)
				switch {
				case n.ProvisionState == ironic.StateInspectWait && n.PowerState != ironic.PowerOn:
					ir.SetState(h, ironic.StateInspectFailed)
				case n.ProvisionState == ironic.StateCleanWait && n.PowerState != ironic.PowerOn:
					ir.SetState(h, ironic.StateCleanFailed)
					ir.SetMaintenanceFlag(h, true, "Timeout reached while cleaning the node")
				}
			}}
	},
	// The maintenance-restore window: cleaning fails (Ironic sets
	// maintenance), the recovery clears it and its manage fails, so the
	// flag must be restored.
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Kind: EventManageRefused, Name: "cleaning fails once, then the manage recovering it fails once",
			Apply: func(f *Fleet, h string) { f.ironicOf(h).FailCleaning(h, 1); f.ironicOf(h).FailManage(h, 1) },
			Clear: func(f *Fleet, h string) { f.ironicOf(h).FailCleaning(h, -1); f.ironicOf(h).FailManage(h, -1) }}
	},
}

// DHCPEvents are the host-level faults the fake DHCP server offers, planted
// before the run: the host already has a (different) valid reservation; on
// top of that another device's stale reservation holds the host's new
// address, so the config test refuses the host's change until an operator
// removes it; the next service restart fails once.
var DHCPEvents = []HostEventMaker{
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Kind: EventDHCPPrevious, Before: true, Name: "an earlier, different reservation of the host is live",
			Apply: func(f *Fleet, h string) { f.plantPreviousReservation(h) }}
	},
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Kind: EventDHCPStale, Before: true,
			Name: "an earlier reservation of the host is live, and another device's stale reservation holds its new address",
			Apply: func(f *Fleet, h string) {
				f.plantPreviousReservation(h)
				hh, _ := f.Site.Host(h)
				name := dhcpStalePrefix + h
				f.Site.DHCP.PutFile(f.dhcpFile(name), []byte(fmt.Sprintf("host %s {\n  hardware ethernet 02:5e:00:00:%02x:%02x;\n  fixed-address %s;\n}\n",
					name, f.index(h)/256, f.index(h)%256, hh.OOBIP)))
			},
			Clear: func(f *Fleet, h string) { f.Site.DHCP.RemoveFile(f.dhcpFile(dhcpStalePrefix + h)) }}
	},
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Kind: EventDHCPRestartFails, Before: true, Name: "the DHCP service's next restart fails",
			Apply: func(f *Fleet, _ string) { f.Site.DHCP.FailRestarts(1) },
			Clear: func(f *Fleet, _ string) { f.Site.DHCP.FailRestarts(0) }}
	},
}

// AllEvents are every host-level fault a schedule draws from.
var AllEvents = append(append([]HostEventMaker(nil), IronicEvents...), DHCPEvents...)

// dhcpFile is the path of a host file on the fake DHCP server.
func (f *Fleet) dhcpFile(name string) string {
	cfg := f.Site.DHCP.Config()
	return path.Join(cfg.Dir, name+cfg.Flavour.Extension())
}

// index is the host's position in the fleet.
func (f *Fleet) index(host string) int {
	for i, n := range f.Names {
		if n == host {
			return i
		}
	}
	return 0
}

// plantPreviousReservation gives the host a valid reservation of its BMC on
// an address it no longer has.
func (f *Fleet) plantPreviousReservation(host string) {
	h, ok := f.Site.Host(host)
	if !ok {
		return
	}
	i := f.index(host)
	f.Site.DHCP.PutFile(f.dhcpFile(host), []byte(fmt.Sprintf("%shost %s {\n  hardware ethernet %s;\n  fixed-address 10.250.%d.%d;\n}\n",
		previousReservationNote, host, h.BMCMAC, i/250, i%250+2)))
}

func (f *Fleet) ironicOf(host string) *fakes.Ironic {
	ir, _ := f.nodeOf(host)
	return ir
}
