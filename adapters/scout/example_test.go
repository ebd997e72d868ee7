package scout_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
)

// A worker serves the task its update workflow offered; the agent on the
// host fetches it, runs the packaged script and reports.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "scout-example-")
	defer os.RemoveAll(dir)
	script := []byte("#!/bin/sh\necho \"flashing $HOSTFORGE_FIRMWARE_COMPONENT to $HOSTFORGE_FIRMWARE_VERSION\"\n")
	path := filepath.Join(dir, "upgrade.sh")
	_ = os.WriteFile(path, script, 0o755)
	sum := sha256.Sum256(script)

	// The worker's side: the update waits for the agent, its task stored.
	store := firmwarefake.NewMemStore()
	task := firmware.ScoutTask{ID: "scout-9b2f4c1d7e8a40b6a3c5d2e1f0a9b8c7", MachineID: "gpu-r1-u02", Component: firmware.CX7, Version: "28.47.2682",
		Script:   firmware.ScoutScript{Path: path, SHA256: hex.EncodeToString(sum[:]), ExecutionTimeout: time.Minute, DownloadTimeout: time.Minute},
		Deadline: time.Now().Add(time.Hour)}
	_, _ = store.PutUpdate(ctx, firmware.HostUpdate{MachineID: task.MachineID, Substate: firmware.WaitingForScoutUpgrade, Started: true, TaskID: task.ID})
	_ = firmware.StoredScout{Store: store}.Offer(ctx, task)
	siteSecret := []byte("the site secret, from the vault")
	srv := httptest.NewTLSServer(&scout.Server{Store: store, Clock: clock.Real{}, SiteSecret: siteSecret})
	defer srv.Close()

	// The operator provisions the host with its own token ('hostforge
	// scout token --config F --machine gpu-r1-u02'): it proves this machine
	// and no other.
	token, _ := scout.MachineToken(siteSecret, "gpu-r1-u02")

	// The host's side ('hostforge scout --server URL --machine gpu-r1-u02
	// --token-file F').
	agent := &scout.Agent{Server: srv.URL, Machine: "gpu-r1-u02", Client: srv.Client(), Token: token, WorkDir: dir}
	res, err := agent.Run(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("task %s ok=%v: %s", res.Task.ID, res.Report.OK, res.Report.Output)
	stored, _, _ := store.Result(ctx, "gpu-r1-u02", task.ID)
	fmt.Println("stored:", stored.OK)
	// Output:
	// task scout-9b2f4c1d7e8a40b6a3c5d2e1f0a9b8c7 ok=true: flashing cx7 to 28.47.2682
	// stored: true
}
