package firmware_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
)

// A Ready Dell R750: uefi then bmc (the ordering), each uploaded, its task
// polled, activated (ForceRestart for uefi; nothing for a Dell iDRAC,
// which activates itself) and verified, then the host is handed back.
func TestUpdateDellReadyHost(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m-dell", firmware.HostReady)
	w.request("m-dell")
	res, err := w.update("m-dell")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m-dell")
	st := fb.State()
	if !reflect.DeepEqual(st.Resets, []string{"ForceRestart"}) || st.Uploads != 2 {
		t.Errorf("resets %v, uploads %d; want one ForceRestart (uefi) and two uploads", st.Resets, st.Uploads)
	}
	want := []string{"firmware.load", "firmware.pending", "firmware.checking_firmware", "firmware.waiting_for_upload", "firmware.waiting_for_firmware_upgrade",
		"firmware.reset_for_new_firmware", "firmware.new_firmware_reported_wait", "firmware.checking_firmware_repeat", "firmware.waiting_for_upload",
		"firmware.waiting_for_firmware_upgrade", "firmware.reset_for_new_firmware", "firmware.new_firmware_reported_wait", "firmware.checking_firmware_repeat", "firmware.restore"}
	if got := w.steps(); !reflect.DeepEqual(got, want) {
		t.Errorf("steps\n got %v\nwant %v", got, want)
	}
	if w.hosts.ReportsSet("m-dell") != 1 {
		t.Errorf("report set %d times", w.hosts.ReportsSet("m-dell"))
	}
}

// A Lenovo XCC image needs a BMC reset; while staged, the BMC lists a
// BMC-Primary-Pending member with the new version, which must not count
// as installed. The UEFI goes through the entry's script, which activates
// its own firmware (no reset).
func TestUpdateLenovoBMCResetAndScript(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.lenovo("m-len", firmware.HostReady)
	w.request("m-len")
	if res, err := w.update("m-len"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m-len")
	if st := fb.State(); !reflect.DeepEqual(st.Resets, []string{"BMCReset"}) || st.Uploads != 1 {
		t.Errorf("resets %v uploads %d", st.Resets, st.Uploads)
	}
	if w.scripts.Runs("m-len") != 1 {
		t.Errorf("script ran %d times", w.scripts.Runs("m-len"))
	}
}

// The DGX: hgxbmc first, with pre-update resets (ForceOff, BMC reset,
// wait for the BMC, On, 20 min) and two artifacts applied in order, then
// an off/on cycle; cx7 with one power drain (ForceOff, AC cycle, On).
func TestUpdateDGXMultiArtifactPreResetsAndDrains(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dgx("m-dgx", firmware.HostReady)
	w.request("m-dgx")
	start := w.clk.Now()
	if res, err := w.update("m-dgx"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m-dgx")
	st := fb.State()
	want := []string{"ForceOff", "BMCReset", "On", "ForceOff", "On", "ForceOff", "ACPowerCycle", "On"}
	if !reflect.DeepEqual(st.Resets, want) || st.Uploads != 3 {
		t.Errorf("resets %v uploads %d; want %v and 3 uploads", st.Resets, st.Uploads, want)
	}
	if took := w.clk.Now().Sub(start); took < 20*time.Minute+90*time.Second {
		t.Errorf("took %s of virtual time: the pre-update and drain pauses were not slept", took)
	}
}

// Every timed wait is a sleep of the runtime: the new-firmware wait of 30
// min, at most 5 reset retries, then FailedFirmwareUpgrade; 60 min later a
// retry; after 5 retries the body ends exhausted.
func TestUpdateNeverActivatesExhaustsBudget(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m1", firmware.HostReady)
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateNever})
	w.request("m1")
	start := w.clk.Now()
	res, err := w.update("m1")
	if !firmware.RetriesExhausted.Is(err) || res.Outcome != firmware.OutcomeExhausted || res.Failure == nil || res.Failure.Code != "FIRMWARE_NOT_ACTIVATED" {
		t.Fatalf("Update = %+v, %v; want exhausted with FIRMWARE_NOT_ACTIVATED", res, err)
	}
	u, _ := w.record("m1")
	if u.Substate != firmware.FailedFirmwareUpgrade || u.RetryCount != 5 {
		t.Fatalf("record %s retry %d", u.Substate, u.RetryCount)
	}
	// 6 attempts × (1 + 5 reset retries) ForceRestarts.
	if n := len(fb.State().Resets); n != 36 {
		t.Errorf("%d resets, want 36", n)
	}
	// 6 attempts each wait 6 × 30 min; 5 retry intervals of 60 min.
	if took := w.clk.Now().Sub(start); took < 6*6*30*time.Minute+5*time.Hour {
		t.Errorf("only %s of virtual time passed", took)
	}
	// The host stays failed and out of allocation.
	if h, _, _ := w.hosts.Get(context.Background(), "m1"); !h.UpdateReport {
		t.Error("an exhausted host lost its update report")
	}
	// Rerunning the body changes nothing.
	before := len(fb.State().Resets)
	if _, err := w.update("m1"); !firmware.RetriesExhausted.Is(err) || len(fb.State().Resets) != before {
		t.Fatalf("rerun of an exhausted update: %v, resets %d → %d", err, before, len(fb.State().Resets))
	}
}

