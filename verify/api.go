package verify

// This file fixes the package's API so the Ironic inspection half and the CLI
// can be built against it; the implementation fills it in.

import (
	"encoding/json"
	"time"
)

// Inventory is a host's inspection data, from Ironic's inventory +
// plugin_data or the legacy ironic-inspector format.
type Inventory struct {
	Raw json.RawMessage `json:"-"`
}

// ParseInventory reads an inventory document in either format.
func ParseInventory(b []byte) (Inventory, error) { return Inventory{Raw: b}, nil }

// Cable is the NetBox record of one frontend interface's cable.
type Cable struct {
	Interface string `json:"interface"`
	MAC       string `json:"mac,omitempty"`
	Switch    string `json:"switch,omitempty"`
	Port      string `json:"port,omitempty"`
}

// Expectations is what NetBox says the host is.
type Expectations struct {
	Device string  `json:"device"`
	Cables []Cable `json:"cables,omitempty"`
	// SkipCableVerification skips the LLDP check (not the carrier check).
	SkipCableVerification bool `json:"skip_cable_verification,omitempty"`
}

// ExpectationsFrom builds expectations from the inspection_validation config
// context block (nil when absent) and the frontend cables.
func ExpectationsFrom(device string, validation map[string]any, cables []Cable, skipCable bool) (Expectations, error) {
	return Expectations{Device: device, Cables: cables, SkipCableVerification: skipCable}, nil
}

// Mismatch is one check that failed.
type Mismatch struct {
	Check    string `json:"check"`
	Expected string `json:"expected"`
	Observed string `json:"observed"`
	Action   string `json:"action"`
}

// Report lists every mismatch.
type Report struct {
	Mismatches []Mismatch `json:"mismatches,omitempty"`
}

// OK reports whether every check passed.
func (r Report) OK() bool { return len(r.Mismatches) == 0 }

// Err returns nil when OK, else a *hostforge.Failure summarising the mismatches.
func (r Report) Err() error { return nil }

// Check runs every check in the spec's order.
func Check(inv Inventory, exp Expectations) Report { return Report{} }

// LinkState is what a BMC reports of one frontend port.
type LinkState string

// Link states.
const (
	LinkUp      LinkState = "UP"
	LinkDown    LinkState = "DOWN"
	LinkUnknown LinkState = "UNKNOWN"
)

// LinkSample is one observation of every frontend port.
type LinkSample struct {
	At    time.Time            `json:"at"`
	Ports map[string]LinkState `json:"ports"`
}

// LinkDecision is the link guard's verdict.
type LinkDecision string

// Verdicts.
const (
	LinkPass  LinkDecision = "pass"
	LinkWait  LinkDecision = "wait"
	LinkAbort LinkDecision = "abort"
)

// DecideLink applies the three-state semantics to the samples taken since
// power-on (start): any UP passes; any UNKNOWN fails open (passes); all
// DOWN for the whole budget aborts; otherwise keep waiting.
func DecideLink(start time.Time, budget time.Duration, samples []LinkSample) LinkDecision {
	return LinkWait
}
