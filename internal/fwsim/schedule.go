package fwsim

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/fleetsim"
)

// The systems a firmware schedule's faults strike, and their operations:
// what the update steps call. Reads fail like writes before their effect;
// lost answers strike writes (on a read a lost answer is an error like
// any other).
const (
	SysBMC   = "bmc"
	SysStore = "store"
	SysHosts = "hosts"
)

// Ops lists, per system, the operations a fault may target.
var Ops = fleetsim.Catalog{
	SysBMC:   {"inventory", "lockdown", "lockdown_status", "reset", "reset_status", "task", "tasks", "upload"},
	SysStore: {"AcquireUploadSlot", "Complete", "Observed", "Overrides", "PatchRequest", "PutObserved", "PutPush", "PutResult", "PutUpdate", "Pushes", "ReleaseUploadSlot", "Request", "Result", "Update"},
	SysHosts: {"ClearUpdateReport", "Get", "SetUpdateReport"},
}

// Writes lists, per system, the operations that take effect: what a lost
// answer strikes and what a crash counts.
var Writes = fleetsim.Catalog{
	SysBMC:   {"lockdown", "reset", "upload"},
	SysStore: {"AcquireUploadSlot", "Complete", "PatchRequest", "PutObserved", "PutPush", "PutResult", "PutUpdate", "ReleaseUploadSlot"},
	SysHosts: {"ClearUpdateReport", "SetUpdateReport"},
}

// storeKinds are the faults a state database shows: it does not answer,
// the connection drops (before or after the commit), a write loses to
// another writer. It never answers 401 or 404.
var storeKinds = []fleetsim.FaultKind{fleetsim.Fault5xx, fleetsim.FaultTimeout, fleetsim.FaultDrop, fleetsim.FaultConflict, fleetsim.FaultLost, fleetsim.FaultLostTimeout}

// WritingSteps are the update steps that write: what a crash may cut off.
var WritingSteps = []string{
	firmware.StepLoad, firmware.StepPending, firmware.StepCheckingFirmware, firmware.StepCheckingFirmwareRepeat,
	firmware.StepWaitingForScoutUpgrade, firmware.StepWaitingForScript, firmware.StepInitialReset, firmware.StepWaitingForUpload,
	firmware.StepWaitingForFirmwareUpgrade, firmware.StepResetForNewFirmware, firmware.StepNewFirmwareReportedWait,
	firmware.StepFailedFirmwareUpgrade, firmware.StepRestore,
}

// ScheduleHost is one host of a schedule's fleet: drifted on every
// component of its profile.
type ScheduleHost struct {
	Machine string  `json:"machine"`
	Profile Profile `json:"profile"`
	// Assigned hosts run a tenant's instance; their tenant approved the
	// update, so restore restarts them into it.
	Assigned bool `json:"assigned,omitempty"`
	// NoCX7: a DGX without CX7 cards (its cx7 is unmatched).
	NoCX7 bool `json:"no_cx7,omitempty"`
}

// ScheduleFault is one entry of a schedule, in enrollment's format (fleetsim.Fault:
// once the fleet has run AtStep steps, the next N calls of System's Op fail
// as Kind; a crash kills the next attempt of step Op after its N-th write),
// with one addition: Step, when set, scopes a call fault to the calls of
// that step's attempts, so that every step meets every kind of fault.
type ScheduleFault struct {
	fleetsim.Fault
	Step string `json:"step,omitempty"`
}

func (f ScheduleFault) String() string {
	if f.Step == "" {
		return f.Fault.String()
	}
	return f.Fault.String() + " in " + f.Step
}

// Schedule is one seeded fault schedule of the firmware update workflow:
// a small fleet, every host with an operator's update request, and the
// faults it runs under. Everything is drawn from Seed, so a failing
// schedule is replayed by its seed alone.
type Schedule struct {
	Seed  uint64         `json:"seed"`
	Hosts []ScheduleHost `json:"hosts"`
	// MaxUploads is the site's upload slots (max_uploads).
	MaxUploads int             `json:"max_uploads"`
	Faults     []ScheduleFault `json:"faults"`
	// Concurrent runs the hosts' workflows at once (the faults then land
	// on whichever host calls first, so a replay may differ); otherwise
	// one after another.
	Concurrent bool `json:"concurrent,omitempty"`
}

func (s Schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "schedule seed=%d: max_uploads %d", s.Seed, s.MaxUploads)
	if s.Concurrent {
		b.WriteString(", concurrent")
	}
	for _, h := range s.Hosts {
		fmt.Fprintf(&b, "\n  %s: %s", h.Machine, h.Profile)
		if h.Assigned {
			b.WriteString(", assigned")
		}
		if h.NoCX7 {
			b.WriteString(", no CX7")
		}
	}
	for _, f := range s.Faults {
		b.WriteString("\n  " + f.String())
	}
	return b.String()
}

