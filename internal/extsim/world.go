package extsim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/ansible"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/webhook"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/internal/fleetsim"
)

// WorkerLossDelay is how long the runtime takes to notice a lost worker
// and start the call again: Temporal's heartbeat timeout.
const WorkerLossDelay = time.Minute

// errCrashed is what a call of a crashed attempt returns: the worker
// running it died. The runtime drops whatever such an attempt returned.
var errCrashed = errors.New("the worker running this attempt died")

// effect is one run of a task against its target: a webhook received, a
// command run, a playbook played.
type effect struct {
	Delivery string
	// WebhookID is the webhook-id header a webhook carried.
	WebhookID string
	Extension string
	Task      string
	Type      extensions.TaskType
	// Firing is the firing it happened in.
	Firing int
}

// world is one schedule's systems: the store and the targets, with the
// schedule's faults, and the record of every effect.
type world struct {
	sched  Schedule
	faults *faults
	clk    *clock.Fake

	mu      sync.Mutex
	effects []effect
	firing  int
	crashes int
}

// faults holds the schedule's faults: armed once the dispatch has run
// their AtStep steps, then taken by the calls they match.
type faults struct {
	mu      sync.Mutex
	pending []fleetsim.Fault
	armed   []*armedFault
	steps   int
}

type armedFault struct {
	fleetsim.Fault
	left  int
	held  bool // a crash handed to an attempt
	spent bool
}

// step counts a step call and arms the faults due.
func (f *faults) step() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps++
	kept := f.pending[:0]
	for _, p := range f.pending {
		if p.AtStep <= f.steps {
			f.armed = append(f.armed, &armedFault{Fault: p, left: p.N})
		} else {
			kept = append(kept, p)
		}
	}
	f.pending = kept
}

// clear withdraws every fault, armed or not.
func (f *faults) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending, f.armed = nil, nil
}

// take consumes one call fault of system/op: a before-the-effect one, or
// (lost) one that strikes after it.
func (f *faults) take(system, op string, lost bool) (fleetsim.FaultKind, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.armed {
		if a.Kind == fleetsim.FaultCrash || a.left <= 0 || a.System != system || (a.Op != "*" && a.Op != op) || a.Kind.Lost() != lost {
			continue
		}
		a.left--
		return a.Kind, true
	}
	return "", false
}

// takeCrash hands an armed crash to an attempt of step.
func (f *faults) takeCrash(step string) *armedFault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range f.armed {
		if a.Kind == fleetsim.FaultCrash && !a.held && !a.spent && (a.Op == "*" || a.Op == step) {
			a.held = true
			return a
		}
	}
	return nil
}

// crash is one attempt's worker, dying once its N-th write took effect.
type crash struct {
	mu      sync.Mutex
	after   int
	writes  int
	tripped bool
}

type crashKey struct{}

func crashOf(ctx context.Context) *crash {
	c, _ := ctx.Value(crashKey{}).(*crash)
	return c
}

// refuse fails every call of a dead worker.
func (c *crash) refuse() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tripped {
		return errCrashed
	}
	return nil
}

// wrote counts a write that took effect: the one that reaches the limit
// kills the worker before its answer arrives.
func (c *crash) wrote() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tripped {
		return errCrashed
	}
	c.writes++
	if c.writes >= c.after {
		c.tripped = true
		return errCrashed
	}
	return nil
}

func (c *crash) dead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tripped
}

// storeErr is what the SQL store returns for a fault: it reports every
// failure as the state store being unavailable, retryable.
func storeErr(k fleetsim.FaultKind, op string) error {
	return sqlstore.Unavailable.Wrap(k.Err(SysStore, op), "injected")
}

// faultStore is the execution store with the schedule's faults and
// crashes.
type faultStore struct {
	extensions.Store
	w *world
}

// enter starts a store call: a dead worker's call never arrives; a
// before-the-effect fault fails it.
func (s faultStore) enter(ctx context.Context, op string) error {
	if err := crashOf(ctx).refuse(); err != nil {
		return err
	}
	if k, ok := s.w.faults.take(SysStore, op, false); ok {
		return storeErr(k, op)
	}
	return nil
}

