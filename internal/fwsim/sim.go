package fwsim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
)

var errBusy = fmt.Errorf("fake BMC answered 503 Service Unavailable: %w", hostforge.ErrUnavailable)

// Config sizes and seeds a simulated fleet.
type Config struct {
	Hosts int    `json:"hosts"`
	Seed  uint64 `json:"seed"`
	// Shares of hosts: drifted, assigned to a tenant, in maintenance at
	// the start, faulty (of the drifted ones), with autoupdate disabled by
	// an override for a while.
	Drifted     float64 `json:"drifted"`
	Assigned    float64 `json:"assigned"`
	Maintenance float64 `json:"maintenance"`
	Faulty      float64 `json:"faulty"`
	PolicyOff   float64 `json:"policy_off"`
	// CeilingPercent is max_concurrent_machine_updates_percent (the
	// absolute ceiling is unset).
	CeilingPercent int `json:"ceiling_percent"`
	// Restarts is how many worker restarts happen at random ticks.
	Restarts int `json:"restarts"`
	// CrashRate is the chance that a BMC action is followed by the worker
	// dying before it persists the outcome; StoreFaultRate the chance a
	// store write fails transiently.
	CrashRate      float64 `json:"crash_rate"`
	StoreFaultRate float64 `json:"store_fault_rate"`
	// CatalogChangeAt is when an operator sets a new default of the Dell
	// R750's bmc by a runtime override (0: never): every R750, compliant
	// or not, drifts again and is updated again.
	CatalogChangeAt time.Duration `json:"catalog_change_at,omitempty"`
	// Cancellations is the share of drifted hosts whose update an operator
	// cancels while it runs: the host is handed back, selected again by a
	// later pass and brought to compliance.
	Cancellations float64 `json:"cancellations,omitempty"`
	// Horizon bounds the virtual time (default 10 days).
	Horizon time.Duration `json:"horizon"`
	// NoTickChecks checks the invariants only at the end.
	NoTickChecks bool `json:"no_tick_checks,omitempty"`
	// WrapHosts, when set, changes what the worker (its manager and
	// steps) sees of the managed hosts: the checker's own tests plant a
	// lying view with it and expect to see the broken promise caught.
	WrapHosts func(firmware.Hosts) firmware.Hosts `json:"-"`
	// WrapCatalog, likewise, changes the worker's catalog.
	WrapCatalog func(*firmware.Catalog) *firmware.Catalog `json:"-"`
	// Wall is the clock the run's wall time is measured on (default the
	// real clock).
	Wall clock.Clock `json:"-"`
	// Store, when set, builds the state store (default MemStore); reopen
	// is called at every worker restart and returns the store to use after
	// it (a SQL store reopens its database).
	Store func() (s firmware.Store, reopen func() (firmware.Store, error), err error) `json:"-"`
}

// DefaultConfig is the benchmark's fleet: 40 % drifted, 20 % assigned, 2 %
// in maintenance, 3 % of the drifted faulty, 1 % held back by policy, a
// ceiling of 5 %, three worker restarts and a few crashes, a catalog
// change at 20 h (a new R750 bmc default) and 2 % of the drifted hosts'
// updates cancelled while they run.
func DefaultConfig(hosts int, seed uint64) Config {
	return Config{Hosts: hosts, Seed: seed, Drifted: 0.4, Assigned: 0.2, Maintenance: 0.02, Faulty: 0.03, PolicyOff: 0.01,
		CeilingPercent: 5, Restarts: 3, CrashRate: 0.002, StoreFaultRate: 0.001, CatalogChangeAt: 20 * time.Hour, Cancellations: 0.02}
}

// Settings are the site settings the simulation runs with.
func (c Config) Settings() firmware.Settings {
	pct := c.CeilingPercent
	return firmware.Settings{
		AutoUpdate:               true,
		MaxConcurrentPercent:     &pct,
		InstanceAutorebootPeriod: &firmware.Period{Start: clock.Epoch.Add(30 * time.Hour), End: clock.Epoch.Add(40 * time.Hour)},
		MaxUploads:               32,
	}
}

