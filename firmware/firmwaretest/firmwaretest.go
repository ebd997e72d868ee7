// Package firmwaretest is the contract suite of firmware.Store: every
// implementation — the in-memory fake, the SQL store on SQLite and on
// PostgreSQL, a user's own — runs Run and must pass it.
package firmwaretest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hostforge/hostforge/firmware"
)

// t0 is in a non-UTC zone: stores keep instants, not zones.
var t0 = time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))

var sameInstant = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

// Run runs the contract suite; newStore returns a new, empty store.
func Run(t *testing.T, newStore func(t *testing.T) firmware.Store) {
	t.Run("Requests", func(t *testing.T) { testRequests(t, newStore(t)) })
	t.Run("Complete", func(t *testing.T) { testComplete(t, newStore(t)) })
	t.Run("History", func(t *testing.T) { testHistory(t, newStore(t)) })
	t.Run("SwapOverride", func(t *testing.T) { testSwapOverride(t, newStore(t)) })
	t.Run("PassFigures", func(t *testing.T) { testPassFigures(t, newStore(t)) })
	t.Run("UpdateRecords", func(t *testing.T) { testUpdates(t, newStore(t)) })
	t.Run("ConcurrentCompareAndSet", func(t *testing.T) { testConcurrentCAS(t, newStore(t)) })
	t.Run("Policies", func(t *testing.T) { testPolicies(t, newStore(t)) })
	t.Run("Observations", func(t *testing.T) { testObserved(t, newStore(t)) })
	t.Run("Overrides", func(t *testing.T) { testOverrides(t, newStore(t)) })
	t.Run("Results", func(t *testing.T) { testResults(t, newStore(t)) })
	t.Run("Pushes", func(t *testing.T) { testPushes(t, newStore(t)) })
	t.Run("ScoutTasks", func(t *testing.T) { testScoutTasks(t, newStore(t)) })
	t.Run("UploadSlots", func(t *testing.T) { testSlots(t, newStore(t)) })
	t.Run("ConcurrentUploadSlots", func(t *testing.T) { testConcurrentSlots(t, newStore(t)) })
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testRequests(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	a := firmware.Request{MachineID: "m-b", Initiator: firmware.InitiatorAutomated, CreatedAt: t0}
	b := firmware.Request{MachineID: "m-a", Initiator: "operator jdoe", Message: "CHG-1", CreatedAt: t0.Add(time.Minute)}
	for _, r := range []firmware.Request{a, b} {
		created, err := s.CreateRequest(ctx, r)
		if err != nil || !created {
			t.Fatalf("CreateRequest(%s) = %v, %v", r.MachineID, created, err)
		}
	}
	if created, err := s.CreateRequest(ctx, firmware.Request{MachineID: "m-b", Initiator: "someone", CreatedAt: t0.Add(time.Hour)}); err != nil || created {
		t.Fatalf("second CreateRequest = %v, %v; want false", created, err)
	}
	got, ok, err := s.Request(ctx, "m-b")
	if err != nil || !ok || !cmp.Equal(got, a, sameInstant) {
		t.Fatalf("Request = %+v, %v, %v; want the first request unchanged", got, ok, err)
	}
	if _, ok, err := s.Request(ctx, "nope"); err != nil || ok {
		t.Fatalf("Request(nope) = %v, %v", ok, err)
	}
	all, err := s.Requests(ctx)
	must(t, err)
	if len(all) != 2 || all[0].MachineID != "m-a" || all[1].MachineID != "m-b" || !cmp.Equal(all[0], b, sameInstant) {
		t.Fatalf("Requests = %+v", all)
	}

	// Patch: first write wins per field.
	r, err := s.PatchRequest(ctx, "m-a", firmware.RequestPatch{ApprovedAt: t0.Add(2 * time.Minute)})
	must(t, err)
	if !r.ApprovedAt.Equal(t0.Add(2*time.Minute)) || r.Started() {
		t.Fatalf("after approval %+v", r)
	}
	r, err = s.PatchRequest(ctx, "m-a", firmware.RequestPatch{ApprovedAt: t0.Add(time.Hour), StartedAt: t0.Add(3 * time.Minute)})
	must(t, err)
	if !r.ApprovedAt.Equal(t0.Add(2*time.Minute)) || !r.StartedAt.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("a second approval replaced the first, or start not set: %+v", r)
	}
	r, err = s.PatchRequest(ctx, "m-a", firmware.RequestPatch{ManualUpgradeCompletedAt: t0.Add(4 * time.Minute)})
	must(t, err)
	if !r.ManualUpgradeCompletedAt.Equal(t0.Add(4 * time.Minute)) {
		t.Fatalf("manual completion %+v", r)
	}
	if stored, _, _ := s.Request(ctx, "m-a"); !cmp.Equal(stored, r, sameInstant) {
		t.Fatalf("stored %+v, patch returned %+v", stored, r)
	}
	if _, err := s.PatchRequest(ctx, "nope", firmware.RequestPatch{StartedAt: t0}); !firmware.RequestRefused.Is(err) {
		t.Fatalf("patch of a machine without request = %v", err)
	}

	// Delete: a started request is refused with unstartedOnly.
	if deleted, err := s.DeleteRequest(ctx, "m-a", true); !firmware.RequestRefused.Is(err) || deleted {
		t.Fatalf("clear of a started request = %v, %v", deleted, err)
	}
	if _, ok, _ := s.Request(ctx, "m-a"); !ok {
		t.Fatal("a refused clear removed the request")
	}
	if deleted, err := s.DeleteRequest(ctx, "m-b", true); err != nil || !deleted {
		t.Fatalf("clear of an unstarted request = %v, %v", deleted, err)
	}
	if deleted, err := s.DeleteRequest(ctx, "m-b", true); err != nil || deleted {
		t.Fatalf("second clear = %v, %v", deleted, err)
	}
	if deleted, err := s.DeleteRequest(ctx, "m-a", false); err != nil || !deleted {
		t.Fatalf("unconditional delete = %v, %v", deleted, err)
	}
	if all, _ := s.Requests(ctx); len(all) != 0 {
		t.Fatalf("left %+v", all)
	}

	// A batch creates what is missing and reports it, in order.
	must(t, func() error { _, err := s.CreateRequest(ctx, a); return err }())
	batch := []firmware.Request{
		{MachineID: "m-c", Initiator: firmware.InitiatorAutomated, CreatedAt: t0},
		{MachineID: "m-b", Initiator: firmware.InitiatorAutomated, CreatedAt: t0.Add(time.Hour)},
		{MachineID: "m-a", Initiator: firmware.InitiatorAutomated, CreatedAt: t0},
	}
	created, err := s.CreateRequests(ctx, batch)
	must(t, err)
	if !cmp.Equal(created, []string{"m-c", "m-a"}) {
		t.Fatalf("CreateRequests created %v, want [m-c m-a]", created)
	}
	if got, _, _ := s.Request(ctx, "m-b"); !cmp.Equal(got, a, sameInstant) {
		t.Fatalf("a batch changed an existing request: %+v", got)
	}
	if created, err := s.CreateRequests(ctx, nil); err != nil || len(created) != 0 {
		t.Fatalf("empty batch = %v, %v", created, err)
	}
}

