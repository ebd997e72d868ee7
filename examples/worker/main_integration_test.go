//go:build integration

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/internal/itenv"
	"github.com/hostforge/hostforge/internal/syncbuf"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*sharedWorkerStopChannel)"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}

// TestRunsAgainstTheLab: the example runs the worker on a lab's lab.yaml
// against the dev server — its schedule converged, the task queue polled —
// and stops cleanly when interrupted.
func TestRunsAgainstTheLab(t *testing.T) {
	addr := itenv.TemporalAddress(t)
	var b [3]byte
	_, _ = rand.Read(b[:])
	site := "it-example-" + hex.EncodeToString(b[:])
	l, err := lab.Start(context.Background(), lab.Options{Dir: filepath.Join(t.TempDir(), "lab"), SiteName: site})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	defer deleteSchedule(t, addr, temporal.ScheduleID(site, temporal.PurposeProjection))

	ctx, cancel := context.WithCancel(context.Background())
	out := &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, out, l.Config, addr, site) }()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "worker polling task queue "+site) {
		select {
		case err := <-done:
			t.Fatalf("the example ended before polling: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the example did not poll within a minute:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil || !strings.Contains(out.String(), "schedule hostforge/"+site+"/ironic-projection created") ||
		!strings.Contains(out.String(), "worker stopped") {
		t.Fatalf("run = %v:\n%s", err, out.String())
	}
}

// deleteSchedule removes a schedule the test made on the shared server.
func deleteSchedule(t *testing.T, addr, id string) {
	c, err := client.Dial(client.Options{HostPort: addr})
	if err != nil {
		t.Logf("deleting schedule %s: %v", id, err)
		return
	}
	defer c.Close()
	if err := c.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background()); err != nil {
		t.Logf("deleting schedule %s: %v", id, err)
	}
}