// answer ends a write that took effect: the worker may die before the
// answer arrives, or the answer may be lost.
func (s faultStore) answer(ctx context.Context, op string) error {
	if err := crashOf(ctx).wrote(); err != nil {
		return err
	}
	if k, ok := s.w.faults.take(SysStore, op, true); ok {
		return storeErr(k, op)
	}
	return nil
}

func (s faultStore) PutExecution(ctx context.Context, e extensions.Execution) error {
	if err := s.enter(ctx, "put"); err != nil {
		return err
	}
	if err := s.Store.PutExecution(ctx, e); err != nil {
		return err
	}
	return s.answer(ctx, "put")
}

func (s faultStore) PutOutputs(ctx context.Context, o extensions.Outputs) error {
	if err := s.enter(ctx, "put"); err != nil {
		return err
	}
	if err := s.Store.PutOutputs(ctx, o); err != nil {
		return err
	}
	return s.answer(ctx, "put")
}

func (s faultStore) StartDelivery(ctx context.Context, e extensions.Execution) (extensions.Execution, bool, error) {
	if err := s.enter(ctx, "start"); err != nil {
		return extensions.Execution{}, false, err
	}
	prior, ok, err := s.Store.StartDelivery(ctx, e)
	if err != nil || !ok {
		return prior, ok, err
	}
	return prior, ok, s.answer(ctx, "start")
}

func (s faultStore) Executions(ctx context.Context, q extensions.Query) ([]extensions.Execution, error) {
	if err := s.enter(ctx, "query"); err != nil {
		return nil, err
	}
	return s.Store.Executions(ctx, q)
}

// runnerFault is what a target's fault does to a run: whether the effect
// happens first, and the failure the real runner reports for it.
func runnerFault(system string, k fleetsim.FaultKind) (applied bool, err error) {
	cause := k.Err(system, "run")
	switch system {
	case SysWebhook:
		switch k {
		case fleetsim.FaultUnauthorized, fleetsim.FaultInvalid, fleetsim.FaultConflict, fleetsim.FaultNotFound:
			return false, webhook.Rejected.Wrap(cause, "injected: the receiver refused the delivery")
		}
		return k.Lost(), webhook.Unavailable.Wrap(cause, "injected")
	case SysSSH:
		switch k {
		case fleetsim.FaultUnauthorized:
			return false, ssh.SSHAuth.Wrap(cause, "injected: the login was refused")
		case fleetsim.FaultInvalid, fleetsim.FaultConflict, fleetsim.FaultNotFound:
			return true, ssh.SSHCommandFailed.Wrap(cause, "injected: exit 1")
		}
		if k.Lost() {
			return true, ssh.SSHUnreachable.Wrap(cause, "injected: the session broke while the command ran")
		}
		return false, ssh.SSHUnreachable.Wrap(cause, "injected")
	default:
		switch k {
		case fleetsim.FaultInvalid, fleetsim.FaultConflict:
			return true, ansible.PlaybookFailed.Wrap(cause, "injected: exit 2")
		}
		if k.Lost() {
			return true, extensions.TaskTimeout.Wrap(cause, "injected: the playbook was killed at its timeout")
		}
		return false, ansible.AssetUnavailable.Wrap(cause, "injected: the bundle could not be fetched")
	}
}

var runnerOps = map[string]string{SysWebhook: "deliver", SysSSH: "exec", SysAnsible: "play"}

// target is a task type's target system behind its runner: it records
// each run's effect, with the schedule's faults and crashes.
func (w *world) target(system string) extensions.Runner {
	op := runnerOps[system]
	return extensions.RunnerFunc(func(ctx context.Context, req extensions.Request) (extensions.Result, error) {
		if err := crashOf(ctx).refuse(); err != nil {
			return extensions.Result{}, err
		}
		if k, ok := w.faults.take(system, op, false); ok {
			applied, err := runnerFault(system, k)
			if applied {
				w.effect(req)
			}
			return extensions.Result{}, err
		}
		w.effect(req)
		if err := crashOf(ctx).wrote(); err != nil {
			return extensions.Result{}, err
		}
		if k, ok := w.faults.take(system, op, true); ok {
			_, err := runnerFault(system, k)
			return extensions.Result{}, err
		}
		return extensions.Result{Message: system + " ok"}, nil
	})
}

