package fleetsim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
)

// Outcome is one way a host may end: a failure code with the owner and the
// retryability the specification gives it, or the end state (Code "").
type Outcome struct {
	Code      string          `json:"code,omitempty"`
	Owner     hostforge.Owner `json:"owner,omitempty"`
	Retryable bool            `json:"retryable,omitempty"`
}

func (o Outcome) String() string {
	if o.Code == "" {
		return "the end state"
	}
	r := "not retryable"
	if o.Retryable {
		r = "retryable"
	}
	return fmt.Sprintf("%s (%s, %s)", o.Code, o.Owner, r)
}

// Converges is the end state: every enabled phase done, the node available.
var Converges = Outcome{}

func outcome(code string, owner hostforge.Owner, retryable bool) Outcome {
	return Outcome{Code: code, Owner: owner, Retryable: retryable}
}

// OutcomeTable says, from the specification and not from a run of the
// code under test, how a host may end: per system and fault kind, per host
// event, and per breakage. See the package documentation for the table
// itself and where each row comes from.
type OutcomeTable struct {
	// Calls are the outcomes a fault kind on a system may cause, besides
	// the end state (a fault the retry policy rides out).
	Calls map[string]map[FaultKind][]Outcome
	// Events are the outcomes a host event may cause, besides the end state.
	Events map[string][]Outcome
	// Breakage is the one outcome of a broken host once the faults clear,
	// given whether the platform-class phase runs.
	Breakage func(b Breakage, platformClass bool) Outcome
}

// Allowed lists how host may end the faulted run of s: the end state, its
// breakage's outcome, and every outcome a fault or event of the schedule
// may cause (a fault lands on whichever host calls next, and a DHCP
// server's restart failure on whichever host restarts it, so the whole
// schedule's causes count for every host).
func (t OutcomeTable) Allowed(s Schedule, f *Fleet, host string) []Outcome {
	out := []Outcome{Converges}
	if b, ok := f.Broken[host]; ok {
		out = append(out, t.Breakage(b, !s.PlatformClassOff))
	}
	for _, ft := range s.Faults {
		out = append(out, t.Calls[ft.System][ft.Kind]...)
	}
	for _, ev := range s.Events {
		out = append(out, t.Events[ev.Kind]...)
	}
	return out
}

// Final is how host must end once the faults have cleared: its breakage's
// outcome, or the end state.
func (t OutcomeTable) Final(s Schedule, f *Fleet, host string) Outcome {
	if b, ok := f.Broken[host]; ok {
		return t.Breakage(b, !s.PlatformClassOff)
	}
	return Converges
}

// match finds the outcome a failure (nil: the end state) is, among allowed;
// it names the code of a near miss (the right code with the wrong owner or
// retryability) in its error.
func match(fl *hostforge.Failure, allowed []Outcome) error {
	got := Converges
	if fl != nil {
		got = Outcome{Code: fl.Code, Owner: fl.Owner, Retryable: fl.Retryable}
	}
	for _, a := range allowed {
		if a == got {
			return nil
		}
	}
	for _, a := range allowed {
		if a.Code == got.Code {
			return fmt.Errorf("%s, but the table says %s", got, a)
		}
	}
	names := make([]string, 0, len(allowed))
	seen := map[Outcome]bool{}
	for _, a := range allowed {
		if !seen[a] {
			seen[a] = true
			names = append(names, a.String())
		}
	}
	sort.Strings(names)
	return fmt.Errorf("%s, which none of its causes explains (allowed: %s)", got, strings.Join(names, "; "))
}

// outages are the kinds where the system did not answer, or its answer
// was lost: nothing says the request was refused.
var outages = []FaultKind{Fault5xx, FaultTimeout, FaultDrop, FaultLost, FaultLostTimeout}

// refusals are the 4xx kinds other than 401/403.
var refusals = []FaultKind{FaultInvalid, FaultConflict, FaultNotFound}

// rows builds one system's row: the outcomes of each kind.
func rows(parts ...map[FaultKind][]Outcome) map[FaultKind][]Outcome {
	out := map[FaultKind][]Outcome{}
	for _, p := range parts {
		for k, v := range p {
			out[k] = append(out[k], v...)
		}
	}
	return out
}

func on(kinds []FaultKind, os ...Outcome) map[FaultKind][]Outcome {
	out := map[FaultKind][]Outcome{}
	for _, k := range kinds {
		out[k] = os
	}
	return out
}

func kinds(ks ...FaultKind) []FaultKind { return ks }

