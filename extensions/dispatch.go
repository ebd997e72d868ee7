package extensions

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions/nunjucks"
	"github.com/hostforge/hostforge/flow"
)

// Step names of extension dispatch.
const (
	StepPlan   = "extensions.plan"
	StepBegin  = "extensions.begin"
	StepRun    = "extensions.run"
	StepRecord = "extensions.record"
)

// The longest one attempt of each step may take (under Temporal, the
// activity timeout).
const (
	// storeAttempt: one store write; SQLite waits at most its 10 s busy
	// timeout, PostgreSQL answers a single-row upsert in well under a
	// minute or is unavailable.
	storeAttempt = 2 * time.Minute
	// MaxTaskAttempt bounds one task run: the longest task timeout a
	// definition may set (a long Ansible playbook), plus rendering. A task
	// is also bound by its own timeout and the stage deadline.
	MaxTaskAttempt = 7 * 24 * time.Hour
)

// maxMessage caps a recorded message.
const maxMessage = 16 << 10

// Dispatcher holds what the dispatch steps use: the registry, a runner per
// task type, the store, and the source of secret-bearing payloads. It is
// extension dispatch's flow.Steps: run Fire on a flow.Local over it, or
// register it with a Temporal worker. It is safe for concurrent use.
type Dispatcher struct {
	registry atomic.Pointer[Registry]
	// Runners runs tasks by type; a type without a runner fails its tasks
	// with EXTENSION_RUNNER_MISSING.
	Runners map[TaskType]Runner
	// Store keeps execution records and outputs.
	Store Store
	// Secrets gives opted-in tasks the payload with its secrets (nil: such
	// tasks get the payload without them).
	Secrets SecretSource
	// Strict renders templates in strict mode.
	Strict bool
	// Limits bound each render (the zero value: the defaults).
	Limits RenderLimits
	// Instances are the site's values of the extensions' inputs and
	// configVars (the config's extensions.instances), by extension name;
	// Vault reads the ones that are vault references, when a task runs.
	Instances Instances
	Vault     ItemReader
	// StageDeadline is the stage deadline of the events hostforge's own
	// sources fire (enrollment, NetBox, the Ironic projection);
	// DefaultStageDeadline when 0.
	StageDeadline time.Duration
	// Servers reads what a serverRegistered event maps, for
	// FireServerRegistered (nil: that body fails with
	// EXTENSION_RUNNER_CONFIG_INVALID when a task is bound to the stage).
	Servers ServerSource
	// Log receives a line per delivery (never a payload or a body).
	Log *slog.Logger

	once  sync.Once
	table *flow.Table
	cache payloadCache
}

// NewDispatcher returns a dispatcher over a registry.
func NewDispatcher(r *Registry, runners map[TaskType]Runner, store Store) *Dispatcher {
	d := &Dispatcher{Runners: runners, Store: store}
	d.SetRegistry(r)
	return d
}

// SetRegistry replaces the registry (a reload). Events already planned
// fail their tasks with EXTENSION_DEFINITION_CHANGED when their extension
// changed.
func (d *Dispatcher) SetRegistry(r *Registry) { d.registry.Store(r) }

// Registry returns the current registry.
func (d *Dispatcher) Registry() *Registry {
	if r := d.registry.Load(); r != nil {
		return r
	}
	empty, _ := NewRegistry()
	return empty
}

func (d *Dispatcher) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

var _ flow.Steps = (*Dispatcher)(nil)

func (d *Dispatcher) steps() *flow.Table {
	d.once.Do(func() {
		d.table = flow.MustTable(
			// The plan reads the in-memory registry and the event's
			// earlier records: one store query.
			flow.Bind(StepPlan, storeAttempt, d.Plan),
			flow.Bind(StepBegin, storeAttempt, d.Begin),
			flow.Bind(StepRun, MaxTaskAttempt, d.Run, flow.PerCall(runCallPolicy)),
			flow.Bind(StepRecord, storeAttempt, d.Record),
			flow.Bind(StepServerRegistered, sourceAttempt, d.ServerRegisteredEvent),
		)
	})
	return d.table
}