func testComplete(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	for _, m := range []string{"m1", "m2"} {
		_, err := s.CreateRequest(ctx, firmware.Request{MachineID: m, Initiator: firmware.InitiatorAutomated, CreatedAt: t0})
		must(t, err)
		_, err = s.PutUpdate(ctx, firmware.HostUpdate{MachineID: m, Substate: firmware.CheckingFirmware, EnteredAt: t0})
		must(t, err)
		_, err = s.PutResult(ctx, firmware.Result{MachineID: m, ID: "1-upload-0-0", Kind: firmware.ResultUpload, OK: true, At: t0})
		must(t, err)
		must(t, s.PutScoutTask(ctx, firmware.ScoutTask{ID: "1-scout-1-0", MachineID: m, Deadline: t0}))
		_, err = s.PutPush(ctx, firmware.Push{MachineID: m, ID: "1-upload-1-0", Component: firmware.UEFI, Version: "1.2", Image: "/fw/bios.bin", At: t0})
		must(t, err)
	}
	must(t, s.Complete(ctx, "m1", nil))
	if _, ok, _ := s.Request(ctx, "m1"); ok {
		t.Error("request kept")
	}
	if _, ok, _ := s.Update(ctx, "m1"); ok {
		t.Error("update record kept")
	}
	if _, ok, _ := s.Result(ctx, "m1", "1-upload-0-0"); ok {
		t.Error("result kept")
	}
	if _, ok, _ := s.ScoutTask(ctx, "m1"); ok {
		t.Error("agent task kept")
	}
	if ps, err := s.Pushes(ctx, "m1"); err != nil || len(ps) != 0 {
		t.Errorf("pushes kept: %+v, %v", ps, err)
	}
	if ps, err := s.Pushes(ctx, "m2"); err != nil || len(ps) != 1 {
		t.Errorf("another machine's pushes: %+v, %v", ps, err)
	}
	if _, ok, _ := s.ScoutTask(ctx, "m2"); !ok {
		t.Error("another machine's agent task was removed")
	}
	_, ok1, _ := s.Request(ctx, "m2")
	_, ok2, _ := s.Update(ctx, "m2")
	_, ok3, _ := s.Result(ctx, "m2", "1-upload-0-0")
	if !ok1 || !ok2 || !ok3 {
		t.Errorf("another machine's state was removed: %v %v %v", ok1, ok2, ok3)
	}
	must(t, s.Complete(ctx, "never-had-one", nil))
	if hs, err := s.History(ctx, "m1"); err != nil || len(hs) != 0 {
		t.Errorf("Complete without a history entry kept %+v, %v", hs, err)
	}
}

