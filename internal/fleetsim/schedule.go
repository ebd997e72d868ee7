package fleetsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// FaultKind is how an injected call fails.
type FaultKind string

// The fault kinds a schedule draws from. Each maps to the error a real client
// returns for it (see Err).
const (
	// Fault5xx is a 5xx answer (a busy BMC, an overloaded NetBox).
	Fault5xx FaultKind = "5xx"
	// FaultTimeout is a call that hit its own deadline.
	FaultTimeout FaultKind = "timeout"
	// FaultDrop is a connection dropped mid-call (an SSH session torn down
	// mid-transfer, a reset TCP stream).
	FaultDrop FaultKind = "drop"
	// FaultConflict is a 409 (a fleet manager write conflict).
	FaultConflict FaultKind = "conflict"
	// FaultUnauthorized is a 401/403.
	FaultUnauthorized FaultKind = "unauthorized"
	// FaultInvalid is a 400.
	FaultInvalid FaultKind = "invalid"
	// FaultNotFound is a 404 for an object that exists (a stale replica).
	FaultNotFound FaultKind = "not_found"
)

// FaultKinds lists the call-fault kinds, in a fixed order.
var FaultKinds = []FaultKind{Fault5xx, FaultTimeout, FaultDrop, FaultConflict, FaultUnauthorized, FaultInvalid, FaultNotFound}

// Err is the error a client returns for the fault.
func (k FaultKind) Err(system, op string) error {
	where := system + " " + op
	switch k {
	case Fault5xx:
		return fmt.Errorf("injected: %s answered 503 Service Unavailable: %w", where, hostforge.ErrUnavailable)
	case FaultTimeout:
		return fmt.Errorf("injected: %s: %w", where, context.DeadlineExceeded)
	case FaultDrop:
		return fmt.Errorf("injected: %s: connection reset by peer: %w", where, hostforge.ErrUnavailable)
	case FaultConflict:
		return fmt.Errorf("injected: %s answered 409 Conflict: %w", where, hostforge.ErrConflict)
	case FaultUnauthorized:
		return fmt.Errorf("injected: %s answered 401 Unauthorized: %w", where, hostforge.ErrUnauthorized)
	case FaultInvalid:
		return fmt.Errorf("injected: %s answered 400 Bad Request: %w", where, hostforge.ErrInvalid)
	case FaultNotFound:
		return fmt.Errorf("injected: %s answered 404 Not Found: %w", where, hostforge.ErrNotFound)
	}
	return errors.New("injected: unknown fault kind " + string(k))
}

// Fault is one entry of a schedule: once the fleet has run AtStep steps,
// the next N calls of System's Op fail as Kind. Op "*" is any operation of
// the system.
type Fault struct {
	AtStep int       `json:"at_step"`
	System string    `json:"system"`
	Op     string    `json:"op"`
	N      int       `json:"n"`
	Kind   FaultKind `json:"kind"`
}

func (f Fault) String() string {
	return fmt.Sprintf("after step %d: next %d× %s/%s → %s", f.AtStep, f.N, f.System, f.Op, f.Kind)
}

// HostEvent is a host-level fault a fake system offers through its own
// injection API (a locked Ironic node, an inspection that fails once).
// Apply plants it on the fleet before the faulted run; Name says what it is.
type HostEvent struct {
	Host  string                      `json:"host"`
	Name  string                      `json:"name"`
	Apply func(f *Fleet, host string) `json:"-"`
	// Clear withdraws what Apply planted and the run did not consume.
	Clear func(f *Fleet, host string) `json:"-"`
}

// Schedule is one seeded fault schedule: a small fleet and the faults it
// runs under. Everything in it is drawn from Seed, so a failing schedule is
// replayed by its seed alone.
type Schedule struct {
	Seed   uint64      `json:"seed"`
	Fleet  Config      `json:"fleet"`
	Faults []Fault     `json:"faults"`
	Events []HostEvent `json:"host_events,omitempty"`
	// PlatformClassOff runs with the platform_class_activity_ready gate off.
	PlatformClassOff bool `json:"platform_class_off,omitempty"`
	// Concurrent runs the hosts at once (the faults then land on whichever
	// host calls first, so a replay may differ); otherwise one after another.
	Concurrent bool `json:"concurrent,omitempty"`
}

func (s Schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule seed=%d: %d hosts (broken %.2f, divergent %.2f)", s.Seed, s.Fleet.Hosts, s.Fleet.Broken, s.Fleet.Divergent)
	if s.PlatformClassOff {
		b.WriteString(", platform class off")
	}
	if s.Concurrent {
		b.WriteString(", concurrent")
	}
	for _, f := range s.Faults {
		b.WriteString("\n  " + f.String())
	}
	for _, e := range s.Events {
		b.WriteString("\n  " + e.Host + ": " + e.Name)
	}
	return b.String()
}

