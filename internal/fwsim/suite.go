package fwsim

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/ironic"
)

// The fault-schedule suite of the firmware update workflow. CheckSchedule
// builds a schedule's fleet, gives every host an operator's request, runs
// each host's update workflow on the shared runtime under the schedule's
// faults, clears the faults, runs again every workflow that ended with an
// error (as a worker picks a failed workflow up again), and reports every
// promise of package firmware's documentation ("Side effects and their
// invariants") that did not hold.

// SuiteOptions change what the suite's worker is, so that the checker's
// own tests can plant a broken one and see it caught.
type SuiteOptions struct {
	// WrapBMC changes the BMC client the update steps see (after the
	// faults).
	WrapBMC func(firmware.BMCClient) firmware.BMCClient
	// Log receives a line per step outcome (replaying a seed).
	Log *slog.Logger
}

// ScheduleResult is what one schedule did and found.
type ScheduleResult struct {
	Schedule Schedule
	// Done and Exhausted count the hosts' end states.
	Done, Exhausted int
	// Pushes and Resets count what the fake BMCs took; Struck the calls
	// the faults struck (LostAnswers of them after the effect); Crashes
	// the step attempts whose worker died.
	Pushes, Resets, Struck, LostAnswers, Crashes int
	// Steps counts step attempts.
	Steps int
	// Where counts the faults that struck by step and kind: "<step>
	// before", "<step> lost", "<step> crash".
	Where map[string]int
	// Unclassified counts failures without a declared code.
	Unclassified int
	// Violations are the broken promises.
	Violations []string
}

var (
	suiteCatalogOnce sync.Once
	suiteCatalog     *firmware.Catalog
	suiteCatalogErr  error
)

func catalogOf() (*firmware.Catalog, error) {
	suiteCatalogOnce.Do(func() { suiteCatalog, suiteCatalogErr = firmware.ParseCatalog("fwsim.toml", []byte(Catalog)) })
	return suiteCatalog, suiteCatalogErr
}

// suiteSettings keep the site's defaults (a budget of five retries an
// hour apart, five upload retries, ten transient errors per substate),
// with the schedule's upload slots.
func suiteSettings(s Schedule) firmware.Settings {
	return firmware.Settings{MaxUploads: s.MaxUploads}.WithDefaults()
}

