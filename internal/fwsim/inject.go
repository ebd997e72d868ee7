package fwsim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/ironic"
)

// The faults of a schedule strike the update steps' calls through
// wrappers around the store, the managed hosts and the BMC client, the
// way the enrollment fakes take theirs (fakes.Site.Inject, InjectLost,
// WithCrash): before the effect, the call fails and changes nothing; a
// lost answer lets the call take effect, then fails it; a crash kills the
// step attempt's worker once N of its writes took effect — the last one's
// answer never arrives and nothing of the attempt after it reaches any
// system, not even cleanup detached from the attempt's context.

// errCrashed is what a call of a dead worker's attempt returns.
var errCrashed = errors.New("fwsim: the worker running this attempt died")

// storeDown is what adapters/sqlstore returns for a database that does
// not answer (its STATE_STORE_UNAVAILABLE), which the core does not
// link; its code is accepted as classified.
var storeDown = &hostforge.Spec{Code: "STATE_STORE_UNAVAILABLE", Phase: "state", Owner: hostforge.OwnerInfraEng, Retryable: true,
	Action: "The state database did not answer: check it, then rerun."}

// hostErrors classify the managed hosts' errors as the Ironic adapter does.
var hostErrors = hostforge.SystemSpecs{Unavailable: ironic.Unavailable, Unauthorized: ironic.Unauthorized, Conflict: ironic.Rejected, Invalid: ironic.Rejected, NotFound: ironic.Rejected}

// classified is the error a real client of the system returns for the
// fault.
func classified(system, op string, k fleetsim.FaultKind) error {
	err := k.Err(system, op)
	switch system {
	case SysBMC:
		return firmware.BMCErrors.Classify(err, "firmware_update", "%s", op)
	case SysHosts:
		return hostErrors.Classify(err, "firmware_update", "%s", op)
	case SysStore:
		if k == fleetsim.FaultConflict {
			return firmware.StateConflict.Wrap(err, "firmware store: %s", op)
		}
		return storeDown.Wrap(err, "firmware store: %s", op)
	}
	return err
}

type armedFault struct {
	n    int
	kind fleetsim.FaultKind
	step string // "": any step's calls
}

type armedCrash struct {
	step  string
	after int
	held  bool
	spent bool
}

// injector holds a schedule's faults: pending until the fleet has run
// their AtStep steps, then armed until used up or cleared.
type injector struct {
	mu      sync.Mutex
	steps   int
	pending []ScheduleFault
	before  map[string][]*armedFault
	lost    map[string][]*armedFault
	crashes []*armedCrash
	// counts of what struck, and where: "<step> <before|lost|crash>"
	struck, lostTaken, tripped int
	where                      map[string]int
}

func newInjector(fs []ScheduleFault) *injector {
	return &injector{pending: append([]ScheduleFault(nil), fs...), before: map[string][]*armedFault{}, lost: map[string][]*armedFault{}, where: map[string]int{}}
}

// step counts one step of the fleet and arms the faults now due.
func (in *injector) step() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.steps++
	keep := in.pending[:0]
	for _, f := range in.pending {
		if f.AtStep > in.steps {
			keep = append(keep, f)
			continue
		}
		switch {
		case f.Kind == fleetsim.FaultCrash:
			in.crashes = append(in.crashes, &armedCrash{step: f.Op, after: f.N})
		case f.Kind.Lost():
			k := f.System + "/" + f.Op
			in.lost[k] = append(in.lost[k], &armedFault{n: f.N, kind: f.Kind, step: f.Step})
		default:
			k := f.System + "/" + f.Op
			in.before[k] = append(in.before[k], &armedFault{n: f.N, kind: f.Kind, step: f.Step})
		}
	}
	in.pending = keep
}

// clear withdraws every fault, armed or not.
func (in *injector) clear() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.pending, in.crashes = nil, nil
	in.before, in.lost = map[string][]*armedFault{}, map[string][]*armedFault{}
}