func fullUpdate() firmware.HostUpdate {
	return firmware.HostUpdate{
		MachineID: "m1", Substate: firmware.WaitingForFirmwareUpgrade,
		EnteredAt: t0, NotBefore: t0.Add(30 * time.Second), Generation: t0.UnixNano(), Assigned: true,
		Component: firmware.CX7, Version: "28.47", Route: firmware.RouteRedfish, Artifact: 1, Attempt: 3,
		TaskID: "JID_1", Started: true, Deadline: t0.Add(time.Hour), Phase: 2, Artifacts: 2, PowerDrains: 1, Family: "nvidia", Changed: true,
		ResetRetries: 1, RetryCount: 2, Errors: 3, UploadRetries: 1, LastError: "BMC 503",
		Failure: &firmware.FailureInfo{Code: "FIRMWARE_TASK_FAILED", Message: "Exception", At: t0},
		History: []firmware.Transition{{From: firmware.Pending, To: firmware.CheckingFirmware, At: t0, Note: "started"}},
	}
}

func testUpdates(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	u := fullUpdate()
	stored, err := s.PutUpdate(ctx, u)
	must(t, err)
	if stored.Revision != 1 {
		t.Fatalf("first revision %d, want 1", stored.Revision)
	}
	got, ok, err := s.Update(ctx, "m1")
	must(t, err)
	u.Revision = 1
	if !ok || !cmp.Equal(got, u, sameInstant) {
		t.Fatalf("round trip differs: %s", cmp.Diff(u, got, sameInstant))
	}
	// Stale revisions lose and change nothing.
	stale := got
	stale.Revision = 0
	stale.Substate = firmware.Restore
	if _, err := s.PutUpdate(ctx, stale); !firmware.StateConflict.Is(err) {
		t.Fatalf("create over an existing record = %v, want FIRMWARE_STATE_CONFLICT", err)
	}
	next := got
	next.Substate = firmware.ResetForNewFirmware
	next.Failure = nil
	next.History = nil
	n2, err := s.PutUpdate(ctx, next)
	must(t, err)
	if n2.Revision != 2 {
		t.Fatalf("revision %d, want 2", n2.Revision)
	}
	if _, err := s.PutUpdate(ctx, got); !firmware.StateConflict.Is(err) {
		t.Fatalf("write at revision 1 after 2 = %v", err)
	}
	cur, _, _ := s.Update(ctx, "m1")
	if cur.Substate != firmware.ResetForNewFirmware || cur.Failure != nil || len(cur.History) != 0 {
		t.Fatalf("a lost write changed the record: %+v", cur)
	}
	if _, err := s.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m0", Revision: 5, Substate: firmware.Pending}); !firmware.StateConflict.Is(err) {
		t.Fatalf("write of a missing record at revision 5 = %v", err)
	}
	_, err = s.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m0", Substate: firmware.Pending, EnteredAt: t0})
	must(t, err)
	all, err := s.Updates(ctx)
	must(t, err)
	if len(all) != 2 || all[0].MachineID != "m0" || all[1].MachineID != "m1" {
		t.Fatalf("Updates = %+v", all)
	}
	if _, ok, err := s.Update(ctx, "nope"); ok || err != nil {
		t.Fatalf("Update(nope) = %v, %v", ok, err)
	}
}

