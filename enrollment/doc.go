// Package enrollment is the enrollment workflow: it turns a racked,
// NetBox-registered host into a schedulable Ironic node in available. It
// configures DHCP and the BMC, then enrols, inspects and cleans the node in
// Ironic, verifying NetBox's recorded intent (addressing, cabling, hardware
// inventory) against what the infrastructure and hardware report.
//
// The workflow body ([Enroll]) is written once against a tiny [Runtime]
// (Do a step, Sleep, Now). [Local] runs it inline on an injected clock; the
// Temporal adapter runs the same body with activities and durable timers.
// Steps are methods of [Executor], which holds the clients; their inputs and
// outputs are plain serialisable structs.
//
// # High-level flow
//
// Strictly sequential. The routing preflight, the status gate and the NetBox
// activation always run; the groups marked * are gated per site
// (enrollment_configure_dhcp, enrollment_configure_bmc,
// enrollment_ironic_enrol); † is the per-site switch_to_ipmi_after_inspection
// option; ‡ runs once the per-site platform_class_activity_ready gate is on.
//
//	request ──► routing preflight (pure; resolve_ironic_instance)
//	              │ no device_class / unmanaged class ──► IRONIC_ROUTING_UNRESOLVED (nothing touched)
//	              ▼
//	            0. NetBox status gate (read_intent; staged or active only)
//	              ▼
//	            0b. platform class ‡ (record_platform_class)
//	              ▼
//	            1. DHCP * (configure_dhcp)
//	              ▼
//	            2. BMC * (configure_bmc) ──► tag ipmi_exporter
//	              ▼
//	            3. NetBox activation (staged → active; always runs)
//	              ▼
//	            4. Ironic prelude * ─► 5. inspection half * ─► 6. Redfish→IPMI switch † ─► 7. cleaning half *
//	              ▼
//	            end state: node available and powered on; NetBox active, tagged ironic + ipmi_exporter
//
// Ironic provision-state walk for a fresh node: ENROLL → MANAGEABLE (manage)
// → inspection → MANAGEABLE → CLEANING / CLEAN WAIT (provide) → AVAILABLE.
// The workflow drives the transitions; Ironic does the inspecting and cleaning.
// The DHCP and BMC phases run before the Ironic ownership guard, so a rerun on
// a deployed host still reconverges them: do not rerun enrollment against a
// live workload.
//
// Every enabled phase's input is mapped from NetBox before the first write
// ([Plan]), so bad NetBox data fails with NETBOX_DATA_INVALID naming the
// field and changes nothing. Rules two phases must agree on — the
// provisioning NIC is the first frontend interface (interfaces of
// ironic_settings.interface_type, not management-only, in NetBox's natural
// name order), used by BMC boot restriction and by Ironic PXE — are computed
// once, in [Plan].
//
// # Outcomes and retries
//
// A step returns nil, a *hostforge.Wait or a *hostforge.Failure. The body
// sleeps through waits (within a budget per wait reason: node_locked uses the
// site's NodeLockMaxWait; the BMC phase's bmc_busy, bmc_unreachable,
// bmc_reset, idrac_job_schedule and idrac_job_run use bmc.Waits; others
// [DefaultWaitBudget]) and reruns a retryable
// failure after a backoff (10 s, doubling, capped at 5 min) within the attempt
// budget (SiteConfig.MaxAttempts, default 3, replaced by
// max_attempts_override). Anything else a step returns is reported as
// UNCLASSIFIED, owned by the SDK.
//
// # Operator parameters
//
// Per request ([Params]):
//
//	parameter             default  effect
//	force_bmc_restart     false    cold-reset the BMC even when its password was not rotated (once per run)
//	run_inspection        true     false skips inspection and verification
//	force_inspection      false    run a fresh inspection even when the existing inventory verifies
//	max_attempts_override 0 (site) attempt budget for retryable failures; 1 fails fast
//
// Per site, snapshotted into the request at submission ([SiteConfig]):
//
//	setting                          default   effect
//	enrollment_configure_dhcp        off       gate phase 1
//	enrollment_configure_bmc         off       gate phase 2
//	enrollment_ironic_enrol          off       gate phases 4-7
//	switch_to_ipmi_after_inspection  off       phase 6: flip redfish/idrac nodes to ipmi after inspection
//	restrict_boot                    on        boot only from the provisioning NIC (AMI, iDRAC)
//	platform_class_activity_ready    off       gate phase 0b (worker readiness)
//	ironic_tag                       ironic    NetBox tag slug marking an enrolled host
//	node_lock_max_wait               15m       how long a locked Ironic node is waited out
//	cleaning_deadline                3h        bound on the whole cleaning half
//	max_attempts                     3         the retry policy's attempt budget
//	ironic_instances                 —         device_class → Ironic instance (routing)
//	enrol_project                    —         Ironic owner/lessee of enrolled nodes
//
// Per host, in the NetBox config context: ironic_settings ([IronicSettings],
// including skip_cable_verification, redfish_address_override and
// network_interface), inspection_validation (package verify), ztp (platform
// class fabric), ntp-servers and syslog-servers (BMC phase).
//
// # Where things live in NetBox
//
// device_class is the device role's custom field device_class; gpu_type is a
// device-type custom field; platform_class is a device custom field; the
// site's NTP and syslog targets are the rendered config context keys
// "ntp-servers" and "syslog-servers".
//
// # Completion proof and the fleet manager's ledger
//
// After a run closes, its completion settles the device's Enrollment proof
// in the fleet manager's ledger ([SettleProof]: one body for every runtime,
// one step per ledger call; [ProofAgent] runs it inline, the Temporal
// adapter in a settlement workflow that outlives the enrollment). A
// qualifying completion establishes proof only by a compare-and-set of the
// resolved reference against the reference the fleet manager projects from
// Ironic itself ([Projector]), never from the result being checked; the
// compare-and-set carries the window's deadline, which the ledger judges by
// its own clock, and the reference revision the run was submitted at, so a
// reference that left and came back (A → B → A) is never proven. The
// ledger's semantics are a contract suite, enrollment/ledgertest, that the
// fake and the SQL ledger (adapters/sqlstore) pass.
package enrollment
