// Package firmware keeps managed hosts at the default versions of their
// host firmware catalog: the catalog, drift, the update manager that
// decides which hosts may start an update, and the per-host update
// workflow, a body on the shared runtime (package flow).
//
// # Catalog
//
// The format is NICo's TOML: a site configuration's [host_models.<key>]
// tables, or one metadata.toml per model (ParseCatalog reads both). A
// model has vendor, model, ordering (default [bmc, uefi]),
// explicit_start_needed and components.<type>; a component has
// current_version_reported_as (a regular expression searched in inventory
// member Ids), preingest_upgrade_when_below and known_firmware[]. An entry
// has version, default, the legacy filename/filenames/url/checksum,
// files[{filename|url, sha256}], install_only_specified,
// power_drains_needed, pre_update_resets, script and
// preingestion_exclusive_config (such an entry is never a managed default).
// mandatory_upgrade_from_priority and the legacy per-entry scout table are
// accepted and ignored. Unknown fields, bad regular expressions, unknown
// or repeated component types and two defaults in one component are
// refused, naming the file, line, table and key.
//
// Merge order, last wins (Merge, LoadCatalog, WithOverrides): static
// host_models; the metadata.toml of each subdirectory of a firmware
// directory, oldest modification time first (a non-empty ordering
// replaces, explicit_start_needed = true is sticky, matcher and threshold
// replace when set, versions append and a new default clears the old);
// runtime overrides from the store (versions upserted, ordering only gains
// types, a missing matcher taken from the built-in table). The lookup key
// is the vendor family (package bmc's detection: "Dell Inc." is Dell;
// other vendors by their lower-cased letters and digits) and the lower-cased
// model; a Lenovo host with an AMI BMC tries LenovoAMI first.
//
// # Drift
//
// The desired map holds each component's first default version; the
// reported map the installed inventory entries each matcher finds. Drift
// is exact string equality, never an ordering: "1.2" vs "1.2.0" is drift,
// and so is newer firmware. Per component (Model.Evaluate):
//
//	ok          every matching installed entry reports the default
//	drifted     any matching entry differs (several CX7 cards: any one)
//	unmatched   the matcher finds no installed entry: flagged, and never by
//	            itself a reason to start an update (nothing could be
//	            installed or verified; NICo loops on it)
//	no-default  no default version: ignored
//
// An entry is installed firmware unless its Status.State is present and
// not Enabled, or a word of its Id or Name is pending, staged or staging
// (InventoryEntry.Installed). Lenovo's BMC-Primary-Pending (Version "-*",
// State Disabled) is left out, so NICo's own ^BMC-Primary matcher no longer
// keeps a Lenovo host drifted forever; AMI MegaRAC members, which carry no
// Status, count as installed. Components outside the ordering are walked
// after it (Model.EffectiveOrdering), so their drift cannot loop either.
//
// # The update manager's pass
//
// Manager.Pass clears leftover update reports of hosts without a request,
// counts the hosts in maintenance or with a request against the budget,
// computes the ceiling and creates requests (initiator "automated") for as
// many eligible drifted hosts as the ceiling leaves room for, unassigned
// hosts first, then by machine ID.
// One pass runs at a time per site: its ceiling is computed from what it
// read, so two passes at once could both fill it. The orchestrator keeps
// it single — a Temporal schedule per site with overlap policy skip
// (adapters/temporal), or one process's ticker (flow.Every) — not a lock
// in the store.
//
// Ceiling (Ceiling): absolute when only it is set; with a percent,
// ceil(percent × total / 100) − unhealthy, floored at 0 and capped by the
// absolute when both are set; 0 when neither is set, and nothing starts.
// Total and unhealthy travel in one struct, so they cannot be swapped as
// NICo swaps them.
//
// The gates, in the order a drifted host meets them (the table the
// specification lost, reconstructed from its text):
//
//	gate                 a host is skipped when                          reason
//	observation          its inventory was never read                    no_observation
//	catalog              its model has no entry                          not_in_catalog
//	drift                nothing is drifted (unmatched only: flagged)    unmatched_only
//	existing work        it has a request already                        request_exists
//	host state           neither Ready nor Assigned                      state
//	manual tagging       instance_updates_manual_tagging and Assigned    manual_tagging
//	maintenance          in maintenance for another reason               in_maintenance
//	autoupdate           its override is false; or, without one, it is   autoupdate_off
//	                     listed in host_disable_autoupdate, or the site  legacy_disabled
//	                     default is off
//	explicit start       the model needs it and now is not strictly      outside_window
//	                     inside the machine's window
//	site capacity        the ceiling is reached                          ceiling
//
// host_disable_autoupdate is compared with machine IDs only. A listed
// machine is skipped and the pass goes on: NICo's pass ends at the first
// listed machine it meets (a break), which makes the set of hosts updated
// depend on iteration order and lets one stale entry stop the whole
// fleet's updates. A per-machine override (enable or disable) wins over
// the list; clearing it returns the machine to the list and the default.
//
// A host whose update failed and spent its retry budget keeps its request
// and its update report: it stays out of allocation and keeps consuming
// its share of the ceiling, so a systematic fault stops a rollout once the
// failures fill the ceiling, until an operator resets them.
//
// Operator (the operator's and tenant's side): a direct request bypasses
// selection and the ceiling but not an assigned host's approval; its clear
// is refused once the update started; mark-manual-upgrade-complete; reset
// to CheckingFirmwareRepeat with the retry count cleared; per-machine
// autoupdate; explicit-start windows; tenant approval. ReportScout is the
// on-host agent's report, checked against the task the update waits for.
//
// # The per-host update workflow
//
// Update is one machine's workflow: a body on flow.Runtime that runs the
// step of its record's substate (one step per substate, named after it:
// firmware.waiting_for_upload), sleeping on the runtime until the record's
// NotBefore between steps. Steps never sleep; every timed wait (task
// polls, reset pauses, the 20-minute pre-update wait, the 30-minute
// new-firmware wait, the 60-minute retry interval, the waits for approval
// and the manual gate) is a runtime sleep. A step acts only on the record
// revision the body saw and writes by compare-and-set; the record holds
// every counter, the artifact index and the in-flight task, and uploads,
// scripts and agent runs persist their results, so a body rerun after a
// restart resumes where the record is.
//
//	         request
//	            │
//	         Pending ── assigned: waits for approval or the autoreboot period
//	            │ protect: update report on, lockdown off, request started
//	            ▼
//	 ┌─► CheckingFirmware / CheckingFirmwareRepeat ───────────────────────┐
//	 │          │ refresh inventory; first drifted component in ordering   │ nothing drifted
//	 │          ├─► WaitingForManualUpgrade (requires_manual_upgrade,      │
//	 │          │   MNNVL host) ─► Repeat once marked complete             │
//	 │          ├─► WaitingForScoutUpgrade (packaged script) ─┐            │
//	 │          ├─► WaitingForScript (entry's script) ─► Repeat            │
//	 │          ├─► InitialReset (pre_update_resets, not on Repeat):       │
//	 │          │   ForceOff, BMC reset, BMC answers, On, 20 min ─► Repeat │
//	 │          └─► WaitingForUpload (slot held until it returns)          │
//	 │                    │ transient failure or lost task ─► Repeat       │
//	 │                    ▼                                                │
//	 │          WaitingForFirmwareUpgrade (poll the task)                  │
//	 │                    │ Completed: next artifact ─► WaitingForUpload   │
//	 │                    ▼ last artifact                                  │
//	 │          ResetForNewFirmware ◄─────────────┘ (agent succeeded)      │
//	 │                    │ drains: N × (ForceOff, 60 s, AC cycle, 90 s, On)
//	 │                    │ else uefi/combinedbmcuefi: ForceRestart        │
//	 │                    │ bmc (not Dell): BMC reset                      │
//	 │                    │ hgxbmc/gpu without drains: ForceOff, 30 s, On  │
//	 │                    ▼                                                │
//	 └──────── NewFirmwareReportedWait: every matching entry at target;    │
//	                      after 30 min reset again, at most 5 times        │
//	                                                                       ▼
//	any attempt failure ─► FailedFirmwareUpgrade ─ 60 min ─► CheckingFirmware    Restore:
//	(retry count + 1; at 5 the body ends exhausted, the host stays failed)       lockdown on, an
//	                                                                             assigned host whose
//	                                                                             firmware changed
//	                                                                             restarted, report
//	                                                                             off, request and
//	                                                                             record removed
//
// What fails an attempt: a refused or repeatedly failing upload, a task
// ending Exception, Interrupted, Killed, Cancelled or in an unknown state
// (or running past 2 h), a failed, silent (past its deadline: 30 s +
// execution + download × files + 30 min, at most 5 h) or mismatched agent
// report, a script that fails or was interrupted by a restart (never rerun
// blindly), firmware never reported after its resets, a BMC failing past
// one substate's error budget, and a target selected again and again
// without being verified (a script that exits 0 and installs nothing).
//
// Where NICo has known bugs, this package does what NICo intends: the
// ceiling's arguments in order; upload slots held until the upload has
// returned (SlotStore, shared by every worker on PostgreSQL); the retry
// count kept for assigned hosts too; upload and script results persisted;
// the artifact index kept across pre-update resets; lost tasks and
// transient uploads bounded per target.
//
// # State and routes
//
// Store is declared here with its contract suite in firmware/firmwaretest;
// firmwarefake.MemStore and adapters/sqlstore (SQLite, PostgreSQL) pass
// it. Hosts, BMCClient, ArtifactResolver, Scout, ScoutScripts and
// ScriptRunner are the routes; firmwarefake holds behavioural fakes over
// fakes.FirmwareBMC, whose staged firmware becomes active only through
// the reset its image needs. BMCClient has a contract suite too
// (firmwaretest.RunBMC): the fake and adapters/redfish against the Redfish
// emulator pass it. The real routes: adapters/ironic (managed hosts:
// available is Ready, active with an instance is Assigned, the update
// health report is Ironic maintenance whose reason starts with
// host-fw-update), adapters/redfish.Firmware (inventory, multipart push,
// tasks, resets, Dell lockdown), adapters/artifact (downloads verified by
// sha256), adapters/scout (the on-host agent and its server: an offered
// task is stored, StoredScout, and served, OfferedScoutTask) and
// adapters/script (a local script, the BMC in its environment). ScoutDir
// finds packaged agent scripts: <dir>/<vendor>/<model>/<component>/upgrade.sh,
// segments lower-cased with spaces as "_" and only [a-z0-9_-], beside a
// metadata.toml of exactly execution_timeout_seconds and
// artifact_download_timeout_seconds.
//
// The Explorer reads the inventories of hosts without a request (NICo's
// Site Explorer): the update manager compares its observations with the
// catalog. Metrics is the metrics interface (adapters/metrics implements it
// with Prometheus): counters per persisted transition, and GaugesOf after
// each pass; unlike NICo's queries, the active and exhausted gauges count
// assigned hosts' update substates too. internal/fwsim simulates a fleet of
// 10,000 hosts against the fakes; internal/fwemu a fleet through the real
// Redfish route and the emulator.
package firmware