type eventKind int

const (
	evPass eventKind = iota
	evWake
	evApprove
	evRelease
	evWindow
	evPolicyOn
	evRestart
	evObserve
	evCatalog
	evCancel
)

type event struct {
	at      time.Time
	seq     uint64
	kind    eventKind
	machine string
	index   int
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i]; q[i].index, q[j].index = i, j }
func (q *eventQueue) Push(x any)   { e := x.(*event); e.index = len(*q); *q = append(*q, e) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// Sim is one simulated fleet.
type Sim struct {
	cfg      Config
	settings firmware.Settings
	clk      *clock.Fake
	start    time.Time
	rng      *rand.Rand

	Hosts   []Host
	byName  map[string]*Host
	store   *faultStore
	reopen  func() (firmware.Store, error)
	hosts   *firmwarefake.Hosts
	bmcs    *firmwarefake.BMCs
	scout   *firmwarefake.Scout
	scripts *firmwarefake.Scripts
	cat     *firmware.Catalog
	// eff is the effective catalog: cat with the operator's overrides.
	eff *firmware.Catalog

	exec  *firmware.Executor
	steps *flow.Table
	mgr   *firmware.Manager

	q       eventQueue
	seq     uint64
	waking  map[string]bool // a wake is scheduled
	started map[string]bool // the request's start was checked
	final   map[string]string
	// finalAt is when a host's update ended; a request created after it
	// is a new update (the catalog changed, an update was cancelled).
	finalAt map[string]time.Time
	// cancelAt is how long after its start an operator cancels a host's
	// update; cancelled marks those scheduled.
	cancelAt  map[string]time.Duration
	cancelled map[string]bool

	rep *Report
	chk *checker
}

// Build builds the fleet and its fake world.
func Build(c Config) (*Sim, error) {
	if c.Hosts < 1 {
		return nil, fmt.Errorf("fwsim: %d hosts", c.Hosts)
	}
	if c.Horizon <= 0 {
		c.Horizon = 10 * 24 * time.Hour
	}
	s := &Sim{cfg: c, settings: c.Settings().WithDefaults(), clk: clock.NewFake(clock.Epoch), start: clock.Epoch,
		rng: rand.New(rand.NewPCG(c.Seed, 0x73696d)), byName: map[string]*Host{}, waking: map[string]bool{}, started: map[string]bool{}, final: map[string]string{},
		finalAt: map[string]time.Time{}, cancelAt: map[string]time.Duration{}, cancelled: map[string]bool{}}
	cat, err := firmware.ParseCatalog("fwsim.toml", []byte(Catalog))
	if err != nil {
		return nil, err
	}
	s.cat, s.eff = cat, cat
	var base firmware.Store = firmwarefake.NewMemStore()
	if c.Store != nil {
		st, reopen, err := c.Store()
		if err != nil {
			return nil, err
		}
		base, s.reopen = st, reopen
	}
	s.store = &faultStore{Store: base, rng: rand.New(rand.NewPCG(c.Seed, 0x73746f)), rate: c.StoreFaultRate}
	s.Hosts = buildHosts(c)
	// Cancellations are drawn apart from the fleet, so that a seed's fleet
	// stays what it is with them or without.
	crng := rand.New(rand.NewPCG(c.Seed, 0x63616e))
	for _, h := range s.Hosts {
		if h.Drifted && crng.Float64() < c.Cancellations {
			s.cancelAt[h.Machine] = time.Minute + time.Duration(crng.Int64N(int64(45*time.Minute)))
		}
	}
	s.hosts = firmwarefake.NewHosts()
	s.bmcs = firmwarefake.NewBMCs()
	s.scout = firmwarefake.NewScout(s.store, s.bmcs, s.clk)
	s.scripts = firmwarefake.NewScripts(s.bmcs)
	s.scripts.Register("/opt/fw/lenovo-uefi-1.60.sh", s.scripts.Installer("/opt/fw/lenovo-uefi-1.60.sh"))
	ctx := context.Background()
	off := false
	for i := range s.Hosts {
		h := &s.Hosts[i]
		s.byName[h.Machine] = h
		fh := firmware.Host{MachineID: h.Machine, State: firmware.HostReady, InMaintenance: h.Maintenance}
		if h.Assigned {
			fh.State, fh.InstanceID = firmware.HostAssigned, "inst-"+h.Machine
		}
		s.hosts.Put(fh)
		s.bmcs.Add(h.Machine, bmcOf(s.clk, *h))
		if h.Fault == FaultAgentSilent {
			s.scout.Behave(h.Machine, firmwarefake.AgentSilent)
		}
		if h.PolicyOff {
			if err := s.store.SetAutoUpdate(ctx, h.Machine, &off); err != nil {
				return nil, err
			}
		}
	}
	s.wire()
	return s, nil
}

// wire builds the worker: the executor, its steps and the manager. A
// restart builds them again; nothing else survives it but the store and
// the world.
func (s *Sim) wire() {
	scripts := firmwarefake.NewScoutScripts()
	scripts.Add("Nvidia", "DGXH100", firmware.CX7, firmware.ScoutScript{Path: "nvidia/dgxh100/cx7/upgrade.sh", SHA256: "c0", ExecutionTimeout: 20 * time.Minute, DownloadTimeout: 10 * time.Minute})
	bmcs := &crashBMC{BMCClient: s.bmcs, s: s}
	var hosts firmware.Hosts = s.hosts
	if s.cfg.WrapHosts != nil {
		hosts = s.cfg.WrapHosts(hosts)
	}
	cat := s.cat
	if s.cfg.WrapCatalog != nil {
		cat = s.cfg.WrapCatalog(cat)
	}
	s.exec = &firmware.Executor{Store: s.store, Hosts: hosts, BMC: bmcs, Scout: s.scout, ScoutScripts: scripts, Scripts: s.scripts,
		Catalog: cat, Settings: s.settings, Clock: s.clk}
	s.steps = s.exec.Steps()
	s.mgr = &firmware.Manager{Store: s.store, Hosts: hosts, Catalog: cat, Settings: s.settings, Clock: s.clk}
}

func (s *Sim) schedule(d time.Duration, kind eventKind, machine string) {
	s.seq++
	heap.Push(&s.q, &event{at: s.start.Add(d), seq: s.seq, kind: kind, machine: machine})
}

func (s *Sim) scheduleAt(at time.Time, kind eventKind, machine string) {
	s.seq++
	heap.Push(&s.q, &event{at: at, seq: s.seq, kind: kind, machine: machine})
}

// Run simulates until every host has settled or the horizon.
func (s *Sim) Run(ctx context.Context) *Report {
	wallClock := s.cfg.Wall
	if wallClock == nil {
		wallClock = clock.Real{}
	}
	wall := wallClock.Now()
	s.rep = &Report{Config: s.cfg, Failures: map[string]int{}}
	s.chk = &checker{s: s}
	var peak uint64
	var ms runtime.MemStats
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	// Observe the fleet once, as the inventory explorer does before the
	// first pass.
	for _, h := range s.Hosts {
		s.observe(ctx, h.Machine)
	}
	s.schedule(0, evPass, "")
	for _, h := range s.Hosts {
		if h.Maintenance {
			s.schedule(h.MaintenanceUntil, evRelease, h.Machine)
		}
		if h.ApproveAt > 0 {
			s.schedule(h.ApproveAt, evApprove, h.Machine)
		}
		if h.Profile == ProfileSupermicro {
			s.schedule(h.WindowAt, evWindow, h.Machine)
		}
		if h.PolicyOff {
			s.schedule(h.PolicyOnAt, evPolicyOn, h.Machine)
		}
	}
	if s.cfg.CatalogChangeAt > 0 {
		s.schedule(s.cfg.CatalogChangeAt, evCatalog, "")
	}
	for i := range s.cfg.Restarts {
		s.schedule(time.Duration(1+s.rng.Int64N(int64(36*time.Hour)))+time.Duration(i), evRestart, "")
	}
	horizon := s.start.Add(s.cfg.Horizon)
	ticks := 0
	for s.q.Len() > 0 {
		ev := heap.Pop(&s.q).(*event)
		if ev.at.After(horizon) {
			exhausted := 0
			for _, o := range s.final {
				if o == firmware.OutcomeExhausted {
					exhausted++
				}
			}
			// Failed hosts keep their request, and with it their share of
			// the ceiling: enough of them stop the rollout.
			s.chk.fail("the horizon %s passed with work left (%d hosts failed with their budget spent hold that much of the ceiling of %d%%)",
				s.cfg.Horizon, exhausted, s.cfg.CeilingPercent)
			break
		}
		if d := ev.at.Sub(s.clk.Now()); d > 0 {
			s.clk.Advance(d)
		}
		ticks++
		switch ev.kind {
		case evPass:
			if s.pass(ctx) {
				s.scheduleAt(s.clk.Now().Add(s.settings.RunInterval), evPass, "")
			}
		case evWake:
			s.waking[ev.machine] = false
			s.wake(ctx, ev.machine)
		case evApprove:
			// The tenant approves; a request that is not there yet is
			// approved when it comes (the tenant's flag on its instance).
			s.approve(ctx, ev.machine)
		case evRelease:
			s.hosts.Change(ev.machine, func(h *firmware.Host) { h.InMaintenance = false })
		case evWindow:
			s.window(ctx, ev.machine)
		case evPolicyOn:
			op := &firmware.Operator{Store: s.store, Hosts: s.hosts, Clock: s.clk}
			if err := op.SetAutoUpdate(ctx, ev.machine, nil); err != nil {
				s.chk.fail("clearing the override of %s: %v", ev.machine, err)
			}
			s.byName[ev.machine].PolicyOff = false
		case evRestart:
			s.restart()
		case evObserve:
			s.observe(ctx, ev.machine)
		case evCatalog:
			s.changeCatalog(ctx)
		case evCancel:
			s.cancel(ctx, ev.machine)
		}
		if !s.cfg.NoTickChecks {
			s.chk.tick(ctx, ev)
		}
		if ticks%4096 == 0 {
			sample()
		}
	}
	sample()
	s.rep.Ticks = ticks
	s.rep.Virtual = s.clk.Now().Sub(s.start)
	s.chk.end(ctx)
	s.rep.Violations = s.chk.problems
	s.rep.Wall = wallClock.Now().Sub(wall)
	s.rep.PeakHeap = peak
	return s.rep
}

// observe records a host's inventory as the explorer would; a BMC that
// does not answer is visited again ten minutes later.
func (s *Sim) observe(ctx context.Context, machine string) {
	inv, err := s.bmcs.Inventory(ctx, machine)
	if err != nil {
		s.scheduleAt(s.clk.Now().Add(10*time.Minute), evObserve, machine)
		return
	}
	rep := firmware.Reported{}
	if m, ok := s.eff.ForHost(inv.Identity); ok {
		rep = m.Readings(inv.Entries)
	}
	_ = s.store.Store.PutObserved(ctx, firmware.Observed{MachineID: machine, Identity: inv.Identity, Reported: rep, At: s.clk.Now()})
}

// pass runs the manager and starts the bodies of new requests; it says
// whether passes must go on.
func (s *Sim) pass(ctx context.Context) bool {
	before := s.chk.beforePass(ctx)
	rep, err := s.mgr.Pass(ctx)
	if err != nil {
		s.rep.Failures[hostforge.CodeOf(err)]++
		return true
	}
	s.rep.Passes++
	s.rep.Started += len(rep.Started)
	s.chk.afterPass(ctx, before, rep)
	reqs, err := s.store.Store.Requests(ctx)
	if err != nil {
		return true
	}
	live := 0
	for _, r := range reqs {
		if s.final[r.MachineID] != "" && r.CreatedAt.After(s.finalAt[r.MachineID]) {
			// A new update of a host whose last one ended.
			delete(s.final, r.MachineID)
			s.started[r.MachineID] = false
			if s.byName[r.MachineID].Assigned {
				// The tenant approves the new update too.
				s.scheduleAt(s.clk.Now(), evApprove, r.MachineID)
			}
		}
		if s.final[r.MachineID] == "" {
			live++
			if !s.waking[r.MachineID] {
				s.waking[r.MachineID] = true
				s.scheduleAt(s.clk.Now(), evWake, r.MachineID)
			}
		}
	}
	return live > 0 || rep.Pending > 0 || s.pendingEvents()
}

// pendingEvents reports events that can still make a host eligible.
func (s *Sim) pendingEvents() bool {
	for _, e := range s.q {
		switch e.kind {
		case evApprove, evRelease, evWindow, evPolicyOn, evObserve:
			return true
		}
	}
	return false
}

func (s *Sim) approve(ctx context.Context, machine string) {
	if !s.byName[machine].Drifted || s.final[machine] != "" {
		return // nothing to approve, ever
	}
	op := &firmware.Operator{Store: s.store, Hosts: s.hosts, Clock: s.clk}
	if _, err := op.Approve(ctx, machine); firmware.RequestRefused.Is(err) {
		// No request yet: the tenant's flag waits for it.
		s.scheduleAt(s.clk.Now().Add(s.settings.RunInterval), evApprove, machine)
	}
}

// window opens a Supermicro host's explicit-start window for a day, and
// again every day while the host still needs work.
func (s *Sim) window(ctx context.Context, machine string) {
	h := s.byName[machine]
	if !h.Drifted || s.final[machine] != "" {
		return
	}
	if _, ok, _ := s.store.Store.Request(ctx, machine); ok {
		return
	}
	op := &firmware.Operator{Store: s.store, Hosts: s.hosts, Clock: s.clk}
	if err := op.StartUpdates(ctx, []string{machine}, s.clk.Now(), s.clk.Now().Add(24*time.Hour)); err != nil {
		s.chk.fail("opening the window of %s: %v", machine, err)
	}
	s.scheduleAt(s.clk.Now().Add(24*time.Hour), evWindow, machine)
}

// restart drops the worker (its executor, steps and manager; under a SQL
// store, its database connection) and builds a new one. Bodies are not
// in memory between their wakes, so every one resumes from the store.
func (s *Sim) restart() {
	s.rep.Restarts++
	if s.reopen != nil {
		st, err := s.reopen()
		if err != nil {
			s.chk.fail("reopening the store: %v", err)
			return
		}
		s.store.Store = st
	}
	s.wire()
}

// wake runs a host's update body until it sleeps (the runtime ends it
// there; the next wake starts a new body, which resumes from the store:
// every sleep is a worker restart) or ends.
func (s *Sim) wake(ctx context.Context, machine string) {
	rt := &simRuntime{table: s.steps, clk: s.clk}
	res, err := firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: machine})
	s.rep.Steps += rt.calls
	s.chk.afterWake(ctx, machine)
	switch {
	case errors.Is(err, errYield):
		s.waking[machine] = true
		s.scheduleAt(rt.wakeAt, evWake, machine)
		if after, planned := s.cancelAt[machine]; planned && !s.cancelled[machine] && s.started[machine] {
			// The operator cancels this update a while into it.
			s.cancelled[machine] = true
			s.scheduleAt(s.clk.Now().Add(after), evCancel, machine)
		}
	case err == nil:
		s.final[machine], s.finalAt[machine] = res.Outcome, s.clk.Now()
		s.observe(ctx, machine)
		s.chk.afterEnd(ctx, machine)
	case firmware.RetriesExhausted.Is(err):
		s.final[machine], s.finalAt[machine] = res.Outcome, s.clk.Now()
		if res.Failure != nil {
			s.rep.Failures[res.Failure.Code]++
		}
	case errors.Is(err, errCrash) || hostforge.CodeOf(err) == hostforge.Cancelled.Code:
		// The worker died mid-step; a new one picks the host up.
		s.rep.Crashes++
		s.waking[machine] = true
		s.scheduleAt(s.clk.Now().Add(time.Minute), evWake, machine)
	default:
		code := hostforge.CodeOf(err)
		s.rep.Failures[code]++
		if code == hostforge.Unclassified.Code || code == "" {
			s.chk.fail("%s: the update ended with an unclassified error: %v", machine, err)
		}
		s.waking[machine] = true
		s.scheduleAt(s.clk.Now().Add(time.Minute), evWake, machine)
	}
}

