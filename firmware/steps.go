package firmware

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/flow"
)

// Step names of the update workflow: one per substate, prefixed so that
// they never collide with another workflow's on a shared worker.
const (
	StepLoad                      = "firmware.load"
	StepPending                   = "firmware.pending"
	StepCheckingFirmware          = "firmware.checking_firmware"
	StepCheckingFirmwareRepeat    = "firmware.checking_firmware_repeat"
	StepWaitingForManualUpgrade   = "firmware.waiting_for_manual_upgrade"
	StepWaitingForScoutUpgrade    = "firmware.waiting_for_scout_upgrade"
	StepWaitingForScript          = "firmware.waiting_for_script"
	StepInitialReset              = "firmware.initial_reset"
	StepWaitingForUpload          = "firmware.waiting_for_upload"
	StepWaitingForFirmwareUpgrade = "firmware.waiting_for_firmware_upgrade"
	StepResetForNewFirmware       = "firmware.reset_for_new_firmware"
	StepNewFirmwareReportedWait   = "firmware.new_firmware_reported_wait"
	StepFailedFirmwareUpgrade     = "firmware.failed_firmware_upgrade"
	StepRestore                   = "firmware.restore"
)

// stepOf is the step of each substate.
var stepOf = map[Substate]string{
	Pending:                   StepPending,
	CheckingFirmware:          StepCheckingFirmware,
	CheckingFirmwareRepeat:    StepCheckingFirmwareRepeat,
	WaitingForManualUpgrade:   StepWaitingForManualUpgrade,
	WaitingForScoutUpgrade:    StepWaitingForScoutUpgrade,
	WaitingForScript:          StepWaitingForScript,
	InitialReset:              StepInitialReset,
	WaitingForUpload:          StepWaitingForUpload,
	WaitingForFirmwareUpgrade: StepWaitingForFirmwareUpgrade,
	ResetForNewFirmware:       StepResetForNewFirmware,
	NewFirmwareReportedWait:   StepNewFirmwareReportedWait,
	FailedFirmwareUpgrade:     StepFailedFirmwareUpgrade,
	Restore:                   StepRestore,
}

// Attempt bounds. Every BMC, store and host call of a step runs under the
// caller's context; the adapters bound each call to callTimeout (30 s).
const (
	callTimeout = 30 * time.Second
	// A step makes at most a handful of calls: store reads, a BMC read or
	// action, the host's report, store writes.
	quickAttempt = 10 * callTimeout
	// An upload resolves its artifact (a download of up to a few GiB:
	// the resolver's deadline is ArtifactDeadline) and pushes it (the
	// adapter's upload deadline is UploadDeadline), plus the slot and
	// result writes.
	uploadAttempt = ArtifactDeadline + UploadDeadline + quickAttempt
	// A script runs to its timeout (capped at MaxScriptTimeout), plus the
	// result writes.
	scriptAttempt = MaxScriptTimeout + quickAttempt
)

// ArtifactDeadline bounds the resolving (download and verification) of
// one artifact; UploadDeadline bounds its push to the BMC. Adapters of
// ArtifactResolver and BMCClient hold to them: the upload step's attempt
// bound is their sum.
const (
	ArtifactDeadline = time.Hour
	UploadDeadline   = time.Hour
)

func artifactName(a Artifact) string {
	if a.Filename != "" {
		return a.Filename
	}
	return a.URL
}

// MaxScriptTimeout caps a local script's run.
const MaxScriptTimeout = 5 * time.Hour

// ReportName is the reason of the host's firmware update health report.
const ReportName = "host-fw-update"

// StepInput is the input of every update step: the machine, and the
// record revision the body last saw (a step called with a stale revision
// acts on nothing and returns the current progress).
type StepInput struct {
	MachineID string `json:"machine_id"`
	Revision  int64  `json:"revision"`
}

// Progress is every step's output: where the update is now.
type Progress struct {
	Substate Substate `json:"substate,omitempty"`
	Revision int64    `json:"revision"`
	// NotBefore is when the next step may run; the body sleeps until then.
	NotBefore time.Time `json:"not_before,omitzero"`
	// Done: nothing is left to do (the host was handed back compliant, or
	// it has no request).
	Done bool `json:"done,omitempty"`
	// Exhausted: the update failed and spent its retry budget.
	Exhausted bool         `json:"exhausted,omitempty"`
	Failure   *FailureInfo `json:"failure,omitempty"`
	// Uploads counts the pushes sent during this update so far.
	Uploads int `json:"uploads,omitempty"`
}

func progressOf(u HostUpdate, maxRetries int) Progress {
	return Progress{Substate: u.Substate, Revision: u.Revision, NotBefore: u.NotBefore, Exhausted: u.Exhausted(maxRetries), Failure: u.Failure, Uploads: u.Uploads}
}

