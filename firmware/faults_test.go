package firmware_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
)

var errBusy = fmt.Errorf("BMC answered 503: %w", hostforge.ErrUnavailable)

// The second artifact's upload fails transiently: the workflow goes back
// to checking (the repeat: no new pre-update resets) and resumes at the
// second artifact, not the first.
func TestArtifactIndexSurvivesTransientRetry(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dgx("m-dgx", firmware.HostReady)
	for _, id := range []string{"CX7_1"} {
		fb.SetMember(fakes.FirmwareMember{ID: id, Version: "28.47.2682"})
	}
	w.request("m-dgx")
	rt := w.runtime()
	uploads := 0
	spy := &uploadHook{BMCClient: w.bmcs, before: func(u firmware.UploadRequest) error {
		uploads++
		if uploads == 2 {
			return firmware.BMCErrors.Classify(errBusy, "firmware_update", "upload")
		}
		return nil
	}}
	w.exec.BMC = spy
	rt.Steps = w.exec.Steps()
	if res, err := firmware.Update(context.Background(), rt, firmware.UpdateInput{MachineID: "m-dgx"}); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m-dgx")
	want := []int{0, 1, 1}
	if fmt.Sprint(spy.indexes) != fmt.Sprint(want) {
		t.Fatalf("artifact indexes uploaded %v, want %v", spy.indexes, want)
	}
	pre := 0
	for _, r := range fb.State().Resets {
		if r == "BMCReset" {
			pre++
		}
	}
	if pre != 1 {
		t.Fatalf("pre-update resets ran %d times, want once", pre)
	}
}

type uploadHook struct {
	firmware.BMCClient
	before  func(firmware.UploadRequest) error
	indexes []int
}

func (u *uploadHook) Upload(ctx context.Context, m string, r firmware.UploadRequest) (string, error) {
	u.indexes = append(u.indexes, r.Index)
	if err := u.before(r); err != nil {
		return "", err
	}
	return u.BMCClient.Upload(ctx, m, r)
}