// Step returns the step registered under name.
func (d *Dispatcher) Step(name string) (flow.Step, bool) { return d.steps().Step(name) }

// StepNames lists the dispatch steps.
func (d *Dispatcher) StepNames() []string { return d.steps().StepNames() }

// Dispatch runs one dispatch step by name with its input and output as
// JSON (see flow.Dispatch): what an orchestrator's activity calls.
func (d *Dispatcher) Dispatch(ctx context.Context, step string, in []byte) ([]byte, error) {
	return flow.Dispatch(ctx, d, step, in)
}

// Local returns a flow.Local that runs the dispatch steps inline on clk.
func (d *Dispatcher) Local(clk clock.Clock) *flow.Local {
	return &flow.Local{Steps: d, Clock: clk, Log: d.log(), SubjectKey: "event"}
}

// PlanIn asks which tasks an event's stage fires.
type PlanIn struct {
	EventID string `json:"eventId"`
	Stage   Stage  `json:"stage"`
	// Redeliver is the event's Redeliver.
	Redeliver []string `json:"redeliver,omitempty"`
}

// PlannedTask is one task to run, identified without its options (which
// may hold credentials and so never travel through a workflow history).
type PlannedTask struct {
	Extension     string        `json:"extension"`
	Digest        string        `json:"digest"`
	Task          string        `json:"task"`
	TaskType      TaskType      `json:"taskType"`
	FailurePolicy FailurePolicy `json:"failurePolicy"`
	// Timeout is an SSH or Ansible task's own timeout (its default when
	// the task sets none): under Temporal, its run's bound and heartbeat.
	Timeout time.Duration `json:"timeout,omitempty"`
	// DeliveryID is the delivery this firing makes: DeliveryID(event,
	// extension, task), or a redelivery's RedeliveryID.
	DeliveryID string `json:"deliveryId"`
	// Earlier, when set, is the record of an earlier firing's delivery
	// that decides this one: a success (the task is reported skipped and
	// not contacted), or a delivery started and not finished (reported
	// interrupted, not run). See decide.
	Earlier *Execution `json:"earlier,omitempty"`
	// Abandoned is a delivery left started that a redelivery replaces:
	// it is recorded interrupted first.
	Abandoned *Execution `json:"abandoned,omitempty"`
	// Attempts are the runs earlier firings made of DeliveryID (a webhook
	// delivered again under its webhook-id): this firing's runs add to them.
	Attempts int `json:"attempts,omitempty"`
}

// PlanOut lists the tasks in dispatch order.
type PlanOut struct {
	Tasks []PlannedTask `json:"tasks"`
}

// Plan is the step that lists the tasks bound to the stage in active
// extensions — extensions by name, tasks in array order — and decides,
// from the event's earlier firings in the store, what this firing does
// with each (see decide): a re-fire runs only what has not succeeded.
func (d *Dispatcher) Plan(ctx context.Context, in PlanIn) (PlanOut, error) {
	var out PlanOut
	reg := d.Registry()
	if err := CheckRedeliver(reg, in.Stage, in.Redeliver); err != nil {
		return out, err
	}
	bound := reg.Tasks(in.Stage)
	if len(bound) == 0 {
		return out, nil
	}
	recs, err := d.earlierRecords(ctx, in.EventID)
	if err != nil {
		return out, err
	}
	for _, b := range bound {
		p := PlannedTask{Extension: b.Extension.Name, Digest: b.Extension.Digest,
			Task: b.Task.Label, TaskType: b.Task.TaskType, FailurePolicy: b.Task.Policy()}
		if p.TaskType.AtMostOnce() {
			p.Timeout = ownTimeout(b.Task)
		}
		decide(&p, recs, in.EventID, redelivers(in.Redeliver, b))
		out.Tasks = append(out.Tasks, p)
	}
	return out, nil
}

