package fleetsim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
)

// FaultKind is how an injected fault strikes.
type FaultKind string

// The fault kinds a schedule draws from. A call fault maps to the error a
// real client returns for it (see Err); FaultLost and FaultLostTimeout take
// effect before they fail; FaultCrash kills a step attempt's worker.
const (
	// Fault5xx is a 5xx answer (a busy BMC, an overloaded NetBox).
	Fault5xx FaultKind = "5xx"
	// FaultTimeout is a call that hit the client's own deadline: the
	// adapters report it as the system being unavailable, never as a
	// cancellation (the caller's context is still live).
	FaultTimeout FaultKind = "timeout"
	// FaultDrop is a connection dropped mid-call (an SSH session torn down
	// mid-transfer, a reset TCP stream), before the system acted.
	FaultDrop FaultKind = "drop"
	// FaultConflict is a 409 (a fleet manager write conflict).
	FaultConflict FaultKind = "conflict"
	// FaultUnauthorized is a 401/403.
	FaultUnauthorized FaultKind = "unauthorized"
	// FaultInvalid is a 400.
	FaultInvalid FaultKind = "invalid"
	// FaultNotFound is a 404 for an object that exists (a stale replica).
	FaultNotFound FaultKind = "not_found"
	// FaultLost is a write the system applied whose answer was lost: the
	// connection dropped after the commit.
	FaultLost FaultKind = "lost"
	// FaultLostTimeout is a write the system applied after the client's
	// deadline expired: the caller saw a timeout.
	FaultLostTimeout FaultKind = "lost_timeout"
	// FaultCrash is the worker running a step attempt dying after N of the
	// attempt's writes took effect (Fault.N); the runtime notices the
	// missing heartbeat and runs the attempt again, as Temporal does.
	FaultCrash FaultKind = "crash"
)

// SysWorker is the "system" of a crash fault: its Op is a step name (or
// "*", any step) and its N the writes the attempt makes before it dies.
const SysWorker = "worker"

// FaultKinds lists the call-fault kinds, in a fixed order.
var FaultKinds = []FaultKind{Fault5xx, FaultTimeout, FaultDrop, FaultConflict, FaultUnauthorized, FaultInvalid, FaultNotFound, FaultLost, FaultLostTimeout}

// AllFaultKinds lists every kind a schedule draws: the call faults and the crash.
var AllFaultKinds = append(append([]FaultKind(nil), FaultKinds...), FaultCrash)

// Lost reports whether the fault strikes after the call took effect.
func (k FaultKind) Lost() bool { return k == FaultLost || k == FaultLostTimeout }

// Err is the error a client returns for the fault.
func (k FaultKind) Err(system, op string) error {
	where := system + " " + op
	switch k {
	case Fault5xx:
		return fmt.Errorf("injected: %s answered 503 Service Unavailable: %w", where, hostforge.ErrUnavailable)
	case FaultTimeout:
		return fmt.Errorf("injected: %s: no answer within the client's timeout: %w", where, hostforge.ErrUnavailable)
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
	case FaultLost:
		return fmt.Errorf("injected: %s: connection reset by peer after the request was sent: %w", where, hostforge.ErrUnavailable)
	case FaultLostTimeout:
		return fmt.Errorf("injected: %s: no answer within the client's timeout (the request was sent): %w", where, hostforge.ErrUnavailable)
	}
	return errors.New("injected: unknown fault kind " + string(k))
}

// Fault is one entry of a schedule: once the fleet has run AtStep steps,
// the next N calls of System's Op fail as Kind (Op "*" is any operation of
// the system) — or, for FaultCrash, the next attempt of step Op whose N-th
// write takes effect dies there.
type Fault struct {
	AtStep int       `json:"at_step"`
	System string    `json:"system"`
	Op     string    `json:"op"`
	N      int       `json:"n"`
	Kind   FaultKind `json:"kind"`
}

func (f Fault) String() string {
	if f.Kind == FaultCrash {
		return fmt.Sprintf("after step %d: the worker of the next %s attempt dies after its write %d", f.AtStep, f.Op, f.N)
	}
	return fmt.Sprintf("after step %d: next %d× %s/%s → %s", f.AtStep, f.N, f.System, f.Op, f.Kind)
}

