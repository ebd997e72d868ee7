package firmwaretest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
)

// BMCHarness is one firmware.BMCClient under test and the fake firmware
// state behind it: for firmwarefake.BMCs the fake itself, for the Redfish
// adapter the state the Redfish emulator serves.
type BMCHarness struct {
	Client  firmware.BMCClient
	Machine string
	// FW is the firmware behind the client: a Dell PowerEdge R750 whose
	// inventory holds DellMembers, in that order.
	FW    *fakes.FirmwareBMC
	Clock *clock.Fake
	// Artifact returns an upload of an artifact whose image is img: it
	// registers img with FW under the key the implementation sees, and
	// makes the file exist where the client reads it. A zero img
	// registers nothing: the BMC refuses the upload.
	Artifact func(t *testing.T, name string, img fakes.FirmwareImage) firmware.UploadRequest
}

// DellMembers is the contract's inventory, after the real R750 capture.
var DellMembers = []fakes.FirmwareMember{
	{ID: "Installed-159-1.8.2__BIOS.Setup.1-1", Name: "BIOS", Version: "1.8.2", State: "Enabled"},
	{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Name: "Integrated Dell Remote Access Controller", Version: "6.00.30.00", State: "Enabled"},
	{ID: "Installed-27763-1.0.5__CPLD.Embedded.1", Name: "System CPLD", Version: "1.0.5", State: "Enabled"},
	{ID: "Previous-25227-4.40.29.00__iDRAC.Embedded.1-1", Name: "Integrated Dell Remote Access Controller", Version: "4.40.29.00", State: "Enabled"},
}

// RunBMC runs the contract suite of firmware.BMCClient; newHarness
// returns a fresh BMC whose clock starts at an arbitrary instant.
func RunBMC(t *testing.T, newHarness func(t *testing.T) BMCHarness) {
	t.Run("Inventory", func(t *testing.T) { testInventory(t, newHarness(t)) })
	t.Run("StagedUntilItsReset", func(t *testing.T) { testStaged(t, newHarness(t)) })
	t.Run("TaskFaults", func(t *testing.T) { testTaskFaults(t, newHarness(t)) })
	t.Run("VanishedTask", func(t *testing.T) { testVanished(t, newHarness(t)) })
	t.Run("RefusedImage", func(t *testing.T) { testRefused(t, newHarness(t)) })
	t.Run("UnavailableIsTransient", func(t *testing.T) { testUnavailable(t, newHarness(t)) })
	t.Run("Lockdown", func(t *testing.T) { testLockdown(t, newHarness(t)) })
	t.Run("TasksListPushes", func(t *testing.T) { testTasks(t, newHarness(t)) })
	t.Run("LostPushFoundInTasks", func(t *testing.T) { testLostPush(t, newHarness(t)) })
	t.Run("ResetStatus", func(t *testing.T) { testResetStatus(t, newHarness(t)) })
}

func version(t *testing.T, h BMCHarness, id string) string {
	t.Helper()
	inv, err := h.Client.Inventory(context.Background(), h.Machine)
	if err != nil {
		t.Fatalf("Inventory: %v", err)
	}
	for _, e := range inv.Entries {
		if e.ID == id {
			return e.Version
		}
	}
	return ""
}

func testInventory(t *testing.T, h BMCHarness) {
	inv, err := h.Client.Inventory(context.Background(), h.Machine)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Identity.Manufacturer != "Dell Inc." || inv.Identity.Model != "PowerEdge R750" || inv.Identity.BMCVendor != bmc.VendorDell {
		t.Errorf("identity %+v", inv.Identity)
	}
	if len(inv.Entries) != len(DellMembers) {
		t.Fatalf("entries %+v, want %d", inv.Entries, len(DellMembers))
	}
	for i, m := range DellMembers {
		e := inv.Entries[i]
		if e.ID != m.ID || e.Version != m.Version || e.State != m.State {
			t.Errorf("entry %d = %+v, want %+v", i, e, m)
		}
	}
}

// waitTask polls until the task leaves its waiting states.
func waitTask(t *testing.T, h BMCHarness, task string) firmware.Task {
	t.Helper()
	for range 20 {
		st, err := h.Client.Task(context.Background(), h.Machine, task)
		if err != nil {
			t.Fatalf("Task: %v", err)
		}
		switch st.State {
		case firmware.TaskNew, firmware.TaskStarting, firmware.TaskRunning, firmware.TaskPending:
			h.Clock.Advance(time.Minute)
			continue
		}
		return st
	}
	t.Fatalf("task %s never ended", task)
	return firmware.Task{}
}

