package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

// config set writes an override the next pass uses; a bad entry exits 2
// and changes nothing; list and delete follow it.
func TestFirmwareConfigCommands(t *testing.T) {
	e := newFWEnv(t)
	ctx := context.Background()
	r := e.run(t, "firmware", "config", "set", "--vendor", "Dell", "--model", "PowerEdge R750", "--component", "bmc", "--version", "7.20.10.00",
		"--default", "--file", "/fw/idrac-7.20.exe,sha256="+strings.Repeat("ab", 32), "-o", "json")
	wantCode(t, r, ExitOK)
	var ov firmware.Override
	if err := json.Unmarshal([]byte(r.out), &ov); err != nil || ov.Entry.Version != "7.20.10.00" || !ov.Entry.Default || len(ov.Entry.Artifacts) != 1 ||
		ov.Entry.Artifacts[0].SHA256 != strings.Repeat("ab", 32) || ov.UpdatedAt.IsZero() {
		t.Fatalf("output %q (%v)", r.out, err)
	}
	for name, args := range map[string][]string{
		"unknown component":   {"--vendor", "Dell", "--model", "PowerEdge R750", "--component", "flux", "--version", "1"},
		"URL without sha256":  {"--vendor", "Dell", "--model", "PowerEdge R750", "--component", "bmc", "--version", "7.30", "--file", "https://fw.example.net/idrac.exe"},
		"new model, no regex": {"--vendor", "Acme", "--model", "Z9", "--component", "bmc", "--version", "1"},
		"bad regex":           {"--vendor", "Dell", "--model", "PowerEdge R750", "--component", "uefi", "--version", "1", "--matcher", "("},
		"no version":          {"--vendor", "Dell", "--model", "PowerEdge R750", "--component", "bmc"},
		"bad file option":     {"--vendor", "Dell", "--model", "PowerEdge R750", "--component", "bmc", "--version", "1", "--file", "/fw/x,md5=1"},
	} {
		r := e.run(t, append([]string{"firmware", "config", "set"}, args...)...)
		if r.code != ExitUsage {
			t.Errorf("%s: exit %d, want 2: %s", name, r.code, r.err)
		}
	}
	ovs, err := e.store(t).Overrides(ctx)
	if err != nil || len(ovs) != 1 {
		t.Fatalf("stored %+v, %v; the refusals must change nothing", ovs, err)
	}
	r = e.run(t, "firmware", "config", "list", "-o", "json")
	wantCode(t, r, ExitOK)
	var list []firmware.Override
	if err := json.Unmarshal([]byte(r.out), &list); err != nil || len(list) != 1 || list[0].Entry.Version != "7.20.10.00" {
		t.Fatalf("list %q (%v)", r.out, err)
	}
	wantCode(t, e.run(t, "firmware", "config", "delete", "--vendor", "Dell", "--model", "PowerEdge R750", "--component", "bmc", "--version", "7.20.10.00"), ExitOK)
	wantCode(t, e.run(t, "firmware", "config", "delete", "--vendor", "Dell", "--model", "PowerEdge R750", "--component", "bmc", "--version", "7.20.10.00"), ExitUsage)
	r = e.run(t, "firmware", "config", "list", "-o", "json")
	if strings.TrimSpace(r.out) != "[]" {
		t.Errorf("after the delete: %s", r.out)
	}
}