// RecordIn is an execution record to store.
type RecordIn struct {
	Execution Execution `json:"execution"`
}

// Begin is the step that records a delivery as running.
func (d *Dispatcher) Begin(ctx context.Context, in RecordIn) (struct{}, error) {
	return struct{}{}, d.Store.PutExecution(ctx, in.Execution)
}

// Record is the step that records how a delivery ended, and stores the
// outputs it produced.
func (d *Dispatcher) Record(ctx context.Context, in RecordIn) (struct{}, error) {
	e := in.Execution
	if err := d.Store.PutExecution(ctx, e); err != nil {
		return struct{}{}, err
	}
	if e.Status == StatusSucceeded && e.Outputs != nil {
		return struct{}{}, d.Store.PutOutputs(ctx, Outputs{Extension: e.Extension, Values: e.Outputs, DeliveryID: e.DeliveryID, UpdatedAt: e.FinishedAt})
	}
	return struct{}{}, nil
}

// RunIn is one task delivery to make.
type RunIn struct {
	Event      Event       `json:"event"`
	Task       PlannedTask `json:"task"`
	DeliveryID string      `json:"deliveryId"`
	// Deadline is the event's stage deadline.
	Deadline time.Time `json:"deadline"`
	// StartedAt is when dispatch took the delivery up (its record's start).
	StartedAt time.Time `json:"startedAt,omitzero"`
}

// RunOut is a successful delivery.
type RunOut struct {
	Message string          `json:"message,omitempty"`
	Outputs json.RawMessage `json:"outputs,omitempty"`
}

// Run is the step that renders one task and hands it to its runner. A
// failure's message has the payload's secrets scrubbed out. An SSH or
// Ansible task's delivery is recorded started just before its runner is
// called (startEffect), and a delivery found started already is not run
// again.
func (d *Dispatcher) Run(ctx context.Context, in RunIn) (RunOut, error) {
	x, ok := d.Registry().Extension(in.Task.Extension)
	if !ok || !x.Active() || x.Digest != in.Task.Digest {
		return RunOut{}, DefinitionChanged.New("extension %s changed or was removed after event %s was planned", in.Task.Extension, in.Event.ID)
	}
	t, ok := x.Task(in.Event.Stage, in.Task.Task)
	if !ok {
		return RunOut{}, DefinitionChanged.New("extension %s no longer has task %s in %s", x.Name, in.Task.Task, in.Event.Stage)
	}
	data, secrets, err := d.payload(ctx, in.Event, t.IncludeSecrets)
	if err != nil {
		return RunOut{}, err
	}
	sv, err := x.values(ctx, d.Instances[x.Name], d.Vault, false)
	if err != nil {
		return RunOut{}, err
	}
	secrets = append(sv.secrets, secrets...)
	body, vars, err := x.render(ctx, t, data, sv, RenderOptions{Strict: d.Strict, Limits: d.Limits})
	scrubber := x.deliverySecrets(secrets, t, body)
	if err != nil {
		return RunOut{}, scrubFailure(err, scrubber)
	}
	runner := d.Runners[t.TaskType]
	if runner == nil {
		return RunOut{}, RunnerMissing.New("no runner for %s is configured (extension %s, task %s)", t.TaskType, x.Name, t.Label)
	}
	req := Request{DeliveryID: in.DeliveryID, EventID: in.Event.ID, Stage: in.Event.Stage, Extension: x.Name,
		Task: t.Label, TaskType: t.TaskType, Deadline: in.Deadline, Webhook: t.webhook, SSH: t.ssh, Ansible: t.ansible,
		Assets: x.Definition.Assets, Source: x.Source, Body: body, Variables: vars,
		IncludesSecrets: x.receivesSecrets(t) || len(sv.secrets) > 0}
	if t.TaskType.AtMostOnce() {
		if err := d.startEffect(ctx, in); err != nil {
			return RunOut{}, err
		}
	}
	res, err := runner.Run(ctx, req)
	if err != nil {
		o, f, w := hostforge.Classify(err)
		if o == hostforge.Waiting {
			if t.TaskType.AtMostOnce() {
				d.unstart(ctx, in)
			}
			return RunOut{}, w
		}
		if f.Code == hostforge.Unclassified.Code {
			f = TaskFailed.Wrap(err, "extension %s task %s", x.Name, t.Label)
		}
		return RunOut{}, scrubFailure(f, scrubber)
	}
	out := RunOut{Message: capText(scrubber.Scrub(res.Message)), Outputs: res.Outputs}
	if res.Outputs != nil {
		if !json.Valid(res.Outputs) {
			return RunOut{}, TaskFailed.New("extension %s task %s returned outputs that are not JSON", x.Name, t.Label)
		}
		out.Outputs = json.RawMessage(scrubber.Scrub(string(res.Outputs)))
		if !json.Valid(out.Outputs) {
			out.Outputs = json.RawMessage(`{"redacted":"the outputs held a secret of the payload"}`)
		}
	}
	return out, nil
}