// Executor holds the clients the update steps use. Build its step table
// with Steps; register it on the worker that runs Update.
type Executor struct {
	Store Store
	Hosts Hosts
	BMC   BMCClient
	// Scout and ScoutScripts enable the on-host route (nil: none).
	Scout        Scout
	ScoutScripts ScoutScripts
	// Scripts runs entries' local scripts (nil: such entries fail).
	Scripts ScriptRunner
	// Catalog is the merged catalog of files (a *Catalog, or CatalogFiles
	// re-read when the files change); the store's runtime overrides are
	// applied on top at every use.
	Catalog  CatalogSource
	Settings Settings
	// ScriptTimeout bounds a local script (default 1 h, at most
	// MaxScriptTimeout).
	ScriptTimeout time.Duration
	// Artifacts resolves an entry's artifacts to local files once an
	// upload has taken its slot (nil: the BMC client resolves them itself).
	Artifacts ArtifactResolver
	// Metrics receives the update counters (nil: none).
	Metrics Metrics
	Clock   clock.Clock
	// Random is where agent task IDs draw their 128 random bits (nil:
	// crypto/rand). An ID is drawn once per attempt and persisted before
	// the task is offered, so a retried step offers the same task.
	Random io.Reader
}

// Steps returns the update workflow's step table. It fills the unset
// durations and counts of e.Settings with their defaults.
func (e *Executor) Steps() *flow.Table {
	s := e.Settings.WithDefaults()
	e.Settings = s
	bind := func(name string, attempt time.Duration, want []Substate, fn func(context.Context, *stepCtx) error) flow.Step {
		return flow.Bind(name, attempt, func(ctx context.Context, in StepInput) (Progress, error) {
			return e.run(ctx, in, want, fn)
		})
	}
	return flow.MustTable(
		flow.Bind(StepLoad, quickAttempt, e.load),
		bind(StepPending, quickAttempt, []Substate{Pending}, e.pending),
		bind(StepCheckingFirmware, quickAttempt, []Substate{CheckingFirmware}, e.checking),
		bind(StepCheckingFirmwareRepeat, quickAttempt, []Substate{CheckingFirmwareRepeat}, e.checking),
		bind(StepWaitingForManualUpgrade, quickAttempt, []Substate{WaitingForManualUpgrade}, e.manual),
		bind(StepWaitingForScoutUpgrade, quickAttempt, []Substate{WaitingForScoutUpgrade}, e.scout),
		bind(StepWaitingForScript, scriptAttempt, []Substate{WaitingForScript}, e.script),
		bind(StepInitialReset, quickAttempt, []Substate{InitialReset}, e.initialReset),
		bind(StepWaitingForUpload, uploadAttempt, []Substate{WaitingForUpload}, e.upload),
		bind(StepWaitingForFirmwareUpgrade, quickAttempt, []Substate{WaitingForFirmwareUpgrade}, e.task),
		bind(StepResetForNewFirmware, quickAttempt, []Substate{ResetForNewFirmware}, e.activate),
		bind(StepNewFirmwareReportedWait, quickAttempt, []Substate{NewFirmwareReportedWait}, e.verify),
		bind(StepFailedFirmwareUpgrade, quickAttempt, []Substate{FailedFirmwareUpgrade}, e.failed),
		bind(StepRestore, quickAttempt, []Substate{Restore}, e.restore),
	)
}

// stepCtx is one step call's view: the record it may change, and the
// methods that change it.
type stepCtx struct {
	e    *Executor
	rec  HostUpdate
	now  time.Time
	done bool // the update was completed (record removed)
}

// run is the frame of every substate step: load the record, act on it if
// it is still where the body saw it, persist what changed (compare-and-set)
// and return the progress.
func (e *Executor) run(ctx context.Context, in StepInput, want []Substate, fn func(context.Context, *stepCtx) error) (Progress, error) {
	s := e.Settings
	rec, ok, err := e.Store.Update(ctx, in.MachineID)
	if err != nil {
		return Progress{}, err
	}
	if !ok {
		return Progress{Done: true}, nil
	}
	if rec.Revision != in.Revision || !contains(want, rec.Substate) || rec.Exhausted(s.MaxRetries) {
		return progressOf(rec, s.MaxRetries), nil
	}
	orig := rec
	before := rec
	before.NotBefore = time.Time{}
	sc := &stepCtx{e: e, rec: rec, now: e.Clock.Now()}
	if c := rec.Cancel; c != nil && rec.Substate != Restore && !inFlight(rec) {
		// An operator cancelled the update, and nothing it sent is still
		// under way: the host is handed back as it is.
		sc.move(Restore, "cancelled by "+c.By)
	} else if err := fn(ctx, sc); err != nil {
		return Progress{}, err
	}
	if sc.done {
		countTransition(e.Metrics, orig, HostUpdate{}, true)
		return Progress{Done: true, Uploads: sc.rec.Uploads}, nil
	}
	after := sc.rec
	after.NotBefore = time.Time{}
	if reflect.DeepEqual(before, after) {
		// Only the next attempt's time moved: nothing to persist (a
		// restart simply looks again at once).
		return progressOf(sc.rec, s.MaxRetries), nil
	}
	saved, err := e.Store.PutUpdate(ctx, sc.rec)
	if StateConflict.Is(err) {
		// An operator (reset) or another worker moved the record: act on
		// nothing more and let the body follow the stored record.
		cur, ok, rerr := e.Store.Update(ctx, in.MachineID)
		if rerr != nil {
			return Progress{}, rerr
		}
		if !ok {
			return Progress{Done: true}, nil
		}
		return progressOf(cur, s.MaxRetries), nil
	}
	if err != nil {
		return Progress{}, err
	}
	countTransition(e.Metrics, orig, saved, false)
	return progressOf(saved, s.MaxRetries), nil
}