func testStaged(t *testing.T, h BMCHarness) {
	ctx := context.Background()
	bios, idrac, cpld := DellMembers[0].ID, DellMembers[1].ID, DellMembers[2].ID
	cases := []struct {
		name     string
		target   string
		act      fakes.Activation
		notYet   []firmware.ResetKind
		activate []firmware.ResetKind
	}{
		{"uefi needs a host reboot", bios, fakes.ActivateHostReboot, nil, []firmware.ResetKind{firmware.ResetForceRestart}},
		{"bmc needs a BMC reset", idrac, fakes.ActivateBMCReset, []firmware.ResetKind{firmware.ResetForceRestart}, []firmware.ResetKind{firmware.ResetBMC}},
		{"cpld needs an AC power cycle", cpld, fakes.ActivateACCycle, []firmware.ResetKind{firmware.ResetForceRestart, firmware.ResetForceOff, firmware.ResetOn}, []firmware.ResetKind{firmware.ResetACPowerCycle, firmware.ResetOn}},
	}
	for i, c := range cases {
		before := version(t, h, c.target)
		want := fmt.Sprintf("9.%d.0", i)
		req := h.Artifact(t, fmt.Sprintf("image-%d.bin", i), fakes.FirmwareImage{Targets: []string{c.target}, Version: want, Activation: c.act, TaskTime: 3 * time.Minute})
		task, err := h.Client.Upload(ctx, h.Machine, req)
		if err != nil {
			t.Fatalf("%s: Upload: %v", c.name, err)
		}
		st, err := h.Client.Task(ctx, h.Machine, task)
		if err != nil || st.State != firmware.TaskRunning || st.Gone {
			t.Fatalf("%s: a fresh task = %+v, %v; want Running", c.name, st, err)
		}
		if st := waitTask(t, h, task); st.State != firmware.TaskCompleted {
			t.Fatalf("%s: task ended %+v", c.name, st)
		}
		if v := version(t, h, c.target); v != before {
			t.Errorf("%s: a completed task changed the running version to %q before any reset", c.name, v)
		}
		for _, k := range c.notYet {
			if err := h.Client.Reset(ctx, h.Machine, k); err != nil {
				t.Fatalf("%s: Reset(%s): %v", c.name, k, err)
			}
		}
		if v := version(t, h, c.target); v != before {
			t.Errorf("%s: resets %v activated the image (%q)", c.name, c.notYet, v)
		}
		for _, k := range c.activate {
			if err := h.Client.Reset(ctx, h.Machine, k); err != nil {
				t.Fatalf("%s: Reset(%s): %v", c.name, k, err)
			}
		}
		h.Clock.Advance(fakes.BMCResetDowntime + time.Minute) // a BMC reset takes the BMC away for a while
		if v := version(t, h, c.target); v != want {
			t.Errorf("%s: after %v the inventory reports %q, want %q", c.name, c.activate, v, want)
		}
	}
}

func testTaskFaults(t *testing.T, h BMCHarness) {
	ctx := context.Background()
	for i, end := range []string{firmware.TaskException, firmware.TaskInterrupted, firmware.TaskKilled, firmware.TaskCancelled} {
		req := h.Artifact(t, fmt.Sprintf("broken-%d.bin", i), fakes.FirmwareImage{Targets: []string{DellMembers[0].ID}, Version: "0.0.0", Activation: fakes.ActivateHostReboot, TaskEnd: end})
		task, err := h.Client.Upload(ctx, h.Machine, req)
		if err != nil {
			t.Fatalf("Upload: %v", err)
		}
		if st := waitTask(t, h, task); st.State != end {
			t.Errorf("task ended %+v, want %s", st, end)
		}
	}
	if err := h.Client.Reset(ctx, h.Machine, firmware.ResetForceRestart); err != nil {
		t.Fatal(err)
	}
	if v := version(t, h, DellMembers[0].ID); v != DellMembers[0].Version {
		t.Errorf("a failed task staged its image: %q", v)
	}
}

func testVanished(t *testing.T, h BMCHarness) {
	ctx := context.Background()
	req := h.Artifact(t, "ok.bin", fakes.FirmwareImage{Targets: []string{DellMembers[0].ID}, Version: "1.9.9", Activation: fakes.ActivateHostReboot})
	task, err := h.Client.Upload(ctx, h.Machine, req)
	if err != nil {
		t.Fatal(err)
	}
	h.FW.ForgetTasks(true)
	st, err := h.Client.Task(ctx, h.Machine, task)
	if err != nil || !st.Gone {
		t.Fatalf("a task the BMC forgot = %+v, %v; want Gone", st, err)
	}
}