// Catalog lists, per system, the operations a fault may target. Take it
// from a fault-free run (CatalogOf) so it follows the phases that are wired.
type Catalog map[string][]string

// CatalogOf lists the operations the calls touched, per system, sorted.
func CatalogOf(c fakes.Calls) Catalog {
	out := Catalog{}
	for sys, t := range c {
		for op := range t.Ops {
			out[sys] = append(out[sys], op)
		}
		sort.Strings(out[sys])
	}
	return out
}

func (c Catalog) systems() []string {
	out := make([]string, 0, len(c))
	for s := range c {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// HostEventMaker builds a host-level fault for a host from the seed's
// generator; nil entries of Generator.Events are skipped.
type HostEventMaker func(rng *rand.Rand, host string) HostEvent

// Generator draws schedules.
type Generator struct {
	// Catalog is what faults may target.
	Catalog Catalog
	// MaxHosts bounds a schedule's fleet (default 3).
	MaxHosts int
	// Events are the host-level faults available (see ironic.go).
	Events []HostEventMaker
}

// Generate draws the schedule for a seed.
func (g Generator) Generate(seed uint64) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x7363686564))
	maxHosts := g.MaxHosts
	if maxHosts <= 0 {
		maxHosts = 3
	}
	s := Schedule{Seed: seed}
	s.Fleet = Config{Hosts: 1 + rng.IntN(maxHosts), Seed: seed}
	if rng.IntN(3) == 0 {
		s.Fleet.Broken = 0.5
	}
	if rng.IntN(4) == 0 {
		s.Fleet.Divergent = 0.5
	}
	s.PlatformClassOff = rng.IntN(8) == 0
	s.Concurrent = rng.IntN(4) == 0
	systems := g.Catalog.systems()
	if len(systems) > 0 {
		for i, n := 0, 1+rng.IntN(3); i < n; i++ {
			sys := systems[rng.IntN(len(systems))]
			ops := append([]string{"*"}, g.Catalog[sys]...)
			f := Fault{
				AtStep: rng.IntN(6 * s.Fleet.Hosts),
				System: sys,
				Op:     ops[rng.IntN(len(ops))],
				Kind:   FaultKinds[rng.IntN(len(FaultKinds))],
			}
			// Mostly short blips the retry policy rides out; sometimes an
			// outage longer than any budget.
			switch rng.IntN(4) {
			case 0:
				f.N = 20 + rng.IntN(40)
			default:
				f.N = 1 + rng.IntN(2)
			}
			s.Faults = append(s.Faults, f)
		}
	}
	if len(g.Events) > 0 && rng.IntN(2) == 0 {
		for i, n := 0, 1+rng.IntN(2); i < n; i++ {
			mk := g.Events[rng.IntN(len(g.Events))]
			if mk == nil {
				continue
			}
			host := hostName(rng.IntN(s.Fleet.Hosts), s.Fleet.Hosts)
			s.Events = append(s.Events, mk(rng, host))
		}
	}
	return s
}

// hostName is the name Build gives host i of n.
func hostName(i, n int) string { return fmt.Sprintf("sim-%0*d", len(fmt.Sprint(n)), i) }

// IronicEvents are the host-level faults the fake Ironic offers: a node
// locked by another conductor (briefly, or past the lock budget), an
// inspection or a cleaning that fails once, a power-on that never happens.
var IronicEvents = []HostEventMaker{
	func(rng *rand.Rand, host string) HostEvent {
		d := []time.Duration{30 * time.Second, 5 * time.Minute, 20 * time.Minute}[rng.IntN(3)]
		return HostEvent{Host: host, Name: fmt.Sprintf("node locked by another conductor for %s", d),
			Apply: func(f *Fleet, h string) { f.ironicOf(h).HoldLock(h, "other-conductor-2", d) },
			Clear: func(f *Fleet, h string) { f.ironicOf(h).HoldLock(h, "", 0) }}
	},
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Name: "inspection fails once",
			Apply: func(f *Fleet, h string) { f.ironicOf(h).FailInspection(h, 1) },
			Clear: func(f *Fleet, h string) { f.ironicOf(h).FailInspection(h, -1) }}
	},
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Name: "cleaning fails once",
			Apply: func(f *Fleet, h string) { f.ironicOf(h).FailCleaning(h, 1) },
			Clear: func(f *Fleet, h string) { f.ironicOf(h).FailCleaning(h, -1) }}
	},
	func(_ *rand.Rand, host string) HostEvent {
		return HostEvent{Host: host, Name: "power-on never happens once",
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
}

func (f *Fleet) ironicOf(host string) *fakes.Ironic {
	ir, _ := f.nodeOf(host)
	return ir
}