func TestWorkflowFaults(t *testing.T) {
	cases := []struct {
		name     string
		settings firmware.Settings
		setup    func(w *world, fb *fakes.FirmwareBMC)
		code     string // "" : ends compliant
		check    func(t *testing.T, w *world, fb *fakes.FirmwareBMC)
	}{
		{name: "a BMC busy for a few reads is waited out",
			setup: func(w *world, fb *fakes.FirmwareBMC) { fb.Fail("inventory", 3, errBusy) }},
		{name: "a BMC that never answers fails the attempt, then the budget", settings: firmware.Settings{MaxRetries: 1},
			setup: func(w *world, fb *fakes.FirmwareBMC) { fb.Fail("inventory", 1000, errBusy) },
			code:  "FIRMWARE_BMC_UNREACHABLE"},
		{name: "refused credentials fail at once", settings: firmware.Settings{MaxRetries: 1},
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				fb.Fail("inventory", 1000, fmt.Errorf("401: %w", hostforge.ErrUnauthorized))
			},
			code: "FIRMWARE_BMC_REFUSED",
			check: func(t *testing.T, w *world, fb *fakes.FirmwareBMC) {
				if n := fb.State().Calls["inventory"]; n != 2 {
					t.Errorf("%d inventory reads, want one per attempt", n)
				}
			}},
		{name: "an image the BMC refuses fails the upload", settings: firmware.Settings{MaxRetries: 1},
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				w.cat = firmware.Merge(w.cat, mustParse(t, "x.toml", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.uefi]\nknown_firmware = [ { version = \"1.14\", filename = \"/fw/wrong.exe\", default = true } ]\n"))
				w.exec.Catalog = w.cat
			},
			code: "FIRMWARE_UPLOAD_FAILED"},
		{name: "transient upload failures past their budget fail", settings: firmware.Settings{MaxRetries: 1},
			setup: func(w *world, fb *fakes.FirmwareBMC) { fb.Fail("upload", 1000, errBusy) },
			code:  "FIRMWARE_UPLOAD_FAILED",
			check: func(t *testing.T, w *world, fb *fakes.FirmwareBMC) {
				if n := fb.State().Calls["upload"]; n != 12 {
					t.Errorf("%d upload calls, want 2 attempts × 6", n)
				}
			}},
		{name: "an entry without artifacts fails", settings: firmware.Settings{MaxRetries: 1},
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				w.cat = firmware.Merge(w.cat, mustParse(t, "x.toml", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.uefi]\nknown_firmware = [ { version = \"1.14\", default = true } ]\n"))
				w.exec.Catalog = w.cat
			},
			code: "FIRMWARE_ARTIFACT_MISSING"},
		{name: "a task the BMC forgot, with the inventory at the target, moves on",
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateSelf})
				fb.ForgetTasks(true)
			}},
		{name: "a task the BMC keeps forgetting is retried within the upload budget", settings: firmware.Settings{MaxRetries: 1},
			setup: func(w *world, fb *fakes.FirmwareBMC) { fb.ForgetTasks(true) },
			code:  "FIRMWARE_UPLOAD_FAILED",
			check: func(t *testing.T, w *world, fb *fakes.FirmwareBMC) {
				if n := fb.State().Uploads; n != 12 {
					t.Errorf("uploads %d, want 2 attempts × 6", n)
				}
			}},
		{name: "firmware reported as another string never verifies", settings: firmware.Settings{MaxRetries: 1, MaxResetRetries: 2},
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2.0", Activation: fakes.ActivateHostReboot})
			},
			code: "FIRMWARE_NOT_ACTIVATED",
			check: func(t *testing.T, w *world, fb *fakes.FirmwareBMC) {
				if n := len(fb.State().Resets); n != 6 {
					t.Errorf("%d resets, want 2 attempts × (1 + 2 retries)", n)
				}
			}},
		{name: "a script that exits 0 and installs nothing cannot loop", settings: firmware.Settings{MaxRetries: 1},
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				w.cat = firmware.Merge(w.cat, mustParse(t, "x.toml", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\n[components.uefi]\nknown_firmware = [ { version = \"1.14\", script = \"/bin/true\", default = true } ]\n"))
				w.exec.Catalog = w.cat
				w.scripts.Register("/bin/true", func(context.Context, firmware.ScriptJob) (firmware.ScriptOutcome, error) {
					return firmware.ScriptOutcome{OK: true}, nil
				})
			},
			code: "FIRMWARE_NOT_ACTIVATED",
			check: func(t *testing.T, w *world, fb *fakes.FirmwareBMC) {
				if n := w.scripts.Runs("m1"); n != 18 {
					t.Errorf("%d script runs, want 2 attempts × 9", n)
				}
			}},
		{name: "no reset retries when turned off", settings: firmware.Settings{MaxRetries: 1, NoResetRetries: true},
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateACCycle})
			},
			code: "FIRMWARE_NOT_ACTIVATED",
			check: func(t *testing.T, w *world, fb *fakes.FirmwareBMC) {
				if n := len(fb.State().Resets); n != 2 {
					t.Errorf("%d resets, want one per attempt", n)
				}
			}},
		{name: "a store outage shorter than the step budget is ridden out",
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				n := 0
				w.store.FailWith(func(op string) error {
					if op == "PutUpdate" && n < 3 {
						n++
						return hostforge.Cancelled.New("database restarting")
					}
					return nil
				})
			}},
		{name: "an unclassified store error ends the body", settings: firmware.Settings{MaxRetries: 1},
			setup: func(w *world, fb *fakes.FirmwareBMC) {
				w.store.FailWith(func(op string) error {
					if op == "PutUpdate" {
						return errors.New("driver bug")
					}
					return nil
				})
			},
			code: "UNCLASSIFIED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.settings)
			fb := w.dell("m1", firmware.HostReady)
			c.setup(w, fb)
			w.request("m1")
			res, err := w.update("m1")
			if c.code == "" {
				if err != nil || res.Outcome != firmware.OutcomeDone {
					t.Fatalf("Update = %+v, %v", res, err)
				}
				w.handedBack("m1")
			} else {
				got := hostforge.CodeOf(err)
				if res.Failure != nil {
					got = res.Failure.Code
				}
				if got != c.code {
					t.Fatalf("Update = %+v, %v; want %s", res, err, c.code)
				}
			}
			if c.check != nil {
				c.check(t, w, fb)
			}
		})
	}
}