// Concurrent writers from the same revision: exactly one wins.
func testConcurrentCAS(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	base, err := s.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: firmware.CheckingFirmware, EnteredAt: t0})
	must(t, err)
	var wins, conflicts atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := base
			u.Attempt = i
			_, err := s.PutUpdate(ctx, u)
			switch {
			case err == nil:
				wins.Add(1)
			case firmware.StateConflict.Is(err):
				conflicts.Add(1)
			default:
				t.Errorf("writer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 || conflicts.Load() != 7 {
		t.Fatalf("%d writers won, %d conflicted; want 1 and 7", wins.Load(), conflicts.Load())
	}
}

func testPolicies(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	on, off := true, false
	must(t, s.SetAutoUpdate(ctx, "m1", &on))
	must(t, s.SetAutoUpdate(ctx, "m2", &off))
	must(t, s.SetAutoUpdate(ctx, "m3", &on))
	must(t, s.SetAutoUpdate(ctx, "m3", nil))
	must(t, s.SetAutoUpdate(ctx, "m4", nil))
	got, err := s.AutoUpdates(ctx)
	must(t, err)
	if !cmp.Equal(got, map[string]bool{"m1": true, "m2": false}) {
		t.Fatalf("AutoUpdates = %v", got)
	}
	must(t, s.SetAutoUpdate(ctx, "m1", &off))
	if got, _ := s.AutoUpdates(ctx); got["m1"] {
		t.Fatal("override not replaced")
	}

	w := firmware.Window{MachineID: "m1", Start: t0, End: t0.Add(24 * time.Hour)}
	must(t, s.SetWindow(ctx, w))
	must(t, s.SetWindow(ctx, firmware.Window{MachineID: "m2", Start: t0, End: t0.Add(time.Hour)}))
	w.End = t0.Add(48 * time.Hour)
	must(t, s.SetWindow(ctx, w))
	ws, err := s.Windows(ctx)
	must(t, err)
	if len(ws) != 2 || !cmp.Equal(ws["m1"], w, sameInstant) {
		t.Fatalf("Windows = %+v", ws)
	}
	if deleted, err := s.DeleteWindow(ctx, "m2"); err != nil || !deleted {
		t.Fatalf("DeleteWindow = %v, %v", deleted, err)
	}
	if deleted, err := s.DeleteWindow(ctx, "m2"); err != nil || deleted {
		t.Fatalf("second DeleteWindow = %v, %v", deleted, err)
	}
	if ws, _ := s.Windows(ctx); len(ws) != 1 {
		t.Fatalf("Windows = %+v", ws)
	}
}

func testObserved(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	o := firmware.Observed{
		MachineID: "m1", At: t0,
		Identity: firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750", BMCVendor: "dell"},
		Reported: firmware.Reported{
			firmware.BMC: {{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "6.00.30.00"}},
			firmware.CX7: {{ID: "CX7_0", Version: "28.47"}, {ID: "CX7_1", Version: ""}},
		},
	}
	must(t, s.PutObserved(ctx, o))
	must(t, s.PutObserved(ctx, firmware.Observed{MachineID: "m0", At: t0, Reported: firmware.Reported{}}))
	got, ok, err := s.Observed(ctx, "m1")
	must(t, err)
	if !ok || !cmp.Equal(got, o, sameInstant) {
		t.Fatalf("round trip: %s", cmp.Diff(o, got, sameInstant))
	}
	o.Reported = firmware.Reported{firmware.BMC: {{ID: "x", Version: "7"}}}
	o.At = t0.Add(time.Hour)
	must(t, s.PutObserved(ctx, o))
	all, err := s.AllObserved(ctx)
	must(t, err)
	if len(all) != 2 || all[0].MachineID != "m0" || !cmp.Equal(all[1], o, sameInstant) {
		t.Fatalf("AllObserved = %+v", all)
	}
	if _, ok, err := s.Observed(ctx, "nope"); ok || err != nil {
		t.Fatalf("Observed(nope) = %v, %v", ok, err)
	}
}