// show --machine says what was read of the host; history, report and
// cancel read and change the same store.
func TestFirmwareShowMachineHistoryReportCancel(t *testing.T) {
	e := newFWEnv(t)
	ctx := context.Background()
	s := e.store(t)
	now := time.Now()
	rep := firmware.Reported{firmware.BMC: {{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "6.00.30.00"}}}
	for _, m := range []string{"m1", "m2"} {
		if err := s.PutObserved(ctx, firmware.Observed{MachineID: m, Identity: firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750"}, Reported: rep, At: now}); err != nil {
			t.Fatal(err)
		}
	}
	r := e.run(t, "firmware", "show", "--machine", "m1", "-o", "json")
	wantCode(t, r, ExitOK)
	var ms struct {
		MachineID string          `json:"machine_id"`
		Host      firmware.Host   `json:"host"`
		Drift     firmware.Report `json:"drift"`
	}
	if err := json.Unmarshal([]byte(r.out), &ms); err != nil || ms.Host.State != firmware.HostReady || !ms.Drift.Drifted || ms.Host.MNNVL {
		t.Fatalf("show --machine %q (%v)", r.out, err)
	}
	wantCode(t, e.run(t, "firmware", "show", "--machine", "nope"), ExitUsage)

	// m1 finished an update before; m2's is under way.
	h := firmware.UpdateHistory{MachineID: "m1", Generation: 1, Initiator: "automated", CreatedAt: now.Add(-time.Hour), StartedAt: now.Add(-time.Hour),
		FinishedAt: now.Add(-time.Minute), Outcome: firmware.OutcomeDone, Record: firmware.HostUpdate{MachineID: "m1",
			History: []firmware.Transition{{To: firmware.Pending, At: now.Add(-time.Hour)}, {To: firmware.Restore, At: now.Add(-time.Minute)}},
			Changes: []firmware.ComponentChange{{Component: firmware.BMC, From: "5.10", To: "6.00.30.00"}}}}
	if err := s.Complete(ctx, "m1", &h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRequest(ctx, firmware.Request{MachineID: "m2", Initiator: "automated", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PatchRequest(ctx, "m2", firmware.RequestPatch{StartedAt: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m2", Substate: firmware.WaitingForUpload, EnteredAt: now}); err != nil {
		t.Fatal(err)
	}
	r = e.run(t, "firmware", "history", "--machine", "m1", "-o", "json")
	wantCode(t, r, ExitOK)
	var hs []map[string]any
	if err := json.Unmarshal([]byte(r.out), &hs); err != nil || len(hs) != 1 {
		t.Fatalf("history %q (%v)", r.out, err)
	}
	for _, k := range []string{"started_at", "finished_at", "outcome", "substates", "components", "failure"} {
		if _, ok := hs[0][k]; !ok {
			t.Errorf("history entry lacks %q: %v", k, hs[0])
		}
	}
	if hs[0]["outcome"] != "done" || hs[0]["failure"] != nil || len(hs[0]["substates"].([]any)) != 2 ||
		hs[0]["components"].([]any)[0].(map[string]any)["from"] != "5.10" {
		t.Errorf("history entry %v", hs[0])
	}

	r = e.run(t, "firmware", "report", "-o", "json")
	wantCode(t, r, ExitOK)
	var lines []map[string]any
	if err := json.Unmarshal([]byte(r.out), &lines); err != nil || len(lines) != 1 {
		t.Fatalf("report %q (%v)", r.out, err)
	}
	want := map[string]any{"vendor": "Dell", "model": "PowerEdge R750", "hosts": 2.0, "compliant": 0.0, "drifted": 1.0, "unmatched": 0.0, "not_in_catalog": 0.0, "updating": 1.0, "exhausted": 0.0}
	for k, v := range want {
		if lines[0][k] != v {
			t.Errorf("report %s = %v, want %v", k, lines[0][k], v)
		}
	}
	r = e.run(t, "firmware", "report", "--unmatched", "-o", "json")
	wantCode(t, r, ExitOK)
	if strings.TrimSpace(r.out) != "[]" {
		t.Errorf("unmatched %s", r.out)
	}

	r = e.run(t, "firmware", "cancel", "--machine", "m2", "-o", "json")
	wantCode(t, r, ExitOK)
	if u, _, _ := s.Update(ctx, "m2"); u.Cancel == nil || u.Cancel.By != "operator jdoe" {
		t.Errorf("the cancellation was not recorded, by whom: %+v", u.Cancel)
	}
	wantCode(t, e.run(t, "firmware", "cancel", "--machine", "m1"), ExitUsage)
}