func testRefused(t *testing.T, h BMCHarness) {
	bad := h.Artifact(t, "other-platform.bin", fakes.FirmwareImage{})
	_, err := h.Client.Upload(context.Background(), h.Machine, bad)
	f, ok := hostforge.AsFailure(err)
	if !ok || f.Retryable {
		t.Fatalf("an image the BMC refuses: %v; want a failure that is not retryable", err)
	}
	if f.Code != firmware.BMCRefused.Code {
		t.Errorf("code %s, want %s", f.Code, firmware.BMCRefused.Code)
	}
}

func testUnavailable(t *testing.T, h BMCHarness) {
	h.FW.Fail("inventory", 1, fmt.Errorf("BMC busy: %w", hostforge.ErrUnavailable))
	_, err := h.Client.Inventory(context.Background(), h.Machine)
	f, ok := hostforge.AsFailure(err)
	if err == nil || (ok && !f.Retryable) {
		t.Fatalf("an unavailable BMC: %v; want a transient error", err)
	}
	if _, err := h.Client.Inventory(context.Background(), h.Machine); err != nil {
		t.Fatalf("the BMC answers again: %v", err)
	}
}

// Lockdown reads what SetLockdown set, as the BMC keeps it.
func testLockdown(t *testing.T, h BMCHarness) {
	ctx := context.Background()
	if got, err := h.Client.Lockdown(ctx, h.Machine); err != nil || got != firmware.LockdownEnabled {
		t.Fatalf("Lockdown of a locked-down BMC = %q, %v", got, err)
	}
	if err := h.Client.SetLockdown(ctx, h.Machine, false); err != nil {
		t.Fatal(err)
	}
	if h.FW.State().Lockdown {
		t.Error("lockdown still on")
	}
	if got, err := h.Client.Lockdown(ctx, h.Machine); err != nil || got != firmware.LockdownDisabled {
		t.Errorf("Lockdown after turning it off = %q, %v", got, err)
	}
	if err := h.Client.SetLockdown(ctx, h.Machine, true); err != nil {
		t.Fatal(err)
	}
	if !h.FW.State().Lockdown {
		t.Error("lockdown still off")
	}
	if got, err := h.Client.Lockdown(ctx, h.Machine); err != nil || got != firmware.LockdownEnabled {
		t.Errorf("Lockdown after turning it on = %q, %v", got, err)
	}
}

// task finds a task in a listing.
func task(l firmware.TaskList, id string) (firmware.TaskInfo, bool) {
	for _, x := range l.Tasks {
		if x.ID == id {
			return x, true
		}
	}
	return firmware.TaskInfo{}, false
}

// The TaskService lists an upload's task under the ID Upload returned, as
// a firmware update that names no other image, with its start and, once
// it ended, its end on the BMC's clock.
func testTasks(t *testing.T, h BMCHarness) {
	ctx := context.Background()
	l, err := h.Client.Tasks(ctx, h.Machine)
	if err != nil {
		t.Fatalf("Tasks of a BMC that ran none: %v", err)
	}
	before := len(l.Tasks)
	req := h.Artifact(t, "listed.bin", fakes.FirmwareImage{Targets: []string{DellMembers[0].ID}, Version: "1.9.0", Activation: fakes.ActivateHostReboot, TaskTime: 3 * time.Minute})
	id, err := h.Client.Upload(ctx, h.Machine, req)
	if err != nil {
		t.Fatal(err)
	}
	l, err = h.Client.Tasks(ctx, h.Machine)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := task(l, id)
	if !ok || len(l.Tasks) != before+1 {
		t.Fatalf("Tasks after an upload = %+v; want the %d listed before and task %s", l.Tasks, before, id)
	}
	if !got.Update || got.State != firmware.TaskRunning || got.Start.IsZero() || !got.End.IsZero() {
		t.Errorf("the running upload's task = %+v; want an update, Running, with a start and no end", got)
	}
	if got.Image != "" && got.Image != "listed.bin" {
		t.Errorf("the task names image %q, not the pushed listed.bin", got.Image)
	}
	if l.Now.IsZero() || got.Start.After(l.Now) {
		t.Errorf("the BMC's clock %s, the task's start %s: want the start on or before the BMC's clock", l.Now, got.Start)
	}
	h.Clock.Advance(5 * time.Minute)
	l, err = h.Client.Tasks(ctx, h.Machine)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok = task(l, id); !ok || got.State != firmware.TaskCompleted || got.End.IsZero() || got.End.Before(got.Start) {
		t.Errorf("the ended task = %+v, %v; want Completed with an end after its start", got, ok)
	}
	h.FW.ForgetTasks(true)
	if l, err := h.Client.Tasks(ctx, h.Machine); err != nil {
		t.Fatal(err)
	} else if _, ok := task(l, id); ok {
		t.Errorf("a BMC that forgot its tasks still lists %s", id)
	}
}