// A failed task moves to FailedFirmwareUpgrade; the retry after the
// interval succeeds.
func TestUpdateTaskExceptionRetries(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m1", firmware.HostReady)
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateHostReboot, TaskEnd: "Exception"})
	w.request("m1")
	ctx, cancel := context.WithCancel(context.Background())
	rt := w.runtime()
	rt.OnEvent = func(e flow.Event) {
		w.events = append(w.events, e)
		if e.Step == firmware.StepFailedFirmwareUpgrade {
			// Fix the image while the host waits out its retry interval.
			fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateHostReboot})
		}
	}
	defer cancel()
	res, err := firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: "m1"})
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m1")
	// The failure is the last task poll before the first failed-state step.
	var failedAt, lastPoll, retryAt time.Time
	for _, e := range w.events {
		switch {
		case e.Step == firmware.StepWaitingForFirmwareUpgrade && failedAt.IsZero():
			lastPoll = e.At
		case e.Step == firmware.StepFailedFirmwareUpgrade && failedAt.IsZero():
			failedAt = lastPoll
		case e.Step == firmware.StepCheckingFirmware && !failedAt.IsZero() && retryAt.IsZero():
			retryAt = e.At
		}
	}
	if d := retryAt.Sub(failedAt); d != time.Hour {
		t.Errorf("retried %s after the failure, want the 60 min interval", d)
	}
}

// An assigned host waits for its tenant's approval; its firmware changed,
// so restore restarts it into its instance.
func TestUpdateAssignedHostNeedsApproval(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m-a", firmware.HostAssigned)
	w.request("m-a")
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk}
	rt := w.runtime()
	approved := false
	rt.OnEvent = func(e flow.Event) {
		w.events = append(w.events, e)
		if e.Step == firmware.StepPending && !approved && w.clk.Now().Sub(t0) > 3*time.Hour {
			approved = true
			if _, err := op.Approve(context.Background(), "m-a"); err != nil {
				t.Error(err)
			}
		}
	}
	res, err := firmware.Update(context.Background(), rt, firmware.UpdateInput{MachineID: "m-a"})
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	// Nothing happened to the host before the approval.
	for _, e := range w.events {
		if e.Step == firmware.StepCheckingFirmware && e.At.Sub(t0) < 3*time.Hour {
			t.Fatalf("checking started at %s, before the approval", e.At)
		}
	}
	w.handedBack("m-a")
	st := fb.State()
	if st.Resets[len(st.Resets)-1] != "ForceRestart" || len(st.Resets) != 2 {
		t.Errorf("resets %v: want the uefi activation and a final ForceRestart into the instance", st.Resets)
	}
}

// Without approval, an assigned host starts inside the autoreboot period,
// sleeping until its start.
func TestUpdateAssignedHostAutorebootPeriod(t *testing.T) {
	period := &firmware.Period{Start: t0.Add(7*time.Hour + 2*time.Minute), End: t0.Add(9 * time.Hour)}
	w := newWorld(t, firmware.Settings{InstanceAutorebootPeriod: period})
	w.dell("m-a", firmware.HostAssigned)
	w.request("m-a")
	if res, err := w.update("m-a"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	for _, e := range w.events {
		if e.Step == firmware.StepCheckingFirmware {
			if e.At.Before(period.Start) {
				t.Fatalf("started at %s, before the period %s", e.At, period.Start)
			}
			if e.At.After(period.Start.Add(time.Minute)) {
				t.Fatalf("started at %s, not when the period began (%s)", e.At, period.Start)
			}
			return
		}
	}
	t.Fatal("never started")
}

// A failed assigned host keeps and spends its retry budget (NICo never
// persists it for assigned hosts and retries forever).
func TestUpdateAssignedHostRetryBudget(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m-a", firmware.HostAssigned)
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateHostReboot, TaskEnd: "Killed"})
	w.request("m-a")
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk}
	if _, err := op.Approve(context.Background(), "m-a"); err != nil {
		t.Fatal(err)
	}
	res, err := w.update("m-a")
	if !firmware.RetriesExhausted.Is(err) || res.Failure.Code != "FIRMWARE_TASK_FAILED" {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	if u, _ := w.record("m-a"); u.RetryCount != 5 || !u.Assigned {
		t.Fatalf("record retry %d assigned %v", u.RetryCount, u.Assigned)
	}
	if fb.State().Uploads != 6 {
		t.Fatalf("%d uploads, want 6 (first attempt and 5 retries)", fb.State().Uploads)
	}
}