// stepWrites are, per step, the writes its attempts make besides the
// record's compare-and-set (store PutUpdate, which every step makes): what
// a lost answer scoped to the step strikes.
var stepWrites = map[string][]string{
	firmware.StepLoad:                      {},
	firmware.StepPending:                   {SysHosts + "/SetUpdateReport", SysBMC + "/lockdown", SysStore + "/PatchRequest"},
	firmware.StepCheckingFirmware:          {SysStore + "/PutObserved"},
	firmware.StepCheckingFirmwareRepeat:    {SysStore + "/PutObserved"},
	firmware.StepWaitingForScoutUpgrade:    {},
	firmware.StepWaitingForScript:          {SysStore + "/PutResult"},
	firmware.StepInitialReset:              {SysBMC + "/reset"},
	firmware.StepWaitingForUpload:          {SysBMC + "/upload", SysBMC + "/upload", SysStore + "/PutPush", SysStore + "/PutResult", SysStore + "/AcquireUploadSlot", SysStore + "/ReleaseUploadSlot"},
	firmware.StepWaitingForFirmwareUpgrade: {},
	firmware.StepResetForNewFirmware:       {SysBMC + "/reset", SysBMC + "/reset"},
	firmware.StepNewFirmwareReportedWait:   {},
	firmware.StepFailedFirmwareUpgrade:     {},
	firmware.StepRestore:                   {SysBMC + "/lockdown", SysBMC + "/reset", SysHosts + "/ClearUpdateReport", SysStore + "/Complete"},
}

// Generate draws the schedule of a seed: one to three hosts of the four
// profiles and one to three faults. A third of the faults are worker
// crashes after N writes of a step's attempt; the others strike calls
// before their effect, or let the effect happen and lose the answer.
// Half the call faults are scoped to one step (Fault.Step) and armed from
// the start, so that across seeds every step meets every kind; the
// others strike whichever call of their system comes after a seeded
// number of the fleet's steps.
func Generate(seed uint64) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x66777363))
	s := Schedule{Seed: seed, MaxUploads: []int{1, 2, 4}[rng.IntN(3)]}
	n := 1 + rng.IntN(3)
	for i := range n {
		h := ScheduleHost{Machine: fmt.Sprintf("fw-%d", i), Profile: Profiles[rng.IntN(len(Profiles))]}
		h.Assigned = rng.IntN(4) == 0
		h.NoCX7 = h.Profile == ProfileDGX && rng.IntN(2) == 0
		s.Hosts = append(s.Hosts, h)
	}
	s.Concurrent = n > 1 && rng.IntN(4) == 0
	systems := []string{SysBMC, SysBMC, SysBMC, SysStore, SysStore, SysHosts}
	for i, k := 0, 1+rng.IntN(3); i < k; i++ {
		var f ScheduleFault
		f.Kind = fleetsim.FaultKinds[rng.IntN(len(fleetsim.FaultKinds))]
		f.AtStep = rng.IntN(45 * n)
		switch rng.IntN(3) {
		case 0:
			// A crash waits, armed, for its step: arm it early, so that a
			// step that runs once per host (the load, the first checking)
			// meets it too. Most steps write a few times: the record, a
			// slot, a push's record, the BMC.
			f.Kind, f.System, f.N, f.AtStep = fleetsim.FaultCrash, fleetsim.SysWorker, 1+rng.IntN(4), rng.IntN(5*n)
			f.Op = append([]string{"*"}, WritingSteps...)[rng.IntN(len(WritingSteps)+1)]
			s.Faults = append(s.Faults, f)
			continue
		case 1:
			f.Step, f.AtStep = WritingSteps[rng.IntN(len(WritingSteps))], 0
			f.System, f.Op = SysStore, "*"
			if f.Kind.Lost() {
				ws := append([]string{SysStore + "/PutUpdate"}, stepWrites[f.Step]...)
				f.System, f.Op, _ = strings.Cut(ws[rng.IntN(len(ws))], "/")
			} else if rng.IntN(2) == 0 {
				f.System = SysBMC
			}
		default:
			f.System = systems[rng.IntN(len(systems))]
			ops := Ops[f.System]
			if f.Kind.Lost() {
				ops = Writes[f.System]
			} else {
				ops = append([]string{"*"}, ops...)
			}
			f.Op = ops[rng.IntN(len(ops))]
		}
		if f.System == SysStore && !storeKind(f.Kind) {
			f.Kind = storeKinds[rng.IntN(len(storeKinds))]
		}
		// Mostly short blips the workflow rides out; sometimes an outage
		// longer than any budget.
		switch rng.IntN(4) {
		case 0:
			f.N = 20 + rng.IntN(40)
		default:
			f.N = 1 + rng.IntN(2)
		}
		s.Faults = append(s.Faults, f)
	}
	return s
}

func storeKind(k fleetsim.FaultKind) bool {
	for _, x := range storeKinds {
		if x == k {
			return true
		}
	}
	return false
}