// The codes of the table, with the owner and retryability the
// specification gives each (see the package documentation).
var (
	netboxUnavailable         = outcome("NETBOX_UNAVAILABLE", hostforge.OwnerInfraEng, true)
	netboxUnauthorized        = outcome("NETBOX_UNAUTHORIZED", hostforge.OwnerInfraEng, false)
	netboxWriteRejected       = outcome("NETBOX_WRITE_REJECTED", hostforge.OwnerInfraEng, false)
	netboxDeviceNotFound      = outcome("NETBOX_DEVICE_NOT_FOUND", hostforge.OwnerInfraEng, false)
	platformClassRecord       = outcome("PLATFORM_CLASS_RECORD_FAILED", hostforge.OwnerFleetManager, true)
	bmcVaultUnavailable       = outcome("BMC_VAULT_UNAVAILABLE", hostforge.OwnerInfraEng, true)
	bmcCredentialMissing      = outcome("BMC_CREDENTIAL_MISSING", hostforge.OwnerInfraEng, false)
	bmcIPMICredMissing        = outcome("BMC_IPMI_CREDENTIAL_MISSING", hostforge.OwnerInfraEng, false)
	bmcCredentialInvalid      = outcome("BMC_CREDENTIAL_INVALID", hostforge.OwnerDCOps, false)
	bmcUnreachable            = outcome("BMC_UNREACHABLE", hostforge.OwnerDCOps, true)
	bmcBusy                   = outcome("BMC_HTTP_SERVICE_UNAVAILABLE", hostforge.OwnerDCOps, true)
	bmcPasswordUnconfirmed    = outcome("BMC_PASSWORD_UNCONFIRMED", hostforge.OwnerInfraEng, true)
	bmcResetTimeout           = outcome("BMC_RESET_TIMEOUT", hostforge.OwnerDCOps, true)
	bmcWriteRejected          = outcome("BMC_WRITE_REJECTED", hostforge.OwnerInfraEng, false)
	bmcEndpointMissing        = outcome("BMC_ENDPOINT_MISSING", hostforge.OwnerInfraEng, false)
	ironicCredUnavailable     = outcome("IRONIC_BMC_CREDENTIAL_UNAVAILABLE", hostforge.OwnerInfraEng, true)
	ironicCredMissing         = outcome("IRONIC_BMC_CREDENTIAL_MISSING", hostforge.OwnerInfraEng, false)
	ironicLinkObservation     = outcome("IRONIC_LINK_OBSERVATION_FAILED", hostforge.OwnerInfraEng, true)
	ironicUnavailable         = outcome("IRONIC_UNAVAILABLE", hostforge.OwnerInfraEng, true)
	ironicUnauthorized        = outcome("IRONIC_UNAUTHORIZED", hostforge.OwnerInfraEng, false)
	ironicRejected            = outcome("IRONIC_REQUEST_REJECTED", hostforge.OwnerInfraEng, false)
	ironicInventoryUnreadable = outcome("IRONIC_INVENTORY_UNREADABLE", hostforge.OwnerInfraEng, true)
	ironicRecoveryFailed      = outcome("IRONIC_RECOVERY_FAILED", hostforge.OwnerInfraEng, true)
	ironicNodeLocked          = outcome("IRONIC_NODE_LOCKED", hostforge.OwnerInfraEng, true)
	ironicInspectionFailed    = outcome("IRONIC_INSPECTION_FAILED", hostforge.OwnerInfraEng, true)
	ironicCleaningFailed      = outcome("IRONIC_CLEANING_FAILED", hostforge.OwnerInfraEng, true)
	ironicPowerOnTimeout      = outcome("IRONIC_POWER_ON_TIMEOUT", hostforge.OwnerDCOps, true)
	dhcpUnreachable           = outcome("DHCP_SSH_UNREACHABLE", hostforge.OwnerNetwork, true)
	dhcpTransport             = outcome("DHCP_SSH_TRANSPORT", hostforge.OwnerNetwork, true)
	dhcpTransfer              = outcome("DHCP_TRANSFER_FAILED", hostforge.OwnerNetwork, true)
	dhcpAuth                  = outcome("DHCP_SSH_AUTH_FAILED", hostforge.OwnerNetwork, false)
	dhcpConfigRejected        = outcome("DHCP_CONFIG_REJECTED", hostforge.OwnerNetwork, false)
	dhcpRestartFailed         = outcome("DHCP_RESTART_FAILED", hostforge.OwnerNetwork, true)
	waitBudget                = outcome("WAIT_BUDGET_EXHAUSTED", hostforge.OwnerInfraEng, true)
)