// An upload the BMC took whose answer was lost shows in the task list as
// the push's task (firmware.PushTask), and only that one.
func testLostPush(t *testing.T, h BMCHarness) {
	ctx := context.Background()
	old := h.Artifact(t, "earlier.bin", fakes.FirmwareImage{Targets: []string{DellMembers[1].ID}, Version: "7.0", Activation: fakes.ActivateSelf})
	if _, err := h.Client.Upload(ctx, h.Machine, old); err != nil {
		t.Fatal(err)
	}
	l, err := h.Client.Tasks(ctx, h.Machine)
	if err != nil {
		t.Fatal(err)
	}
	p := firmware.Push{MachineID: h.Machine, ID: "1-upload-2-0", Component: firmware.UEFI, Version: "1.9.1", Image: "lost.bin", At: h.Clock.Now(), Listed: true}
	for _, x := range l.Tasks {
		p.Seen = append(p.Seen, firmware.SeenTask{ID: x.ID, Start: x.Start})
	}
	if _, ok := firmware.PushTask(p, l, h.Clock.Now()); ok {
		t.Fatalf("before the push, PushTask took a task that was listed already: %+v", l.Tasks)
	}
	req := h.Artifact(t, "lost.bin", fakes.FirmwareImage{Targets: []string{DellMembers[0].ID}, Version: "1.9.1", Activation: fakes.ActivateHostReboot})
	h.FW.FailLost("upload", 1, fmt.Errorf("connection reset by peer after the image was sent: %w", hostforge.ErrUnavailable))
	if _, err := h.Client.Upload(ctx, h.Machine, req); err == nil {
		t.Fatal("an upload whose answer was lost reported no error")
	}
	h.Clock.Advance(time.Minute)
	l, err = h.Client.Tasks(ctx, h.Machine)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := firmware.PushTask(p, l, h.Clock.Now())
	if !ok {
		t.Fatalf("the lost push's task is not found among %+v", l.Tasks)
	}
	if st, err := h.Client.Task(ctx, h.Machine, got.ID); err != nil || st.Gone || st.State != firmware.TaskRunning {
		t.Fatalf("polling the found task %s = %+v, %v; want it Running", got.ID, st, err)
	}
}

// ResetStatus shows every reset the workflow sends: the power state for
// ForceOff and On, the system's last reset time for a restart, an AC
// power cycle and a power-on, the BMC's for its own reset.
func testResetStatus(t *testing.T, h BMCHarness) {
	ctx := context.Background()
	status := func() firmware.ResetStatus {
		t.Helper()
		st, err := h.Client.ResetStatus(ctx, h.Machine)
		if err != nil {
			t.Fatalf("ResetStatus: %v", err)
		}
		return st
	}
	reset := func(k firmware.ResetKind) {
		t.Helper()
		h.Clock.Advance(time.Minute) // real BMCs keep whole seconds
		if err := h.Client.Reset(ctx, h.Machine, k); err != nil {
			t.Fatalf("Reset(%s): %v", k, err)
		}
	}
	st := status()
	if st.Power != firmware.PowerOn || st.SystemLastReset == "" || st.ManagerLastReset == "" {
		t.Fatalf("a powered-on BMC's status = %+v; want On with both last reset times", st)
	}
	reset(firmware.ResetForceRestart)
	after := status()
	if after.SystemLastReset == st.SystemLastReset || after.ManagerLastReset != st.ManagerLastReset || after.Power != firmware.PowerOn {
		t.Errorf("after ForceRestart %+v, before %+v: want the system's last reset moved, the BMC's not", after, st)
	}
	reset(firmware.ResetForceOff)
	off := status()
	if off.Power != firmware.PowerOff {
		t.Errorf("after ForceOff the power is %q", off.Power)
	}
	reset(firmware.ResetOn)
	on := status()
	if on.Power != firmware.PowerOn || on.SystemLastReset == off.SystemLastReset {
		t.Errorf("after On %+v, before %+v: want On and the system's last reset moved", on, off)
	}
	reset(firmware.ResetBMC)
	h.Clock.Advance(fakes.BMCResetDowntime + time.Minute)
	if b := status(); b.ManagerLastReset == on.ManagerLastReset {
		t.Errorf("after a BMC reset the BMC's last reset is still %s", b.ManagerLastReset)
	}
}
