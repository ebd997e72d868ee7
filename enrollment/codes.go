package enrollment

import (
	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/intent"
)

// Failure codes raised by the workflow itself. Each phase package declares
// its own.
var (
	RoutingUnresolved = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_ROUTING_UNRESOLVED",
		Phase:     "resolve_ironic_instance",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the device role in NetBox so it carries a device_class an Ironic instance manages, or dispatch a workflow that supports this device class, then rerun. Nothing was touched.",
	})
	DeviceNotFound = hostforge.Declare(hostforge.Spec{
		Code:      "NETBOX_DEVICE_NOT_FOUND",
		Phase:     "netbox_status_gate",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Register the device in NetBox under exactly this name (or fix the name in the request), then rerun.",
	})
	StatusIneligible = hostforge.Declare(hostforge.Spec{
		Code:      "NETBOX_STATUS_INELIGIBLE",
		Phase:     "netbox_status_gate",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Only a staged or active device is enrolled: set the device's NetBox status to staged if it should be enrolled, then rerun.",
	})
	// DataInvalid is declared with the data model so that fakes and adapters
	// raise the same failure for malformed NetBox data.
	DataInvalid       = intent.DataInvalid
	NetBoxUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "NETBOX_UNAVAILABLE",
		Phase:     "read_intent",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "NetBox did not answer or answered 5xx past the retry budget: check NetBox's health, then rerun.",
	})
	NetBoxUnauthorized = hostforge.Declare(hostforge.Spec{
		Code:      "NETBOX_UNAUTHORIZED",
		Phase:     "read_intent",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "NetBox refused the API token (401/403): check the token and its write permissions on dcim devices, tags and custom fields, then rerun.",
	})
	NetBoxWriteRejected = hostforge.Declare(hostforge.Spec{
		Code:      "NETBOX_WRITE_REJECTED",
		Phase:     "netbox_activation",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "NetBox refused a write (400/409): read NetBox's reason in the message, fix the object (e.g. a tag or custom field definition), then rerun.",
	})
	FleetManagerUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "FLEET_MANAGER_UNAVAILABLE",
		Phase:     "fleet_manager",
		Owner:     hostforge.OwnerFleetManager,
		Retryable: true,
		Action:    "The fleet manager API failed past its retry budget: check its health, then rerun.",
	})
	NotImplemented = hostforge.Declare(hostforge.Spec{
		Code:      "NOT_IMPLEMENTED",
		Phase:     "any",
		Owner:     hostforge.OwnerSDK,
		Retryable: false,
		Action:    "This phase has no implementation wired into the executor: wire one (or turn the phase's site gate off), then rerun.",
	})
)

// netboxSpecs maps what the NetBox client said to NetBox codes.
var netboxSpecs = hostforge.SystemSpecs{
	NotFound:     DeviceNotFound,
	Unauthorized: NetBoxUnauthorized,
	Unavailable:  NetBoxUnavailable,
	Conflict:     NetBoxWriteRejected,
	Invalid:      NetBoxWriteRejected,
}

// netboxErr classifies an error from the NetBox client in a phase (see
// hostforge.SystemSpecs.Classify).
func netboxErr(err error, phase, format string, args ...any) error {
	return netboxSpecs.Classify(err, phase, format, args...)
}
