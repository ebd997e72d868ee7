package ironic

import "github.com/hostforge/hostforge"

// Phase names the failures are recorded against.
const (
	PhasePrelude    = "ironic_prelude"
	PhaseInspection = "ironic_inspection"
	PhaseSwitchIPMI = "ironic_switch_to_ipmi"
	PhaseCleaning   = "ironic_cleaning"
)

// Wait reasons the phases return.
const (
	// WaitNodeLocked: Ironic answered NodeLocked; the workflow backs off
	// 10 s → 60 s within the site's node-lock budget.
	WaitNodeLocked = "node_locked"
	// WaitStateUnstable: the node is between provision states.
	WaitStateUnstable = "provision_state_unstable"
)

// Failure codes of the Ironic phases.
var (
	InputInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_INPUT_INVALID",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The Ironic settings derived from NetBox are incomplete (the message names the field): fix the device's config context ironic_settings or interfaces in NetBox, then rerun. Nothing was changed in Ironic.",
	})
	CredentialMissing = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_BMC_CREDENTIAL_MISSING",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The per-host BMC admin credential is not in the vault (or lacks a username or password): run BMC configuration for this host (it creates the credential), or add the vault item named in the message, then rerun.",
	})
	CredentialUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_BMC_CREDENTIAL_UNAVAILABLE",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The vault did not answer while reading the per-host BMC credential: check the vault's health and the worker's access to it, then rerun.",
	})
	NodeOwned = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_NODE_OWNED",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The node holds an instance_uuid outside active/available/manageable: the scheduler may own it, so enrollment does not touch it. Find out who owns the instance (the message names it and the provision state) and release or undeploy it through Nova, then rerun.",
	})
	NeedsReview = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_NODE_NEEDS_REVIEW",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The node is in deploy failed or error, which enrollment never recovers: read the node's last_error in Ironic, resolve the cause, move the node to manageable by hand (e.g. baremetal node manage / undeploy), then rerun.",
	})
	UnexpectedState = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_UNEXPECTED_PROVISION_STATE",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The node landed in a provision state enrollment did not expect (named in the message); the workflow reruns the attempt within its budget. If it persists, read the node's last_error in Ironic and move it to manageable, then rerun.",
	})
	RecoveryFailed = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_RECOVERY_FAILED",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "Recovering the node from inspect failed / clean failed with manage failed (Ironic's answer is in the message; a cleared maintenance flag was restored): check the node's last_error and conductor logs, then rerun.",
	})
	ManageFailed = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_MANAGE_FAILED",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "manage did not bring the node to manageable (usually the BMC credentials or address failed Ironic's verification; the message carries last_error): fix the BMC access, then rerun.",
	})
	PortConflict = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_PORT_CONFLICT",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "A frontend MAC from NetBox already belongs to another Ironic node or portgroup (named in the message): fix the MAC in NetBox or delete the stale port from Ironic, then rerun.",
	})
	InspectionFailed = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_INSPECTION_FAILED",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "Ironic inspection ended in inspect failed (last_error in the message); the workflow reruns the attempt within its budget. If it persists, check the inspection ramdisk's console and the provisioning network, then rerun.",
	})
	InspectionTimeout = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_INSPECTION_TIMEOUT",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "Inspection did not finish within its deadline and was aborted; the workflow reruns the attempt within its budget. If it persists, watch the host's console during inspection (PXE, ramdisk, callback), then rerun.",
	})
	PowerOnTimeout = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_POWER_ON_TIMEOUT",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "Ironic never reported the node powered on; the workflow reruns the attempt within its budget. If it persists, check the host's power supply and the BMC's power control, then rerun.",
	})
	InventoryMissing = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_INVENTORY_UNREADABLE",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "Ironic has no readable inspection inventory for a node it reports inspected (the message says why): rerun with force_inspection=true; if it persists, check the inspector's storage backend.",
	})
	LinkGuardUnwired = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_LINK_GUARD_UNWIRED",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerSDK,
		Retryable: false,
		Action:    "The deployment built the Ironic phases without a BMC link reader, so the frontend-link guard cannot run: wire one (adapters/wiring does), or opt out explicitly with NoLinkGuard, then rerun.",
	})
	VerifierMissing = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_VERIFIER_UNWIRED",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerSDK,
		Retryable: false,
		Action:    "The deployment built the Ironic phases without an inventory Verifier, so inspection data cannot be checked against NetBox: wire verify.Verifier (adapters/wiring does), then rerun.",
	})
	LinkDown = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_FRONTEND_LINK_DOWN",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerDCOps,
		Retryable: false,
		Action:    "Every frontend link stayed DOWN for the whole link budget after power-on: check switch, cabling and optics for the ports named in the message, then rerun.",
	})
	LinkObservationFailed = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_LINK_OBSERVATION_FAILED",
		Phase:     "ironic_inspection",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The BMC could not report frontend link state (unsupported or erroring Redfish endpoint): check the BMC's Redfish service and firmware, then rerun.",
	})
	CleaningFailed = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_CLEANING_FAILED",
		Phase:     "ironic_cleaning",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "Cleaning ended in clean failed (last_error in the message); the workflow reruns the cleaning start within its budget. If it persists, read the failed clean step in the conductor log, fix the hardware or step, then rerun.",
	})
	CleaningUnexpected = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_CLEANING_UNEXPECTED_STATE",
		Phase:     "ironic_cleaning",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "While cleaning, the node went to a provision state other than cleaning, clean wait, clean failed or available (named in the message): someone else acted on the node; find out who, then rerun.",
	})
	CleaningTimeout = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_CLEANING_TIMEOUT",
		Phase:     "ironic_cleaning",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Cleaning did not reach available before the site's cleaning deadline: check the node's clean steps and maintenance flag in Ironic, then rerun.",
	})
	NodeLocked = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_NODE_LOCKED",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The node stayed locked by another Ironic operation for the whole node-lock budget (the message names the lock holder and provision state): find what holds it on that conductor, wait for it or clear it, then rerun.",
	})
	Unavailable = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_UNAVAILABLE",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The Ironic API did not answer or answered 5xx: check the Ironic API and conductor health, then rerun.",
	})
	Unauthorized = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_UNAUTHORIZED",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Ironic refused the worker's credentials (401/403): check the keystone credentials or token and their baremetal admin role, then rerun.",
	})
	Rejected = hostforge.Declare(hostforge.Spec{
		Code:      "IRONIC_REQUEST_REJECTED",
		Phase:     "ironic_prelude",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Ironic refused a request (400/404/409 other than a node lock; its reason is in the message): fix what it names (driver, interface, state or duplicate), then rerun.",
	})
)
