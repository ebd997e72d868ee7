package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
)

func TestScoutCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	script := []byte("#!/bin/sh\necho \"flashed $HOSTFORGE_FIRMWARE_VERSION\"\n")
	sp := filepath.Join(dir, "upgrade.sh")
	writeFW(t, sp, string(script))
	if err := os.Chmod(sp, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(script)
	store := firmwarefake.NewMemStore()
	task := firmware.ScoutTask{ID: "1-scout-1-0", MachineID: "m1", Component: firmware.CX7, Version: "28.47.2682",
		Script:   firmware.ScoutScript{Path: sp, SHA256: hex.EncodeToString(sum[:]), ExecutionTimeout: time.Minute, DownloadTimeout: time.Minute},
		Deadline: time.Now().Add(time.Hour)}
	if _, err := store.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: firmware.WaitingForScoutUpgrade, Started: true, TaskID: task.ID}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutScoutTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(&scout.Server{Store: store, Clock: clock.Real{}})
	defer srv.Close()
	ca := filepath.Join(dir, "ca.pem")
	writeFW(t, ca, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))

	// Without the CA the server's certificate is not trusted: nothing runs.
	r := run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1")
	wantCode(t, r, ExitInfra)
	wantError(t, r, "SCOUT_SERVER_UNAVAILABLE", "certificate")
	if _, ok, _ := store.Result(ctx, "m1", task.ID); ok {
		t.Fatal("a task ran over an unverified connection")
	}

	r = run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1", "--ca-file", ca, "--work-dir", dir, "-o", "json")
	wantCode(t, r, ExitOK)
	var res scout.Result
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Task == nil || res.Report == nil || !res.Report.OK {
		t.Fatalf("output %q (%v)", r.out, err)
	}
	stored, ok, _ := store.Result(ctx, "m1", task.ID)
	if !ok || !stored.OK || stored.Output != "flashed 28.47.2682\n" {
		t.Fatalf("stored %+v", stored)
	}
	r = run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1", "--ca-file", ca)
	wantCode(t, r, ExitOK)
	if r.out != "no task for this machine\n" {
		t.Errorf("second run: %q", r.out)
	}
	wantCode(t, run(t, "", nil, "scout", "--machine", "m1"), ExitUsage)
}
