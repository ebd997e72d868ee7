package firmware_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
)

// flakyScout refuses its first `fail` offers (the store did not answer)
// and passes the rest to the fake agent; it records every offered ID.
type flakyScout struct {
	next    firmware.Scout
	fail    int
	offered []string
}

func (f *flakyScout) Offer(ctx context.Context, t firmware.ScoutTask) error {
	f.offered = append(f.offered, t.ID)
	if len(f.offered) <= f.fail {
		return fmt.Errorf("storing the task: %w", hostforge.ErrUnavailable)
	}
	return f.next.Offer(ctx, t)
}

// dgxWithScout is a DGX whose one drifted component, the CX7, has a
// packaged agent script, its agent answering as b.
func dgxWithScout(t *testing.T, s firmware.Settings, b firmwarefake.AgentBehaviour) (*world, *flakyScout) {
	w := newWorld(t, s)
	fb := w.dgx("m-dgx", firmware.HostReady)
	fb.SetMember(fakes.FirmwareMember{ID: "HGX_FW_BMC_0", Version: "HGX-23.04"})
	scripts := firmwarefake.NewScoutScripts()
	scripts.Add("Nvidia", "DGXH100", firmware.CX7, firmware.ScoutScript{Path: "nvidia/dgxh100/cx7/upgrade.sh", SHA256: "ab", ExecutionTimeout: 10 * time.Minute, DownloadTimeout: 10 * time.Minute})
	w.scout.Behave("m-dgx", b)
	fs := &flakyScout{next: w.scout}
	w.exec.Scout, w.exec.ScoutScripts = fs, scripts
	w.request("m-dgx")
	return w, fs
}

var taskIDForm = regexp.MustCompile(`^scout-[0-9a-f]{32}$`)

// An agent task ID is 128 bits drawn from the executor's randomness, once
// per attempt: an offer that did not go through is retried with the same
// ID (persisted before the offer), not a new one.
func TestScoutTaskIDIsDrawnOncePerAttempt(t *testing.T) {
	w, fs := dgxWithScout(t, firmware.Settings{}, firmwarefake.AgentInstalls)
	fs.fail = 2
	random := bytes.NewReader(bytes.Repeat([]byte{0xa7, 0x3c, 0x51, 0x0e}, 16))
	w.exec.Random = random
	res, err := w.update("m-dgx")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	want := "scout-" + hex.EncodeToString(bytes.Repeat([]byte{0xa7, 0x3c, 0x51, 0x0e}, 4))
	if len(fs.offered) != 3 {
		t.Fatalf("offered %v; want two refused offers and one that went through", fs.offered)
	}
	for _, id := range fs.offered {
		if id != want {
			t.Errorf("offered %v; want %s every time (one attempt, one ID)", fs.offered, want)
			break
		}
	}
	if left := random.Len(); left != 64-16 {
		t.Errorf("%d random bytes drawn, want 16 (one ID)", 64-left)
	}
}

// Each attempt draws a new unpredictable ID (crypto/rand by default): not
// the former "<generation>-scout-<attempt>-<artifact>" sequence.
func TestScoutTaskIDsAreRandomPerAttempt(t *testing.T) {
	w, fs := dgxWithScout(t, firmware.Settings{MaxRetries: 2}, firmwarefake.AgentFails)
	if _, err := w.update("m-dgx"); !firmware.RetriesExhausted.Is(err) {
		t.Fatalf("Update: %v; want the retries exhausted", err)
	}
	if len(fs.offered) != 3 {
		t.Fatalf("offered %v; want one task per attempt", fs.offered)
	}
	seen := map[string]bool{}
	for _, id := range fs.offered {
		if !taskIDForm.MatchString(id) {
			t.Errorf("task ID %q is not scout- and 128 random bits", id)
		}
		if seen[id] {
			t.Errorf("task ID %s offered by two attempts: %v", id, fs.offered)
		}
		seen[id] = true
	}
}

// Two components installed by the agent in one update get two tasks: the
// second never stands on the first one's ID (and its stored success).
func TestScoutTaskIDIsNewForEachComponent(t *testing.T) {
	w, fs := dgxWithScout(t, firmware.Settings{}, firmwarefake.AgentInstalls)
	fb := w.bmcs.Of("m-dgx")
	fb.SetMember(fakes.FirmwareMember{ID: "HostBIOS_0", Version: "01.01.00"})
	fb.AddImage("/fw/dgx-bios.bin", fakes.FirmwareImage{Targets: []string{"HostBIOS_0"}, Version: "01.02.00", Activation: fakes.ActivateHostReboot})
	scripts := w.exec.ScoutScripts.(*firmwarefake.ScoutScripts)
	scripts.Add("Nvidia", "DGXH100", firmware.UEFI, firmware.ScoutScript{Path: "nvidia/dgxh100/uefi/upgrade.sh", SHA256: "cd", ExecutionTimeout: 10 * time.Minute, DownloadTimeout: 10 * time.Minute})
	res, err := w.update("m-dgx")
	if err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", res, err)
	}
	if len(fs.offered) != 2 || fs.offered[0] == fs.offered[1] || !taskIDForm.MatchString(fs.offered[0]) || !taskIDForm.MatchString(fs.offered[1]) {
		t.Errorf("offered %v; want two tasks with their own random IDs", fs.offered)
	}
	if v := fb.Version("HostBIOS_0"); v != "01.02.00" {
		t.Errorf("the BIOS is at %q: its task was not run", v)
	}
}