// HostEvent is a host-level fault a fake system offers through its own
// injection API (a locked Ironic node, an inspection that fails once, a
// stale DHCP reservation). Apply plants it on the fleet before the faulted
// run (Before) or once the host's Ironic node exists; Name says what it is
// and Kind is its row in the outcome table (Outcomes).
type HostEvent struct {
	Host string `json:"host"`
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Before plants the event before the faulted run starts.
	Before bool                        `json:"before,omitempty"`
	Apply  func(f *Fleet, host string) `json:"-"`
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
	if s.Fleet.FactoryReset > 0 {
		fmt.Fprintf(&b, ", factory-reset BMCs %.2f (apply on reset %.2f)", s.Fleet.FactoryReset, s.Fleet.ApplyOnReset)
	}
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

// WritesOf lists the operations that wrote, per system, sorted: what a
// lost answer may target.
func WritesOf(c fakes.Calls) Catalog {
	out := Catalog{}
	for sys, t := range c {
		for op := range t.WriteOps {
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

// WritingSteps are the enrollment steps that write to some system: the
// steps a crash may cut off.
var WritingSteps = []string{
	enrollment.StepRecordPlatformClass, enrollment.StepConfigureDHCP, enrollment.StepConfigureBMC,
	enrollment.StepTagDevice, enrollment.StepActivateDevice, enrollment.StepIronicInspection,
	enrollment.StepIronicSwitchIPMI, enrollment.StepIronicCleaning, enrollment.StepIronicFinalize,
}

// HostEventMaker builds a host-level fault for a host from the seed's
// generator; nil entries of Generator.Events are skipped.
type HostEventMaker func(rng *rand.Rand, host string) HostEvent

// Generator draws schedules.
type Generator struct {
	// Catalog is what call faults may target.
	Catalog Catalog
	// Writes is what lost answers target (default: Catalog).
	Writes Catalog
	// Steps are what crashes target (default: WritingSteps).
	Steps []string
	// MaxHosts bounds a schedule's fleet (default 3).
	MaxHosts int
	// Events are the host-level faults available (default: AllEvents).
	Events []HostEventMaker
}

// Generate draws the schedule for a seed.
func (g Generator) Generate(seed uint64) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x7363686564))
	maxHosts := g.MaxHosts
	if maxHosts <= 0 {
		maxHosts = 3
	}
	writes := g.Writes
	if writes == nil {
		writes = g.Catalog
	}
	steps := g.Steps
	if steps == nil {
		steps = WritingSteps
	}
	events := g.Events
	if events == nil {
		events = AllEvents
	}
	s := Schedule{Seed: seed}
	s.Fleet = Config{Hosts: 1 + rng.IntN(maxHosts), Seed: seed}
	if rng.IntN(3) == 0 {
		s.Fleet.Broken = 0.5
	}
	if rng.IntN(4) == 0 {
		s.Fleet.Divergent = 0.5
	}
	// Half the schedules run BMCs that need their password rotated (new
	// from the factory, or factory-reset as a remediation); a third of
	// those BMCs apply it only on their next cold reset.
	if rng.IntN(2) == 0 {
		s.Fleet.FactoryReset = []float64{0.5, 1}[rng.IntN(2)]
		if rng.IntN(3) == 0 {
			s.Fleet.ApplyOnReset = 1
		}
	}
	s.PlatformClassOff = rng.IntN(8) == 0
	s.Concurrent = rng.IntN(4) == 0
	systems := g.Catalog.systems()
	if len(systems) > 0 {
		for i, n := 0, 1+rng.IntN(3); i < n; i++ {
			f := Fault{AtStep: rng.IntN(6 * s.Fleet.Hosts), Kind: AllFaultKinds[rng.IntN(len(AllFaultKinds))]}
			switch {
			case f.Kind == FaultCrash:
				// Die after one of the first few writes of a step attempt:
				// every step writes at least once, the BMC's many times.
				f.System, f.N = SysWorker, 1+rng.IntN(4)
				f.Op = append([]string{"*"}, steps...)[rng.IntN(len(steps)+1)]
				s.Faults = append(s.Faults, f)
				continue
			case f.Kind.Lost() && len(writes) > 0:
				ws := writes.systems()
				f.System = ws[rng.IntN(len(ws))]
				f.Op = writes[f.System][rng.IntN(len(writes[f.System]))]
			default:
				f.System = systems[rng.IntN(len(systems))]
				ops := append([]string{"*"}, g.Catalog[f.System]...)
				f.Op = ops[rng.IntN(len(ops))]
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
	if len(events) > 0 && rng.IntN(2) == 0 {
		for i, n := 0, 1+rng.IntN(2); i < n; i++ {
			mk := events[rng.IntN(len(events))]
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