// The manual gate: an MNNVL host waits until an operator marks the
// platform procedure complete, then the normal loop runs.
func TestUpdateManualUpgradeGate(t *testing.T) {
	w := newWorld(t, firmware.Settings{RequiresManualUpgrade: true})
	w.dgx("m-gb", firmware.HostReady)
	w.hosts.Change("m-gb", func(h *firmware.Host) { h.MNNVL = true })
	w.request("m-gb")
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk}
	rt := w.runtime()
	marked := false
	rt.OnEvent = func(e flow.Event) {
		w.events = append(w.events, e)
		if e.Step == firmware.StepWaitingForManualUpgrade && !marked && w.clk.Now().Sub(t0) > time.Hour {
			marked = true
			if _, err := op.MarkManualUpgradeComplete(context.Background(), "m-gb"); err != nil {
				t.Error(err)
			}
		}
	}
	if res, err := firmware.Update(context.Background(), rt, firmware.UpdateInput{MachineID: "m-gb"}); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m-gb")
	for _, e := range w.events {
		if e.Step == firmware.StepWaitingForUpload && e.At.Sub(t0) < time.Hour {
			t.Fatal("an upload ran before the manual procedure was marked complete")
		}
	}
}

// The on-host agent route comes first when a packaged script exists; its
// report is persisted; activation resets follow.
func TestUpdateScoutRoute(t *testing.T) {
	cases := []struct {
		name    string
		agent   firmwarefake.AgentBehaviour
		code    string
		minTime time.Duration
	}{
		{"the agent installs", firmwarefake.AgentInstalls, "", 0},
		{"the agent reports a failure", firmwarefake.AgentFails, "FIRMWARE_SCOUT_FAILED", 0},
		{"the agent never reports", firmwarefake.AgentSilent, "FIRMWARE_SCOUT_FAILED", 30*time.Minute + 30*time.Second + 10*time.Minute + 10*time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, firmware.Settings{MaxRetries: 1})
			fb := w.dgx("m-dgx", firmware.HostReady)
			fb.SetMember(fakes.FirmwareMember{ID: "HGX_FW_BMC_0", Version: "HGX-23.04"})
			scripts := firmwarefake.NewScoutScripts()
			scripts.Add("Nvidia", "DGXH100", firmware.CX7, firmware.ScoutScript{Path: "nvidia/dgxh100/cx7/upgrade.sh", SHA256: "ab", ExecutionTimeout: 10 * time.Minute, DownloadTimeout: 10 * time.Minute})
			w.exec.Scout, w.exec.ScoutScripts = w.scout, scripts
			w.scout.Behave("m-dgx", c.agent)
			w.request("m-dgx")
			start := w.clk.Now()
			res, err := w.update("m-dgx")
			if c.code == "" {
				if err != nil || res.Outcome != firmware.OutcomeDone {
					t.Fatalf("Update = %+v, %v", res, err)
				}
				w.handedBack("m-dgx")
				if st := fb.State(); st.Uploads != 0 || !reflect.DeepEqual(st.Resets, []string{"ForceOff", "ACPowerCycle", "On"}) {
					t.Errorf("uploads %d resets %v: the agent installs, the workflow drains", st.Uploads, st.Resets)
				}
				return
			}
			if !firmware.RetriesExhausted.Is(err) || res.Failure == nil || res.Failure.Code != c.code {
				t.Fatalf("Update = %+v, %v; want exhausted with %s", res, err, c.code)
			}
			if took := w.clk.Now().Sub(start); took < c.minTime {
				t.Errorf("failed after %s, before the agent's deadline", took)
			}
			if w.scout.Offered("m-dgx") != 2 {
				t.Errorf("offered %d tasks, want 2 (first attempt and one retry)", w.scout.Offered("m-dgx"))
			}
		})
	}
}