// takeLocked consumes one injection matching the call of step.
func (in *injector) takeLocked(m map[string][]*armedFault, step, system, op string) (fleetsim.FaultKind, bool) {
	for _, key := range []string{system + "/" + op, system + "/*"} {
		for _, f := range m[key] {
			if f.n > 0 && (f.step == "" || f.step == step) {
				f.n--
				return f.kind, true
			}
		}
	}
	return "", false
}

// enter starts a call: a dead worker's call never reaches the system;
// otherwise the before-effect fault (and, on a read, the lost one) is
// taken.
func (in *injector) enter(ctx context.Context, system, op string, write bool) error {
	if c := crashOf(ctx); c != nil && c.dead() {
		return fmt.Errorf("%s %s: %w", system, op, errCrashed)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	step := stepOf(ctx)
	if k, ok := in.takeLocked(in.before, step, system, op); ok {
		in.struck++
		in.where[step+" before"]++
		return classified(system, op, k)
	}
	if !write {
		if k, ok := in.takeLocked(in.lost, step, system, op); ok {
			in.struck++
			in.where[step+" before"]++
			return classified(system, op, k)
		}
	}
	return nil
}

type stepKey struct{}

// stepOf is the step whose attempt makes the call.
func stepOf(ctx context.Context) string {
	s, _ := ctx.Value(stepKey{}).(string)
	return s
}

// answer ends a write that took effect (*err == nil): it counts against
// the attempt's crash, then takes a lost-answer fault.
func (in *injector) answer(ctx context.Context, system, op string, err *error) {
	if *err != nil {
		return
	}
	if c := crashOf(ctx); c != nil {
		if cerr := c.wrote(system, op); cerr != nil {
			*err = cerr
			return
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	step := stepOf(ctx)
	if k, ok := in.takeLocked(in.lost, step, system, op); ok {
		in.struck++
		in.lostTaken++
		in.where[step+" lost"]++
		*err = classified(system, op, k)
	}
}

// takeCrash hands an armed crash to an attempt of step.
func (in *injector) takeCrash(step string) *armedCrash {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, a := range in.crashes {
		if !a.held && !a.spent && (a.step == "*" || a.step == step) {
			a.held = true
			return a
		}
	}
	return nil
}

func (in *injector) endCrash(step string, a *armedCrash, c *crash) {
	in.mu.Lock()
	defer in.mu.Unlock()
	a.held = false
	if c.dead() {
		a.spent = true
		in.tripped++
		in.where[step+" crash"]++
	}
}

// crash is one step attempt's worker, dying once after writes took effect.
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

func (c *crash) dead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tripped
}

func (c *crash) wrote(system, op string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tripped {
		return fmt.Errorf("%s %s: %w", system, op, errCrashed)
	}
	c.writes++
	if c.writes >= c.after {
		c.tripped = true
		return fmt.Errorf("%s %s: the answer never arrived: %w", system, op, errCrashed)
	}
	return nil
}

// crashRuntime runs each step attempt the injector arms a crash for with
// a worker that dies after the armed number of writes. A dead worker's
// attempt returns nothing: whatever the step made of it is dropped, and
// after fleetsim.WorkerLossDelay (Temporal's heartbeat timeout) the same
// attempt runs again with the same input — the workflow resumes from its
// last durable point, as under Temporal when a worker dies.
type crashRuntime struct {
	flow.Runtime
	in *injector
}

func (r crashRuntime) Do(ctx context.Context, step string, in, out any) error {
	ctx = context.WithValue(ctx, stepKey{}, step)
	for {
		a := r.in.takeCrash(step)
		if a == nil {
			return r.Runtime.Do(ctx, step, in, out)
		}
		c := &crash{after: a.after}
		cctx, cancel := context.WithCancel(context.WithValue(ctx, crashKey{}, c))
		err := r.Runtime.Do(cctx, step, in, out)
		cancel()
		r.in.endCrash(step, a, c)
		if !c.dead() {
			return err
		}
		if err := r.Runtime.Sleep(ctx, fleetsim.WorkerLossDelay); err != nil {
			return err
		}
	}
}

// schedStore is the store as the update steps see it under the schedule.
type schedStore struct {
	firmware.Store
	in *injector
}

func call[T any](ctx context.Context, in *injector, system, op string, write bool, fn func() (T, error)) (T, error) {
	var zero T
	if err := in.enter(ctx, system, op, write); err != nil {
		return zero, err
	}
	v, err := fn()
	if write {
		in.answer(ctx, system, op, &err)
	}
	if err != nil {
		return zero, err
	}
	return v, nil
}

func call0(ctx context.Context, in *injector, system, op string, write bool, fn func() error) error {
	_, err := call(ctx, in, system, op, write, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}

func (s *schedStore) Update(ctx context.Context, m string) (firmware.HostUpdate, bool, error) {
	var ok bool
	u, err := call(ctx, s.in, SysStore, "Update", false, func() (firmware.HostUpdate, error) {
		u, found, err := s.Store.Update(ctx, m)
		ok = found
		return u, err
	})
	return u, ok && err == nil, err
}

func (s *schedStore) PutUpdate(ctx context.Context, u firmware.HostUpdate) (firmware.HostUpdate, error) {
	return call(ctx, s.in, SysStore, "PutUpdate", true, func() (firmware.HostUpdate, error) { return s.Store.PutUpdate(ctx, u) })
}

func (s *schedStore) Request(ctx context.Context, m string) (firmware.Request, bool, error) {
	var ok bool
	r, err := call(ctx, s.in, SysStore, "Request", false, func() (firmware.Request, error) {
		r, found, err := s.Store.Request(ctx, m)
		ok = found
		return r, err
	})
	return r, ok && err == nil, err
}

func (s *schedStore) PatchRequest(ctx context.Context, m string, p firmware.RequestPatch) (firmware.Request, error) {
	return call(ctx, s.in, SysStore, "PatchRequest", true, func() (firmware.Request, error) { return s.Store.PatchRequest(ctx, m, p) })
}

func (s *schedStore) Complete(ctx context.Context, m string, h *firmware.UpdateHistory) error {
	return call0(ctx, s.in, SysStore, "Complete", true, func() error { return s.Store.Complete(ctx, m, h) })
}

func (s *schedStore) Observed(ctx context.Context, m string) (firmware.Observed, bool, error) {
	var ok bool
	o, err := call(ctx, s.in, SysStore, "Observed", false, func() (firmware.Observed, error) {
		o, found, err := s.Store.Observed(ctx, m)
		ok = found
		return o, err
	})
	return o, ok && err == nil, err
}

func (s *schedStore) PutObserved(ctx context.Context, o firmware.Observed) error {
	return call0(ctx, s.in, SysStore, "PutObserved", true, func() error { return s.Store.PutObserved(ctx, o) })
}

func (s *schedStore) Overrides(ctx context.Context) ([]firmware.Override, error) {
	return call(ctx, s.in, SysStore, "Overrides", false, func() ([]firmware.Override, error) { return s.Store.Overrides(ctx) })
}

func (s *schedStore) PutResult(ctx context.Context, r firmware.Result) (firmware.Result, error) {
	return call(ctx, s.in, SysStore, "PutResult", true, func() (firmware.Result, error) { return s.Store.PutResult(ctx, r) })
}

func (s *schedStore) Result(ctx context.Context, m, id string) (firmware.Result, bool, error) {
	var ok bool
	r, err := call(ctx, s.in, SysStore, "Result", false, func() (firmware.Result, error) {
		r, found, err := s.Store.Result(ctx, m, id)
		ok = found
		return r, err
	})
	return r, ok && err == nil, err
}

func (s *schedStore) PutPush(ctx context.Context, p firmware.Push) (firmware.Push, error) {
	return call(ctx, s.in, SysStore, "PutPush", true, func() (firmware.Push, error) { return s.Store.PutPush(ctx, p) })
}

func (s *schedStore) Pushes(ctx context.Context, m string) ([]firmware.Push, error) {
	return call(ctx, s.in, SysStore, "Pushes", false, func() ([]firmware.Push, error) { return s.Store.Pushes(ctx, m) })
}

func (s *schedStore) AcquireUploadSlot(ctx context.Context, holder string, max int, now time.Time, lease time.Duration) (bool, error) {
	return call(ctx, s.in, SysStore, "AcquireUploadSlot", true, func() (bool, error) {
		return s.Store.AcquireUploadSlot(ctx, holder, max, now, lease)
	})
}

func (s *schedStore) ReleaseUploadSlot(ctx context.Context, holder string) error {
	return call0(ctx, s.in, SysStore, "ReleaseUploadSlot", true, func() error { return s.Store.ReleaseUploadSlot(ctx, holder) })
}

// schedHosts is the managed hosts as the update steps see them.
type schedHosts struct {
	firmware.Hosts
	in *injector
}

func (h *schedHosts) Get(ctx context.Context, m string) (firmware.Host, bool, error) {
	var ok bool
	x, err := call(ctx, h.in, SysHosts, "Get", false, func() (firmware.Host, error) {
		x, found, err := h.Hosts.Get(ctx, m)
		ok = found
		return x, err
	})
	return x, ok && err == nil, err
}

func (h *schedHosts) SetUpdateReport(ctx context.Context, m, reason string) error {
	return call0(ctx, h.in, SysHosts, "SetUpdateReport", true, func() error { return h.Hosts.SetUpdateReport(ctx, m, reason) })
}

func (h *schedHosts) ClearUpdateReport(ctx context.Context, m string) error {
	return call0(ctx, h.in, SysHosts, "ClearUpdateReport", true, func() error { return h.Hosts.ClearUpdateReport(ctx, m) })
}

// schedBMC is the BMC client as the update steps see it. It also reports
// every call to the checker (watch), which holds the invariants of pushes
// and resets against what the fake BMCs took.
type schedBMC struct {
	firmware.BMCClient
	in    *injector
	watch *watch
}

func (b *schedBMC) Inventory(ctx context.Context, m string) (firmware.Inventory, error) {
	return call(ctx, b.in, SysBMC, "inventory", false, func() (firmware.Inventory, error) { return b.BMCClient.Inventory(ctx, m) })
}

func (b *schedBMC) Task(ctx context.Context, m, id string) (firmware.Task, error) {
	return call(ctx, b.in, SysBMC, "task", false, func() (firmware.Task, error) { return b.BMCClient.Task(ctx, m, id) })
}

func (b *schedBMC) Tasks(ctx context.Context, m string) (firmware.TaskList, error) {
	return call(ctx, b.in, SysBMC, "tasks", false, func() (firmware.TaskList, error) { return b.BMCClient.Tasks(ctx, m) })
}

func (b *schedBMC) ResetStatus(ctx context.Context, m string) (firmware.ResetStatus, error) {
	return call(ctx, b.in, SysBMC, "reset_status", false, func() (firmware.ResetStatus, error) { return b.BMCClient.ResetStatus(ctx, m) })
}

func (b *schedBMC) Lockdown(ctx context.Context, m string) (firmware.LockdownState, error) {
	return call(ctx, b.in, SysBMC, "lockdown_status", false, func() (firmware.LockdownState, error) { return b.BMCClient.Lockdown(ctx, m) })
}

func (b *schedBMC) SetLockdown(ctx context.Context, m string, on bool) error {
	return call0(ctx, b.in, SysBMC, "lockdown", true, func() error { return b.BMCClient.SetLockdown(ctx, m, on) })
}

func (b *schedBMC) Upload(ctx context.Context, m string, u firmware.UploadRequest) (string, error) {
	return call(ctx, b.in, SysBMC, "upload", true, func() (string, error) {
		done := b.watch.uploading(ctx, m, u)
		id, err := b.BMCClient.Upload(ctx, m, u)
		done()
		return id, err
	})
}

func (b *schedBMC) Reset(ctx context.Context, m string, k firmware.ResetKind) error {
	return call0(ctx, b.in, SysBMC, "reset", true, func() error {
		done := b.watch.resetting(ctx, m, k)
		err := b.BMCClient.Reset(ctx, m, k)
		done()
		return err
	})
}