// payload parses the event's payload once per event and process, with its
// secrets when the task opted in and a SecretSource has them.
func (d *Dispatcher) payload(ctx context.Context, ev Event, withSecrets bool) (*payloadData, []string, error) {
	data, err := d.cache.get(ev)
	if err != nil {
		return nil, nil, err
	}
	if !ev.HasSecrets || d.Secrets == nil {
		return data, nil, nil
	}
	raw, ok, err := d.Secrets.EventPayload(ctx, ev.ID)
	if err != nil || !ok {
		if err == nil && withSecrets {
			d.log().Warn("secret payload unavailable; the task gets the payload without secrets", "event", ev.ID)
		}
		return data, nil, nil
	}
	full, err := newPayloadData(ev.Stage, raw)
	if err != nil {
		return nil, nil, err
	}
	secrets := secretValues(full.full)
	if !withSecrets {
		return data, secrets, nil
	}
	return full, secrets, nil
}

// scrubFailure returns a failure's message (with its cause) and detail
// scrubbed of the delivery's secrets.
func scrubFailure(err error, secrets *hostforge.Secrets) error {
	f, ok := hostforge.AsFailure(err)
	if !ok || secrets.Len() == 0 {
		return err
	}
	msg := f.Message
	if f.Cause != nil {
		msg += ": " + f.Cause.Error()
	}
	return &hostforge.Failure{Spec: f.Spec, Message: capText(secrets.Scrub(msg)), Detail: capText(secrets.Scrub(f.Detail))}
}

func capText(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage] + "… (truncated)"
}

// payloadCache keeps the last events' parsed payloads: every task of an
// event renders from one parse.
type payloadCache struct {
	mu      sync.Mutex
	entries [8]struct {
		id   string
		sum  uint64
		data *payloadData
	}
	next int
}

func (c *payloadCache) get(ev Event) (*payloadData, error) {
	h := fnv.New64a()
	h.Write(ev.Payload)
	sum := h.Sum64()
	c.mu.Lock()
	for _, e := range c.entries {
		if e.data != nil && e.id == ev.ID && e.sum == sum {
			c.mu.Unlock()
			return e.data, nil
		}
	}
	c.mu.Unlock()
	obj, err := parsePayload(ev.Stage, ev.Payload)
	if err != nil {
		return nil, err
	}
	red, _ := redact(obj) // an event's payload is clean already; a hand-built one may not be
	data := &payloadData{clean: red.(*nunjucks.Object)}
	c.mu.Lock()
	c.entries[c.next].id, c.entries[c.next].sum, c.entries[c.next].data = ev.ID, sum, data
	c.next = (c.next + 1) % len(c.entries)
	c.mu.Unlock()
	return data, nil
}

// Report is how an event's dispatch went.
type Report struct {
	EventID    string     `json:"eventId"`
	Stage      Stage      `json:"stage"`
	Deliveries []Delivery `json:"deliveries"`
}