// A report for another task is refused and changes nothing.
func TestReportScoutRefusesOtherTask(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	ctx := context.Background()
	if err := firmware.ReportScout(ctx, w.store, t0, "m1", "t-1", true, "ok"); !firmware.RequestRefused.Is(err) {
		t.Fatalf("report without an update = %v", err)
	}
	if _, err := w.store.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: firmware.WaitingForScoutUpgrade, TaskID: "t-2", Started: true}); err != nil {
		t.Fatal(err)
	}
	if err := firmware.ReportScout(ctx, w.store, t0, "m1", "t-1", true, "ok"); !firmware.RequestRefused.Is(err) {
		t.Fatalf("report of another task = %v", err)
	}
	long := strings.Repeat("é", 2000)
	if err := firmware.ReportScout(ctx, w.store, t0, "m1", "t-2", false, long); err != nil {
		t.Fatal(err)
	}
	r, ok, _ := w.store.Result(ctx, "m1", "t-2")
	if !ok || r.OK || len(r.Output) > firmware.MaxOutput || !strings.HasPrefix(long, r.Output) {
		t.Fatalf("result %v ok=%v len=%d", r.OK, ok, len(r.Output))
	}
}

// A script interrupted by a restart is never resumed: the attempt fails.
func TestUpdateScriptInterruptedFails(t *testing.T) {
	w := newWorld(t, firmware.Settings{MaxRetries: 1})
	fb := w.lenovo("m-len", firmware.HostReady)
	fb.SetMember(fakes.FirmwareMember{ID: "BMC-Primary", Version: "42S-2.90", State: "Enabled"})
	w.request("m-len")
	// The first run dies inside the script.
	ctx, cancel := context.WithCancel(context.Background())
	w.scripts.Register("/opt/fw/lenovo-uefi.sh", func(ctx context.Context, job firmware.ScriptJob) (firmware.ScriptOutcome, error) {
		cancel()
		return firmware.ScriptOutcome{}, fmt.Errorf("killed: %w", ctx.Err())
	})
	// It dies before the result is persisted: make the store refuse it.
	w.store.FailWith(func(op string) error {
		if op == "PutResult" {
			return hostforge.Cancelled.New("worker stopped")
		}
		return nil
	})
	if _, err := firmware.Update(ctx, w.runtime(), firmware.UpdateInput{MachineID: "m-len"}); err == nil {
		t.Fatal("the first run survived its own death")
	}
	w.store.FailWith(nil)
	if u, _ := w.record("m-len"); u.Substate != firmware.WaitingForScript || !u.Started {
		t.Fatalf("record after the crash: %s started=%v", u.Substate, u.Started)
	}
	runs := w.scripts.Runs("m-len")
	w.scripts.Register("/opt/fw/lenovo-uefi.sh", w.scripts.Installer("lenovo-uefi-22J-1.60"))
	res, err := w.update("m-len")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("second run = %+v, %v", res, err)
	}
	// The interrupted attempt failed (not rerun blindly); the retry ran it.
	var sawFailure bool
	for _, e := range w.events {
		if e.Step == firmware.StepFailedFirmwareUpgrade {
			sawFailure = true
		}
	}
	if !sawFailure || w.scripts.Runs("m-len") != runs+1 {
		t.Fatalf("failure seen %v, script runs %d → %d", sawFailure, runs, w.scripts.Runs("m-len"))
	}
	w.handedBack("m-len")
}

