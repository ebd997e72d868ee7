package retirement

import (
	"context"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// NetBox is what the retirement needs from the source of truth: the device,
// its status, and its journal. Implementations return hostforge.ErrNotFound,
// ErrUnauthorized, ErrUnavailable, ErrConflict or ErrInvalid (wrapped) for
// what NetBox said. fakes.NetBox and adapters/netbox implement it;
// enrolltest/netboxtest holds both to it.
type NetBox interface {
	// Device reads one host's intent by device name.
	Device(ctx context.Context, name string) (intent.Device, error)
	// SetStatus changes the device status, and nothing else.
	SetStatus(ctx context.Context, deviceID int, status intent.Status) error
	// JournalEntries lists the device's journal entries, oldest first.
	JournalEntries(ctx context.Context, deviceID int) ([]intent.JournalEntry, error)
	// AddJournalEntry writes one entry: a new one every call.
	AddJournalEntry(ctx context.Context, deviceID int, kind intent.JournalKind, comments string) (intent.JournalEntry, error)
}

// Ledger is the fleet manager's ledger as the retirement clears it: the
// device's Enrollment proof and its platform-class record.
// fakes.FleetProofs and adapters/sqlstore.Ledger implement it;
// enrollment/ledgertest holds both to it.
type Ledger interface {
	// RetireState reads the device's identity and what the retirement
	// clears: whether it holds proof (valid or stale) and its platform
	// class. hostforge.ErrNotFound when the ledger does not know it.
	RetireState(ctx context.Context, device string) (identity string, proof bool, platformClass string, err error)
	// RetireEnrollment clears the device's proof (valid or stale) and
	// platform class in one compare-and-set, identity-guarded as the
	// settlement's failure write is: when identity is no longer the
	// device's identity (a replacement) nothing changes. It reports whether
	// it cleared anything; a record with nothing to clear is not written.
	RetireEnrollment(ctx context.Context, device, identity, run string) (cleared bool, err error)
}

// IronicRetirement is the Ironic side of a retirement for one Ironic
// instance; *ironic.Phases implements it over an ironic.Decommissioner.
type IronicRetirement interface {
	RetireGate(ctx context.Context, in ironic.RetireIn) (ironic.RetireGateOut, error)
	Erase(ctx context.Context, in ironic.EraseIn) (ironic.EraseOut, error)
	RemoveNode(ctx context.Context, in ironic.RemoveIn) (ironic.RemoveOut, error)
}

var _ IronicRetirement = (*ironic.Phases)(nil)

// DHCPRemover takes a host's reservation off the DHCP server; *dhcp.Phase.
type DHCPRemover interface {
	Remove(ctx context.Context, hostname string) (dhcp.Result, error)
}

var _ DHCPRemover = (*dhcp.Phase)(nil)

// BMCRetirer retires a host's BMC; *bmc.Retirer.
type BMCRetirer interface {
	Retire(ctx context.Context, t bmc.RetireTarget) (bmc.RetireResult, error)
}

var _ BMCRetirer = (*bmc.Retirer)(nil)