// CheckSchedule runs one schedule and checks it.
func CheckSchedule(ctx context.Context, s Schedule, o SuiteOptions) ScheduleResult {
	res := ScheduleResult{Schedule: s}
	cat, err := catalogOf()
	if err != nil {
		res.Violations = append(res.Violations, err.Error())
		return res
	}
	base := clock.NewFake(clock.Epoch)
	var clk clock.Clock = base
	var sim *fleetsim.SimClock
	if s.Concurrent {
		sim = fleetsim.NewSimClock(base)
		clk = sim
	}
	settings := suiteSettings(s)
	store := firmwarefake.NewMemStore()
	hosts := firmwarefake.NewHosts()
	bmcs := firmwarefake.NewBMCs()
	scout := firmwarefake.NewScout(store, bmcs, base)
	scripts := firmwarefake.NewScripts(bmcs)
	scripts.Register("/opt/fw/lenovo-uefi-1.60.sh", scripts.Installer("/opt/fw/lenovo-uefi-1.60.sh"))
	packaged := firmwarefake.NewScoutScripts()
	packaged.Add("Nvidia", "DGXH100", firmware.CX7, firmware.ScoutScript{Path: "nvidia/dgxh100/cx7/upgrade.sh", SHA256: "c0", ExecutionTimeout: 20 * time.Minute, DownloadTimeout: 10 * time.Minute})
	w := &watch{store: store, hosts: hosts, bmcs: bmcs, clk: base, max: settings.MaxUploads, maxRetries: settings.MaxRetries,
		pushes: map[pushKey]int{}, pushIDs: map[string]int{}, resets: map[resetKey]int{}}
	in := newInjector(s.Faults)
	op := &firmware.Operator{Store: store, Hosts: hosts, Clock: base}
	for _, h := range s.Hosts {
		fh := firmware.Host{MachineID: h.Machine, State: firmware.HostReady}
		if h.Assigned {
			fh.State, fh.InstanceID = firmware.HostAssigned, "inst-"+h.Machine
		}
		hosts.Put(fh)
		bmcs.Add(h.Machine, bmcOf(base, Host{Machine: h.Machine, Profile: h.Profile, Drifted: true, Assigned: h.Assigned, NoCX7: h.NoCX7}))
		if _, err := op.RequestUpdate(ctx, h.Machine, "operator fault suite", "CHG-"+h.Machine); err != nil {
			res.Violations = append(res.Violations, fmt.Sprintf("%s: the request: %v", h.Machine, err))
			return res
		}
		if h.Assigned {
			if _, err := op.Approve(ctx, h.Machine); err != nil {
				res.Violations = append(res.Violations, fmt.Sprintf("%s: the approval: %v", h.Machine, err))
				return res
			}
		}
	}
	var client firmware.BMCClient = &schedBMC{BMCClient: bmcs, in: in, watch: w}
	if o.WrapBMC != nil {
		client = o.WrapBMC(client)
	}
	exec := &firmware.Executor{Store: &schedStore{Store: store, in: in}, Hosts: &schedHosts{Hosts: hosts, in: in}, BMC: client,
		Scout: scout, ScoutScripts: packaged, Scripts: scripts, Catalog: cat, Settings: settings, Clock: base}
	steps := exec.Steps()

	outcomes := make([]firmware.UpdateResult, len(s.Hosts))
	errs := make([]error, len(s.Hosts))
	var stepsRun sync.Mutex
	runOne := func(i int, faulted bool) {
		m := s.Hosts[i].Machine
		local := &flow.Local{Steps: steps, Clock: clk, Subject: m, Log: o.Log, OnEvent: func(e flow.Event) {
			if e.Kind != "step" {
				return
			}
			stepsRun.Lock()
			res.Steps++
			stepsRun.Unlock()
			if faulted {
				in.step()
			}
			w.durable(ctx, m)
		}}
		var rt flow.Runtime = local
		if faulted {
			rt = crashRuntime{Runtime: local, in: in}
		}
		outcomes[i], errs[i] = firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: m})
		w.ended(m, errs[i])
	}
	runAll := func(which []int, faulted bool) {
		if sim == nil {
			for _, i := range which {
				runOne(i, faulted)
			}
			return
		}
		sim.Each(len(which), 0, func(k int) { runOne(which[k], faulted) })
	}
	all := make([]int, len(s.Hosts))
	for i := range all {
		all[i] = i
	}
	runAll(all, true)
	in.clear()
	// A workflow that ended with an error is run again by a worker, now
	// that the faults are gone; one that ended done or exhausted is over.
	var again []int
	for i, err := range errs {
		if err != nil && !firmware.RetriesExhausted.Is(err) {
			again = append(again, i)
		}
	}
	runAll(again, false)
	for i, h := range s.Hosts {
		w.end(ctx, cat, settings, h, outcomes[i], errs[i], s)
	}
	in.mu.Lock()
	res.Struck, res.LostAnswers, res.Crashes, res.Where = in.struck, in.lostTaken, in.tripped, in.where
	in.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	res.Pushes, res.Resets, res.Unclassified = w.nPushes, w.nResets, w.unclassified
	res.Violations = append(res.Violations, w.problems...)
	for _, o := range outcomes {
		switch o.Outcome {
		case firmware.OutcomeDone:
			res.Done++
		case firmware.OutcomeExhausted:
			res.Exhausted++
		}
	}
	return res
}

// pushKey is an image of one host's try: it is pushed at most once.
type pushKey struct {
	machine   string
	try       int
	component firmware.ComponentType
	version   string
	artifact  int
}

// resetKey is one reset of one host's activation or pre-update or restore
// sequence: it takes effect at most once.
type resetKey struct {
	machine   string
	try       int
	component firmware.ComponentType
	substate  firmware.Substate
	phase     int
	retries   int
	kind      firmware.ResetKind
}

// watch holds the invariants, from what the fake BMCs took and what the
// store holds at every durable point.
type watch struct {
	store      *firmwarefake.MemStore
	hosts      *firmwarefake.Hosts
	bmcs       *firmwarefake.BMCs
	clk        clock.Clock
	max        int
	maxRetries int

	mu           sync.Mutex
	inflight     int
	pushes       map[pushKey]int
	pushIDs      map[string]int
	resets       map[resetKey]int
	nPushes      int
	nResets      int
	unclassified int
	problems     []string
	seen         map[string]bool
}

func (w *watch) fail(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failLocked(format, args...)
}

func (w *watch) failLocked(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[msg] || len(w.problems) >= 20 {
		return
	}
	w.seen[msg] = true
	w.problems = append(w.problems, msg)
}

// classifiedCode reports a failure code that is declared (or the SQL
// store's, which the core does not link).
func classifiedCode(code string) bool {
	if code == "" || code == hostforge.Unclassified.Code {
		return false
	}
	_, ok := hostforge.Lookup(code)
	return ok || code == storeDown.Code
}