// inFlight reports whether the record has something under way that a
// cancellation must wait out: a push sent or about to be asked about, the
// BMC's task of a push, an agent or script run, a reset recorded as sent.
func inFlight(r HostUpdate) bool {
	switch {
	case r.ResetSent != nil:
		return true
	case r.Substate == WaitingForFirmwareUpgrade:
		return true
	case r.Started && (r.Substate == WaitingForUpload || r.Substate == WaitingForScoutUpgrade || r.Substate == WaitingForScript):
		return true
	}
	return false
}

// checkpoint persists the record in the middle of a step, before a
// one-shot action, so a restart knows the action was begun.
func (sc *stepCtx) checkpoint(ctx context.Context) error {
	saved, err := sc.e.Store.PutUpdate(ctx, sc.rec)
	if err != nil {
		return err
	}
	sc.rec = saved
	return nil
}

func contains(list []Substate, s Substate) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (sc *stepCtx) move(s Substate, note string) { sc.rec.moveTo(s, sc.now, note) }

func (sc *stepCtx) after(d time.Duration) { sc.rec.NotBefore = sc.now.Add(d) }

// fail records a failed attempt and moves to FailedFirmwareUpgrade.
func (sc *stepCtx) fail(code *hostforge.Spec, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	sc.rec.Failure = &FailureInfo{Code: code.Code, Message: capOutput(msg), At: sc.now}
	sc.rec.Artifact = 0
	sc.rec.TaskID = ""
	sc.move(FailedFirmwareUpgrade, code.Code+": "+firstLine(msg))
	if !sc.rec.Exhausted(sc.e.Settings.MaxRetries) {
		sc.after(min(sc.e.Settings.RetryInterval, sc.e.Settings.Recheck))
	}
}

// transientBackoff paces retries after transient errors.
var transientBackoff = hostforge.Backoff{First: 30 * time.Second, Max: 10 * time.Minute}

// transient books a transient error of the substate: it is retried later,
// and fails the attempt once the substate's error budget is spent. A
// failure that is not retryable fails the attempt at once.
func (sc *stepCtx) transient(err error, what string) {
	_, f, _ := hostforge.Classify(err)
	sc.rec.Errors++
	sc.rec.LastError = capOutput(what + ": " + f.Error())
	code := BMCUnreachable
	if f.Code != hostforge.Unclassified.Code && f.Code != hostforge.Cancelled.Code {
		code = &f.Spec
	}
	if !f.Retryable && f.Code != hostforge.Unclassified.Code {
		sc.fail(code, "%s: %s", what, f.Error())
		return
	}
	if sc.rec.Errors > sc.e.Settings.MaxTransientErrors {
		sc.fail(code, "%s failed %d times in a row; last: %s", what, sc.rec.Errors, f.Error())
		return
	}
	sc.after(transientBackoff.After(sc.rec.Errors))
}