// Delivery is what became of one task.
type Delivery struct {
	// EventID and Stage are the event the delivery belongs to (a body that
	// fires several events reports all their deliveries in one Report).
	EventID    string     `json:"eventId,omitempty"`
	Stage      Stage      `json:"stage,omitempty"`
	Extension  string     `json:"extension"`
	Task       string     `json:"task"`
	TaskType   TaskType   `json:"taskType"`
	DeliveryID string     `json:"deliveryId"`
	Status     ExecStatus `json:"status"`
	// Code is the failure code of a failed or skipped task.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Failed reports whether any task failed.
func (r Report) Failed() bool {
	for _, d := range r.Deliveries {
		if d.Status == StatusFailed {
			return true
		}
	}
	return false
}

// storePolicy reruns store and plan steps whose failure is retryable.
var storePolicy = flow.Policy{MaxAttempts: 5, Retry: hostforge.Backoff{First: 2 * time.Second, Max: time.Minute}}

// runPolicy lets a runner's waits sleep within the stage deadline; a
// failed delivery is not rerun by the dispatcher (the runner retries
// inside its task's timeout).
func runPolicy(budget time.Duration) flow.Policy {
	return flow.Policy{MaxAttempts: 1, DefaultWait: max(budget, time.Second)}
}

// Fire is extension dispatch: the workflow body that runs every task
// bound to the event's stage in the active extensions, extensions by name
// and tasks in array order, sequentially. Each task gets a delivery ID
// stable per (event, extension, task), is recorded as running, run, and
// recorded with its outcome. A task that fails with failurePolicy "fail"
// (the default) skips the rest of its extension's tasks for this event;
// "continue" goes on. A task that would start after the stage deadline is
// skipped. Firing an event again runs only what has not succeeded (see
// Plan); an SSH or Ansible delivery runs at most once. Fire returns the
// report; its error is set only when dispatch itself could not proceed
// (the store is unavailable), never because a task failed — see
// Report.Failed.
//
// The run and every delivery (DeliveryEnded) are reported to the runtime's
// observer (flow.ObserverOf).
func Fire(ctx context.Context, rt flow.Runtime, ev Event) (Report, error) {
	return observed(ctx, rt, func() (Report, error) { return fire(ctx, rt, ev) })
}

func fire(ctx context.Context, rt flow.Runtime, ev Event) (Report, error) {
	rep := Report{EventID: ev.ID, Stage: ev.Stage, Deliveries: []Delivery{}}
	if ev.ID == "" {
		return rep, EventInvalid.New("event without an ID (stage %s)", ev.Stage)
	}
	if !ev.Stage.Known() {
		return rep, EventInvalid.New("event %s: %s", ev.ID, stageProblem(string(ev.Stage)))
	}
	f := firing{rt: rt, ev: ev, store: flow.Runner{RT: rt, Policy: storePolicy}, stoppedBy: map[string]string{}}
	fired := rt.Now(ctx)
	f.deadline = fired.Add(ev.deadline())
	var plan PlanOut
	if err := f.store.Run(ctx, StepPlan, PlanIn{EventID: ev.ID, Stage: ev.Stage, Redeliver: ev.Redeliver}, &plan); err != nil {
		return rep, err
	}
	for _, p := range plan.Tasks {
		del, err := f.deliver(ctx, p)
		if err != nil {
			return rep, err
		}
		var latency time.Duration
		if del.Status != StatusSkipped {
			latency = rt.Now(ctx).Sub(fired)
		}
		observeDelivery(rt, ev.Stage, del, latency)
		rep.Deliveries = append(rep.Deliveries, del)
	}
	return rep, nil
}

// firing is one dispatch of an event, task by task.
type firing struct {
	rt       flow.Runtime
	ev       Event
	store    flow.Runner
	deadline time.Time
	// stoppedBy is, per extension, the task whose failure (with
	// failurePolicy fail) stops the extension's later tasks.
	stoppedBy map[string]string
}

// deliver makes one planned task's delivery, or reports why it is not
// made; its error is set only when dispatch cannot go on.
func (f *firing) deliver(ctx context.Context, p PlannedTask) (Delivery, error) {
	now := f.rt.Now(ctx)
	if p.Earlier != nil {
		// Decided by an earlier firing: never a new skip record, which
		// would replace the earlier delivery's own.
		del, err := earlierDelivery(ctx, f.store, p, now)
		f.failed(p, del)
		return del, err
	}
	if p.Abandoned != nil {
		if err := recordInterrupted(ctx, f.store, *p.Abandoned, now); err != nil {
			return Delivery{}, err
		}
	}
	if p.DeliveryID == "" {
		// A plan recorded before plans carried delivery IDs (a workflow
		// history from an earlier release).
		p.DeliveryID = DeliveryID(f.ev.ID, p.Extension, p.Task)
	}
	exec := Execution{DeliveryID: p.DeliveryID, EventID: f.ev.ID, Stage: f.ev.Stage, Extension: p.Extension, Task: p.Task, TaskType: p.TaskType, StartedAt: now, Attempts: p.Attempts}
	del := Delivery{EventID: f.ev.ID, Stage: f.ev.Stage, Extension: p.Extension, Task: p.Task, TaskType: p.TaskType, DeliveryID: p.DeliveryID}
	var skip *hostforge.Failure
	if by, ok := f.stoppedBy[p.Extension]; ok {
		skip = TaskFailed.New("not run: task %s of extension %s failed and its failurePolicy is fail", by, p.Extension)
	} else if !now.Before(f.deadline) {
		skip = StageDeadline.New("not run: the %s deadline of event %s passed at %s", f.ev.deadline(), f.ev.ID, f.deadline.UTC().Format(time.RFC3339))
	}
	if skip != nil {
		exec.Status, exec.FinishedAt, exec.Message = StatusSkipped, now, skip.Message
		del.Status, del.Code, del.Message = StatusSkipped, skip.Code, skip.Message
		return del, f.store.Run(ctx, StepRecord, RecordIn{Execution: exec}, nil)
	}
	exec.Status, exec.Attempts = StatusRunning, p.Attempts+1
	if err := f.store.Run(ctx, StepBegin, RecordIn{Execution: exec}, nil); err != nil {
		return del, err
	}
	out, calls, err := runTask(ctx, f.rt, RunIn{Event: f.ev, Task: p, DeliveryID: p.DeliveryID, Deadline: f.deadline, StartedAt: now}, f.deadline.Sub(now))
	exec.FinishedAt, exec.Attempts = f.rt.Now(ctx), p.Attempts+calls
	if err != nil {
		_, fl, _ := hostforge.Classify(err)
		if fl.Code == hostforge.Cancelled.Code {
			return del, fl
		}
		exec.Status, exec.Message = StatusFailed, failureText(fl)
		del.Status, del.Code, del.Message = StatusFailed, fl.Code, exec.Message
		f.failed(p, del)
	} else {
		exec.Status, exec.Message, exec.Outputs = StatusSucceeded, out.Message, out.Outputs
		del.Status, del.Message = StatusSucceeded, out.Message
	}
	return del, f.store.Run(ctx, StepRecord, RecordIn{Execution: exec}, nil)
}

// failed applies the failure policy of a task whose delivery failed.
func (f *firing) failed(p PlannedTask, del Delivery) {
	if del.Status == StatusFailed && p.FailurePolicy != FailContinue {
		if _, ok := f.stoppedBy[p.Extension]; !ok {
			f.stoppedBy[p.Extension] = p.Task
		}
	}
}

// failureText is a failed delivery's record: its code, message and
// cause, then the detail (the exchange with the receiver) that log lines
// leave out.
func failureText(f *hostforge.Failure) string {
	msg := f.Code + ": " + f.Message
	if f.Cause != nil {
		msg += ": " + f.Cause.Error()
	}
	if f.Detail != "" {
		msg += "\n" + f.Detail
	}
	return capText(msg)
}
