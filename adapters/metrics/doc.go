// Package metrics exports hostforge's metrics with the Prometheus client,
// all named hostforge_...: [Firmware] implements firmware.Metrics under
// NICo's metric names, [Workflows] implements flow.Observer for the three
// workflows and the schedules, [NewExporters] registers both (what a
// worker and a long local run export), and [Handler] serves a registry on
// /metrics. The Grafana dashboard and the alert rules that read these
// metrics ship in deploy/ (a test fails when either names a metric this
// package does not export).
//
// # The metrics
//
// Runs, phases and steps of every workflow (workflow is enrollment,
// firmware or extensions):
//
//	hostforge_workflow_runs_started_total{workflow}                      counter    runs begun
//	hostforge_workflow_runs_finished_total{workflow,outcome,code,owner}  counter    runs ended: outcome succeeded (code, owner empty)
//	                                                                                or failed, with the failure's code and owner
//	hostforge_workflow_run_duration_seconds{workflow,outcome}            histogram  start to end, on the runtime's clock
//	hostforge_phase_duration_seconds{workflow,phase,status}              histogram  a phase that ran: status done or failed
//	hostforge_step_duration_seconds{step,outcome}                        histogram  one attempt: outcome done, wait or failed
//	hostforge_step_failures_total{step,code,owner}                       counter    failed attempts (a retryable one may be rerun)
//
// Enrollments are the enrollment workflow's runs: enrollments started are
// hostforge_workflow_runs_started_total{workflow="enrollment"}, and
// finished by outcome, code and owner
// hostforge_workflow_runs_finished_total{workflow="enrollment"}. Its phases
// are enrollment's Phase constants (resolve_ironic_instance,
// netbox_status_gate, record_platform_class, configure_dhcp,
// configure_bmc, netbox_activation, ironic) and the parts of the Ironic phase
// (ironic.inspection, ironic.ipmi_switch, ironic.cleaning — also counted
// within ironic); a skipped phase is not observed. The firmware update's
// phases are its substates (CheckingFirmware, WaitingForUpload, ...).
//
// Waits, by the reason a step gave (node_locked, bmc_busy, ...):
//
//	hostforge_waits_total{step,reason}                  counter  waits the step runner slept for, within budget
//	hostforge_wait_seconds_total{reason}                counter  seconds slept for them
//	hostforge_wait_budget_exhausted_total{step,reason}  counter  waits past the reason's budget: the step fails
//
// The runner never lets a wait run past its budget: a host that would be
// stuck waiting fails with the reason's exhaustion failure, and that is
// what hostforge_wait_budget_exhausted_total counts.
//
// Extension deliveries (stage is one of the 12 stages, task_type
// ExtensionTaskWebhook, ExtensionTaskSsh or ExtensionTaskAnsible):
//
//	hostforge_extension_deliveries_total{stage,task_type,status}     counter    status succeeded, failed or skipped
//	hostforge_extension_delivery_latency_seconds{stage,task_type}    histogram  event dispatched to delivery recorded
//
// Schedules (schedule names a periodic job: ironic_projection,
// inventory_exploration, firmware_pass):
//
//	hostforge_schedule_runs_total{schedule}                  counter    runs
//	hostforge_schedule_lag_seconds{schedule}                 histogram  start after the time the schedule meant
//	hostforge_schedule_last_run_timestamp_seconds{schedule}  gauge      last run seen (declaration time before one)
//	hostforge_schedule_interval_seconds{schedule}            gauge      the declared interval
//
// Whoever creates a schedule declares it ([Workflows.DeclareSchedule]);
// the scheduled body reports each run with flow.ObserveScheduleRun (under
// Temporal, with the time temporal.ScheduledStart reads).
//
// Firmware (NICo's names; set by the update manager's pass and counted by
// the update workflow's steps, see [Firmware]):
//
//	hostforge_pending_host_firmware_update_count            gauge    drifted hosts without a request
//	hostforge_active_host_firmware_update_count             gauge    updates started and not ended
//	hostforge_exhausted_reprovision_retry_count             gauge    updates that spent their retry budget
//	hostforge_machines_in_maintenance_count                 gauge    hosts consuming the update budget
//	hostforge_machine_updates_started_count                 gauge    requests the last pass created
//	hostforge_concurrent_machine_updates_available          gauge    the site-wide ceiling
//	hostforge_firmware_updates_total{target,phase}          counter  updates started and completed
//	hostforge_firmware_update_failures_total{target,cause}  counter  failed attempts by failure code
//	hostforge_host_reprovision_retries_total                counter  automatic retries
//
// # Bounded labels
//
// No label carries a device, a machine, an event or a delivery ID: the
// observations themselves have no such field. code and owner come from the
// code catalogue (hostforge.Lookup: a code not declared there counts as
// UNCLASSIFIED, owner SDK), stage, task_type and status from the
// extensions' enumerations, outcome and status from the runtime's. Labels
// whose values are code constants (workflow, phase, step, reason,
// schedule) admit at most 200 distinct values each; past that a value is
// counted as "other", so a caller that passed data where a constant
// belongs cannot grow a series per host.
//
// Series the alert rules read exist at zero before their first increment
// where their label values are known in advance — each workflow's starts,
// successes and failures by every declared code and owner, every stage's
// deliveries by task type and status, a step's wait-budget exhaustion from
// its first wait of that reason, a declared schedule's runs — because a
// counter born at 1 shows no increase() in its first window.
//
// # Counting under Temporal
//
// The observer is fed from the workflow side, through the runtime
// (flow.ObserverOf), not from the activities: runs, phases, wait budgets
// and schedule lag exist only there, and one place for every observation
// keeps the local and the Temporal figures the same. A Temporal workflow
// re-executes its code whenever a worker replays its history (a worker
// that did not have it cached, after a restart or an eviction), so the
// Temporal runtime hands out its observer only when workflow.IsReplaying
// is false — the SDK's documented guard for metrics in workflow code.
// Replayed code observes nothing; the code that runs on new history events
// is observed once, by the worker that processes them, whichever worker
// that is. Observing never creates a command, so it cannot break
// determinism. Durations are on workflow time (workflow.Now): a step's
// includes the time its activity waited for a worker. The one case that
// counts twice is a workflow task that fails after observing (its worker
// dies before completing the task) and is retried on new events: at least
// once, like the firmware counters that the steps persist.
//
// Each worker exports what it observed; sum the counters over instances
// (the dashboard and the rules do) and take the max of the firmware
// gauges, which every worker's pass sets.
//
// Unlike NICo, the active and exhausted gauges count assigned hosts' update
// substates too: hostforge keeps one update record per machine, with an
// instance or without, and NICo's queries read only the top-level
// HostReprovision state.
package metrics
