// Package bmc is enrollment phase 2: it detects the BMC's vendor from the
// Redfish service root and runs that vendor's configuration strategy.
//
// # Vendor detection
//
// [Detect] reads, in order: the service root's Oem keys, its Vendor, its
// Product, the first manager's Model and Oem keys, the first system's
// Manufacturer; the first tell decides. Dell iDRAC, Lenovo XCC, AMI MegaRAC
// and Supermicro are supported; anything else (HPE iLO, OpenBMC, a generic
// DMTF service) is refused with BMC_VENDOR_UNSUPPORTED before any write.
//
// # Strategies
//
// Each vendor runs exactly its step set (see [Configurator.Configure]):
//
//	Dell iDRAC  password, cold_reset, hostname, dhcp, security, ntp, syslog,
//	            bios (staged job), boot_order (restriction or label reorder,
//	            staged job), ipmi_user (+ IPMI over LAN)
//	Lenovo XCC  password, cold_reset, hostname, dhcp, security, ntp, syslog,
//	            bios (staged), boot_order (label reorder, staged),
//	            host_reset (only when something was staged), ipmi_user (+ LAN)
//	AMI         password, cold_reset, hostname, ntp, ipmi_user,
//	            virtual_media, boot_restriction
//	Supermicro  hostname, ntp, syslog, ipmi_user; cold_reset only when forced
//
// # One attempt per call
//
// [Configurator.Configure] is one attempt: it reads live state, acts at
// most once on each thing it converges and returns done, a
// *hostforge.Wait or a Failure. It never sleeps. Where the BMC must be
// waited for, it returns a wait with a stable reason and the runtime
// sleeps (durably under Temporal) within the reason's budget ([Waits]):
//
//	bmc_busy            a 5xx answer          2 min, 5 s doubling to 30 s → BMC_HTTP_SERVICE_UNAVAILABLE (the BMC's reason)
//	bmc_unreachable     no answer             2 min, 5 s doubling to 30 s → BMC_UNREACHABLE
//	bmc_reset           after a cold reset    2×10 min, 15 s … 30 s        → BMC_RESET_TIMEOUT
//	idrac_job_schedule  job not scheduled     3 min per job, 10 s … 1 min  → the job deleted, BMC_JOB_NOT_SCHEDULED
//	idrac_job_run       job applying/running  20 min per job, 10 s … 1 min → BMC_JOB_FAILED
//
// A reset or a job is polled soon after the phase acted (the reset, the
// staging, the host reset) and less often the longer it takes: the pause
// is the time since the action plus the first one, so the polls double
// their spacing up to the cap, as Ironic's polls do (ironic.NextPoll),
// and the poll that judges an overrun lands on the budget's end.
//
// The next call starts from the top: converged steps are reads, so it
// continues where the last attempt stopped. What it must know and cannot
// read back from the BMC is in the per-host admin vault item (below). A
// second run on a converged BMC makes no writes at all, to the BMC or the
// vault. A 4xx is a refusal (BMC_WRITE_REJECTED, BMC_CREDENTIAL_INVALID,
// BMC_ENDPOINT_MISSING), classified with hostforge.SystemSpecs.
//
// Security hardening switches off plain HTTP, Telnet and SSDP where the BMC
// exposes them. Boot restriction (AMI, iDRAC) keeps the provisioning NIC's
// boot options — matched by MAC in their UefiDevicePath — disables every
// other NIC option and promotes the provisioning NIC to the front; disk,
// virtual media and shell options are never touched. It fails closed: with
// no positive match nothing is disabled (iDRAC falls back to its label
// reorder, AMI leaves boot alone). With restrict_boot off, iDRAC runs the
// label reorder and AMI skips boot configuration.
//
// # Vault items
//
// The Target names the three items (enrollment computes the names once and
// hands the same ones to the Ironic phases and the link guard); by default:
//
//	bmc-admin-<device>   the per-host admin credential Ironic also uses
//	                     fields: username, password; while a rotation, a
//	                     reset or an iDRAC job is in flight also
//	                     pending_password, reset_pending, reset_requested_at,
//	                     idrac_job_id/step/staged_at/host_reset_at,
//	                     host_reset_at; forced_reset_run stays
//	bmc-factory          the factory/initial admin credential of the site's
//	                     BMCs (the site may name another item)
//	                     fields: username, password
//	ipmi-exporter        the shared monitoring user, for monitoring only
//	                     fields: username, password
//	bmc-admin-<device>.retired
//	                     a retired host's per-host credential ([Retirer]),
//	                     kept for a retention period so the host can still
//	                     be reached; fields: username, password, retired_run,
//	                     retired_at, purge_after
//
// # Password rotation and cold reset, crash-safe
//
// The order is: rotate, then cold-reset when rotated or forced, then
// verify the new credential once Redfish is back. Vendors with password
// setup (Dell, Lenovo, AMI) log in with, in order:
//
//  1. bmc-admin-<device>.password — accepted: nothing to rotate.
//  2. bmc-admin-<device>.pending_password — accepted: an earlier attempt
//     changed the BMC and stopped before step C below; C is done now
//     ("recovered") and the reset follows.
//  3. the archived credential of a retired host (Target.ArchivedItem) —
//     accepted: the host is being enrolled again; rotate away from it as
//     from the factory credential (a Supermicro BMC, which has no password
//     setup, gets it back as its per-host credential).
//  4. the factory credential — accepted: if the item already owes a
//     reset for a rotation (reset_pending=rotation), the BMC applies the
//     new password on that reset: reset, no second rotation. Otherwise
//     rotate:
//     A. write-ahead: bmc-admin-<device> = {username, pending_password: new}
//     (reusing an existing pending_password, so a retry never invents a
//     second secret);
//     B. change the BMC account's password to new;
//     C. promote: {username, password: new, reset_pending: rotation}.
//
// Then the reset (when rotated, owed, or forced and not yet done for this
// Target.RunID): D. send Manager.Reset; E. record reset_requested_at; wait
// (bmc_reset). Each later attempt polls with the per-host password: Redfish
// back and the credential accepted is the verification, and the reset
// fields are removed (forced_reset_run records a forced one). A BMC still
// answering on its old credential ResetBudget after the request never took
// the reset (a request lost on its way looks like an answer lost on its
// way back), so the reset is requested again; the run's reset budget
// covers that second reset.
//
// The crash points, each converging on rerun with exactly one rotation:
//
//   - before A: nothing changed; the rerun rotates.
//   - between A and B: the BMC is on its factory password and the new one
//     pending; the rerun lands in case 3 and sends the same password.
//   - between B and C: the BMC has the new password (or, on a BMC that
//     applies it on reset, has it staged); the rerun lands in case 2, or in
//     case 3 and sends the same password again.
//   - between C and D: the reset is owed (reset_pending); the rerun logs in
//     with the new password, or the factory one on a reset-to-apply BMC,
//     and resets.
//   - between D and E: the reset was sent but not recorded; the rerun
//     resets again (at least once, never zero times).
//   - after E, during the wait: the rerun polls; it knows when the reset was
//     requested, so its budget spans the crash. A BMC that still answers
//     on its old credential past the budget is reset again.
//
// At no point is the only copy of a working password outside the vault.
//
// A password change whose answer was lost (no answer, a 5xx, a 401/403)
// may have applied: the pending password is tried before anything is
// classified. Accepted, the run continues. Otherwise a 5xx is a busy wait
// (the next attempt sends the same password), and the rest is
// BMC_PASSWORD_UNCONFIRMED — retryable, owned by INFRA_ENG, never DC_OPS —
// and the rerun converges through pending_password. Supermicro has no
// password setup: its per-host credential must work; force_restart still
// resets it.
//
// # iDRAC jobs
//
// BIOS and boot-order changes are staged as a Lifecycle Controller job.
// One call stages it, or resets the host once it is Scheduled, or deletes
// it when it has not scheduled within 3 minutes of staging
// (BMC_JOB_NOT_SCHEDULED, so a rerun stages it again); otherwise it waits.
// The job's id, the step that staged it, when, and when the host was reset
// for it are kept in the admin item, so a rerun after a crash neither
// reboots the host a second time nor restarts the deadlines. A job already
// Running that this run did not reset the host for — another reboot carried
// it — is left to finish without a further reset. Lenovo applies staged
// settings on the next host reset without a job; host_reset_at keeps a
// later attempt of the same run from rebooting the host again.
//
// # Attempt bound
//
// An attempt never sleeps, so it lasts at most the requests it makes times
// each request's deadline: [MaxRequestsPerAttempt] Redfish requests (120;
// the heaviest measured over the emulator is 100, on a BMC with
// [MaxCollection] accounts, boot options and jobs) × [RequestTimeout]
// (60 s, the Redfish connector's default) = [AttemptBound], 2 hours. The
// workflow registers it as the step's attempt bound, the Temporal
// start-to-close timeout; a dead worker is noticed sooner, by heartbeat.
// Within an attempt the phase reads the manager network once and the
// adapter reads navigation (service root, manager) once.
//
// # Link state
//
// [LinkReader] reports frontend link state for the Ironic link guard: UP,
// DOWN or UNKNOWN per MAC; a BMC that cannot report link state at all returns
// BMC_LINK_UNOBSERVABLE, never UNKNOWN.
//
// Credentials never appear in logs or errors: [Credential] redacts itself.
package bmc

// Fields of the vault items the phase reads and writes. The items' names
// come in the Target (Target.AdminItem, FactoryItem, MonitoringItem):
// enrollment computes them, so the BMC phase, the Ironic phases and the link
// guard always name the same item.
const (
	FieldUsername        = "username"
	FieldPassword        = "password"
	FieldPendingPassword = "pending_password"
)
