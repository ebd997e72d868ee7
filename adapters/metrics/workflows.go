package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
)

// Schedule names of the periodic jobs (the schedule label).
const (
	ScheduleIronicProjection     = "ironic_projection"
	ScheduleInventoryExploration = "inventory_exploration"
	ScheduleFirmwarePass         = "firmware_pass"
)

// Outcomes of a run (the outcome label of the run metrics).
const (
	OutcomeSucceeded = "succeeded"
	OutcomeFailed    = "failed"
)

// Buckets of the histograms, in seconds.
var (
	// StepBuckets: a step's attempt takes from milliseconds (a store
	// write) to the hours of its attempt bound (a BMC configuration).
	StepBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200}
	// PhaseBuckets: a phase takes seconds (NetBox) to hours (an
	// inspection of 25 minutes, a firmware substate waiting for a reset).
	PhaseBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 7200, 14400, 28800}
	// RunBuckets: a run takes minutes to a day (a firmware update that
	// waits hours between its retries).
	RunBuckets = []float64{10, 30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 7200, 14400, 28800, 43200, 86400}
	// LatencyBuckets: a delivery lands in well under a second (a
	// webhook) to an hour (a playbook behind others, the stage deadline).
	LatencyBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
	// LagBuckets: a scheduled run starts on time, or as late as the run
	// before it overran (overlap policy skip) or no worker was free.
	LagBuckets = []float64{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
)

// Workflows is flow.Observer on Prometheus collectors: what the three
// workflows and the schedules report, as the metrics the package doc
// lists. It is safe for concurrent use; Observe never blocks on more than
// a label lookup.
type Workflows struct {
	runsStarted, runsFinished                *prometheus.CounterVec
	runDuration, phaseDuration, stepDuration *prometheus.HistogramVec
	stepFailures                             *prometheus.CounterVec
	waits, waitSeconds, waitExhausted        *prometheus.CounterVec
	deliveries                               *prometheus.CounterVec
	deliveryLatency                          *prometheus.HistogramVec
	scheduleRuns                             *prometheus.CounterVec
	scheduleLag                              *prometheus.HistogramVec
	scheduleLast, scheduleInterval           *prometheus.GaugeVec

	workflow, phase, step, reason, schedule *bounded
	// ran holds the schedules a run was seen of.
	ran sync.Map
	// now reads the time DeclareSchedule marks (time.Now).
	now func() time.Time
}

var _ flow.Observer = (*Workflows)(nil)

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

func histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
}

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
}

// NewWorkflows creates the workflow metrics and registers them on reg.
// Hand it to the runtimes as their observer: flow.Local.Observer, and
// temporal.ActivityOptions.Observer on a worker.
func NewWorkflows(reg prometheus.Registerer) (*Workflows, error) {
	w := &Workflows{
		runsStarted: counterVec("workflow_runs_started_total",
			"Workflow runs started, by workflow (enrollment, firmware, extensions).", "workflow"),
		runsFinished: counterVec("workflow_runs_finished_total",
			"Workflow runs finished, by workflow, outcome (succeeded, failed) and, for a failure, its code and the owner the code catalogue names.",
			"workflow", "outcome", "code", "owner"),
		runDuration: histogramVec("workflow_run_duration_seconds",
			"How long a workflow run took, start to end, on the runtime's clock.", RunBuckets, "workflow", "outcome"),
		phaseDuration: histogramVec("phase_duration_seconds",
			"How long a phase took (an enrollment phase, a part of the Ironic phase, a firmware update substate), by status (done, failed).",
			PhaseBuckets, "workflow", "phase", "status"),
		stepDuration: histogramVec("step_duration_seconds",
			"How long one attempt of a step took, by outcome (done, wait, failed).", StepBuckets, "step", "outcome"),
		stepFailures: counterVec("step_failures_total",
			"Failed step attempts, by step and failure code and owner; a retryable one may be followed by a rerun.", "step", "code", "owner"),
		waits: counterVec("waits_total",
			"Waits the step runner slept for within their reason's budget, by step and reason.", "step", "reason"),
		waitSeconds: counterVec("wait_seconds_total",
			"Seconds the step runner slept for waits, by reason.", "reason"),
		waitExhausted: counterVec("wait_budget_exhausted_total",
			"Steps whose waits for a reason outgrew the reason's budget: the run fails with the reason's exhaustion failure instead of waiting on.",
			"step", "reason"),
		deliveries: counterVec("extension_deliveries_total",
			"Extension task deliveries, by stage, task type and status (succeeded, failed, skipped).", "stage", "task_type", "status"),
		deliveryLatency: histogramVec("extension_delivery_latency_seconds",
			"From an event's dispatch to a delivery's end (tasks before it, retries and waits included), for deliveries that ran.",
			LatencyBuckets, "stage", "task_type"),
		scheduleRuns: counterVec("schedule_runs_total",
			"Runs of a periodic job (Ironic projection, inventory exploration, firmware pass), by schedule.", "schedule"),
		scheduleLag: histogramVec("schedule_lag_seconds",
			"How late a scheduled run started after the time its schedule meant.", LagBuckets, "schedule"),
		scheduleLast: gaugeVec("schedule_last_run_timestamp_seconds",
			"Unix time of the schedule's last run this process saw, or of its declaration when it saw none.", "schedule"),
		scheduleInterval: gaugeVec("schedule_interval_seconds",
			"The schedule's declared interval.", "schedule"),
		workflow: newBounded(maxValues), phase: newBounded(maxValues), step: newBounded(maxValues),
		reason: newBounded(maxValues), schedule: newBounded(maxValues),
		now: time.Now,
	}
	for _, c := range []prometheus.Collector{w.runsStarted, w.runsFinished, w.runDuration, w.phaseDuration, w.stepDuration,
		w.stepFailures, w.waits, w.waitSeconds, w.waitExhausted, w.deliveries, w.deliveryLatency,
		w.scheduleRuns, w.scheduleLag, w.scheduleLast, w.scheduleInterval} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	w.zeroes()
	return w, nil
}

