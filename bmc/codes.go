package bmc

import "github.com/hostforge/hostforge"

// Phase is the workflow phase the BMC codes are raised in.
const Phase = "configure_bmc"

// Failure codes of the BMC phase.
var (
	VendorUnsupported = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_VENDOR_UNSUPPORTED",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The BMC is not a Dell iDRAC, Lenovo XCC, AMI MegaRAC or Supermicro BMC (the message says what its service root reported). Turn enrollment_configure_bmc off for this host's site or configure the BMC by hand, then rerun. Nothing was written.",
	})
	InputInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_INPUT_INVALID",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "Fix the field the message names (device name, out-of-band address, NTP or syslog servers in NetBox), then rerun. Nothing was written.",
	})
	Unreachable = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_UNREACHABLE",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "The BMC's Redfish service did not answer: check the BMC's power, cabling and DHCP lease (phase 1), then rerun.",
	})
	// TLSUntrusted is a BMC whose certificate the site does not trust: a
	// configuration matter, not the BMC's power or cabling, and nothing a
	// rerun changes.
	TLSUntrusted = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_TLS_UNTRUSTED",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The BMC answered with a TLS certificate the site does not trust (the message gives why and the certificate's SHA-256). Check the SHA-256 out of band (the BMC's console or its vendor tool), then trust the BMC in the config: its CA in bmc.ca_file or a bmc.tls rule's ca_file, or the SHA-256 as a bmc.tls rule's fingerprint_sha256 ('bmc detect': --ca-file) — and rerun. Nothing was sent to the BMC.",
	})
	CredentialMissing = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_CREDENTIAL_MISSING",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The vault item the message names is missing or lacks username/password: create it (see package bmc's documentation for item names and fields), then rerun.",
	})
	CredentialInvalid = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_CREDENTIAL_INVALID",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerDCOps,
		Retryable: false,
		Action:    "The BMC refused every credential the vault holds for it (per-host, pending and factory). Reset the BMC's admin password on site (or factory-reset it) to the site's factory credential, then rerun.",
	})
	VaultUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_VAULT_UNAVAILABLE",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The secrets vault failed while reading or storing a BMC credential: check the vault's health and the worker's access, then rerun. A half-done password rotation is recovered on rerun.",
	})
	ServiceUnavailable = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_HTTP_SERVICE_UNAVAILABLE",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "The BMC stayed busy (HTTP 5xx) past the step's retry budget; the message carries the BMC's own reason. An AMI BMC answers boot writes with 503 while its host boots: rerun once the host has booted.",
	})
	WriteRejected = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_WRITE_REJECTED",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The BMC refused a configuration write (HTTP 4xx); the message carries its reason (e.g. a pending iDRAC job, an attribute this firmware lacks). Fix the cause (clear the job queue, update firmware or the site's settings), then rerun.",
	})
	EndpointMissing = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_ENDPOINT_MISSING",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "This BMC model has no Redfish endpoint for a setting its vendor strategy requires (the message names it): update the BMC firmware, then rerun.",
	})
	ResetTimeout = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_RESET_TIMEOUT",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "Redfish did not come back, or did not accept the per-host credential, within the budget after the BMC cold reset (the message says which): check the BMC on site (power, network), then rerun. The rerun polls again; it requests a new reset only when the BMC answers on its old credential.",
	})
	PasswordUnconfirmed = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_PASSWORD_UNCONFIRMED",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The BMC's answer to the admin password change was lost or did not say whether it applied (timeout, dropped connection, 5xx), and the BMC does not take the new password yet. The new password stays in the vault as pending_password: rerun; the rerun logs in with it or sends the same password again. Nothing needs doing on site.",
	})
	JobNotScheduled = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_JOB_NOT_SCHEDULED",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "The iDRAC Lifecycle Controller never scheduled the staged settings job; it was deleted so a rerun can stage it again. Check the Lifecycle Controller is enabled and idle (no stuck jobs), then rerun.",
	})
	JobFailed = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_JOB_FAILED",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerDCOps,
		Retryable: false,
		Action:    "An iDRAC settings job failed or never finished; the message carries the job's id and message. Inspect the job in the iDRAC's job queue, clear it, then rerun.",
	})
	IPMICredentialMissing = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_IPMI_CREDENTIAL_MISSING",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The vault has no usable ipmi-exporter item (username and password) for the shared monitoring user: create it, then rerun.",
	})
	LinkOffOrigin = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_LINK_OFF_ORIGIN",
		Phase:     "configure_bmc",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The BMC answered a Redfish link (an @odata.id, an action target) that is not a path on its own service — it names another host, a scheme, user info, '..' or a backslash — and hostforge refused to follow it: no request, and no credential, went there. Treat the BMC as suspect: check what answers at its address and its firmware (a firmware update or factory reset clears a corrupt tree), then rerun.",
	})
	LinkUnobservable = hostforge.Declare(hostforge.Spec{
		Code:      "BMC_LINK_UNOBSERVABLE",
		Phase:     "frontend_link_guard",
		Owner:     hostforge.OwnerDCOps,
		Retryable: true,
		Action:    "The BMC could not report host NIC link state (endpoint missing or erroring): check the BMC answers Redfish, then rerun. Unknown per-port values fail open; an unsupported or failing BMC does not.",
	})
)