func testOverrides(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	a := firmware.Override{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.BMC, UpdatedAt: t0,
		Entry: firmware.Entry{Version: "7.10", Default: true, Artifacts: []firmware.Artifact{{URL: "https://fw/idrac", SHA256: "ab"}}}}
	b := firmware.Override{Vendor: "Lenovo", Model: "ThinkSystem SR670 V2", Component: firmware.UEFI, Matcher: "^UEFI$", UpdatedAt: t0.Add(-time.Hour),
		Entry: firmware.Entry{Version: "1.0"}}
	must(t, s.PutOverride(ctx, a))
	must(t, s.PutOverride(ctx, b))
	got, err := s.Overrides(ctx)
	must(t, err)
	if !cmp.Equal(got, []firmware.Override{b, a}, sameInstant) {
		t.Fatalf("Overrides (oldest first): %s", cmp.Diff([]firmware.Override{b, a}, got, sameInstant))
	}
	// Upsert by vendor family, model and version.
	a2 := a
	a2.Vendor, a2.Model = "Dell Inc.", "poweredge r750"
	a2.Entry.Default = false
	a2.UpdatedAt = t0.Add(time.Hour)
	must(t, s.PutOverride(ctx, a2))
	got, _ = s.Overrides(ctx)
	if len(got) != 2 || !cmp.Equal(got[1], a2, sameInstant) {
		t.Fatalf("upsert: %+v", got)
	}
	if deleted, err := s.DeleteOverride(ctx, "Dell", "PowerEdge R750", firmware.BMC, "7.10"); err != nil || !deleted {
		t.Fatalf("DeleteOverride = %v, %v", deleted, err)
	}
	if deleted, err := s.DeleteOverride(ctx, "Dell", "PowerEdge R750", firmware.BMC, "7.10"); err != nil || deleted {
		t.Fatalf("second DeleteOverride = %v, %v", deleted, err)
	}
	if got, _ := s.Overrides(ctx); len(got) != 1 {
		t.Fatalf("after delete: %+v", got)
	}
}

func testResults(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	r := firmware.Result{MachineID: "m1", ID: "7-script-1-0", Kind: firmware.ResultScript, OK: false, Code: "FIRMWARE_SCRIPT_FAILED", Output: "exit 3: flash failed", At: t0}
	got, err := s.PutResult(ctx, r)
	must(t, err)
	if !cmp.Equal(got, r, sameInstant) {
		t.Fatalf("PutResult returned %+v", got)
	}
	second := r
	second.OK, second.Output = true, "fine"
	got, err = s.PutResult(ctx, second)
	must(t, err)
	if !cmp.Equal(got, r, sameInstant) {
		t.Fatalf("a second result replaced the first: %+v", got)
	}
	stored, ok, err := s.Result(ctx, "m1", "7-script-1-0")
	if err != nil || !ok || !cmp.Equal(stored, r, sameInstant) {
		t.Fatalf("Result = %+v, %v, %v", stored, ok, err)
	}
	if _, ok, err := s.Result(ctx, "m2", "7-script-1-0"); ok || err != nil {
		t.Fatalf("a result of another machine: %v, %v", ok, err)
	}
}

