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
// explicit_start_needed, host_profile (disable_lockdown: the hand-back
// does not turn platform lockdown on again) and components.<type>; a
// component has
// current_version_reported_as (a regular expression searched in inventory
// member Ids), preingest_upgrade_when_below and known_firmware[]. An entry
// has version, default, the legacy filename/filenames/url/checksum,
// files[{filename|url, sha256, allow_http}], install_only_specified,
// power_drains_needed, pre_update_resets, script and
// preingestion_exclusive_config (such an entry is never a managed default).
// mandatory_upgrade_from_priority and the legacy per-entry scout table are
// accepted and ignored. Unknown fields, bad regular expressions, unknown
// or repeated component types and two defaults in one component are
// refused, naming the file, line, table and key.
//
// A download proves what it is, and the catalog says how: an artifact
// with a url (tried when its filename is absent, or alone) needs its
// sha256 — the legacy url/checksum form cannot give one (its checksum is
// MD5, which proves nothing about a download), so a URL artifact is
// written as files = [{ url = "...", sha256 = "..." }]. The url is https;
// a source on plain http opts in with allow_http = true on its files
// entry (the sha256 still verifies the bytes, and every use is logged).
// A sha256 or checksum that is not a digest is refused too. The catalog
// refuses these when it is loaded (and a runtime override when it is
// applied), not when an update reaches the entry. The legacy MD5
// checksum still verifies a local file.
//
// Merge order, last wins (Merge, LoadCatalog, WithOverrides): static
// host_models; the metadata.toml of each subdirectory of a firmware
// directory, oldest modification time first (a non-empty ordering
// replaces, explicit_start_needed = true is sticky, matcher and threshold
// replace when set, versions append and a new default clears the old);
// runtime overrides from the store (versions upserted, ordering only gains
// types, a missing matcher taken from the built-in table). The files are
// read again when they change (CatalogFiles: by modification time, size
// and the set of a directory's metadata.toml files, at every pass); files
// that do not load, or that the site refuses (URL artifacts without a
// cache), leave the last good catalog in force, logged, counted and shown
// (CatalogStatus). An override is written by the operator
// (Operator.SetOverride, DeleteOverride — NICo's Host Firmware Config
// API) only once the effective catalog with it applies, by compare-and-set
// on the override it read (OverrideStore.SwapOverride). The lookup key
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
// Manager.Pass re-reads changed catalog files, clears leftover update
// reports of hosts without a request, counts the hosts in maintenance or with a request against the budget,
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
// Cycle is a site's periodic work in one call, for whatever schedules it
// (a Temporal Schedule per site, or an in-process ticker): under the pass
// lock the Explorer reads the inventories that got old (within half the
// pass lease), the pass runs, its figures are stored (PassStore) and the
// finished updates past Settings.HistoryRetention removed; the gauges are
// published whether or not it held the lock — from the stored figures of
// the site's last pass when it did not. Starting the requests' workflows
// is not part of it: that runs on its own tick.
//
// Operator (the operator's and tenant's side): a direct request bypasses
// selection and the ceiling but not an assigned host's approval; its clear
// is refused once the update started; mark-manual-upgrade-complete; reset
// to CheckingFirmwareRepeat with the retry count cleared; per-machine
// autoupdate; explicit-start windows; tenant approval; runtime catalog
// overrides; Cancel, which stops a started or exhausted update at its next
// step boundary where nothing it sent is under way (a push, its task, an
// agent run, a reset recorded as sent are waited out) and hands the host
// back, kept in the history as cancelled, by whom; History (a host's
// updates: substates, components changed, failure) and Report (the fleet's
// compliance per model, the hosts with unmatched components). ReportScout
// is the on-host agent's report, checked against the task the update
// waits for.
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
// every counter, the artifact index and the in-flight task, pushes and
// resets are recorded before they are sent, and uploads, scripts and
// agent runs persist their results, so a body rerun after a restart
// resumes where the record is and repeats no side effect (see "Side
// effects happen once").
//
//	         request
//	            │
//	         Pending ── assigned: waits for approval or the autoreboot period
//	            │ protect: lockdown read and recorded, update report on,
//	            │ lockdown off (when it was on), request started
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
//	 │                    │ drains: N × (ForceOff, 60 s, AC cycle, 90 s, On;
//	 │                    │   no AC cycle on the BMC: off for power_drain_wait)
//	 │                    │ else uefi/combinedbmcuefi: ForceRestart        │
//	 │                    │ bmc (not Dell): BMC reset                      │
//	 │                    │ hgxbmc/gpu without drains: ForceOff, 30 s, On  │
//	 │                    ▼                                                │
//	 └──────── NewFirmwareReportedWait: every matching entry at target;    │
//	                      after 30 min reset again, at most 5 times        │
//	                                                                       ▼
//	any attempt failure ─► FailedFirmwareUpgrade ─ 60 min ─► CheckingFirmware    Restore:
//	(retry count + 1; at 5 the body ends exhausted, the host stays failed)       lockdown on again
//	                                                                             if it was on, an
//	                                                                             assigned host whose
//	                                                                             firmware changed
//	                                                                             restarted, report
//	                                                                             off, request and
//	                                                                             record removed, the
//	                                                                             update kept in the
//	                                                                             history
//	an operator's cancellation, at a step boundary with nothing under way ─► Restore
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
// # Side effects happen once
//
// A firmware push and a reset cannot be repeated safely, so each is
// recorded as started before it is sent, and an attempt that finds it
// started without an outcome asks the BMC before it sends anything again:
//
//   - A push (WaitingForUpload): the step reads the BMC's tasks, records
//     the push in the store (Push: the image, its declared digest, the
//     target, and the tasks the BMC listed just before), checkpoints the
//     record and only then pushes. An answer that is an error other than a
//     refusal proves nothing (the connection may have dropped after the
//     BMC took the image): no result is written, and the next attempt asks
//     the BMC. Asking means: a task of the push in the TaskService
//     (PushTask: an update task that names no other image, new against
//     the list from before the push, or — without that list — running or
//     ended within PushEvidenceWindow), else the target version already
//     installed, else the image staged (StagedImage: XCC's -Pending
//     member). A task found is polled as the push's; a staged image counts
//     as the push's task completed; an installed target as activated. Only
//     when the BMC shows none of them did the push not happen: it is sent
//     again as a new upload, counted in the record's Uploads and against
//     the target's upload retries. An image already pushed in the same try
//     (a task the BMC forgot, say) is likewise pushed again only when the
//     BMC shows no sign of the earlier push.
//   - A reset (InitialReset, ResetForNewFirmware, the restart of Restore):
//     the step reads the BMC's reset status (ResetStatus: power state, the
//     system's and the Manager's LastResetTime), records the reset as
//     started with it (HostUpdate.ResetSent), checkpoints, then sends it.
//     An attempt that finds it started reads the status again and sends
//     the reset again only when the BMC shows it did not happen: ForceOff
//     and On by the power state, a restart and an AC cycle by the system's
//     LastResetTime or a changed power state, a BMC reset by the Manager's
//     LastResetTime. A BMC that shows neither (no LastResetTime) leaves the
//     reset taken as done: the new-firmware wait resets again within its
//     own budget if the firmware does not show. Real BMCs keep whole
//     seconds: two resets of one kind within a second look like one.
//   - Scripts and agent tasks were recorded before they ran already: a
//     script found started without a result fails its attempt and is never
//     run again blindly; an agent task is offered under its attempt's ID.
//
// Handing back returns a host that was on when its update started
// (HostUpdate.StartPower) to on — an attempt that failed between a power
// drain's power-off and its power-on left it off — and an update that
// failed before it passed its start gate retries from the gate, so that a
// host is never updated without its health report and with lockdown on.
//
// The fault-schedule suite (internal/fwsim: CheckSchedule, Generate) runs
// the workflow on small fleets of the four simulated profiles under seeded
// schedules in enrollment's format — calls failing before their effect,
// writes applied and their answers lost, workers dying after N writes of a
// step's attempt, at every step — then clears the faults, runs again every
// workflow that ended with an error, and checks on every schedule:
//
//   - each firmware image is pushed at most once per (host, component,
//     try), and every push the BMC takes was recorded before it was sent
//     and reaches the BMC once;
//   - each reset of a sequence (pre-update, activation, hand-back) takes
//     effect at most once per host, component, try and reset retry;
//   - a host is never left in maintenance after a terminal outcome: one
//     handed back has no request, record or update report, lockdown on, is
//     powered on and reports no drift; one that spent its retry budget has
//     its record in FailedFirmwareUpgrade with the budget spent, keeps its
//     request and (once started) its update report, and its failure is one
//     the schedule's faults explain;
//   - a host's retry count never exceeds its budget, at every durable point;
//   - the upload ceiling (max_uploads) is never exceeded: neither pushes in
//     flight nor upload slots held;
//   - every failure is classified: every recorded failure and every error
//     a workflow ends with carries a declared code;
//   - once the faults clear, every workflow ends handed back or exhausted.
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
// Store is declared here with its contract suite in firmware/firmwaretest
// (pushes, PushStore, the history, HistoryStore, the last pass's figures,
// PassStore, and the overrides' compare-and-set included);
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
// tasks and the TaskService's list, resets chosen from the reset types the
// BMC allows inline or in its @Redfish.ActionInfo, and the reset status;
// platform lockdown where the vendor has one — iDRAC's system lockdown,
// Supermicro's SysLockdown, XCC's IPMI-over-KCS access), adapters/artifact
// (downloads verified by
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
