package retirement

import (
	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// Failure codes raised by the retirement itself. The phases it runs raise
// their own (RETIRE_NODE_IN_USE, RETIRE_ERASE_FAILED, ... in package
// ironic; the DHCP_* and BMC_* codes recorded against retire_dhcp and
// retire_bmc).
var (
	InputInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_INPUT_INVALID",
		Phase:     "retire_gate",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The retirement request is malformed (the message names the field: device, run, erase mode, retention): fix the request or the site's retire settings, then rerun. Nothing was touched.",
	})
	StatusIneligible = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_STATUS_INELIGIBLE",
		Phase:     "retire_gate",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Only a device NetBox has as decommissioning is retired: set its status to decommissioning once the host is to leave (RMA, repurpose, scrap), then rerun. Nothing was touched.",
	})
	DeviceOffline = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_DEVICE_OFFLINE",
		Phase:     "retire_gate",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The device is offline in NetBox, but its journal names no hostforge retirement: someone took it offline by hand. If hostforge is to retire it (erase, take it out of Ironic, DHCP, the BMC and the ledger), rerun with --force. Nothing was touched.",
	})
	RoutingUnresolved = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_ROUTING_UNRESOLVED",
		Phase:     "retire_gate",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "No Ironic instance of the site manages the device's device_class (the message names it), so its node cannot be found: fix the device role in NetBox or the site's Ironic instances, then rerun. Nothing was touched.",
	})
	NetBoxUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_NETBOX_UNAVAILABLE",
		Phase:     "retire_netbox",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "NetBox did not answer or answered 5xx past the retry budget: check NetBox's health, then rerun (every step is idempotent; a journal entry whose answer was lost is found by the rerun, not written twice).",
	})
	NetBoxUnauthorized = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_NETBOX_UNAUTHORIZED",
		Phase:     "retire_netbox",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "NetBox refused the API token (401/403): check the token and its permissions on dcim devices and extras journal entries, then rerun.",
	})
	NetBoxRejected = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_NETBOX_WRITE_REJECTED",
		Phase:     "retire_netbox",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "NetBox refused a write (400/409; its reason is in the message): fix what it names (the device, the offline status choice, journal entries), then rerun.",
	})
	DeviceNotFound = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_DEVICE_NOT_FOUND",
		Phase:     "retire_gate",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "NetBox has no device of that name: fix the name in the request (a device already deleted from NetBox is retired by hand), then rerun. Nothing was touched.",
	})
	LedgerUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_LEDGER_UNAVAILABLE",
		Phase:     "retire_ledger",
		Owner:     hostforge.OwnerFleetManager,
		Retryable: true,
		Action:    "The fleet manager's ledger did not answer while the retirement cleared the device's completion proof and platform class: check its health, then rerun.",
	})
	LedgerRefused = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_LEDGER_REFUSED",
		Phase:     "retire_ledger",
		Owner:     hostforge.OwnerFleetManager,
		Retryable: false,
		Action:    "The fleet manager's ledger refused to clear the device's record (its answer is in the message): check the device's record in the ledger ('hostforge ledger show'), then rerun.",
	})
	EventsUndelivered = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_EVENTS_UNDELIVERED",
		Phase:     "retire_extensions",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The host is retired, but an extension task of serverDecommissioned or serverDeleteDNS did not succeed (the result lists each delivery): fix the receiver or the task, then rerun the retirement — it fires the same event IDs again, so the receivers deduplicate what they already got.",
	})
	NotWired = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_NOT_WIRED",
		Phase:     "any",
		Owner:     hostforge.OwnerSDK,
		Retryable: false,
		Action:    "A retirement step whose site gate is on has no implementation wired into the executor (the message names it): wire it (adapters/wiring does), or turn the gate off, then rerun.",
	})
)

// NodeInUse is the gate's refusal of a node a tenant holds: declared with
// the Ironic retire phases, which raise it at every step.
var NodeInUse = ironic.NodeInUse

// DataInvalid is malformed NetBox data (an out-of-band address the BMC step
// needs, say), as enrollment reports it.
var DataInvalid = intent.DataInvalid

// netboxSpecs maps what the NetBox client said to the retirement's codes.
var netboxSpecs = hostforge.SystemSpecs{
	NotFound:     DeviceNotFound,
	Unauthorized: NetBoxUnauthorized,
	Unavailable:  NetBoxUnavailable,
	Conflict:     NetBoxRejected,
	Invalid:      NetBoxRejected,
}

// ledgerSpecs maps what the ledger said.
var ledgerSpecs = hostforge.SystemSpecs{
	Unauthorized: LedgerRefused,
	Unavailable:  LedgerUnavailable,
	Conflict:     LedgerUnavailable,
	Invalid:      LedgerRefused,
}