// A restart at any step loses nothing: kill the body after its n-th step,
// start a new one, and the host still ends compliant with one upload per
// artifact per attempt.
func TestUpdateSurvivesRestartAtEveryStep(t *testing.T) {
	for n := 1; n <= 24; n++ {
		t.Run(fmt.Sprintf("after step %d", n), func(t *testing.T) {
			w := newWorld(t, firmware.Settings{})
			fb := w.dgx("m-dgx", firmware.HostReady)
			w.request("m-dgx")
			ctx, cancel := context.WithCancel(context.Background())
			rt := w.runtime()
			steps := 0
			rt.OnEvent = func(e flow.Event) {
				if e.Kind == "step" {
					steps++
					if steps == n {
						cancel()
					}
				}
			}
			_, _ = firmware.Update(ctx, rt, firmware.UpdateInput{MachineID: "m-dgx"})
			res, err := w.update("m-dgx")
			if err != nil || res.Outcome != firmware.OutcomeDone {
				t.Fatalf("after the restart: %+v, %v", res, err)
			}
			w.handedBack("m-dgx")
			pushedOnce(t, fb, 3)
		})
	}
	// The worker dies right after the BMC took the k-th push: its answer
	// never arrives, nothing after it is written.
	for k := 1; k <= 3; k++ {
		t.Run(fmt.Sprintf("worker dies after push %d", k), func(t *testing.T) {
			w := newWorld(t, firmware.Settings{})
			fb := w.dgx("m-dgx", firmware.HostReady)
			w.request("m-dgx")
			ctx, cancel := context.WithCancel(context.Background())
			dead := &deadStore{Store: w.store}
			w.exec.Store = dead
			w.exec.BMC = &dieAfterPush{BMCClient: w.bmcs, n: k, die: func() { dead.dead = true; cancel() }}
			if _, err := firmware.Update(ctx, w.runtime(), firmware.UpdateInput{MachineID: "m-dgx"}); err == nil {
				t.Fatal("the body whose worker died ended without an error")
			}
			w.exec.Store, w.exec.BMC = w.store, w.bmcs
			res, err := w.update("m-dgx")
			if err != nil || res.Outcome != firmware.OutcomeDone {
				t.Fatalf("after the restart: %+v, %v", res, err)
			}
			w.handedBack("m-dgx")
			pushedOnce(t, fb, 3)
		})
	}
}

// pushedOnce asserts the BMC took n pushes, each image once.
func pushedOnce(t *testing.T, fb *fakes.FirmwareBMC, n int) {
	t.Helper()
	st := fb.State()
	seen := map[string]int{}
	for _, p := range st.Pushes {
		seen[p.Key]++
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s pushed %d times", k, c)
		}
	}
	if st.Uploads != n || len(seen) != n {
		t.Errorf("%d uploads of %d images, want %d of %d: %+v", st.Uploads, len(seen), n, n, st.Pushes)
	}
}

// dieAfterPush kills the worker once the BMC took its n-th push.
type dieAfterPush struct {
	firmware.BMCClient
	n   int
	die func()
}

func (d *dieAfterPush) Upload(ctx context.Context, m string, u firmware.UploadRequest) (string, error) {
	task, err := d.BMCClient.Upload(ctx, m, u)
	if err == nil {
		if d.n--; d.n == 0 {
			d.die()
			return "", context.Canceled
		}
	}
	return task, err
}

// deadStore is the store as a dead worker sees it: nothing reaches it.
type deadStore struct {
	firmware.Store
	dead bool
}

func (d *deadStore) PutResult(ctx context.Context, r firmware.Result) (firmware.Result, error) {
	if d.dead {
		return firmware.Result{}, context.Canceled
	}
	return d.Store.PutResult(ctx, r)
}

func (d *deadStore) PutUpdate(ctx context.Context, u firmware.HostUpdate) (firmware.HostUpdate, error) {
	if d.dead {
		return firmware.HostUpdate{}, context.Canceled
	}
	return d.Store.PutUpdate(ctx, u)
}

func (d *deadStore) ReleaseUploadSlot(ctx context.Context, holder string) error {
	if d.dead {
		return context.Canceled
	}
	return d.Store.ReleaseUploadSlot(ctx, holder)
}

// Every upload holds a slot of the store for as long as it runs, and
// releases it after.
func TestUploadHoldsSlotUntilDone(t *testing.T) {
	w := newWorld(t, firmware.Settings{MaxUploads: 1})
	w.dell("m1", firmware.HostReady)
	w.request("m1")
	spy := &slotSpy{BMCClient: w.bmcs, store: w.store, now: w.clk.Now}
	w.exec.BMC = spy
	if res, err := w.update("m1"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	if spy.uploads != 2 || spy.heldDuring != 2 {
		t.Fatalf("uploads %d, slot held during %d of them", spy.uploads, spy.heldDuring)
	}
	if n, _ := w.store.UploadSlots(context.Background(), w.clk.Now()); n != 0 {
		t.Fatalf("%d slots left held", n)
	}
}

type slotSpy struct {
	firmware.BMCClient
	store               firmware.Store
	now                 func() time.Time
	uploads, heldDuring int
}

func (s *slotSpy) Upload(ctx context.Context, m string, u firmware.UploadRequest) (string, error) {
	s.uploads++
	if n, _ := s.store.UploadSlots(ctx, s.now()); n == 1 {
		s.heldDuring++
	}
	return s.BMCClient.Upload(ctx, m, u)
}