// uploading checks a push as it is sent: within max_uploads (pushes in
// flight and slots held), and — once the BMC took it — the only push of
// its record and of its image in its try.
func (w *watch) uploading(ctx context.Context, m string, u firmware.UploadRequest) func() {
	fb := w.bmcs.Of(m)
	before := fb.State().Uploads
	w.mu.Lock()
	w.inflight++
	if w.inflight > w.max {
		w.failLocked("%d pushes in flight, max_uploads %d", w.inflight, w.max)
	}
	w.mu.Unlock()
	if n, err := w.store.UploadSlots(ctx, w.clk.Now()); err == nil && n > w.max {
		w.fail("%d upload slots held, max_uploads %d", n, w.max)
	}
	return func() {
		took := fb.State().Uploads > before
		var p firmware.Push
		found := false
		if took {
			ps, _ := w.store.Pushes(context.WithoutCancel(ctx), m)
			for _, x := range ps {
				if x.ID == u.PushID {
					p, found = x, true
				}
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.inflight--
		if !took {
			return
		}
		w.nPushes++
		if !found {
			w.failLocked("%s: the BMC took push %q of %s, which was not recorded before it was sent", m, u.PushID, artifactKey(u))
			return
		}
		w.pushIDs[m+"|"+p.ID]++
		if n := w.pushIDs[m+"|"+p.ID]; n > 1 {
			w.failLocked("%s: push %s (%s) reached the BMC %d times", m, p.ID, p.Image, n)
		}
		k := pushKey{machine: m, try: p.Try, component: p.Component, version: p.Version, artifact: p.Artifact}
		w.pushes[k]++
		if n := w.pushes[k]; n > 1 {
			w.failLocked("%s: %s pushed %d times in try %d (%s %s, artifact %d)", m, p.Image, n, p.Try, p.Component, p.Version, p.Artifact+1)
		}
	}
}

func artifactKey(u firmware.UploadRequest) string {
	if u.Artifact.Filename != "" {
		return u.Artifact.Filename
	}
	return u.Artifact.URL
}

// resetting checks a reset as it is sent: once it took effect, the only
// one of its sequence's step.
func (w *watch) resetting(ctx context.Context, m string, k firmware.ResetKind) func() {
	fb := w.bmcs.Of(m)
	before := len(fb.State().Resets)
	rec, ok, _ := w.store.Update(context.WithoutCancel(ctx), m)
	return func() {
		if len(fb.State().Resets) == before {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		w.nResets++
		if !ok {
			w.failLocked("%s: reset %s sent without an update record", m, k)
			return
		}
		key := resetKey{machine: m, try: rec.Try, component: rec.Component, substate: rec.Substate, phase: rec.Phase, retries: rec.ResetRetries, kind: k}
		w.resets[key]++
		if n := w.resets[key]; n > 1 {
			w.failLocked("%s: reset %s of %s %s phase %d (try %d, reset retry %d) took effect %d times", m, k, rec.Component, rec.Substate, rec.Phase, rec.Try, rec.ResetRetries, n)
		}
	}
}

// durable checks what must hold at every durable point (after every
// step): the retry count within its budget, every recorded failure
// classified.
func (w *watch) durable(ctx context.Context, m string) {
	rec, ok, err := w.store.Update(ctx, m)
	if err != nil || !ok {
		return
	}
	if rec.RetryCount > w.maxRetries {
		w.fail("%s: retry count %d past its budget %d", m, rec.RetryCount, w.maxRetries)
	}
	if rec.Failure != nil && !classifiedCode(rec.Failure.Code) {
		w.mu.Lock()
		w.unclassified++
		w.failLocked("%s: a failure recorded without a declared code: %+v", m, rec.Failure)
		w.mu.Unlock()
	}
}

// ended checks how a workflow run ended: done, exhausted, or an error that
// is a classified failure.
func (w *watch) ended(m string, err error) {
	if err == nil || firmware.RetriesExhausted.Is(err) {
		return
	}
	if code := hostforge.CodeOf(err); !classifiedCode(code) {
		w.mu.Lock()
		w.unclassified++
		w.failLocked("%s: the workflow ended with an unclassified error: %v", m, err)
		w.mu.Unlock()
	}
}

// end checks a host's end state after the faults cleared: handed back
// compliant and out of maintenance, or failed with its retry budget spent
// and a failure the schedule's faults explain.
func (w *watch) end(ctx context.Context, cat *firmware.Catalog, settings firmware.Settings, h ScheduleHost, out firmware.UpdateResult, err error, s Schedule) {
	m := h.Machine
	rec, hasRec, _ := w.store.Update(ctx, m)
	req, hasReq, _ := w.store.Request(ctx, m)
	host, _, _ := w.hosts.Get(ctx, m)
	fb := w.bmcs.Of(m)
	st := fb.State()
	switch {
	case err == nil && out.Outcome == firmware.OutcomeDone:
		if hasRec || hasReq {
			w.fail("%s: handed back with its request (%v) or record (%v, %s) left", m, hasReq, hasRec, rec.Substate)
		}
		if host.UpdateReport {
			w.fail("%s: handed back in maintenance (the update report is still on)", m)
		}
		if !st.Lockdown || !st.PowerOn {
			w.fail("%s: handed back with lockdown %v, power on %v", m, st.Lockdown, st.PowerOn)
		}
		inv, ierr := w.bmcs.Inventory(ctx, m)
		if ierr != nil {
			w.fail("%s: reading its inventory at the end: %v", m, ierr)
		} else if d := firmware.Drift(cat, inv); d.Drifted {
			w.fail("%s: handed back still drifted: %+v", m, d.Components)
		}
	case firmware.RetriesExhausted.Is(err):
		if !hasRec || !rec.Exhausted(settings.MaxRetries) || rec.RetryCount != settings.MaxRetries || !hasReq {
			w.fail("%s: exhausted, but its record is %v %s retry %d, request %v", m, hasRec, rec.Substate, rec.RetryCount, hasReq)
		}
		if req.Started() && !host.UpdateReport && !failedHandingBack(rec) {
			// A host whose update never passed its start gate was never
			// touched, and stays allocatable; one whose hand-back failed
			// may have lost the report in it (its firmware is verified).
			w.fail("%s: failed with its budget spent but lost its update report (it could be allocated)", m)
		}
		if rec.Failure == nil || !explained(rec.Failure.Code, s) {
			w.fail("%s: exhausted with %+v, which no fault of the schedule explains", m, rec.Failure)
		}
	default:
		w.fail("%s: did not converge once the faults cleared: %+v, %v", m, out, err)
	}
}

// failedHandingBack reports an update whose last failure happened while
// handing the host back (Restore), after every component was verified.
func failedHandingBack(u firmware.HostUpdate) bool {
	for i := len(u.History) - 1; i >= 0; i-- {
		if t := u.History[i]; t.To == firmware.FailedFirmwareUpgrade {
			return t.From == firmware.Restore
		}
	}
	return false
}

// explained reports a failure code some fault of the schedule can cause.
func explained(code string, s Schedule) bool {
	for _, f := range s.Faults {
		for _, c := range Outcomes(f) {
			if c == code {
				return true
			}
		}
	}
	return false
}

// Outcomes lists the failure codes an update may end with under a fault:
// an outage of a system fails the substate that calls it once its budget
// of transient errors is spent (the BMC's FIRMWARE_BMC_UNREACHABLE, the
// hosts' IRONIC_UNAVAILABLE); a refusal fails the attempt at once
// (FIRMWARE_BMC_REFUSED, or FIRMWARE_UPLOAD_FAILED when the BMC refused
// the push itself; the hosts' IRONIC_UNAUTHORIZED, IRONIC_REQUEST_REJECTED);
// a push that did not happen, again and again, spends the upload budget
// (FIRMWARE_UPLOAD_FAILED); a BMC that cannot be polled or read past its
// budget while a task runs, or while activated firmware is awaited, ends
// as what it was doing (FIRMWARE_TASK_FAILED, FIRMWARE_NOT_ACTIVATED). A
// store fault never exhausts a host by itself (the workflow ends with the
// store's error and is run again), except a lost answer to the record's
// checkpoint before a script run or an agent offer; a crash strikes once.
func Outcomes(f ScheduleFault) []string {
	switch f.System {
	case SysBMC:
		switch f.Kind {
		case fleetsim.FaultUnauthorized, fleetsim.FaultInvalid, fleetsim.FaultConflict:
			return []string{firmware.BMCRefused.Code, firmware.UploadFailed.Code}
		default:
			return []string{firmware.BMCUnreachable.Code, firmware.UploadFailed.Code, firmware.TaskFailed.Code, firmware.NotActivated.Code}
		}
	case SysHosts:
		return []string{ironic.Unavailable.Code, ironic.Unauthorized.Code, ironic.Rejected.Code}
	case SysStore:
		if f.Kind.Lost() {
			// The record's checkpoint before a script run or an agent
			// offer was written and its answer lost: the attempt cannot
			// tell whether the script ran, so it never runs it blindly
			// (FIRMWARE_SCRIPT_FAILED, interrupted), and the offer it did
			// not make is never reported (FIRMWARE_SCOUT_FAILED, past its
			// deadline).
			return []string{firmware.ScriptFailed.Code, firmware.ScoutFailed.Code}
		}
	}
	return nil
}
