package enrollment

import (
	"context"
	"log/slog"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/dhcp"
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
	// Secrets is the process's set of secret values (passwords, tokens,
	// keys the vault hands out): every step's error leaves scrubbed of
	// them, whatever a remote system echoed (flow.Step.Scrubbed). nil
	// scrubs nothing here; the adapters still scrub what they know.
	Secrets *hostforge.Secrets

	// cache is the step table, and the table wrapped with Secrets
	// (flow.Scrubbed), built once per set rather than on every call.
	cache flow.StepCache
}

var _ flow.Steps = (*Executor)(nil)

// The longest one attempt of each step may take, registered as its
// attempt bound: a remote runtime bounds the step by it (under Temporal,
// the activity's start-to-close timeout; a dead worker is noticed sooner,
// by its missing heartbeat). An attempt never sleeps, so its longest is the
// requests it can make times the deadline of each: AttemptBudgets spells
// that out per step from what the phases do per call, and a test fails
// when a budget outgrows the bound registered here.
const (
	netboxAttempt = 55 * time.Minute
	dhcpAttempt   = 40 * time.Minute
	bmcAttempt    = 2*time.Hour + 5*time.Minute
	ironicAttempt = 65 * time.Minute
)

// What one attempt of each step does, per call.
const (
	// netboxRequest is the longest one NetBox request through the adapter
	// takes with its defaults: the first try and 4 retries of 30 s each,
	// with at most 60 s (the Retry-After cap) between tries.
	netboxRequest = 5*30*time.Second + 4*time.Minute
	// netboxRequests: the heaviest NetBox step, activate_device, reads the
	// intent (device, type, role, interfaces, peer interfaces, peer
	// devices: 6 requests for a host with up to 100 cabled interfaces) and
	// writes the status; tag_device makes at most 5 (device, tags, two tag
	// creations, patch), record_platform_class 2 to NetBox and 2 to the
	// fleet manager. One spare for a second page.
	netboxRequests = 8
	// dhcpDeadline is the SSH adapter's default for each deadline; one
	// attempt runs into at most dhcp.MaxRemoteOperations of them (connect,
	// login, commands, transfers, the server lock; see package dhcp).
	dhcpDeadline = 120 * time.Second
	// ironicRequest is the Ironic adapter's per-request timeout.
	ironicRequest = 60 * time.Second
	// ironicRequests bounds the Ironic requests of one attempt: the
	// heaviest is the prelude of inspection on a fresh node — find, create,
	// driver info, traits, manage — plus two requests (find, create) per
	// frontend port and its portgroup, for a host with up to 16 frontend
	// NICs (TestIronicRequestsPerAttempt measures it on the fake).
	ironicRequests = 8 + 2*16
)

// AttemptBudgets documents, per registered step, the longest one attempt
// can take, from the requests it makes and their deadlines:
//
//	NetBox steps      8 requests × 6.5 min (30 s × 5 tries + 4 × 60 s)  52 min
//	configure_dhcp    dhcp.MaxRemoteOperations (19) × 120 s             38 min
//	configure_bmc     bmc.AttemptBound: 120 Redfish requests × 60 s     2 h
//	Ironic steps      40 Ironic requests × 60 s + one link read
//	                  (bmc.LinkReadRequests × 60 s)                     64 min
func AttemptBudgets() map[string]time.Duration {
	netbox := netboxRequests * netboxRequest
	ironic := ironicRequests*ironicRequest + bmc.LinkReadRequests*bmc.RequestTimeout
	return map[string]time.Duration{
		StepReadIntent:          netbox,
		StepRecordPlatformClass: netbox,
		StepActivateDevice:      netbox,
		StepTagDevice:           netbox,
		StepConfigureDHCP:       dhcp.MaxRemoteOperations * dhcpDeadline,
		StepConfigureBMC:        bmc.AttemptBound,
		StepIronicInspection:    ironic,
		StepIronicSwitchIPMI:    ironic,
		StepIronicCleaning:      ironic,
		StepIronicFinalize:      ironic,
	}
}

func (e *Executor) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

func (e *Executor) buildSteps() *flow.Table {
	var all []flow.Step
	for _, group := range [][]flow.Step{e.coreSteps(), e.dhcpSteps(), e.bmcSteps(), e.ironicSteps()} {
		all = append(all, group...)
	}
	return flow.MustTable(all...)
}

// Step returns the step registered under name, its errors scrubbed of
// e.Secrets (which may be set after the first call).
func (e *Executor) Step(name string) (flow.Step, bool) {
	return e.cache.Step(e.buildSteps, e.Secrets, name)
}

// StepNames lists every registered step, sorted, for orchestrator adapters
// that register one activity per step.
func (e *Executor) StepNames() []string { return e.cache.Table(e.buildSteps).StepNames() }

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
