package firmware

import "github.com/hostforge/hostforge"

// Failure codes of the firmware catalog, drift and the update manager.
var (
	// CatalogInvalid is a catalog file that cannot be used.
	CatalogInvalid = hostforge.Declare(hostforge.Spec{
		Code:   "FIRMWARE_CATALOG_INVALID",
		Phase:  "firmware_catalog",
		Owner:  hostforge.OwnerInfraEng,
		Action: "Fix the catalog file, table and key the message names (unknown field, bad regex, unknown or duplicate component type, two defaults for one component; a runtime override that would not apply). The catalog in use was not changed: a worker re-reads changed catalog files at its next pass and keeps the last good catalog until they load ('hostforge firmware show' says which files are in force); a refused override was not written.",
	})
	// InventoryUnreadable is a saved Redfish tree or inventory document that
	// cannot be read.
	InventoryUnreadable = hostforge.Declare(hostforge.Spec{
		Code:   "FIRMWARE_INVENTORY_UNREADABLE",
		Phase:  "firmware_drift",
		Owner:  hostforge.OwnerInfraEng,
		Action: "The firmware inventory the message names is missing or not valid Redfish JSON: point at a directory holding redfish/v1/index.json (a saved tree) or recapture it, then rerun.",
	})
	// RequestRefused is an operator request the manager's state refuses:
	// an unknown machine, a clear after the update started, an end before
	// the start. Nothing changed.
	RequestRefused = hostforge.Declare(hostforge.Spec{
		Code:   "FIRMWARE_REQUEST_REFUSED",
		Phase:  "firmware_manager",
		Owner:  hostforge.OwnerInfraEng,
		Action: "The message says why the request was refused (unknown machine, no pending request, the update already started, an end before the start): correct the command and run it again. Nothing was changed.",
	})
	// StateConflict is a write that lost a compare-and-set against another
	// writer of the same host's update record.
	StateConflict = hostforge.Declare(hostforge.Spec{
		Code:      "FIRMWARE_STATE_CONFLICT",
		Phase:     "firmware_update",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "Another worker or an operator command changed this host's update record at the same time; the step reruns on the fresh record. If it persists, check that only one workflow runs per machine.",
	})
	// RetriesExhausted ends a host's update workflow: the host failed its
	// update and spent its retry budget. The host stays failed (and out of
	// allocation) until an operator resets it.
	RetriesExhausted = hostforge.Declare(hostforge.Spec{
		Code:   "FIRMWARE_RETRIES_EXHAUSTED",
		Phase:  "firmware_update",
		Owner:  hostforge.OwnerInfraEng,
		Action: "The host failed its firmware update and spent its retry budget; the record's last failure says why. Correct the artifact, script, BMC, matcher or platform condition, then run 'hostforge firmware reset --machine ID'.",
	})
)

// Codes a failed update attempt records (FailedFirmwareUpgrade). They are
// kept in the host's update record and counted against its retry budget.
var (
	// UploadFailed: the BMC refused the firmware upload, or transient
	// upload failures kept recurring past their budget.
	UploadFailed = hostforge.Declare(hostforge.Spec{
		Code:      "FIRMWARE_UPLOAD_FAILED",
		Phase:     "firmware_update",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The BMC refused the firmware upload (the message carries its answer): check the artifact matches the platform and the BMC's update service is enabled. The update retries after the retry interval.",
	})
	// ArtifactMissing: the catalog entry names no artifact, or the artifact
	// could not be resolved, or its bytes are not the verified ones.
	ArtifactMissing = hostforge.Declare(hostforge.Spec{
		Code:   "FIRMWARE_ARTIFACT_MISSING",
		Phase:  "firmware_update",
		Owner:  hostforge.OwnerInfraEng,
		Action: "The catalog entry has no usable artifact (files, filename, filenames or url), the file is missing, or its bytes are not the ones the catalog's digest names (a download that does not match, a URL without its sha256, a file changed between its verification and its push — the push is then cut before its end): fix the catalog, the firmware directory or the artifact server, then reset the host's update.",
	})
	// TaskFailed: the BMC's update task ended in Exception, Interrupted,
	// Killed or Cancelled, or in a state hostforge does not know.
	TaskFailed = hostforge.Declare(hostforge.Spec{
		Code:      "FIRMWARE_TASK_FAILED",
		Phase:     "firmware_update",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "The BMC's update task failed (the message carries its state and messages): check the BMC's task and log, then let the retry run or reset the host's update.",
	})
	// NotActivated: the new firmware did not show in the inventory after
	// every activation reset.
	NotActivated = hostforge.Declare(hostforge.Spec{
		Code:      "FIRMWARE_NOT_ACTIVATED",
		Phase:     "firmware_update",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "The inventory never reported the target version after the activation resets (the message lists what it reports): check the component needs the reset the catalog implies (power_drains_needed for AC cycles) and that the version string matches what the BMC reports exactly.",
	})
	// ScriptFailed: the local update script exited non-zero, timed out or
	// was interrupted by a restart.
	ScriptFailed = hostforge.Declare(hostforge.Spec{
		Code:      "FIRMWARE_SCRIPT_FAILED",
		Phase:     "firmware_update",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The catalog entry's script failed, timed out or was interrupted (its capped output is in the record): fix the script or the BMC condition it reports. An interrupted script is never resumed; check it no longer runs before resetting.",
	})
	// ScoutFailed: the on-host agent reported a failed upgrade, or did not
	// report before the deadline.
	ScoutFailed = hostforge.Declare(hostforge.Spec{
		Code:      "FIRMWARE_SCOUT_FAILED",
		Phase:     "firmware_update",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The on-host agent's upgrade script failed or never reported before its deadline (its capped output is in the record): check the host booted the agent and the script's log, then let the retry run or reset the host's update.",
	})
	// BMCUnreachable: the BMC kept failing reads or actions past the
	// budget of transient errors of one substate.
	BMCUnreachable = hostforge.Declare(hostforge.Spec{
		Code:      "FIRMWARE_BMC_UNREACHABLE",
		Phase:     "firmware_update",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "The BMC kept failing (the message carries the last error) for longer than one substate's error budget: check its power and network on site. The update retries after the retry interval.",
	})
)

// BMCRefused: the BMC refused a request (credentials, a malformed or
// conflicting request): retrying the same request cannot succeed.
var BMCRefused = hostforge.Declare(hostforge.Spec{
	Code:   "FIRMWARE_BMC_REFUSED",
	Phase:  "firmware_update",
	Owner:  hostforge.OwnerInfraEng,
	Action: "The BMC refused the request (the message carries its answer: credentials, an image it does not accept, a conflicting job): fix the cause, then reset the host's update.",
})

// BMCErrors maps a BMC client's system errors to the update's codes, for
// adapters of BMCClient: unavailable and not-found answers are transient
// (FIRMWARE_BMC_UNREACHABLE), refusals are not (FIRMWARE_BMC_REFUSED).
var BMCErrors = hostforge.SystemSpecs{
	NotFound:     BMCUnreachable,
	Unavailable:  BMCUnreachable,
	Unauthorized: BMCRefused,
	Conflict:     BMCRefused,
	Invalid:      BMCRefused,
}
