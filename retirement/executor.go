package retirement

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

// Executor runs the retirement's steps: it holds the clients, and the steps
// take and return plain serialisable values. One Executor serves any number
// of concurrent retirements. It is the retirement's flow.Steps: run it with
// flow.Local, or register it with a Temporal worker.
//
// A nil dependency makes the steps that need it fail with RETIRE_NOT_WIRED,
// never pass silently; the site's gates (SiteConfig) say which steps run.
type Executor struct {
	NetBox NetBox
	// Ironic holds the Ironic side per Ironic instance name.
	Ironic map[string]IronicRetirement
	DHCP   DHCPRemover
	BMC    BMCRetirer
	Ledger Ledger
	Log    *slog.Logger
	// Secrets is the process's set of secret values: every step's error
	// leaves scrubbed of them (flow.Step.Scrubbed).
	Secrets *hostforge.Secrets

	cache flow.StepCache
}

var _ flow.Steps = (*Executor)(nil)

// Step names. Each is one idempotent attempt; the "retire." prefix keeps
// them apart from the other workflows' steps on a worker.
const (
	StepRead       = "retire.read_device"
	StepIronicGate = "retire.ironic_gate"
	StepErase      = "retire.erase"
	StepRemoveNode = "retire.remove_node"
	StepDHCP       = "retire.dhcp"
	StepBMC        = "retire.bmc"
	StepLedger     = "retire.ledger"
	StepNetBox     = "retire.netbox_offline"
	StepAnnounced  = "retire.announced"
)

// What one attempt of each step does, and the longest it can take (the
// bound a remote runtime gives it):
//
//	retire.read_device     the device's intent (≤ 6 requests) + its journal (1)
//	retire.netbox_offline  the same reads + a journal entry + the status PATCH
//	retire.announced       the journal read + one entry
//	                       each NetBox request 6.5 min with the adapter's retries → 65 min
//	retire.ironic_*        ≤ 40 Ironic requests (ports and portgroups
//	                       deleted one by one) × 60 s                       → 40 min
//	retire.dhcp            dhcp.MaxRemoteOperations × 120 s                 → 38 min
//	retire.bmc             a login per credential (≤ 4), the account list,
//	                       the deletion, three vault calls: ≤ 10 × 60 s    → 10 min
//	retire.ledger          two ledger calls                                 → 2 min
const (
	netboxRequest = 5*30*time.Second + 4*time.Minute
	netboxAttempt = 10 * netboxRequest
	ironicAttempt = 40 * time.Minute
	dhcpAttempt   = dhcp.MaxRemoteOperations * 120 * time.Second
	bmcAttempt    = 10 * bmc.RequestTimeout
	ledgerAttempt = 2 * time.Minute
)

func (e *Executor) buildSteps() *flow.Table {
	return flow.MustTable(
		flow.Bind(StepRead, netboxAttempt, e.ReadDevice),
		flow.Bind(StepIronicGate, ironicAttempt, e.IronicGate),
		flow.Bind(StepErase, ironicAttempt, e.Erase),
		flow.Bind(StepRemoveNode, ironicAttempt, e.RemoveNode),
		flow.Bind(StepDHCP, dhcpAttempt, e.RemoveDHCP),
		flow.Bind(StepBMC, bmcAttempt, e.RetireBMC),
		flow.Bind(StepLedger, ledgerAttempt, e.ClearLedger),
		flow.Bind(StepNetBox, netboxAttempt, e.SetOffline),
		flow.Bind(StepAnnounced, netboxAttempt, e.MarkAnnounced),
	)
}

// Step returns the step registered under name, its errors scrubbed of
// e.Secrets.
func (e *Executor) Step(name string) (flow.Step, bool) {
	return e.cache.Step(e.buildSteps, e.Secrets, name)
}

// StepNames lists every registered step, sorted.
func (e *Executor) StepNames() []string { return e.cache.Table(e.buildSteps).StepNames() }

// Dispatch runs one registered step by name with its input and output as
// JSON (see flow.Dispatch).
func (e *Executor) Dispatch(ctx context.Context, step string, in []byte) ([]byte, error) {
	return flow.Dispatch(ctx, e, step, in)
}

// Local returns a flow.Local that runs this executor's steps inline on clk,
// logging with the device as the subject; set its Subject and OnEvent as
// needed. A retirement that fires events needs the extension dispatch's
// steps too: run it on a flow.Local over flow.Merge of both.
func (e *Executor) Local(clk clock.Clock) *flow.Local {
	return &flow.Local{Steps: e, Clock: clk, Log: e.log(), SubjectKey: "device"}
}

func (e *Executor) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}