// A push is recorded once (the first write wins, as for results) and
// listed in the order it was recorded, with everything the step reads
// back: the target, the image and its digest, and the tasks seen before.
func testPushes(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	if ps, err := s.Pushes(ctx, "m1"); err != nil || len(ps) != 0 {
		t.Fatalf("Pushes of an empty store = %+v, %v", ps, err)
	}
	first := firmware.Push{MachineID: "m1", ID: "7-upload-2-1", Try: 1, Component: firmware.HGXBMC, Version: "HGX-23.04", Artifact: 1,
		Targets: []string{"HGX_FW_BMC_0"}, Image: "/fw/hgx-part2.fwpkg", Digest: "5e0c", At: t0.Add(time.Minute), Listed: true,
		Seen: []firmware.SeenTask{{ID: "/redfish/v1/TaskService/Tasks/3", Start: t0.Add(-time.Hour)}, {ID: "/redfish/v1/TaskService/Tasks/4"}}}
	got, err := s.PutPush(ctx, first)
	must(t, err)
	if !cmp.Equal(got, first, sameInstant) {
		t.Fatalf("PutPush returned %s", cmp.Diff(first, got, sameInstant))
	}
	again := first
	again.Image, again.Seen, again.At = "/fw/other.bin", nil, t0.Add(time.Hour)
	got, err = s.PutPush(ctx, again)
	must(t, err)
	if !cmp.Equal(got, first, sameInstant) {
		t.Fatalf("a second record of push %s replaced the first: %s", first.ID, cmp.Diff(first, got, sameInstant))
	}
	earlier := firmware.Push{MachineID: "m1", ID: "7-upload-1-1", Component: firmware.HGXBMC, Version: "HGX-23.04", Artifact: 1, Image: "/fw/hgx-part2.fwpkg", At: t0}
	_, err = s.PutPush(ctx, earlier)
	must(t, err)
	_, err = s.PutPush(ctx, firmware.Push{MachineID: "m2", ID: "7-upload-1-0", Image: "/fw/x.bin", At: t0})
	must(t, err)
	ps, err := s.Pushes(ctx, "m1")
	must(t, err)
	if len(ps) != 2 || !cmp.Equal(ps[0], earlier, sameInstant) || !cmp.Equal(ps[1], first, sameInstant) {
		t.Fatalf("Pushes(m1) = %+v; want the push of %s, then %s's", ps, earlier.At, first.ID)
	}
}

func testScoutTasks(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	if _, ok, err := s.ScoutTask(ctx, "m1"); ok || err != nil {
		t.Fatalf("ScoutTask of an empty store = %v, %v", ok, err)
	}
	first := firmware.ScoutTask{ID: "9-scout-1-0", MachineID: "m1", Component: firmware.CX7, Version: "28.39.1002",
		Script:    firmware.ScoutScript{Path: "/opt/scripts/nvidia/dgxh100/cx7/upgrade.sh", SHA256: "ab12", ExecutionTimeout: 2 * time.Hour, DownloadTimeout: 10 * time.Minute},
		Artifacts: []firmware.Artifact{{URL: "https://fw.example.net/cx7.bin", SHA256: "cd34"}, {Filename: "/srv/fw/cx7.sig"}},
		Deadline:  t0.Add(3 * time.Hour)}
	must(t, s.PutScoutTask(ctx, first))
	got, ok, err := s.ScoutTask(ctx, "m1")
	if err != nil || !ok || !cmp.Equal(got, first, sameInstant) {
		t.Fatalf("ScoutTask = %+v, %v, %v; want %+v", got, ok, err, first)
	}
	second := first
	second.ID, second.Artifacts = "9-scout-2-0", nil
	must(t, s.PutScoutTask(ctx, second))
	got, _, err = s.ScoutTask(ctx, "m1")
	must(t, err)
	if got.ID != second.ID || len(got.Artifacts) != 0 {
		t.Fatalf("a new task did not replace the old one: %+v", got)
	}
	if _, ok, err := s.ScoutTask(ctx, "m2"); ok || err != nil {
		t.Fatalf("a task of another machine: %v, %v", ok, err)
	}
}

func testSlots(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	lease := time.Hour
	for i := range 3 {
		ok, err := s.AcquireUploadSlot(ctx, fmt.Sprintf("m%d", i), 3, t0, lease)
		if err != nil || !ok {
			t.Fatalf("slot %d: %v, %v", i, ok, err)
		}
	}
	if ok, err := s.AcquireUploadSlot(ctx, "m9", 3, t0, lease); err != nil || ok {
		t.Fatalf("fourth of three slots: %v, %v", ok, err)
	}
	if ok, err := s.AcquireUploadSlot(ctx, "m1", 3, t0.Add(time.Minute), lease); err != nil || !ok {
		t.Fatalf("a holder re-acquiring its slot: %v, %v", ok, err)
	}
	if n, err := s.UploadSlots(ctx, t0); err != nil || n != 3 {
		t.Fatalf("UploadSlots = %d, %v", n, err)
	}
	must(t, s.ReleaseUploadSlot(ctx, "m0"))
	must(t, s.ReleaseUploadSlot(ctx, "m0"))
	if ok, _ := s.AcquireUploadSlot(ctx, "m9", 3, t0.Add(2*time.Minute), lease); !ok {
		t.Fatal("a released slot was not free")
	}
	// At t0+1h m2's lease has lapsed; m1 (renewed) and m9 still hold theirs.
	if ok, _ := s.AcquireUploadSlot(ctx, "m8", 3, t0.Add(lease), lease); !ok {
		t.Fatal("a lapsed lease was not freed")
	}
	if ok, _ := s.AcquireUploadSlot(ctx, "m7", 3, t0.Add(lease), lease); ok {
		t.Fatal("a renewed lease was freed")
	}
	if n, _ := s.UploadSlots(ctx, t0.Add(lease)); n != 3 {
		t.Fatalf("UploadSlots = %d, want 3", n)
	}
}

