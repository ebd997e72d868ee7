package firmware_test

import (
	"testing"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

// PushTask's rule, case by case: which task of the BMC's list is taken as
// the task of a push whose answer was lost.
func TestPushTask(t *testing.T) {
	at := time.Date(2026, 5, 4, 9, 0, 0, 0, time.UTC)
	bmcNow := at.Add(-3*time.Hour + 10*time.Minute) // the BMC's clock runs 3 h behind; 10 min passed
	now := at.Add(10 * time.Minute)
	old := firmware.TaskInfo{ID: "/redfish/v1/TaskService/Tasks/1", State: firmware.TaskCompleted, Update: true, Start: bmcNow.Add(-48 * time.Hour), End: bmcNow.Add(-47 * time.Hour)}
	reset := firmware.TaskInfo{ID: "/redfish/v1/TaskService/Tasks/2", State: firmware.TaskRunning, Name: "Computer Reset", Start: bmcNow.Add(-time.Minute)}
	ours := firmware.TaskInfo{ID: "/redfish/v1/TaskService/Tasks/3", State: firmware.TaskRunning, Update: true, Start: bmcNow.Add(-9 * time.Minute)}
	listed := firmware.Push{ID: "1-upload-1-0", Image: "/fw/bios-1.13.2.exe", Version: "1.13.2", Targets: []string{"BIOS"}, At: at, Listed: true,
		Seen: []firmware.SeenTask{{ID: old.ID, Start: old.Start}, {ID: reset.ID, Start: reset.Start}}}
	unlisted := listed
	unlisted.Listed, unlisted.Seen = false, nil
	with := func(t firmware.TaskInfo, f func(*firmware.TaskInfo)) firmware.TaskInfo { f(&t); return t }
	cases := []struct {
		name  string
		push  firmware.Push
		tasks []firmware.TaskInfo
		now   time.Time // the BMC's Date; zero: unknown
		want  string    // "" none
	}{
		{"the new update task", listed, []firmware.TaskInfo{old, reset, ours}, bmcNow, ours.ID},
		{"nothing new: the push did not reach the BMC", listed, []firmware.TaskInfo{old, reset}, bmcNow, ""},
		{"a reset task is never a push's", listed, []firmware.TaskInfo{old, with(reset, func(t *firmware.TaskInfo) { t.ID = "/x/9" })}, bmcNow, ""},
		{"another image's task", listed, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) { t.Image = "idrac-7.10.exe" })}, bmcNow, ""},
		{"the same image by another path and case", listed, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) { t.Image = "BIOS-1.13.2.EXE" })}, bmcNow, ours.ID},
		{"other targets", listed, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) {
			t.Targets = []string{"/redfish/v1/UpdateService/FirmwareInventory/iDRAC"}
		})}, bmcNow, ""},
		{"an Id reused after the BMC's reset (another start)", listed, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) { t.ID = old.ID })}, bmcNow, old.ID},
		{"a new task ended days ago is still the push's", listed, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) {
			t.State, t.End = firmware.TaskCompleted, bmcNow.Add(-50*time.Hour)
		})}, bmcNow, ours.ID},
		{"of two new ones, the later", listed, []firmware.TaskInfo{ours, with(ours, func(t *firmware.TaskInfo) { t.ID, t.Start = "/x/4", bmcNow.Add(-5*time.Minute) })}, bmcNow, "/x/4"},
		{"without the list: started after the record by the BMC's clock", unlisted, []firmware.TaskInfo{old, ours}, bmcNow, ours.ID},
		{"without the list: started before the record", unlisted, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) { t.Start = bmcNow.Add(-20 * time.Minute) })}, bmcNow, ""},
		{"without the list: ended over an hour ago", unlisted, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) {
			t.State, t.End = firmware.TaskCompleted, bmcNow.Add(-61*time.Minute)
		})}, bmcNow, ""},
		{"without the list or times: only a running task", unlisted, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) { t.Start = time.Time{} })}, time.Time{}, ours.ID},
		{"without the list or times: an ended task is no evidence", unlisted, []firmware.TaskInfo{with(ours, func(t *firmware.TaskInfo) {
			t.Start, t.State = time.Time{}, firmware.TaskCompleted
		})}, time.Time{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := firmware.PushTask(c.push, firmware.TaskList{Tasks: c.tasks, Now: c.now}, now)
			if c.want == "" && ok {
				t.Fatalf("PushTask took %+v", got)
			}
			if c.want != "" && (!ok || got.ID != c.want) {
				t.Fatalf("PushTask = %+v, %v; want %s", got, ok, c.want)
			}
		})
	}
}

// StagedImage finds XCC's pending member with the push's version, by the
// component's matcher or the push's targets, never an installed member or
// a pending one of another version.
func TestStagedImage(t *testing.T) {
	cat := mustParse(t, "world.toml", worldCatalog)
	inv := firmware.Inventory{Identity: firmware.Identity{Manufacturer: "Lenovo", Model: "ThinkSystem SR670 V2"}, Entries: []firmware.InventoryEntry{
		{ID: "BMC-Primary", Version: "42S-2.83", State: "Enabled"},
		{ID: "BMC-Primary-Pending", Version: "42S-2.90", State: "Disabled"},
		{ID: "BMC-Backup", Version: "42S-2.90", State: "StandbySpare"},
	}}
	model, ok := cat.ForHost(inv.Identity)
	if !ok {
		t.Fatal("no model")
	}
	p := firmware.Push{Component: firmware.BMC, Version: "42S-2.90"}
	if id, ok := firmware.StagedImage(inv, model, p); !ok || id != "BMC-Primary-Pending" {
		t.Fatalf("StagedImage = %q, %v", id, ok)
	}
	p.Targets = []string{"BMC-Primary"}
	if id, ok := firmware.StagedImage(inv, nil, p); !ok || id != "BMC-Primary-Pending" {
		t.Fatalf("by targets: %q, %v", id, ok)
	}
	p.Version = "42S-2.95"
	if id, ok := firmware.StagedImage(inv, model, p); ok {
		t.Fatalf("another version staged: %q", id)
	}
}
