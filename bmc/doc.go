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
// Every step reads live state and writes only what differs, so a second run
// on a converged BMC makes no writes at all. A write answered 5xx is the BMC
// being busy: it is retried on the injected clock within Budgets.Busy, then
// fails BMC_HTTP_SERVICE_UNAVAILABLE with the BMC's own message. A 4xx is a
// refusal (BMC_WRITE_REJECTED, BMC_CREDENTIAL_INVALID, BMC_ENDPOINT_MISSING).
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
//	                     fields: username, password; pending_password only
//	                     while a rotation is in flight (see below)
//	bmc-factory          the factory/initial admin credential of the site's
//	                     BMCs (the site may name another item)
//	                     fields: username, password
//	ipmi-exporter        the shared monitoring user, for monitoring only
//	                     fields: username, password
//
// # Password rotation, crash-safe
//
// Vendors with password setup (Dell, Lenovo, AMI) log in with, in order:
//
//  1. bmc-admin-<device>.password — accepted: nothing to rotate.
//  2. bmc-admin-<device>.pending_password — accepted: an earlier run changed
//     the BMC and stopped before step C below; the vault is finished now
//     (password := pending_password, pending removed) and the run counts as
//     rotated, so the cold reset still happens.
//  3. the factory credential — accepted: rotate:
//     A. write bmc-admin-<device> = {username, pending_password: new}
//     (reusing an existing pending_password, so a retry never invents a
//     second secret);
//     B. change the BMC account's password to new;
//     C. write bmc-admin-<device> = {username, password: new}.
//
// A crash before A changes nothing. A crash between A and B leaves the BMC on
// its factory password and the new one pending: the rerun lands in case 3
// and reuses it. A crash between B and C (the BMC changed, the vault not yet)
// leaves the new password pending: the rerun lands in case 2. At no point is
// the only copy of a working password outside the vault. Supermicro has no
// password setup: its per-host credential must work.
//
// A rotation (or force_restart) cold-resets the BMC; the phase then polls
// Redfish on the injected clock until it answers again, within Budgets.Reset.
//
// # iDRAC jobs
//
// BIOS and boot-order changes are staged as a Lifecycle Controller job. The
// step waits (Budgets.JobSchedule) for the job to be Scheduled, resets the
// host and waits for the job to finish. A job that never schedules is
// deleted and the step fails BMC_JOB_NOT_SCHEDULED so a rerun stages it
// again. A job already Running — another reboot carried it — is left to
// finish without a further reset.
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