// transientPaced books a transient error like transient, but paces the
// next attempt at every instead of backing off: for reads that decide
// whether a side effect happened, which are cheap and must be settled
// while the BMC's evidence is fresh.
func (sc *stepCtx) transientPaced(err error, what string, every time.Duration) {
	s := sc.rec.Substate
	sc.transient(err, what)
	if sc.rec.Substate == s {
		sc.after(every)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// catalog is the effective catalog: the files' merged catalog with the
// store's runtime overrides on top.
func (e *Executor) catalog(ctx context.Context) (*Catalog, error) {
	ovs, err := e.Store.Overrides(ctx)
	if err != nil {
		return nil, err
	}
	return currentOf(e.Catalog).WithOverrides(ovs)
}

// load returns the machine's progress, creating its record when a request
// waits for it.
func (e *Executor) load(ctx context.Context, in StepInput) (Progress, error) {
	s := e.Settings
	rec, ok, err := e.Store.Update(ctx, in.MachineID)
	if err != nil {
		return Progress{}, err
	}
	if ok {
		return progressOf(rec, s.MaxRetries), nil
	}
	req, ok, err := e.Store.Request(ctx, in.MachineID)
	if err != nil {
		return Progress{}, err
	}
	if !ok {
		return Progress{Done: true}, nil
	}
	now := e.Clock.Now()
	rec = HostUpdate{MachineID: in.MachineID, Substate: Pending, EnteredAt: now, NotBefore: now, Generation: req.CreatedAt.UnixNano(),
		History: []Transition{{To: Pending, At: now, Note: "request by " + req.Initiator}}}
	saved, err := e.Store.PutUpdate(ctx, rec)
	if StateConflict.Is(err) {
		return e.load(ctx, in)
	}
	if err != nil {
		return Progress{}, err
	}
	return progressOf(saved, s.MaxRetries), nil
}

// pending is the start gate: a Ready host starts at once; an Assigned
// host only after its tenant approved updates on reboot, or inside the
// site's instance_autoreboot_period. Starting protects the host: the
// update health report (no allocation, no alerting) and lockdown off.
func (e *Executor) pending(ctx context.Context, sc *stepCtx) error {
	m := sc.rec.MachineID
	req, ok, err := e.Store.Request(ctx, m)
	if err != nil {
		return err
	}
	if !ok {
		// The request was cleared before the start.
		sc.done = true
		return e.Store.Complete(ctx, m, nil)
	}
	host, ok, err := e.Hosts.Get(ctx, m)
	if err != nil {
		sc.transient(err, "reading the managed host")
		return nil
	}
	switch {
	case !ok:
		sc.rec.LastError = "the machine is not a managed host"
		sc.after(e.Settings.Recheck)
		return nil
	case host.State == HostAssigned && req.ApprovedAt.IsZero() && !e.Settings.InstanceAutorebootPeriod.Contains(sc.now):
		next := sc.now.Add(e.Settings.Recheck)
		if p := e.Settings.InstanceAutorebootPeriod; p != nil && p.Start.After(sc.now) && p.Start.Before(next) {
			next = p.Start
		}
		sc.rec.NotBefore = next
		return nil
	case host.State != HostReady && host.State != HostAssigned:
		sc.rec.LastError = fmt.Sprintf("the host is %s, neither ready nor assigned", host.State)
		sc.after(e.Settings.Recheck)
		return nil
	}
	power, err := e.BMC.ResetStatus(ctx, m)
	if err != nil {
		sc.transient(err, "reading the host's power state")
		return nil
	}
	if sc.rec.StartLockdown == "" {
		// What lockdown was is recorded before anything changes it: the
		// hand-back restores it, and only when this update turned it off.
		lock, err := e.BMC.Lockdown(ctx, m)
		if err != nil {
			sc.transient(err, "reading the platform lockdown")
			return nil
		}
		if lock == "" {
			lock = LockdownNone
		}
		sc.rec.StartLockdown = lock
		if err := sc.checkpoint(ctx); err != nil {
			return err
		}
	}
	if err := e.Hosts.SetUpdateReport(ctx, m, ReportName); err != nil {
		sc.transient(err, "setting the update health report")
		return nil
	}
	if sc.rec.StartLockdown == LockdownEnabled {
		if err := e.BMC.SetLockdown(ctx, m, false); err != nil {
			sc.transient(err, "turning lockdown off")
			return nil
		}
	}
	if _, err := e.Store.PatchRequest(ctx, m, RequestPatch{StartedAt: sc.now}); err != nil {
		return err
	}
	sc.rec.Assigned = host.State == HostAssigned
	sc.rec.StartPower = power.Power
	note := "started"
	if sc.rec.Assigned {
		if !req.ApprovedAt.IsZero() {
			note += " (tenant approved)"
		} else {
			note += " (autoreboot period)"
		}
	}
	sc.move(CheckingFirmware, note)
	return nil
}

// checking refreshes the inventory and picks the first component in the
// ordering that needs work, and its route.
func (e *Executor) checking(ctx context.Context, sc *stepCtx) error {
	m := sc.rec.MachineID
	if sc.rec.Reprotect {
		if err := e.Hosts.SetUpdateReport(ctx, m, ReportName); err != nil {
			sc.transient(err, "setting the update health report again for the retry")
			return nil
		}
		if sc.rec.StartLockdown == LockdownEnabled {
			if err := e.BMC.SetLockdown(ctx, m, false); err != nil {
				sc.transient(err, "turning lockdown off again for the retry")
				return nil
			}
		}
		sc.rec.Reprotect = false
	}
	if e.Settings.RequiresManualUpgrade {
		host, ok, err := e.Hosts.Get(ctx, m)
		if err != nil {
			sc.transient(err, "reading the managed host")
			return nil
		}
		req, _, err := e.Store.Request(ctx, m)
		if err != nil {
			return err
		}
		if ok && host.MNNVL && req.ManualUpgradeCompletedAt.IsZero() {
			sc.move(WaitingForManualUpgrade, "MNNVL host: the platform procedure is manual")
			return nil
		}
	}
	inv, err := e.BMC.Inventory(ctx, m)
	if err != nil {
		sc.transient(err, "reading the firmware inventory")
		return nil
	}
	cat, err := e.catalog(ctx)
	if err != nil {
		return err
	}
	model, ok := cat.ForHost(inv.Identity)
	rep := Reported{}
	if ok {
		rep = model.Readings(inv.Entries)
	}
	if err := e.Store.PutObserved(ctx, Observed{MachineID: m, Identity: inv.Identity, Reported: rep, At: sc.now}); err != nil {
		return err
	}
	if !ok {
		sc.move(Restore, fmt.Sprintf("no catalog entry for %s %s", inv.Identity.Manufacturer, inv.Identity.Model))
		return nil
	}
	r := &sc.rec
	noteChange(r, rep)
	comp, entry, needs := model.NeedsWork(rep)
	if !needs {
		sc.move(Restore, "every component at its default")
		return nil
	}
	if r.Component != comp || r.Version != entry.Version {
		r.Component, r.Version = comp, entry.Version
		r.From = versionsOf(rep[comp])
		r.Artifact, r.ResetRetries, r.UploadRetries, r.Rounds = 0, 0, 0, 0
	} else {
		r.Rounds++
		// Every way back to checking with the same target is bounded on its
		// own; this bounds them together, so that an install that reports
		// success and changes nothing (a script that exits 0) cannot loop.
		if limit := e.Settings.MaxUploadRetries + 3; r.Rounds > limit {
			sc.fail(NotActivated, "%s %s was selected %d times in a row and never verified (inventory: %s)", comp, entry.Version, r.Rounds, e.reported(ctx, inv, comp))
			return nil
		}
	}
	r.Artifacts, r.PowerDrains = len(entry.Artifacts), entry.PowerDrainsNeeded
	r.Family = Family(inv.Identity.Manufacturer)
	if r.Family == "" {
		r.Family = string(inv.Identity.BMCVendor)
	}
	target := fmt.Sprintf("%s → %s", comp, entry.Version)
	if e.ScoutScripts != nil && e.Scout != nil {
		_, found, err := e.ScoutScripts.Lookup(ctx, model.Vendor, model.Model, comp)
		if err != nil {
			return err
		}
		if found {
			r.Route = RouteScout
			// The agent task of this attempt is drawn when it is offered;
			// an earlier task's or upload's ID must not stand for it.
			r.TaskID = ""
			sc.move(WaitingForScoutUpgrade, target+" by the on-host agent")
			return nil
		}
	}
	if entry.Script != "" {
		r.Route = RouteScript
		sc.move(WaitingForScript, target+" by the entry's script")
		return nil
	}
	r.Route = RouteRedfish
	if len(entry.Artifacts) == 0 {
		sc.fail(ArtifactMissing, "%s %s %s %s: the entry has no files, filenames, filename or url", model.Vendor, model.Model, comp, entry.Version)
		return nil
	}
	if entry.PreUpdateResets && r.Substate == CheckingFirmware {
		sc.move(InitialReset, target+": pre-update resets first")
		return nil
	}
	sc.move(WaitingForUpload, fmt.Sprintf("%s: artifact %d of %d", target, r.Artifact+1, r.Artifacts))
	return nil
}

// versionsOf joins the versions the readings report, in order, without
// repeats.
func versionsOf(reads []Reading) string {
	var vs []string
	for _, x := range reads {
		if !slices.Contains(vs, x.Version) {
			vs = append(vs, x.Version)
		}
	}
	return strings.Join(vs, ", ")
}

// noteChange records the record's target as changed once every reading of
// its component reports it (whatever route installed it): the update's
// list of components it brought to their target.
func noteChange(r *HostUpdate, rep Reported) {
	if r.Component == "" || r.Version == "" {
		return
	}
	reads := rep[r.Component]
	if len(reads) == 0 {
		return
	}
	for _, x := range reads {
		if x.Version != r.Version {
			return
		}
	}
	if n := len(r.Changes); n > 0 && r.Changes[n-1].Component == r.Component && r.Changes[n-1].To == r.Version {
		return
	}
	if r.From == r.Version {
		return // it reported the target before this update touched it
	}
	r.Changes = append(r.Changes, ComponentChange{Component: r.Component, From: r.From, To: r.Version})
}

// manual waits for an operator to mark the platform procedure complete.
func (e *Executor) manual(ctx context.Context, sc *stepCtx) error {
	req, ok, err := e.Store.Request(ctx, sc.rec.MachineID)
	if err != nil {
		return err
	}
	if ok && !req.ManualUpgradeCompletedAt.IsZero() {
		sc.move(CheckingFirmwareRepeat, "manual upgrade marked complete")
		return nil
	}
	sc.after(e.Settings.Recheck)
	return nil
}

// target returns the model and catalog entry of the record's target, or
// false when the catalog no longer has it.
func (e *Executor) target(ctx context.Context, rec HostUpdate) (*Model, Entry, bool, error) {
	obs, ok, err := e.Store.Observed(ctx, rec.MachineID)
	if err != nil || !ok {
		return nil, Entry{}, false, err
	}
	cat, err := e.catalog(ctx)
	if err != nil {
		return nil, Entry{}, false, err
	}
	m, ok := cat.ForHost(obs.Identity)
	if !ok {
		return nil, Entry{}, false, nil
	}
	c, ok := m.Components[rec.Component]
	if !ok {
		return nil, Entry{}, false, nil
	}
	for _, en := range c.KnownFirmware {
		if en.Version == rec.Version {
			return m, en, true, nil
		}
	}
	return nil, Entry{}, false, nil
}

// scoutDeadline is 30 s + execution + download × files + 30 min, at most 5 h.
func scoutDeadline(s ScoutScript, files int) time.Duration {
	d := 30*time.Second + s.ExecutionTimeout + time.Duration(max(files, 1))*s.DownloadTimeout + 30*time.Minute
	return min(d, 5*time.Hour)
}

// scout offers the agent its task and waits for its persisted report.
func (e *Executor) scout(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	if !r.Started {
		m, entry, ok, err := e.target(ctx, *r)
		if err != nil {
			return err
		}
		if !ok {
			sc.move(CheckingFirmwareRepeat, "the catalog changed")
			return nil
		}
		script, found, err := e.ScoutScripts.Lookup(ctx, m.Vendor, m.Model, r.Component)
		if err != nil {
			return err
		}
		if !found {
			sc.move(CheckingFirmwareRepeat, "the packaged script is gone")
			return nil
		}
		if !isTaskID(r.TaskID) {
			// A new attempt: its ID is drawn once and kept until the
			// attempt ends (fail clears it), so an offer that did not go
			// through is retried with the same task.
			id, err := newTaskID(e.Random)
			if err != nil {
				sc.transient(err, "offering the agent its task")
				return nil
			}
			r.Attempt++
			r.TaskID = id
		}
		r.Deadline = sc.now.Add(scoutDeadline(script, len(entry.Artifacts)))
		r.Started = true
		task := ScoutTask{ID: r.TaskID, MachineID: r.MachineID, Component: r.Component, Version: r.Version,
			Script: script, Artifacts: entry.Artifacts, Deadline: r.Deadline}
		if err := sc.checkpoint(ctx); err != nil {
			return err
		}
		if err := e.Scout.Offer(ctx, task); err != nil {
			r.Started = false
			sc.transient(err, "offering the agent its task")
			return nil
		}
		sc.after(e.Settings.TaskPoll)
		return nil
	}
	res, ok, err := e.Store.Result(ctx, r.MachineID, r.TaskID)
	if err != nil {
		return err
	}
	switch {
	case ok && res.OK:
		r.Changed = true
		sc.move(ResetForNewFirmware, "the agent's upgrade succeeded")
	case ok:
		sc.fail(ScoutFailed, "the agent reported a failed upgrade: %s", res.Output)
	case !sc.now.Before(r.Deadline):
		sc.fail(ScoutFailed, "the agent did not report task %s before its deadline %s", r.TaskID, r.Deadline.Format(time.RFC3339))
	default:
		next := sc.now.Add(e.Settings.TaskPoll)
		if next.After(r.Deadline) {
			next = r.Deadline
		}
		r.NotBefore = next
	}
	return nil
}

// script runs the entry's local script once and persists its result. A
// script found begun without a result was interrupted by a restart: it
// is never run again blindly; the attempt fails (and is retried after the
// retry interval, within the budget).
func (e *Executor) script(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	if r.Started {
		res, ok, err := e.Store.Result(ctx, r.MachineID, r.AttemptID(ResultScript))
		if err != nil {
			return err
		}
		if !ok {
			sc.fail(ScriptFailed, "the script of attempt %d was interrupted by a restart and is not resumed; check it no longer runs", r.Attempt)
			return nil
		}
		e.scriptDone(sc, res)
		return nil
	}
	_, entry, ok, err := e.target(ctx, *r)
	if err != nil {
		return err
	}
	if !ok || entry.Script == "" {
		sc.move(CheckingFirmwareRepeat, "the catalog changed")
		return nil
	}
	if e.Scripts == nil {
		sc.fail(ScriptFailed, "the entry names script %s but no script runner is configured", entry.Script)
		return nil
	}
	r.Attempt++
	r.Started = true
	if err := sc.checkpoint(ctx); err != nil {
		return err
	}
	timeout := e.ScriptTimeout
	if timeout <= 0 {
		timeout = time.Hour
	}
	timeout = min(timeout, MaxScriptTimeout)
	job := ScriptJob{ID: r.AttemptID(ResultScript), MachineID: r.MachineID, Script: entry.Script, Component: r.Component, Version: r.Version, Timeout: timeout}
	out, err := e.Scripts.Run(ctx, job)
	res := Result{MachineID: r.MachineID, ID: job.ID, Kind: ResultScript, OK: err == nil && out.OK, Output: capOutput(out.Output), At: e.Clock.Now()}
	switch {
	case err != nil:
		res.Code, res.Output = ScriptFailed.Code, capOutput("the script did not run to its end: "+err.Error())
	case !out.OK:
		res.Code = ScriptFailed.Code
		res.Output = capOutput(fmt.Sprintf("exit code %d: %s", out.ExitCode, out.Output))
	}
	stored, err := e.Store.PutResult(ctx, res)
	if err != nil {
		return err
	}
	e.scriptDone(sc, stored)
	return nil
}

func (e *Executor) scriptDone(sc *stepCtx, res Result) {
	if res.OK {
		sc.rec.Changed = true
		sc.move(CheckingFirmwareRepeat, "the script succeeded (it activates its own firmware)")
		return
	}
	sc.fail(ScriptFailed, "%s", res.Output)
}

// initialReset powers the host off, resets the BMC, waits for the BMC to
// answer, powers on and waits before checking again (pre_update_resets).
func (e *Executor) initialReset(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	m := r.MachineID
	switch r.Phase {
	case 0, 1, 3:
		kind := map[int]ResetKind{0: ResetForceOff, 1: ResetBMC, 3: ResetOn}[r.Phase]
		if done, err := e.reset(ctx, sc, kind, "pre-update reset "+string(kind)); !done || err != nil {
			return err
		}
		r.Phase++
		switch kind {
		case ResetBMC:
			sc.after(e.Settings.TaskPoll)
		case ResetOn:
			sc.after(e.Settings.InitialResetWait)
		}
	case 2:
		if _, err := e.BMC.Inventory(ctx, m); err != nil {
			sc.transient(err, "waiting for the BMC to answer after its reset")
			return nil
		}
		r.Errors = 0
		r.Phase++
	default:
		sc.move(CheckingFirmwareRepeat, "pre-update resets done")
	}
	return nil
}

// waitingTask reports the task states that mean "not done yet".
func waitingTask(s string) bool {
	switch s {
	case TaskNew, TaskStarting, TaskRunning, TaskPending:
		return true
	}
	return false
}

// task polls the BMC's update task.
func (e *Executor) task(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	t, err := e.BMC.Task(ctx, r.MachineID, r.TaskID)
	if err != nil {
		sc.transient(err, "polling task "+r.TaskID)
		return nil
	}
	r.Errors = 0
	switch {
	case t.Gone:
		inv, err := e.BMC.Inventory(ctx, r.MachineID)
		if err == nil && e.atTarget(ctx, inv, r.Component, r.Version) {
			r.Changed = true
			sc.move(CheckingFirmwareRepeat, "task gone; the inventory shows the target")
			return nil
		}
		if sc.now.Sub(r.EnteredAt) >= e.Settings.TaskGoneGrace {
			e.uploadRetry(sc, fmt.Sprintf("task %s gone for %s", r.TaskID, e.Settings.TaskGoneGrace))
			return nil
		}
		sc.after(e.Settings.TaskPoll)
	case waitingTask(t.State):
		if sc.now.Sub(r.EnteredAt) >= e.Settings.TaskTimeout {
			sc.fail(TaskFailed, "task %s still %s after %s", r.TaskID, t.State, e.Settings.TaskTimeout)
			return nil
		}
		sc.after(e.Settings.TaskPoll)
	case t.State == TaskCompleted:
		e.artifactInstalled(sc, fmt.Sprintf("task %s completed", r.TaskID))
	default:
		sc.fail(TaskFailed, "task %s ended %s: %s", r.TaskID, t.State, strings.Join(t.Messages, "; "))
	}
	return nil
}

// atTarget reports whether every installed entry of the component reports
// the version (and at least one does).
func (e *Executor) atTarget(ctx context.Context, inv Inventory, c ComponentType, version string) bool {
	cat, err := e.catalog(ctx)
	if err != nil {
		return false
	}
	m, ok := cat.ForHost(inv.Identity)
	if !ok {
		return false
	}
	reads := m.Readings(inv.Entries)[c]
	for _, x := range reads {
		if x.Version != version {
			return false
		}
	}
	return len(reads) > 0
}

type resetAction struct {
	kind  ResetKind
	pause time.Duration
}

// activationPlan is ResetForNewFirmware's sequence for a component:
//
//   - power_drains_needed = N > 0: N times ForceOff, 60 s, AC power
//     cycle, 90 s, On, 5 s (on a BMC without an AC power cycle the host
//     stays off for power_drain_wait instead of the cycle and its 90 s);
//   - otherwise, uefi and combinedbmcuefi: ForceRestart;
//   - bmc, except on Dell (the iDRAC activates itself): a BMC reset;
//   - hgxbmc and gpu without drains: ForceOff, hgx_bmc_gpu_reboot_delay, On.
func activationPlan(c ComponentType, drains int, family string, hgxDelay time.Duration) []resetAction {
	var plan []resetAction
	for range drains {
		plan = append(plan, resetAction{ResetForceOff, 60 * time.Second}, resetAction{ResetACPowerCycle, 90 * time.Second}, resetAction{ResetOn, 5 * time.Second})
	}
	if drains == 0 && (c == UEFI || c == CombinedBMCUEFI) {
		plan = append(plan, resetAction{ResetForceRestart, 0})
	}
	if c == BMC && family != string(bmc.VendorDell) {
		plan = append(plan, resetAction{ResetBMC, 0})
	}
	if drains == 0 && (c == HGXBMC || c == GPU) {
		plan = append(plan, resetAction{ResetForceOff, hgxDelay}, resetAction{ResetOn, 0})
	}
	return plan
}

// activate performs the component's activation resets, one action per
// call, the pauses between them slept by the body.
func (e *Executor) activate(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	plan := activationPlan(r.Component, r.PowerDrains, r.Family, e.Settings.HGXRebootDelay)
	if r.Phase >= len(plan) {
		sc.move(NewFirmwareReportedWait, fmt.Sprintf("activation resets done (%d)", len(plan)))
		sc.after(min(e.Settings.InventoryPoll, e.Settings.NewFirmwareWait))
		return nil
	}
	a := plan[r.Phase]
	if a.kind == ResetACPowerCycle && r.NoACPowerCycle {
		// The BMC offers no AC power cycle: the drain is the power-off the
		// plan just made, held for the drain wait; the plan's On follows.
		r.Phase++
		sc.after(e.Settings.PowerDrainWait)
		return nil
	}
	if done, err := e.reset(ctx, sc, a.kind, "activation reset "+string(a.kind)); !done || err != nil {
		return err
	}
	r.Phase++
	sc.after(a.pause)
	return nil
}

// verify waits for the inventory to report the target on every matching
// entry; after NewFirmwareWait it resets again, at most MaxResetRetries
// times.
func (e *Executor) verify(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	inv, err := e.BMC.Inventory(ctx, r.MachineID)
	if err != nil {
		sc.transient(err, "reading the firmware inventory")
		return nil
	}
	r.Errors = 0
	if e.atTarget(ctx, inv, r.Component, r.Version) {
		r.ResetRetries, r.Artifact, r.UploadRetries, r.Rounds = 0, 0, 0, 0
		sc.move(CheckingFirmwareRepeat, fmt.Sprintf("%s reports %s", r.Component, r.Version))
		return nil
	}
	waited := sc.now.Sub(r.EnteredAt)
	if waited < e.Settings.NewFirmwareWait {
		sc.rec.NotBefore = sc.now.Add(min(e.Settings.InventoryPoll, e.Settings.NewFirmwareWait-waited))
		return nil
	}
	if e.Settings.NoResetRetries || r.ResetRetries >= e.Settings.MaxResetRetries {
		sc.fail(NotActivated, "%s still reports %s, not %s, after %d activation resets", r.Component, e.reported(ctx, inv, r.Component), r.Version, r.ResetRetries+1)
		return nil
	}
	r.ResetRetries++
	sc.move(ResetForNewFirmware, fmt.Sprintf("%s not reported after %s: reset again (%d of %d)", r.Version, e.Settings.NewFirmwareWait, r.ResetRetries, e.Settings.MaxResetRetries))
	return nil
}

func (e *Executor) reported(ctx context.Context, inv Inventory, c ComponentType) string {
	cat, err := e.catalog(ctx)
	if err != nil {
		return "?"
	}
	m, ok := cat.ForHost(inv.Identity)
	if !ok {
		return "nothing"
	}
	var parts []string
	for _, x := range m.Readings(inv.Entries)[c] {
		parts = append(parts, fmt.Sprintf("%s=%q", x.ID, x.Version))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}

// failed waits out the retry interval, then checks again with the retry
// count raised; at the budget the update is exhausted and the body ends.
func (e *Executor) failed(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	at := r.EnteredAt
	if r.Failure != nil {
		at = r.Failure.At
	}
	due := at.Add(e.Settings.RetryInterval)
	if sc.now.Before(due) {
		next := sc.now.Add(e.Settings.Recheck)
		if due.Before(next) {
			next = due
		}
		r.NotBefore = next
		return nil
	}
	r.RetryCount++
	r.Try++
	// The retry chooses its target afresh; an update that failed before it
	// started (the host never protected) starts again at its start gate.
	r.Component, r.Version, r.Route = "", "", ""
	r.Artifact, r.ResetRetries, r.UploadRetries, r.Rounds = 0, 0, 0, 0
	req, ok, err := e.Store.Request(ctx, r.MachineID)
	if err != nil {
		return err
	}
	next := CheckingFirmware
	if ok && !req.Started() {
		next = Pending
	}
	// A started update's retry protects the host again before it checks:
	// a hand-back that failed may have removed the update report or turned
	// lockdown back on.
	r.Reprotect = next == CheckingFirmware
	sc.move(next, fmt.Sprintf("retry %d of %d", r.RetryCount, e.Settings.MaxRetries))
	return nil
}

// restore hands the host back: lockdown on again (unless its profile keeps
// it off), a host that was on at the start on again, an assigned host whose
// firmware changed restarted into its instance, the health report removed,
// and the request and record removed.
func (e *Executor) restore(ctx context.Context, sc *stepCtx) error {
	r := &sc.rec
	m := r.MachineID
	host, ok, err := e.Hosts.Get(ctx, m)
	if err != nil {
		sc.transient(err, "reading the managed host")
		return nil
	}
	if r.Phase == 0 {
		// Lockdown goes back on only when this update turned it off (it was
		// on at the start), and not when the host's profile keeps it off.
		if r.StartLockdown == LockdownEnabled && !(ok && host.DisableLockdown) && !e.profileDisablesLockdown(ctx, m) {
			if err := e.BMC.SetLockdown(ctx, m, true); err != nil {
				sc.transient(err, "turning lockdown back on")
				return nil
			}
		}
		r.Phase, r.Errors = 1, 0
		if err := sc.checkpoint(ctx); err != nil {
			return err
		}
	}
	if r.Phase == 1 {
		// A host that was on when the update started is on again (an
		// attempt that failed between a power-off and its power-on left it
		// off); an assigned host whose firmware changed restarts into its
		// instance (a power-on boots it there too).
		var kind ResetKind
		switch {
		case r.ResetSent != nil && r.ResetSent.Phase == 1:
			kind = r.ResetSent.Kind
		case r.StartPower == PowerOn:
			st, err := e.BMC.ResetStatus(ctx, m)
			if err != nil {
				sc.transient(err, "reading the power state before handing the host back")
				return nil
			}
			if st.Power == PowerOff {
				kind = ResetOn
			}
		}
		if kind == "" && r.Assigned && r.Changed {
			kind = ResetForceRestart
		}
		if kind != "" {
			if done, err := e.reset(ctx, sc, kind, "powering the host back into service ("+string(kind)+")"); !done || err != nil {
				return err
			}
		}
		r.Phase, r.Errors = 2, 0
		if err := sc.checkpoint(ctx); err != nil {
			return err
		}
	}
	if err := e.Hosts.ClearUpdateReport(ctx, m); err != nil {
		sc.transient(err, "removing the update health report")
		return nil
	}
	h, err := e.history(ctx, *r, sc.now)
	if err != nil {
		return err
	}
	sc.done = true
	return e.Store.Complete(ctx, m, &h)
}

// history is the record's update as it is kept once it ended.
func (e *Executor) history(ctx context.Context, r HostUpdate, now time.Time) (UpdateHistory, error) {
	h := UpdateHistory{MachineID: r.MachineID, Generation: r.Generation, FinishedAt: now, Outcome: OutcomeDone, Record: r}
	if r.Cancel != nil {
		h.Outcome, h.CancelledBy = OutcomeCancelled, r.Cancel.By
	}
	req, ok, err := e.Store.Request(ctx, r.MachineID)
	if err != nil {
		return h, err
	}
	if ok {
		h.Initiator, h.Message, h.CreatedAt, h.StartedAt = req.Initiator, req.Message, req.CreatedAt, req.StartedAt
	} else {
		h.CreatedAt = time.Unix(0, r.Generation).UTC()
	}
	return h, nil
}

// profileDisablesLockdown reports whether the host's catalog model keeps
// platform lockdown off (host_profile.disable_lockdown).
func (e *Executor) profileDisablesLockdown(ctx context.Context, machine string) bool {
	obs, ok, err := e.Store.Observed(ctx, machine)
	if err != nil || !ok {
		return false
	}
	cat, err := e.catalog(ctx)
	if err != nil {
		return false
	}
	m, ok := cat.ForHost(obs.Identity)
	return ok && m.HostProfile != nil && m.HostProfile.DisableLockdown
}