// Concurrent acquirers never hold more than max slots.
func testConcurrentSlots(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	var held atomic.Int32
	var peak atomic.Int32
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder := fmt.Sprintf("w%d", i)
			for range 3 {
				ok, err := s.AcquireUploadSlot(ctx, holder, 2, t0, time.Hour)
				if err != nil {
					t.Errorf("%s: %v", holder, err)
					return
				}
				if !ok {
					continue
				}
				n := held.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				for range 100 {
					runtime.Gosched() // hold the slot while others try
				}
				held.Add(-1)
				if err := s.ReleaseUploadSlot(ctx, holder); err != nil {
					t.Errorf("%s: %v", holder, err)
				}
				return
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > 2 || p < 1 {
		t.Fatalf("peak slots held %d, want 1..2", p)
	}
}

// Complete keeps the finished update with the machine's results as they
// were, lists a machine's updates oldest first, replaces an entry of the
// same generation, and the retention prunes by finish time.
func testHistory(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	rec := fullUpdate()
	rec.Substate = firmware.Restore
	rec.Changes = []firmware.ComponentChange{{Component: firmware.CX7, From: "28.39", To: "28.47"}}
	rec.Cancel = &firmware.CancelMark{By: "operator jdoe", At: t0.Add(time.Hour)}
	for i, m := range []string{"m1", "m1", "m2"} {
		_, err := s.CreateRequest(ctx, firmware.Request{MachineID: m, Initiator: "operator", CreatedAt: t0})
		must(t, err)
		_, err = s.PutResult(ctx, firmware.Result{MachineID: m, ID: fmt.Sprintf("%d-upload-1-0", i), Kind: firmware.ResultUpload, OK: true, TaskID: "JID_1", At: t0.Add(time.Duration(i) * time.Minute)})
		must(t, err)
		r := rec
		r.MachineID, r.Generation = m, int64(i+1)
		h := firmware.UpdateHistory{MachineID: m, Generation: int64(i + 1), Initiator: "operator", Message: "CHG-1", CreatedAt: t0, StartedAt: t0.Add(time.Minute),
			FinishedAt: t0.Add(time.Duration(10-i) * time.Hour), Outcome: firmware.OutcomeCancelled, CancelledBy: "operator jdoe", Record: r}
		must(t, s.Complete(ctx, m, &h))
	}
	hs, err := s.History(ctx, "m1")
	must(t, err)
	if len(hs) != 2 || hs[0].Generation != 2 || hs[1].Generation != 1 {
		t.Fatalf("History(m1) = %+v; want both updates, the one that finished first first", hs)
	}
	got := hs[1]
	if got.Outcome != firmware.OutcomeCancelled || got.CancelledBy != "operator jdoe" || !got.FinishedAt.Equal(t0.Add(10*time.Hour)) ||
		!got.StartedAt.Equal(t0.Add(time.Minute)) || got.Message != "CHG-1" {
		t.Errorf("kept %+v", got)
	}
	if len(got.Results) != 1 || got.Results[0].ID != "0-upload-1-0" || got.Results[0].TaskID != "JID_1" {
		t.Errorf("kept results %+v; want the result the machine had when it ended", got.Results)
	}
	if len(hs[0].Results) != 1 || hs[0].Results[0].ID != "1-upload-1-0" {
		t.Errorf("the second update kept results %+v; want its own only", hs[0].Results)
	}
	want := rec
	want.MachineID, want.Generation = "m1", 1
	if diff := cmp.Diff(want, got.Record, sameInstant); diff != "" {
		t.Errorf("kept record differs (-want +got):\n%s", diff)
	}
	// The same update completed again (a rerun after a lost answer) is
	// kept once.
	again := hs[0]
	must(t, s.Complete(ctx, "m1", &again))
	if hs, _ := s.History(ctx, "m1"); len(hs) != 2 {
		t.Errorf("a second Complete of the same update: %d entries, want 2", len(hs))
	}
	n, err := s.PruneHistory(ctx, t0.Add(9*time.Hour+30*time.Minute))
	must(t, err)
	if n != 2 {
		t.Errorf("PruneHistory removed %d, want 2 (finished at +9h and +8h)", n)
	}
	if hs, _ := s.History(ctx, "m1"); len(hs) != 1 || hs[0].Generation != 1 {
		t.Errorf("after the prune m1 keeps %+v; want generation 1", hs)
	}
	if hs, _ := s.History(ctx, "m2"); len(hs) != 0 {
		t.Errorf("after the prune m2 keeps %+v", hs)
	}
	if hs, err := s.History(ctx, "nope"); err != nil || len(hs) != 0 {
		t.Errorf("History(nope) = %+v, %v", hs, err)
	}
}

// SwapOverride writes, replaces and removes an override only against the
// version it was read at.
func testSwapOverride(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	a := firmware.Override{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.BMC, Entry: firmware.Entry{Version: "7.10", Default: true}, UpdatedAt: t0}
	must(t, s.SwapOverride(ctx, nil, &a))
	if err := s.SwapOverride(ctx, nil, &a); !firmware.StateConflict.Is(err) {
		t.Fatalf("a second create = %v; want FIRMWARE_STATE_CONFLICT", err)
	}
	b := a
	b.Vendor, b.Model, b.UpdatedAt = "Dell Inc.", "poweredge r750", t0.Add(time.Second)
	b.Entry.Artifacts = []firmware.Artifact{{Filename: "/fw/idrac.exe"}}
	stale := a
	stale.UpdatedAt = t0.Add(-time.Second)
	if err := s.SwapOverride(ctx, &stale, &b); !firmware.StateConflict.Is(err) {
		t.Fatalf("a swap against a stale read = %v; want FIRMWARE_STATE_CONFLICT", err)
	}
	must(t, s.SwapOverride(ctx, &a, &b))
	ovs, err := s.Overrides(ctx)
	must(t, err)
	if len(ovs) != 1 || !ovs[0].UpdatedAt.Equal(b.UpdatedAt) || len(ovs[0].Entry.Artifacts) != 1 {
		t.Fatalf("after the swap: %+v", ovs)
	}
	other := a
	other.Entry.Version = "7.20"
	if err := s.SwapOverride(ctx, &a, &other); err == nil {
		t.Fatal("a swap between two keys was accepted")
	}
	if err := s.SwapOverride(ctx, &a, nil); !firmware.StateConflict.Is(err) {
		t.Fatalf("a delete against a stale read = %v", err)
	}
	must(t, s.SwapOverride(ctx, &ovs[0], nil))
	if ovs, _ := s.Overrides(ctx); len(ovs) != 0 {
		t.Fatalf("after the delete: %+v", ovs)
	}
	if err := s.SwapOverride(ctx, &a, nil); !firmware.StateConflict.Is(err) {
		t.Fatalf("a delete of an absent override = %v", err)
	}
}

// The last pass's figures are stored and read back; none before a pass.
func testPassFigures(t *testing.T, s firmware.Store) {
	ctx := context.Background()
	if _, ok, err := s.PassFigures(ctx); err != nil || ok {
		t.Fatalf("PassFigures before a pass = %v, %v", ok, err)
	}
	f := firmware.PassFigures{At: t0, Holder: "w1/12", Total: 100, Unhealthy: 2, InMaintenance: 4, Ceiling: 10, Available: 3, Pending: 7,
		Started: 3, Unmatched: 1, Skipped: map[string]int{firmware.SkipCeiling: 4}}
	must(t, s.PutPassFigures(ctx, f))
	got, ok, err := s.PassFigures(ctx)
	if err != nil || !ok || !cmp.Equal(got, f, sameInstant) {
		t.Fatalf("PassFigures = %+v, %v, %v; want %+v", got, ok, err, f)
	}
	f.Pending, f.Skipped = 0, nil
	must(t, s.PutPassFigures(ctx, f))
	if got, _, _ := s.PassFigures(ctx); got.Pending != 0 || len(got.Skipped) != 0 {
		t.Fatalf("the figures were not replaced: %+v", got)
	}
}
