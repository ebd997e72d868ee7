package firmware_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
)

// lostUpload is a BMC whose first pushes are accepted and whose answers
// are lost: the connection drops after the BMC took the image.
type lostUpload struct {
	firmware.BMCClient
	lose   int
	pushed map[string]int
}

func (l *lostUpload) Upload(ctx context.Context, m string, u firmware.UploadRequest) (string, error) {
	task, err := l.BMCClient.Upload(ctx, m, u)
	if err != nil {
		return task, err
	}
	if l.pushed == nil {
		l.pushed = map[string]int{}
	}
	l.pushed[u.Artifact.Filename]++
	if l.lose > 0 {
		l.lose--
		return "", fmt.Errorf("connection reset by peer after the request was sent: %w", hostforge.ErrUnavailable)
	}
	return task, nil
}

// The BMC accepted the push and its answer was lost: the step asks the
// BMC, finds the push's task and polls it; each image is pushed once.
func TestUploadAnswerLostPushesOnce(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m1", firmware.HostReady)
	w.request("m1")
	spy := &lostUpload{BMCClient: w.bmcs, lose: 1}
	w.exec.BMC = spy
	res, err := w.update("m1")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m1")
	if n := fb.State().Uploads; n != 2 || res.Uploads != 2 {
		t.Errorf("the BMC saw %d uploads for 2 components (pushed %v), the result counts %d; want 2", n, spy.pushed, res.Uploads)
	}
	for img, n := range spy.pushed {
		if n != 1 {
			t.Errorf("%s pushed %d times", img, n)
		}
	}
}

// A push that failed before the BMC took it (a 503): the BMC, asked,
// shows neither a task nor a staged image of it, so it is pushed again and
// counted as a new upload in the result.
func TestPushAgainWhenTheBMCShowsNothing(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m1", firmware.HostReady)
	w.request("m1")
	fb.Fail("upload", 1, errBusy)
	res, err := w.update("m1")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m1")
	if n := fb.State().Uploads; n != 2 || res.Uploads != 3 {
		t.Fatalf("the BMC took %d pushes, the result counts %d uploads; want 2 taken of 3 sent", n, res.Uploads)
	}
	want := []string{firmware.StepWaitingForUpload, firmware.StepCheckingFirmwareRepeat, firmware.StepWaitingForUpload, firmware.StepWaitingForFirmwareUpgrade}
	if got := w.steps(); len(got) < 7 || !reflect.DeepEqual(got[3:7], want) {
		t.Fatalf("steps %v; want the upload, back to checking, the upload again, its task", got)
	}
}

// resultLost is a store that fails the first upload result write, as when
// the worker dies between the push and its write.
type resultLost struct {
	firmware.Store
	fail int
}

func (r *resultLost) PutResult(ctx context.Context, res firmware.Result) (firmware.Result, error) {
	if res.Kind == firmware.ResultUpload && r.fail > 0 {
		r.fail--
		return firmware.Result{}, hostforge.Cancelled.New("the database restarted before the result was written")
	}
	return r.Store.PutResult(ctx, res)
}

// The BMC accepted the push, the result was never persisted: the rerun
// asks the BMC before pushing and pushes nothing again.
func TestUploadResultNotPersistedPushesOnce(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	fb := w.dell("m1", firmware.HostReady)
	w.request("m1")
	w.exec.Store = &resultLost{Store: w.store, fail: 1}
	res, err := w.update("m1")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	w.handedBack("m1")
	if n := fb.State().Uploads; n != 2 {
		t.Errorf("the BMC saw %d uploads for 2 components, want 2", n)
	}
}

// Every reset's answer is lost (the BMC performed it, the connection
// dropped): each is sent once, as in a run without faults, because the
// BMC's power state and last reset times are read before a reset recorded
// as started is sent again. A reset refused before it took effect is sent
// again.
func TestResetsWithLostAnswersAreSentOnce(t *testing.T) {
	hosts := map[string]func(w *world, m string) *fakes.FirmwareBMC{
		"dell (ForceRestart)":                       func(w *world, m string) *fakes.FirmwareBMC { return w.dell(m, firmware.HostReady) },
		"lenovo (BMC reset)":                        func(w *world, m string) *fakes.FirmwareBMC { return w.lenovo(m, firmware.HostReady) },
		"dgx (pre-update resets, off/on, drain)":    func(w *world, m string) *fakes.FirmwareBMC { return w.dgx(m, firmware.HostReady) },
		"assigned dell (restart into the instance)": func(w *world, m string) *fakes.FirmwareBMC { return w.dell(m, firmware.HostAssigned) },
	}
	run := func(t *testing.T, add func(w *world, m string) *fakes.FirmwareBMC, fault func(fb *fakes.FirmwareBMC)) fakes.FirmwareState {
		t.Helper()
		w := newWorld(t, firmware.Settings{})
		fb := add(w, "m1")
		w.request("m1")
		if h, _, _ := w.hosts.Get(context.Background(), "m1"); h.State == firmware.HostAssigned {
			if _, err := (&firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk}).Approve(context.Background(), "m1"); err != nil {
				t.Fatal(err)
			}
		}
		fault(fb)
		res, err := w.update("m1")
		if err != nil || res.Outcome != firmware.OutcomeDone {
			t.Fatalf("Update = %+v, %v", res, err)
		}
		w.handedBack("m1")
		return fb.State()
	}
	lost := fmt.Errorf("connection reset by peer after the request was sent: %w", hostforge.ErrUnavailable)
	for name, add := range hosts {
		t.Run(name, func(t *testing.T) {
			want := run(t, add, func(*fakes.FirmwareBMC) {}).Resets
			if len(want) == 0 {
				t.Fatal("the update sends no reset")
			}
			got := run(t, add, func(fb *fakes.FirmwareBMC) { fb.FailLost("reset", 1000, lost) })
			if !reflect.DeepEqual(got.Resets, want) {
				t.Errorf("resets with every answer lost %v, want %v (as without faults)", got.Resets, want)
			}
			busy := run(t, add, func(fb *fakes.FirmwareBMC) { fb.Fail("reset", 1, errBusy) })
			if !reflect.DeepEqual(busy.Resets, want) || busy.Calls["reset"] != len(want)+1 {
				t.Errorf("a reset refused before its effect: resets %v in %d calls, want %v in %d", busy.Resets, busy.Calls["reset"], want, len(want)+1)
			}
		})
	}
}
