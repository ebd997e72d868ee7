package enrollment

import (
	"log/slog"
	"sync"
)

// Executor runs the workflow's steps. It holds the clients every step uses;
// steps take and return only plain serialisable values. One Executor serves
// any number of concurrent enrollments.
//
// A nil phase dependency makes that phase's steps fail with NOT_IMPLEMENTED,
// never pass silently; turn the phase's site gate off instead to skip it.
type Executor struct {
	NetBox       NetBox
	FleetManager FleetManager
	Vault        Vault
	// DHCP configures the DHCP server (phase 1).
	DHCP DHCPPhase
	// BMC configures the BMC (phase 2).
	BMC BMCPhase
	// Ironic holds the Ironic phases per Ironic instance name (phases 4-7).
	Ironic map[string]IronicPhases
	// Log receives structured logs with device, phase, step and code fields.
	Log *slog.Logger

	once  sync.Once
	table map[string]stepFn
}

func (e *Executor) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

func (e *Executor) step(name string) (stepFn, bool) {
	e.once.Do(func() {
		e.table = map[string]stepFn{}
		for _, group := range []map[string]stepFn{e.coreSteps(), e.dhcpSteps(), e.bmcSteps(), e.ironicSteps()} {
			for k, v := range group {
				if _, dup := e.table[k]; dup {
					panic("enrollment: step " + k + " registered twice")
				}
				e.table[k] = v
			}
		}
	})
	s, ok := e.table[name]
	return s, ok
}

// StepNames lists every registered step, for orchestrator adapters that
// register one activity per step.
func (e *Executor) StepNames() []string {
	e.step("")
	out := make([]string, 0, len(e.table))
	for k := range e.table {
		out = append(out, k)
	}
	return out
}