// A step called with a stale revision acts on nothing.
func TestStaleStepDoesNothing(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m1", firmware.HostReady)
	w.request("m1")
	steps := w.exec.Steps()
	rt := &flow.Local{Steps: steps, Clock: w.clk}
	var p firmware.Progress
	ctx := context.Background()
	if err := rt.Do(ctx, firmware.StepLoad, firmware.StepInput{MachineID: "m1"}, &p); err != nil {
		t.Fatal(err)
	}
	if err := rt.Do(ctx, firmware.StepPending, firmware.StepInput{MachineID: "m1", Revision: p.Revision}, &p); err != nil || p.Substate != firmware.CheckingFirmware {
		t.Fatalf("pending = %+v, %v", p, err)
	}
	// A duplicate of the pending call (a lost activity result redelivered).
	var dup firmware.Progress
	if err := rt.Do(ctx, firmware.StepPending, firmware.StepInput{MachineID: "m1", Revision: 1}, &dup); err != nil || dup != p {
		t.Fatalf("duplicate = %+v, %v; want the current progress %+v", dup, err, p)
	}
	// A step of another substate, at the current revision.
	if err := rt.Do(ctx, firmware.StepRestore, firmware.StepInput{MachineID: "m1", Revision: p.Revision}, &dup); err != nil || dup != p {
		t.Fatalf("restore out of turn = %+v, %v", dup, err)
	}
	if n := fb.State().Calls["lockdown"]; n != 1 {
		t.Fatalf("lockdown written %d times", n)
	}
}

// Waiting for an upload slot holds nothing and counts no error.
func TestUploadWaitsForASlot(t *testing.T) {
	w := newWorld(t, firmware.Settings{MaxUploads: 1})
	w.dell("m1", firmware.HostReady)
	w.request("m1")
	ctx := context.Background()
	if ok, _ := w.store.AcquireUploadSlot(ctx, "other", 1, t0, 20*time.Minute); !ok {
		t.Fatal("slot")
	}
	if res, err := w.update("m1"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	var first time.Time
	for _, e := range w.events {
		if e.Step == firmware.StepWaitingForFirmwareUpgrade {
			first = e.At
			break
		}
	}
	if first.Sub(t0) < 20*time.Minute {
		t.Fatalf("uploaded at %s while another holder had the only slot until %s", first, t0.Add(20*time.Minute))
	}
}

// refuseReset refuses the n-th reset of a kind, as a BMC answering 409 to
// a power action it will not take.
type refuseReset struct {
	firmware.BMCClient
	kind firmware.ResetKind
	n    int
}

func (r *refuseReset) Reset(ctx context.Context, m string, k firmware.ResetKind) error {
	if k == r.kind {
		if r.n--; r.n == 0 {
			return firmware.BMCErrors.Classify(fmt.Errorf("409: %w", hostforge.ErrConflict), "firmware_update", "reset %s", k)
		}
	}
	return r.BMCClient.Reset(ctx, m, k)
}

// An attempt that fails between a power drain's AC cycle and its power-on
// leaves the host off; the retry finds the firmware active and hands the
// host back powered on, as it was when the update started.
func TestRestorePowersBackOnAfterAnInterruptedDrain(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dgx("m-dgx", firmware.HostReady)
	w.request("m-dgx")
	// On: after the pre-update resets, after the HGX off/on, after the
	// CX7 drain: the third is refused.
	w.exec.BMC = &refuseReset{BMCClient: w.bmcs, kind: firmware.ResetOn, n: 3}
	res, err := w.update("m-dgx")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m-dgx")
	st := fb.State()
	if !st.PowerOn {
		t.Fatalf("handed back powered off; resets %v", st.Resets)
	}
	if n := len(st.Resets); st.Resets[n-1] != "On" || st.Resets[n-2] != "ACPowerCycle" {
		t.Fatalf("resets %v: want the drain's AC cycle, then the power-on of the hand-back", st.Resets)
	}
}

// protectedSpy checks at every push that the host is protected: its
// update report on, its lockdown off.
type protectedSpy struct {
	firmware.BMCClient
	w      *world
	pushes int
	bare   int
}

func (p *protectedSpy) Upload(ctx context.Context, m string, u firmware.UploadRequest) (string, error) {
	p.pushes++
	h, _, _ := p.w.hosts.Get(ctx, m)
	if !h.UpdateReport || p.w.bmcs.Of(m).State().Lockdown {
		p.bare++
	}
	return p.BMCClient.Upload(ctx, m, u)
}

// An update that fails at its start gate (the update report refused)
// retries from the gate: no push reaches a host that is not protected.
func TestFailureAtTheStartGateRetriesFromIt(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	w.dell("m1", firmware.HostReady)
	w.request("m1")
	refused := 1
	w.hosts.FailWith(func(op, _ string) error {
		if op == "set_report" && refused > 0 {
			refused--
			return firmware.RequestRefused.New("the report was refused")
		}
		return nil
	})
	spy := &protectedSpy{BMCClient: w.bmcs, w: w}
	w.exec.BMC = spy
	res, err := w.update("m1")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m1")
	if spy.pushes != 2 || spy.bare != 0 {
		t.Fatalf("%d of %d pushes reached a host without its report or with lockdown on", spy.bare, spy.pushes)
	}
}
