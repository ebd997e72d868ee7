package enrollment

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/flow"
)

// Executor runs the workflow's steps. It holds the clients every step uses;
// steps take and return only plain serialisable values. One Executor serves
// any number of concurrent enrollments. It is the enrollment's flow.Steps:
// run it with flow.Local, or register it with a Temporal worker.
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
	table *flow.Table
}

var _ flow.Steps = (*Executor)(nil)

// The longest one attempt of each step may take. A remote runtime bounds
// the step by it (the Temporal activity timeout), so each is the sum of the
// deadlines of the calls one attempt can make, rounded up.
const (
	// netboxAttempt: a NetBox step makes at most ~8 requests (intent is 6,
	// a write re-reads then patches), each 30 s with up to 4 retried
	// attempts honouring Retry-After: well under 10 minutes.
	netboxAttempt = 10 * time.Minute
	// dhcpAttempt: one connect, one login, up to 6 remote commands and one
	// transfer, each under its own deadline (120 s by default): 9 × 120 s.
	dhcpAttempt = 18 * time.Minute
	// bmcAttempt: one BMC attempt never sleeps; it makes a bounded number of
	// Redfish requests (detection, login, one convergence pass: under 40),
	// each under the connector's 60 s request timeout.
	bmcAttempt = 40 * time.Minute
	// ironicAttempt: one Ironic call reads the node and acts at most once:
	// under 10 Ironic requests of 60 s, plus one BMC link read of 60 s.
	ironicAttempt = 11 * time.Minute
)

func (e *Executor) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

func (e *Executor) steps() *flow.Table {
	e.once.Do(func() {
		var all []flow.Step
		for _, group := range [][]flow.Step{e.coreSteps(), e.dhcpSteps(), e.bmcSteps(), e.ironicSteps()} {
			all = append(all, group...)
		}
		e.table = flow.MustTable(all...)
	})
	return e.table
}

// Step returns the step registered under name.
func (e *Executor) Step(name string) (flow.Step, bool) { return e.steps().Step(name) }

// StepNames lists every registered step, sorted, for orchestrator adapters
// that register one activity per step.
func (e *Executor) StepNames() []string { return e.steps().StepNames() }

// Dispatch runs one registered step by name with its input and output as
// JSON (see flow.Dispatch).
func (e *Executor) Dispatch(ctx context.Context, step string, in []byte) ([]byte, error) {
	return flow.Dispatch(ctx, e, step, in)
}

// Local returns a flow.Local that runs this executor's steps inline on clk,
// logging to the executor's logger with the device as the subject; set its
// Subject, OnEvent and RoundTrip as needed.
func (e *Executor) Local(clk clock.Clock) *flow.Local {
	return &flow.Local{Steps: e, Clock: clk, Log: e.log(), SubjectKey: "device"}
}
