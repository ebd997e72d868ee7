package firmware_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
)

// cancelRuntime cancels the machine's update at the first sleep the body
// takes in the substate when.
type cancelRuntime struct {
	*flow.Local
	w       *world
	machine string
	when    firmware.Substate
	done    bool
}

func (r *cancelRuntime) Sleep(ctx context.Context, d time.Duration) error {
	if !r.done {
		if u, ok := r.w.record(r.machine); ok && u.Substate == r.when {
			op := &firmware.Operator{Store: r.w.store, Hosts: r.w.hosts, Clock: r.w.clk}
			if _, err := op.Cancel(ctx, r.machine, "operator jdoe"); err != nil {
				r.w.t.Fatal(err)
			}
			r.done = true
		}
	}
	return r.Local.Sleep(ctx, d)
}

// A cancellation while the BMC runs a push's task lets the task finish —
// nothing sent is cut — then stops: no further push, no activation reset;
// the host is handed back (out of maintenance, lockdown as it was) and the
// update kept in the history as cancelled, by whom.
func TestCancelWaitsOutThePushThenStops(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	counted := &completions{}
	w.exec.Metrics = counted
	fb := w.dell("d1", firmware.HostReady)
	w.request("d1")
	rt := &cancelRuntime{Local: w.runtime(), w: w, machine: "d1", when: firmware.WaitingForFirmwareUpgrade}
	res, err := firmware.Update(context.Background(), rt, firmware.UpdateInput{MachineID: "d1"})
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("= %+v, %v", res, err)
	}
	if !rt.done {
		t.Fatal("the update never waited on its push's task")
	}
	st := fb.State()
	if st.Uploads != 1 || len(st.Resets) != 0 || st.Staged != 1 {
		t.Errorf("uploads %d, resets %v, staged %d; want the one push finished (staged), nothing after it", st.Uploads, st.Resets, st.Staged)
	}
	if !st.Lockdown {
		t.Error("lockdown left off")
	}
	ctx := context.Background()
	if h, _, _ := w.hosts.Get(ctx, "d1"); h.UpdateReport {
		t.Error("the host was left in maintenance")
	}
	if _, ok, _ := w.store.Request(ctx, "d1"); ok {
		t.Error("the request was kept")
	}
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk}
	hs, err := op.History(ctx, "d1")
	if err != nil || len(hs) != 1 {
		t.Fatalf("history %+v, %v", hs, err)
	}
	h := hs[0]
	if h.Outcome != firmware.OutcomeCancelled || h.CancelledBy != "operator jdoe" || h.StartedAt == nil || h.FinishedAt == nil || len(h.Components) != 0 {
		t.Errorf("history entry %+v", h)
	}
	var sawTask, sawRestore bool
	for _, s := range h.Substates {
		sawTask = sawTask || s.Substate == firmware.WaitingForFirmwareUpgrade
		sawRestore = sawRestore || s.Substate == firmware.Restore
	}
	if !sawTask || !sawRestore {
		t.Errorf("substates %+v", h.Substates)
	}
	if counted.started != 1 || counted.completed != 0 {
		t.Errorf("counted %d started, %d completed; a cancelled update is not a completed one", counted.started, counted.completed)
	}
}

// completions counts the updates started and completed.
type completions struct {
	gaugeSink
	started, completed int
}

func (c *completions) UpdateStarted(string)   { c.started++ }
func (c *completions) UpdateCompleted(string) { c.completed++ }

// An update that spent its retry budget is cancelled: its workflow, run
// again, hands the host back at once; a completed update lists the
// components it changed.
func TestCancelExhaustedAndHistory(t *testing.T) {
	w := newWorld(t, firmware.Settings{MaxRetries: 1, RetryInterval: time.Minute})
	ctx := context.Background()
	fb := w.dell("d1", firmware.HostReady)
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakesImage("Installed-159-1.8.2__BIOS.Setup.1-1", "1.13.2", "Exception"))
	w.request("d1")
	if _, err := w.update("d1"); !firmware.RetriesExhausted.Is(err) {
		t.Fatalf("= %v; want exhausted", err)
	}
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk, Settings: w.exec.Settings}
	if hs, _ := op.History(ctx, "d1"); len(hs) != 1 || hs[0].Outcome != firmware.OutcomeExhausted || hs[0].Failure == nil || hs[0].FinishedAt != nil {
		t.Fatalf("history of the exhausted update %+v", hs)
	}
	if _, err := op.Cancel(ctx, "d1", "operator jdoe"); err != nil {
		t.Fatal(err)
	}
	if u, _ := w.record("d1"); u.Exhausted(w.exec.Settings.MaxRetries) {
		t.Error("a cancelled update still counts as exhausted (the worker would not run it again)")
	}
	if res, err := w.update("d1"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("the cancelled update's run: %+v, %v", res, err)
	}
	if h, _, _ := w.hosts.Get(ctx, "d1"); h.UpdateReport {
		t.Error("the host was left in maintenance")
	}
	hs, _ := op.History(ctx, "d1")
	if len(hs) != 1 || hs[0].Outcome != firmware.OutcomeCancelled || hs[0].Failure == nil || hs[0].Failure.Code != firmware.TaskFailed.Code {
		t.Fatalf("history %+v", hs)
	}
	if _, err := op.Cancel(ctx, "d1", "x"); !firmware.RequestRefused.Is(err) {
		t.Errorf("cancelling a finished update: %v", err)
	}

	// A good image now: the next update changes both components.
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateHostReboot})
	w.request("d1")
	if res, err := w.update("d1"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("= %+v, %v", res, err)
	}
	hs, _ = op.History(ctx, "d1")
	if len(hs) != 2 || hs[1].Outcome != firmware.OutcomeDone {
		t.Fatalf("history %+v", hs)
	}
	want := []firmware.ComponentChange{{Component: firmware.UEFI, From: "1.8.2", To: "1.13.2"}, {Component: firmware.BMC, From: "6.00.30.00", To: "7.10.30.00"}}
	if len(hs[1].Components) != 2 || hs[1].Components[0] != want[0] || hs[1].Components[1] != want[1] {
		t.Errorf("components %+v, want %+v", hs[1].Components, want)
	}
}