// Outcomes is the outcome table, derived from the specification (see the
// package documentation).
var Outcomes = OutcomeTable{
	Calls: map[string]map[FaultKind][]Outcome{
		fakes.SysNetBox: rows(
			on(outages, netboxUnavailable, platformClassRecord),
			on(kinds(FaultUnauthorized), netboxUnauthorized, platformClassRecord),
			on(kinds(FaultInvalid, FaultConflict), netboxWriteRejected, platformClassRecord),
			on(kinds(FaultNotFound), netboxDeviceNotFound, netboxWriteRejected, platformClassRecord),
		),
		fakes.SysFleetManager: on(FaultKinds, platformClassRecord),
		fakes.SysVault: rows(
			// The link guard of the Ironic phases reads the BMC with the
			// per-host admin credential, so a vault fault there ends as
			// the observation it prevented.
			on(append(append(kinds(FaultUnauthorized), outages...), FaultInvalid, FaultConflict), bmcVaultUnavailable, ironicCredUnavailable, ironicLinkObservation),
			on(kinds(FaultNotFound), bmcVaultUnavailable, ironicCredUnavailable, bmcCredentialMissing, bmcIPMICredMissing, bmcCredentialInvalid, ironicCredMissing, ironicLinkObservation),
		),
		fakes.SysDHCP: rows(
			on(outages, dhcpUnreachable, dhcpTransport, dhcpTransfer),
			on(kinds(FaultUnauthorized), dhcpAuth),
			on(refusals, dhcpUnreachable, dhcpTransport, dhcpTransfer),
		),
		fakes.SysBMC: rows(
			on(outages, bmcUnreachable, bmcBusy, bmcPasswordUnconfirmed, bmcResetTimeout, ironicLinkObservation),
			on(kinds(FaultUnauthorized), bmcCredentialInvalid, bmcPasswordUnconfirmed, ironicLinkObservation),
			on(kinds(FaultInvalid, FaultConflict), bmcWriteRejected, ironicLinkObservation),
			on(kinds(FaultNotFound), bmcEndpointMissing, bmcWriteRejected, ironicLinkObservation),
		),
		fakes.SysIronic: rows(
			on(outages, ironicUnavailable),
			on(kinds(FaultLost, FaultLostTimeout), waitBudget),
			on(kinds(FaultUnauthorized), ironicUnauthorized),
			on(kinds(FaultInvalid, FaultConflict), ironicRejected),
			on(kinds(FaultNotFound), ironicRejected, ironicInventoryUnreadable),
		),
		SysWorker: {FaultCrash: nil},
	},
	Events: map[string][]Outcome{
		EventLockShort:        nil,
		EventLockLong:         {ironicNodeLocked},
		EventInspectionFails:  {ironicInspectionFailed},
		EventCleaningFails:    {ironicCleaningFailed},
		EventPowerOnLost:      {ironicPowerOnTimeout, waitBudget},
		EventManageRefused:    {ironicCleaningFailed, ironicUnavailable, ironicRecoveryFailed},
		EventDHCPPrevious:     nil,
		EventDHCPStale:        {dhcpConfigRejected},
		EventDHCPRestartFails: {dhcpRestartFailed},
	},
	Breakage: func(b Breakage, platformClass bool) Outcome {
		switch b {
		case Miscabled, DeadOptic:
			return outcome("INSPECTION_CABLING_MISMATCH", hostforge.OwnerDCOps, false)
		case WrongDIMMs, BlockedBIOS:
			return outcome("INSPECTION_HARDWARE_MISMATCH", hostforge.OwnerDCOps, false)
		case NoGPUType, BadZTP:
			if !platformClass {
				return Converges
			}
			return outcome("PLATFORM_CLASS_UNRESOLVABLE", hostforge.OwnerInfraEng, false)
		}
		return Converges
	},
}

// Rows renders the table one line per system and group of fault kinds with
// the same outcomes, then per host event and per breakage, as the package
// documentation shows it.
func (t OutcomeTable) Rows() []string {
	var out []string
	list := func(os []Outcome) string {
		if len(os) == 0 {
			return "the end state (converges on rerun)"
		}
		parts := make([]string, 0, len(os))
		for _, o := range os {
			parts = append(parts, o.String())
		}
		return strings.Join(parts, "; ")
	}
	systems := make([]string, 0, len(t.Calls))
	for s := range t.Calls {
		systems = append(systems, s)
	}
	sort.Strings(systems)
	for _, sys := range systems {
		var groups []string
		byOutcomes := map[string][]string{}
		for _, k := range AllFaultKinds {
			os, ok := t.Calls[sys][k]
			if !ok {
				continue
			}
			key := list(os)
			if byOutcomes[key] == nil {
				groups = append(groups, key)
			}
			byOutcomes[key] = append(byOutcomes[key], string(k))
		}
		for _, g := range groups {
			out = append(out, fmt.Sprintf("%s %s: %s", sys, strings.Join(byOutcomes[g], ","), g))
		}
	}
	events := make([]string, 0, len(t.Events))
	for e := range t.Events {
		events = append(events, e)
	}
	sort.Strings(events)
	for _, e := range events {
		out = append(out, fmt.Sprintf("event %s: %s", e, list(t.Events[e])))
	}
	for _, b := range Breakages {
		on, off := t.Breakage(b, true), t.Breakage(b, false)
		if on == off {
			out = append(out, fmt.Sprintf("breakage %s: %s", b, on))
		} else {
			out = append(out, fmt.Sprintf("breakage %s: %s; with the platform-class phase off: %s", b, on, off))
		}
	}
	return out
}