func (w *world) effect(req extensions.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := effect{Delivery: req.DeliveryID, Extension: req.Extension, Task: req.Task, Type: req.TaskType, Firing: w.firing}
	if req.TaskType == extensions.TaskWebhook {
		e.WebhookID = req.DeliveryID // the webhook runner's webhook-id header
	}
	w.effects = append(w.effects, e)
}

// processDied is what a local runtime's call returns once the process
// running the dispatch died: the dispatch stops, and is fired again.
var processDied = hostforge.Cancelled.New("the process running the dispatch died")

// runtime is flow.Local with a remote runtime's worker loss: an attempt
// with an armed crash dies after its N-th write, and its result is
// dropped. Under Temporal the call is started again after
// WorkerLossDelay — unless its call policy says at most once, when the
// body hears flow.AttemptLost; locally, the process died.
type runtime struct {
	local *flow.Local
	steps flow.Steps
	w     *world
	died  bool
}

func (r *runtime) Do(ctx context.Context, step string, in, out any) error {
	if r.died {
		return processDied
	}
	r.w.faults.step()
	for {
		a := r.w.faults.takeCrash(step)
		if a == nil {
			return r.local.Do(ctx, step, in, out)
		}
		c := &crash{after: a.N}
		err := r.local.Do(context.WithValue(ctx, crashKey{}, c), step, in, out)
		r.w.faults.mu.Lock()
		a.held, a.spent = false, c.dead()
		r.w.faults.mu.Unlock()
		if !c.dead() {
			return err
		}
		r.w.mu.Lock()
		r.w.crashes++
		r.w.mu.Unlock()
		if r.w.sched.Local {
			r.died = true
			return processDied
		}
		if st, ok := r.steps.Step(step); ok && st.Policy(in).AtMostOnce {
			return flow.AttemptLost.New("step %s lost its worker (injected crash) and was not started again", step)
		}
		if err := r.local.Sleep(ctx, WorkerLossDelay); err != nil {
			return err
		}
	}
}

func (r *runtime) Sleep(ctx context.Context, d time.Duration) error { return r.local.Sleep(ctx, d) }

func (r *runtime) Now(ctx context.Context) time.Time { return r.local.Now(ctx) }

// definition is an ExtSpec as a MetalSoft definition: every task bound
// to serverRegistered.
func definition(x ExtSpec) []byte {
	var ts []string
	for _, t := range x.Tasks {
		policy := "fail"
		if t.Continue {
			policy = "continue"
		}
		var opts string
		switch t.Type {
		case extensions.TaskWebhook:
			opts = `"options": {"endpoint": "https://hooks.example.com/` + t.Label + `", "method": "POST", "requestTemplate": "{{ server.serialNumber | dump }}"}`
		case extensions.TaskSSH:
			opts = `"options": {"host": "10.0.0.9", "port": 22, "timeout": 10, "commandTemplate": "register {{ server.serialNumber | shellquote }}"}`
		default:
			opts = `"options": {"asset": "bundle", "playbook": "site.yml", "executionTimeout": 600}`
		}
		ts = append(ts, fmt.Sprintf(`{"label": %q, "taskType": %q, "failurePolicy": %q, %s}`, t.Label, t.Type, policy, opts))
	}
	return []byte(fmt.Sprintf(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": %q, "label": %q, "extensionType": "workflow",
 "vendor": "hostforge", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [],
 "assets": [{"label": "bundle", "name": "bundle", "assetType": "AnsibleBundle", "url": "https://example.com/bundle.zip",
  "sha256": "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"}],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [%s]}]}`, x.Name, x.Name, strings.Join(ts, ", ")))
}

// parsed caches parsed definitions: schedules draw from few shapes.
var parsed sync.Map // definition JSON → *extensions.Extension

func extension(x ExtSpec) (*extensions.Extension, error) {
	b := definition(x)
	if v, ok := parsed.Load(string(b)); ok {
		return v.(*extensions.Extension), nil
	}
	e, ps := extensions.Parse(b, x.Name+".json")
	if e == nil {
		return nil, ps.Err(x.Name)
	}
	parsed.Store(string(b), e)
	return e, nil
}

// newStore is the in-memory execution store, which passes the same
// contract suite as the SQL store.
func newStore() extensions.Store { return extensionsfake.NewStore() }