// changeCatalog is the operator's runtime override: the R750's bmc gets a
// new default (its image is on every R750's BMC), so every R750 drifts
// again; the effective catalog is what the checker reads from then on.
func (s *Sim) changeCatalog(ctx context.Context) {
	op := &firmware.Operator{Store: s.store, Hosts: s.hosts, Clock: s.clk, Catalog: s.cat}
	ov := firmware.Override{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.BMC,
		Entry: firmware.Entry{Version: dellNextBMC, Default: true, Artifacts: []firmware.Artifact{{Filename: dellNextBMCImage}}}}
	if _, err := op.SetOverride(ctx, ov); err != nil {
		// A store fault: the operator tries again a minute later.
		s.scheduleAt(s.clk.Now().Add(time.Minute), evCatalog, "")
		return
	}
	eff, _, err := op.EffectiveCatalog(ctx)
	if err != nil {
		s.chk.fail("reading the effective catalog after the change: %v", err)
		return
	}
	s.eff = eff
	s.chk.cache = nil
	s.rep.CatalogChanges++
}

// cancel is an operator cancelling a host's running update (one that
// ended meanwhile is left alone).
func (s *Sim) cancel(ctx context.Context, machine string) {
	if s.final[machine] != "" {
		return
	}
	u, ok, err := s.store.Store.Update(ctx, machine)
	if err != nil || !ok || u.Cancel != nil {
		return
	}
	op := &firmware.Operator{Store: s.store, Hosts: s.hosts, Clock: s.clk}
	if _, err := op.Cancel(ctx, machine, "operator fwsim"); err != nil {
		s.scheduleAt(s.clk.Now().Add(time.Minute), evCancel, machine)
		return
	}
	s.rep.Cancelled++
}

// errYield ends a body at its sleep.
var errYield = errors.New("fwsim: body sleeps")

// simRuntime runs steps inline and ends the body at its first sleep,
// remembering when it wanted to wake.
type simRuntime struct {
	table  *flow.Table
	clk    *clock.Fake
	wakeAt time.Time
	calls  int
}

// Do runs a step inline.
func (r *simRuntime) Do(ctx context.Context, name string, in, out any) error {
	st, ok := r.table.Step(name)
	if !ok {
		return hostforge.Unclassified.New("no step %s", name)
	}
	r.calls++
	return st.Call(ctx, in, out, false)
}

// Sleep ends the body, remembering when it wants to wake.
func (r *simRuntime) Sleep(_ context.Context, d time.Duration) error {
	r.wakeAt = r.clk.Now().Add(d)
	return errYield
}

// Now is the virtual time.
func (r *simRuntime) Now(context.Context) time.Time { return r.clk.Now() }

// machines returns the host names, sorted.
func (s *Sim) machines() []string {
	out := make([]string, 0, len(s.Hosts))
	for _, h := range s.Hosts {
		out = append(out, h.Machine)
	}
	sort.Strings(out)
	return out
}
