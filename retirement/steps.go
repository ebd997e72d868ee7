package retirement

import (
	"context"
	"errors"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// ReadIn names the device to read.
type ReadIn struct {
	Device string `json:"device"`
}

// ReadOut is the device's intent and what its journal says of retirements.
type ReadOut struct {
	Device  intent.Device `json:"device"`
	Journal Journal       `json:"journal"`
}

// ReadDevice reads the device's intent and journal. It writes nothing.
func (e *Executor) ReadDevice(ctx context.Context, in ReadIn) (ReadOut, error) {
	if e.NetBox == nil {
		return ReadOut{}, NotWired.At(PhaseGate).New("no NetBox in the executor")
	}
	d, j, err := e.readDevice(ctx, in.Device, PhaseGate)
	return ReadOut{Device: d, Journal: j}, err
}

func (e *Executor) readDevice(ctx context.Context, name, phase string) (intent.Device, Journal, error) {
	d, err := e.NetBox.Device(ctx, name)
	if err != nil {
		return d, Journal{}, netboxSpecs.Classify(err, phase, "reading device %s", name)
	}
	entries, err := e.NetBox.JournalEntries(ctx, d.ID)
	if err != nil {
		return d, Journal{}, netboxSpecs.Classify(err, phase, "reading the journal of device %s", name)
	}
	return d, ReadJournal(entries), nil
}

// IronicGateIn is StepIronicGate's input.
type IronicGateIn struct {
	Instance string          `json:"instance"`
	In       ironic.RetireIn `json:"in"`
}

// IronicEraseIn is StepErase's input.
type IronicEraseIn struct {
	Instance string         `json:"instance"`
	In       ironic.EraseIn `json:"in"`
}

// IronicRemoveIn is StepRemoveNode's input.
type IronicRemoveIn struct {
	Instance string          `json:"instance"`
	In       ironic.RemoveIn `json:"in"`
}

func (e *Executor) ironic(instance string) (IronicRetirement, error) {
	p, ok := e.Ironic[instance]
	if !ok || p == nil {
		return nil, NotWired.At(PhaseIronic).New("no Ironic retirement for instance %q in the executor", instance)
	}
	return p, nil
}

// IronicGate reads the node and refuses one a tenant holds. It writes nothing.
func (e *Executor) IronicGate(ctx context.Context, in IronicGateIn) (ironic.RetireGateOut, error) {
	p, err := e.ironic(in.Instance)
	if err != nil {
		return ironic.RetireGateOut{}, err
	}
	return p.RetireGate(ctx, in.In)
}

// Erase runs one call of the erase.
func (e *Executor) Erase(ctx context.Context, in IronicEraseIn) (ironic.EraseOut, error) {
	p, err := e.ironic(in.Instance)
	if err != nil {
		return ironic.EraseOut{}, err
	}
	return p.Erase(ctx, in.In)
}

// RemoveNode runs one call of the node's removal.
func (e *Executor) RemoveNode(ctx context.Context, in IronicRemoveIn) (ironic.RemoveOut, error) {
	p, err := e.ironic(in.Instance)
	if err != nil {
		return ironic.RemoveOut{}, err
	}
	return p.RemoveNode(ctx, in.In)
}

// DHCPIn names the host whose reservation goes.
type DHCPIn struct {
	Hostname string `json:"hostname"`
}

// RemoveDHCP takes the host's reservation off the DHCP server.
func (e *Executor) RemoveDHCP(ctx context.Context, in DHCPIn) (dhcp.Result, error) {
	if e.DHCP == nil {
		return dhcp.Result{}, NotWired.At(PhaseDHCP).New("no DHCP phase in the executor")
	}
	return e.DHCP.Remove(ctx, in.Hostname)
}

// RetireBMC removes the monitoring user and archives the credential.
func (e *Executor) RetireBMC(ctx context.Context, in bmc.RetireTarget) (bmc.RetireResult, error) {
	if e.BMC == nil {
		return bmc.RetireResult{}, NotWired.At(PhaseBMC).New("no BMC retirer in the executor")
	}
	return e.BMC.Retire(ctx, in)
}

// LedgerIn is the device whose ledger record is cleared, under the
// identity the run operates on ("" adopts the identity the ledger has).
type LedgerIn struct {
	Device   string `json:"device"`
	Identity string `json:"identity,omitempty"`
	Run      string `json:"run"`
}

// LedgerOut says what the ledger step found and did.
type LedgerOut struct {
	// Known is false when the ledger has no record of the device.
	Known   bool `json:"known"`
	Cleared bool `json:"cleared,omitempty"`
	// Replaced is the device's identity when it is no longer the run's: a
	// replacement's record is left untouched.
	Replaced string `json:"replaced,omitempty"`
}

// ClearLedger clears the device's completion proof and platform-class
// record: it reads first, and writes only when there is something to clear
// for the identity the run operates on.
func (e *Executor) ClearLedger(ctx context.Context, in LedgerIn) (LedgerOut, error) {
	if e.Ledger == nil {
		return LedgerOut{}, NotWired.At(PhaseLedger).New("no ledger in the executor")
	}
	current, proof, class, err := e.Ledger.RetireState(ctx, in.Device)
	if errors.Is(err, hostforge.ErrNotFound) {
		return LedgerOut{}, nil
	}
	if err != nil {
		return LedgerOut{}, ledgerErr(err, "reading the ledger record of %s", in.Device)
	}
	out := LedgerOut{Known: true}
	identity := in.Identity
	if identity == "" {
		identity = current
	}
	if current != identity {
		out.Replaced = current
		e.log().Warn("the device's identity changed since the retirement was submitted; its ledger record is left alone", "device", in.Device, "phase", PhaseLedger, "identity", identity, "now", current)
		return out, nil
	}
	if !proof && class == "" {
		return out, nil
	}
	cleared, err := e.Ledger.RetireEnrollment(ctx, in.Device, identity, in.Run)
	if err != nil {
		return out, ledgerErr(err, "clearing the ledger record of %s (run %s)", in.Device, in.Run)
	}
	out.Cleared = cleared
	return out, nil
}

func ledgerErr(err error, format string, args ...any) error {
	err = ledgerSpecs.Classify(err, PhaseLedger, format, args...)
	if hostforge.Settled(err) {
		return err
	}
	return LedgerUnavailable.Wrap(err, format, args...)
}

// NetBoxIn is the device to set offline and what its journal entry says.
type NetBoxIn struct {
	Device string `json:"device"`
	Run    string `json:"run"`
	// Lines are the entry's lines after the first: what the run did.
	Lines []string `json:"lines,omitempty"`
}

// NetBoxOut says what the step found and did.
type NetBoxOut struct {
	Before    intent.Status `json:"before"`
	Journaled bool          `json:"journaled,omitempty"`
	Changed   bool          `json:"changed,omitempty"`
}

// SetOffline records the run in the device's journal — before anything
// else, as the status change it names — and sets the device offline. It
// re-reads both first: an entry of this run is not written again, an
// offline device is not written again. A device whose status moved to
// something other than decommissioning or offline during the run is left
// alone (RETIRE_STATUS_INELIGIBLE).
func (e *Executor) SetOffline(ctx context.Context, in NetBoxIn) (NetBoxOut, error) {
	if e.NetBox == nil {
		return NetBoxOut{}, NotWired.At(PhaseNetBox).New("no NetBox in the executor")
	}
	d, j, err := e.readDevice(ctx, in.Device, PhaseNetBox)
	if err != nil {
		return NetBoxOut{}, err
	}
	out := NetBoxOut{Before: d.Status}
	if d.Status != intent.StatusDecommissioning && d.Status != intent.StatusOffline {
		return out, StatusIneligible.At(PhaseNetBox).New("device %s went %s during the retirement; it is no longer set offline", d.Name, d.Status)
	}
	if !j.HasRetired(in.Run) {
		if _, err := e.NetBox.AddJournalEntry(ctx, d.ID, intent.JournalInfo, journalRetired(in.Run, in.Lines)); err != nil {
			return out, netboxSpecs.Classify(err, PhaseNetBox, "writing the retirement's journal entry on device %s", d.Name)
		}
		out.Journaled = true
	}
	if d.Status != intent.StatusOffline {
		if err := e.NetBox.SetStatus(ctx, d.ID, intent.StatusOffline); err != nil {
			return out, netboxSpecs.Classify(err, PhaseNetBox, "setting device %s offline", d.Name)
		}
		out.Changed = true
		e.log().Info("device set offline", "device", d.Name, "phase", PhaseNetBox, "from", d.Status, "run", in.Run)
	}
	return out, nil
}

// AnnouncedIn is the run whose events were delivered.
type AnnouncedIn struct {
	Device string   `json:"device"`
	Run    string   `json:"run"`
	Stages []string `json:"stages"`
}

// AnnouncedOut says whether the entry was written now.
type AnnouncedOut struct {
	Written bool `json:"written,omitempty"`
}

// MarkAnnounced records in the device's journal that the run's events were
// delivered, unless it says so already.
func (e *Executor) MarkAnnounced(ctx context.Context, in AnnouncedIn) (AnnouncedOut, error) {
	if e.NetBox == nil {
		return AnnouncedOut{}, NotWired.At(PhaseEvents).New("no NetBox in the executor")
	}
	d, j, err := e.readDevice(ctx, in.Device, PhaseEvents)
	if err != nil || j.HasAnnounced(in.Run) {
		return AnnouncedOut{}, err
	}
	if _, err := e.NetBox.AddJournalEntry(ctx, d.ID, intent.JournalInfo, journalAnnounced(in.Run, in.Stages)); err != nil {
		return AnnouncedOut{}, netboxSpecs.Classify(err, PhaseEvents, "writing the announcement's journal entry on device %s", d.Name)
	}
	return AnnouncedOut{Written: true}, nil
}
