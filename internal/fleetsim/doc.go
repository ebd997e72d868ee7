// Package fleetsim simulates a fleet: it builds a fake site of many hosts —
// mixed vendors, GPU and CPU, bonded and not, a share of them broken the ways
// racks break — enrols every host concurrently through flow.Local on
// the site's virtual clock, and reports wall time, throughput, peak heap,
// calls per host by system (reads and writes), virtual time to the end
// state and failures by code, for a fresh run and a converged rerun.
//
// The simulator gates off any phase whose implementation the executor from
// enrolltest does not wire yet, and says so in its report.
//
// # The fault-schedule suite
//
// It also holds the property suite of the enrollment specification's
// never-do list: a seeded Schedule (Generator.Generate; a seed is the whole
// schedule, so a failing one is replayed by its seed) says which calls of
// which system fail how, which host events strike, and which BMCs start on
// their factory credential. CheckSchedule runs a small fleet under it,
// clears the faults, reruns, and reports every promise that did not hold.
//
// Faults come in three kinds, which every fake of package fakes honours:
//
//   - before the effect: a 5xx, a client timeout (which the adapters report
//     as the system being unavailable, never as a cancellation), a dropped
//     connection, a 401, 400, 409 or 404 — the call changes nothing;
//   - after the effect (lost, lost_timeout): the system applies the write,
//     then the caller sees the connection drop or its own timeout;
//   - a crash: the worker running a step attempt dies once N of the
//     attempt's writes took effect. Nothing of the attempt after that
//     reaches any system (not even cleanup code detached from its context);
//     the runtime drops whatever the attempt returned and, after
//     WorkerLossDelay (Temporal's heartbeat timeout), runs the same attempt
//     again with the same input: the workflow resumes from its last durable
//     point, as under Temporal when a worker dies, where the activity is
//     retried and the workflow's history keeps everything before it.
//
// Half the schedules start with factory-reset BMCs (Config.FactoryReset:
// new ones without a per-host credential in the vault, and remediated ones
// whose vault item is stale; a third of them apply a new password only on
// their next cold reset), so the password rotation and its cold reset run
// under every fault. Host events add a locked Ironic node, an inspection,
// a cleaning or a power-on that fails, a clean failed node whose manage
// recovery fails once (the maintenance-restore window), a previous DHCP
// reservation of the host, another device's stale reservation of its
// address, and a DHCP restart that fails.
//
// # Invariants
//
// After every step that completed (a durable point of the workflow) and
// between runs:
//
//   - NetBox keeps every field enrollment does not own; status only moves
//     staged → active; tags are only added; a populated platform_class is
//     never overwritten.
//   - A broken host never reaches available.
//   - Ironic: a clean failed node never has maintenance off (maintenance
//     cleared to recover it is restored when the manage fails); driver_info
//     never holds the shared monitoring credential; a node's root-device
//     hint, once set, is never stripped; PXE is on exactly one port, the
//     first frontend NIC's; a node Nova owns (instance_uuid set, active or
//     stuck in clean failed) is never written.
//   - Passwords: the admin password each BMC takes — and the one a
//     reset-to-apply BMC will take after its next cold reset — is in the
//     vault (the host's item, as its password or pending_password, or the
//     factory item). This one is checked at every crash too: a write-ahead
//     promise holds at every instant, not only at durable points.
//   - DHCP: a reservation the server held valid is never removed; a change
//     the config test refused never stops a running service; a failed
//     restart either leaves the service running or says that DHCP is down.
//   - Every host ends in the end state or in a classified Failure, never
//     UNCLASSIFIED, never a panic; after the faults clear, every host ends
//     as the outcome table says; a last run of the converged hosts writes
//     nothing anywhere.
//
// # The outcome table
//
// How a host may end is not taken from a run of the code under test: it
// comes from Outcomes, written from the specification's failure semantics
// and the operator actions of docs/failure-codes.md. A fault on a system
// surfaces in the phases that call it: an outage (5xx, timeout, dropped
// connection, lost answer) is that phase's "unavailable" code, retryable
// and owned by whoever runs the system (PLATFORM_CLASS_RECORD_FAILED is
// FLEET_MANAGER's, retryable, whichever of NetBox and the fleet manager
// failed, as the specification says); a 401 is the phase's credential code,
// not retryable; a 400 or 409 is the phase's refusal, not retryable; a 404
// is the object being missing. Budgets turn long outages into their own
// codes (BMC_RESET_TIMEOUT, IRONIC_NODE_LOCKED). A crash never shows: the
// attempt runs again. In the faulted run a host may end in the end state,
// its breakage's outcome, or any outcome of any fault or event of its
// schedule (a fault lands on whichever host calls next); the code, owner
// and retryability must all match a row. Once the faults clear, a healthy
// host must converge and a broken one must end with its breakage's
// outcome:
//
//	bmc 5xx,timeout,drop,lost,lost_timeout: BMC_UNREACHABLE (DC_OPS, retryable); BMC_HTTP_SERVICE_UNAVAILABLE (DC_OPS, retryable); BMC_PASSWORD_UNCONFIRMED (INFRA_ENG, retryable); BMC_RESET_TIMEOUT (DC_OPS, retryable); IRONIC_LINK_OBSERVATION_FAILED (INFRA_ENG, retryable)
//	bmc conflict,invalid: BMC_WRITE_REJECTED (INFRA_ENG, not retryable); IRONIC_LINK_OBSERVATION_FAILED (INFRA_ENG, retryable)
//	bmc unauthorized: BMC_CREDENTIAL_INVALID (DC_OPS, not retryable); BMC_PASSWORD_UNCONFIRMED (INFRA_ENG, retryable); IRONIC_LINK_OBSERVATION_FAILED (INFRA_ENG, retryable)
//	bmc not_found: BMC_ENDPOINT_MISSING (INFRA_ENG, not retryable); BMC_WRITE_REJECTED (INFRA_ENG, not retryable); IRONIC_LINK_OBSERVATION_FAILED (INFRA_ENG, retryable)
//	dhcp 5xx,timeout,drop,conflict,invalid,not_found,lost,lost_timeout: DHCP_SSH_UNREACHABLE (NETWORK, retryable); DHCP_SSH_TRANSPORT (NETWORK, retryable); DHCP_TRANSFER_FAILED (NETWORK, retryable)
//	dhcp unauthorized: DHCP_SSH_AUTH_FAILED (NETWORK, not retryable)
//	fleet_manager 5xx,timeout,drop,conflict,unauthorized,invalid,not_found,lost,lost_timeout: PLATFORM_CLASS_RECORD_FAILED (FLEET_MANAGER, retryable)
//	ironic 5xx,timeout,drop: IRONIC_UNAVAILABLE (INFRA_ENG, retryable)
//	ironic conflict,invalid: IRONIC_REQUEST_REJECTED (INFRA_ENG, not retryable)
//	ironic unauthorized: IRONIC_UNAUTHORIZED (INFRA_ENG, not retryable)
//	ironic not_found: IRONIC_REQUEST_REJECTED (INFRA_ENG, not retryable); IRONIC_INVENTORY_UNREADABLE (INFRA_ENG, retryable)
//	ironic lost,lost_timeout: IRONIC_UNAVAILABLE (INFRA_ENG, retryable); WAIT_BUDGET_EXHAUSTED (INFRA_ENG, retryable)
//	netbox 5xx,timeout,drop,lost,lost_timeout: NETBOX_UNAVAILABLE (INFRA_ENG, retryable); PLATFORM_CLASS_RECORD_FAILED (FLEET_MANAGER, retryable)
//	netbox conflict,invalid: NETBOX_WRITE_REJECTED (INFRA_ENG, not retryable); PLATFORM_CLASS_RECORD_FAILED (FLEET_MANAGER, retryable)
//	netbox unauthorized: NETBOX_UNAUTHORIZED (INFRA_ENG, not retryable); PLATFORM_CLASS_RECORD_FAILED (FLEET_MANAGER, retryable)
//	netbox not_found: NETBOX_DEVICE_NOT_FOUND (INFRA_ENG, not retryable); NETBOX_WRITE_REJECTED (INFRA_ENG, not retryable); PLATFORM_CLASS_RECORD_FAILED (FLEET_MANAGER, retryable)
//	vault 5xx,timeout,drop,conflict,unauthorized,invalid,lost,lost_timeout: BMC_VAULT_UNAVAILABLE (INFRA_ENG, retryable); IRONIC_BMC_CREDENTIAL_UNAVAILABLE (INFRA_ENG, retryable); IRONIC_LINK_OBSERVATION_FAILED (INFRA_ENG, retryable)
//	vault not_found: BMC_VAULT_UNAVAILABLE (INFRA_ENG, retryable); IRONIC_BMC_CREDENTIAL_UNAVAILABLE (INFRA_ENG, retryable); BMC_CREDENTIAL_MISSING (INFRA_ENG, not retryable); BMC_IPMI_CREDENTIAL_MISSING (INFRA_ENG, not retryable); BMC_CREDENTIAL_INVALID (DC_OPS, not retryable); IRONIC_BMC_CREDENTIAL_MISSING (INFRA_ENG, not retryable); IRONIC_LINK_OBSERVATION_FAILED (INFRA_ENG, retryable)
//	worker crash: the end state (converges on rerun)
//	event dhcp_previous_reservation: the end state (converges on rerun)
//	event dhcp_restart_fails_once: DHCP_RESTART_FAILED (NETWORK, retryable)
//	event dhcp_stale_reservation: DHCP_CONFIG_REJECTED (NETWORK, not retryable)
//	event ironic_clean_failed_manage_refused: IRONIC_CLEANING_FAILED (INFRA_ENG, retryable); IRONIC_UNAVAILABLE (INFRA_ENG, retryable); IRONIC_RECOVERY_FAILED (INFRA_ENG, retryable)
//	event ironic_cleaning_fails_once: IRONIC_CLEANING_FAILED (INFRA_ENG, retryable)
//	event ironic_inspection_fails_once: IRONIC_INSPECTION_FAILED (INFRA_ENG, retryable)
//	event ironic_lock_long: IRONIC_NODE_LOCKED (INFRA_ENG, retryable)
//	event ironic_lock_short: the end state (converges on rerun)
//	event ironic_power_on_never_happens: IRONIC_POWER_ON_TIMEOUT (DC_OPS, retryable); WAIT_BUDGET_EXHAUSTED (INFRA_ENG, retryable)
//	breakage miscabled: INSPECTION_CABLING_MISMATCH (DC_OPS, not retryable)
//	breakage dead_optic: INSPECTION_CABLING_MISMATCH (DC_OPS, not retryable)
//	breakage wrong_dimms: INSPECTION_HARDWARE_MISMATCH (DC_OPS, not retryable)
//	breakage blocked_bios: INSPECTION_HARDWARE_MISMATCH (DC_OPS, not retryable)
//	breakage no_gpu_type: PLATFORM_CLASS_UNRESOLVABLE (INFRA_ENG, not retryable); with the platform-class phase off: the end state
//	breakage bad_ztp: PLATFORM_CLASS_UNRESOLVABLE (INFRA_ENG, not retryable); with the platform-class phase off: the end state
//
// The lost answers of Ironic add WAIT_BUDGET_EXHAUSTED: a transition whose
// request's answer was lost is one the workflow cannot claim as its own,
// so it waits for it within the generic state budget. A power-on that never
// happens adds it too: its inspection hangs in inspect wait until Ironic's
// own inspector timeout (1 h); when an Ironic fault cuts the attempt short
// before the power-on timeout aborts it, the rerun cannot claim the
// inspection either, waits for it within the 30-minute state budget and
// runs out; the frontend-link
// guard reads the BMC with the per-host credential from the vault, so a
// vault fault met there is IRONIC_LINK_OBSERVATION_FAILED; a vault 404 on an
// item that exists (a stale replica) makes the per-host credential look
// absent, so the BMC phase tries the factory credential and may end
// BMC_CREDENTIAL_INVALID. TestOutcomeTableIsTheDocumentedOne keeps this
// table and Outcomes the same.
//
// # The retire pass
//
// Fleet.RetirePass runs the other end of the lifecycle over a healthy
// fleet: enroll every host, decommission half of them (5 % of those with a
// tenant's instance on their node) and retire them concurrently through
// the retirement workflow, with real extension dispatch on the same
// runtime; retire the retired hosts again; stage them and enroll them
// again. Its invariants (see retire.go): a node with an instance is never
// touched, nothing of its host either; no DHCP reservation outlives its
// node; a retired host is out of Ironic, DHCP, the BMC's monitoring and the
// ledger, offline in NetBox with its run journaled and its two events
// delivered; its rerun writes nothing; a re-enrolled host ends available
// with a fresh credential. TestRetirePass runs 120 hosts in the unit suite;
// the benchmark 10,000:
//
//	go test ./internal/fleetsim -run '^$' -bench RetirePass -benchtime=1x
//
// # Commands
//
// The unit suite runs 2,000 schedules (go test ./internal/fleetsim;
// -fleetsim.schedules=N for more, -fleetsim.seed=S to replay one). The
// benchmark runs 10,000 and reports violations, unclassified errors and
// reruns that did not converge:
//
//	go test ./internal/fleetsim -run '^$' -bench FaultSchedules -benchtime=1x
package fleetsim