// zeroes creates, at zero, the series the alert rules read whose label
// values are known in advance: each workflow's starts, successes and
// failures by every declared code, and every stage's deliveries by task
// type and status. A counter series born at 1 shows no increase() in its
// first window: without these, the first failure of a code after a worker
// starts would not count towards its owner's failure rate.
func (w *Workflows) zeroes() {
	codes := hostforge.Codes()
	for _, wf := range []string{enrollment.Workflow, firmware.Workflow, extensions.Workflow} {
		wf = w.workflow.value(wf)
		w.runsStarted.WithLabelValues(wf)
		w.runsFinished.WithLabelValues(wf, OutcomeSucceeded, "", "")
		for _, c := range codes {
			w.runsFinished.WithLabelValues(wf, OutcomeFailed, c.Code, string(c.Owner))
		}
	}
	for _, st := range extensions.Stages() {
		for _, typ := range []extensions.TaskType{extensions.TaskWebhook, extensions.TaskSSH, extensions.TaskAnsible} {
			for _, status := range []extensions.ExecStatus{extensions.StatusSucceeded, extensions.StatusFailed, extensions.StatusSkipped} {
				w.deliveries.WithLabelValues(string(st), string(typ), string(status))
			}
		}
	}
}

// Observe counts one observation; kinds it does not know are ignored.
func (w *Workflows) Observe(o any) {
	switch o := o.(type) {
	case flow.StepAttempt:
		step := w.step.value(o.Step)
		w.stepDuration.WithLabelValues(step, outcomeLabel(o.Outcome)).Observe(o.Took.Seconds())
		if o.Failure != nil {
			code, owner := codeOwner(o.Failure)
			w.stepFailures.WithLabelValues(step, code, owner).Inc()
		}
	case flow.Waited:
		step, reason := w.step.value(o.Step), w.reason.value(o.Reason)
		w.waits.WithLabelValues(step, reason).Inc()
		w.waitSeconds.WithLabelValues(reason).Add(o.Sleep.Seconds())
		// The step's exhaustion series exists from its first wait, at
		// zero, so the alert's increase() sees the exhaustion that follows.
		w.waitExhausted.WithLabelValues(step, reason)
	case flow.WaitExhausted:
		w.waitExhausted.WithLabelValues(w.step.value(o.Step), w.reason.value(o.Reason)).Inc()
	case flow.RunStarted:
		w.runsStarted.WithLabelValues(w.workflow.value(o.Workflow)).Inc()
	case flow.RunEnded:
		wf := w.workflow.value(o.Workflow)
		outcome := OutcomeSucceeded
		if o.Failure != nil {
			outcome = OutcomeFailed
		}
		code, owner := codeOwner(o.Failure)
		w.runsFinished.WithLabelValues(wf, outcome, code, owner).Inc()
		w.runDuration.WithLabelValues(wf, outcome).Observe(o.Took.Seconds())
	case flow.PhaseEnded:
		w.phaseDuration.WithLabelValues(w.workflow.value(o.Workflow), w.phase.value(o.Phase), phaseStatus(o.Status)).Observe(o.Took.Seconds())
	case flow.ScheduleRun:
		s := w.schedule.value(o.Schedule)
		w.ran.Store(s, true)
		w.scheduleRuns.WithLabelValues(s).Inc()
		w.scheduleLag.WithLabelValues(s).Observe(o.Lag().Seconds())
		w.scheduleLast.WithLabelValues(s).Set(float64(o.Started.UnixNano()) / 1e9)
	case extensions.DeliveryEnded:
		stage, typ := stageLabel(o.Stage), taskTypeLabel(o.TaskType)
		w.deliveries.WithLabelValues(stage, typ, statusLabel(o.Status)).Inc()
		if o.Status != extensions.StatusSkipped {
			w.deliveryLatency.WithLabelValues(stage, typ).Observe(o.Latency.Seconds())
		}
	}
}

// phaseStatus is done or failed.
func phaseStatus(s string) string {
	if s == "done" || s == "failed" {
		return s
	}
	return Other
}

// DeclareSchedule declares a periodic job that runs every interval: its
// interval gauge, its run counter at zero and, until a run is seen, its
// last run at now, so "no run for three intervals" (the alert
// HostforgeScheduleStopped) counts from this process's start rather than
// from 1970. Whoever creates the schedules (every worker at start) calls
// it once per schedule; each run is reported with flow.ObserveScheduleRun
// from the scheduled body, or with Observe(flow.ScheduleRun{...}) by an
// in-process ticker.
func (w *Workflows) DeclareSchedule(schedule string, interval time.Duration) {
	s := w.schedule.value(schedule)
	w.scheduleInterval.WithLabelValues(s).Set(interval.Seconds())
	w.scheduleRuns.WithLabelValues(s)
	if _, ran := w.ran.Load(s); !ran {
		w.scheduleLast.WithLabelValues(s).Set(float64(w.now().UnixNano()) / 1e9)
	}
}
