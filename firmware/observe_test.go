package firmware_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/flow"
)

type recorder struct{ got []any }

func (r *recorder) Observe(o any) { r.got = append(r.got, o) }

// phases are the firmware phases observed, "substate:status", and their
// total time.
func (r *recorder) phases() ([]string, time.Duration) {
	var out []string
	var total time.Duration
	for _, o := range r.got {
		if p, ok := o.(flow.PhaseEnded); ok && p.Workflow == firmware.Workflow {
			out = append(out, p.Phase+":"+p.Status)
			total += p.Took
		}
	}
	return out, total
}

// The update body reports its run and each substate it went through, in
// order, with the time spent in it: the substates' times add up to the run.
func TestUpdateReportsSubstates(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	w.dell("m-dell", firmware.HostReady)
	w.request("m-dell")
	rec := &recorder{}
	rt := w.runtime()
	rt.Observer = rec
	start := w.clk.Now()
	if _, err := firmware.Update(t.Context(), rt, firmware.UpdateInput{MachineID: "m-dell"}); err != nil {
		t.Fatal(err)
	}
	got, total := rec.phases()
	want := []string{"Pending:done", "CheckingFirmware:done", "WaitingForUpload:done", "WaitingForFirmwareUpgrade:done", "ResetForNewFirmware:done",
		"NewFirmwareReportedWait:done", "CheckingFirmwareRepeat:done", "WaitingForUpload:done", "WaitingForFirmwareUpgrade:done", "ResetForNewFirmware:done",
		"NewFirmwareReportedWait:done", "CheckingFirmwareRepeat:done", "Restore:done"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("substates\n got %v\nwant %v", got, want)
	}
	if run := w.clk.Now().Sub(start); total != run || run == 0 {
		t.Errorf("substates add up to %s, the run took %s", total, run)
	}
	first, last := rec.got[0], rec.got[len(rec.got)-1]
	if s, ok := first.(flow.RunStarted); !ok || s.Workflow != firmware.Workflow {
		t.Errorf("first observation %+v, want the run's start", first)
	}
	if e, ok := last.(flow.RunEnded); !ok || e.Failure != nil || e.Took != total {
		t.Errorf("last observation %+v, want the run's success after %s", last, total)
	}
}

// An update that spends its retries ends reporting its last substate
// failed and the run's failure.
func TestUpdateReportsExhaustion(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m1", firmware.HostReady)
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakes.FirmwareImage{Targets: []string{"Installed-159-1.8.2__BIOS.Setup.1-1"}, Version: "1.13.2", Activation: fakes.ActivateNever})
	w.request("m1")
	rec := &recorder{}
	rt := w.runtime()
	rt.Observer = rec
	if _, err := firmware.Update(t.Context(), rt, firmware.UpdateInput{MachineID: "m1"}); !firmware.RetriesExhausted.Is(err) {
		t.Fatalf("Update: %v, want exhausted", err)
	}
	got, _ := rec.phases()
	if len(got) == 0 || got[len(got)-1] != "FailedFirmwareUpgrade:failed" {
		t.Fatalf("substates %v, want FailedFirmwareUpgrade:failed last", got)
	}
	if e, ok := rec.got[len(rec.got)-1].(flow.RunEnded); !ok || e.Failure == nil || e.Failure.Code != firmware.RetriesExhausted.Code {
		t.Fatalf("last observation %+v, want the run's exhaustion", rec.got[len(rec.got)-1])
	}
}
