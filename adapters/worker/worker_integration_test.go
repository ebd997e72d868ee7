//go:build integration

package worker_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/worker"
	"github.com/hostforge/hostforge/internal/itenv"
	"github.com/hostforge/hostforge/internal/syncbuf"
)

func init() {
	// The adapters' HTTP clients keep idle keep-alive connections.
	leakOptions = append(leakOptions,
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}

// devServer is the dev server's address, skipping (failing under
// HOSTFORGE_REQUIRE_INTEGRATION=1) without one.
func devServer(t *testing.T) string { return itenv.TemporalAddress(t) }

// FreshNamespace registers a namespace of its own on the dev server (the
// server is shared) and returns it once it answers.
func freshNamespace(t *testing.T, addr string) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	ns := "it-worker-" + hex.EncodeToString(b[:])
	nc, err := client.NewNamespaceClient(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := nc.Register(ctx, &workflowservice.RegisterNamespaceRequest{Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := nc.Describe(ctx, ns); err == nil {
			return ns
		}
		if ctx.Err() != nil {
			t.Fatalf("namespace %s never answered", ns)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// dialNS dials the namespace, retrying while the frontend has not seen it yet.
func dialNS(t *testing.T, addr, ns string) client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		c, err := temporal.Dial(ctx, addr, ns, nil)
		if err == nil {
			return c
		}
		var nf *serviceerror.NamespaceNotFound
		if !errors.As(err, &nf) && ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// running is a worker's Run in a goroutine.
type running struct {
	out    *syncbuf.Buffer
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, c client.Client, o worker.Options) *running {
	t.Helper()
	sys := labSystems(t)
	sys.Site = "it-site"
	r := &running{out: &syncbuf.Buffer{}, done: make(chan error, 1)}
	o.Status = r.out
	w, err := worker.New(sys, c, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- w.Run(ctx) }()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(r.out.String(), "worker polling task queue") {
		select {
		case err := <-r.done:
			t.Fatalf("the worker stopped before polling: %v\n%s", err, r.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not poll within a minute:\n%s", r.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return r
}

func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run after the stop: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the worker did not stop")
	}
}

// TestWorkersConvergeOneSchedulePerPurpose: two workers of one site on a
// namespace of their own — the first creates the projection's schedule,
// the second finds it as it wants it; restarting both leaves one schedule
// per purpose, which 'temporal schedule list' shows; the schedule's runs
// start on the site's queue and run there. /metrics answers until the
// worker has stopped polling, and the stop is clean.
func TestWorkersConvergeOneSchedulePerPurpose(t *testing.T) {
	addr := devServer(t)
	ns := freshNamespace(t, addr)
	c := dialNS(t, addr, ns)
	defer c.Close()
	queue := "it-worker-" + time.Now().Format("150405.000")
	id := temporal.ScheduleID("it-site", temporal.PurposeProjection)
	defer func() { _ = c.ScheduleClient().GetHandle(context.Background(), id).Delete(context.Background()) }()

	w1 := start(t, c, worker.Options{TaskQueue: queue, MetricsListen: "127.0.0.1:0", StopTimeout: 2 * time.Second})
	w2 := start(t, c, worker.Options{TaskQueue: queue, StopTimeout: 2 * time.Second})
	if !strings.Contains(w1.out.String(), "schedule "+id+" created") || !strings.Contains(w2.out.String(), "schedule "+id+" unchanged") {
		t.Fatalf("first worker:\n%s\nsecond worker:\n%s", w1.out.String(), w2.out.String())
	}
	m := regexp.MustCompile(`metrics on http://(\S+)/metrics`).FindStringSubmatch(w1.out.String())
	if m == nil {
		t.Fatalf("no metrics address:\n%s", w1.out.String())
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "go_goroutines") {
		t.Fatalf("/metrics:\n%s", body)
	}

	// The schedule starts its runs on the queue (every 2 s on the lab's
	// config); a worker runs them.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := c.ScheduleClient().GetHandle(ctx, id)
	for {
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d.Info.NumActions >= 2 {
			if d.Schedule.Policy.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP {
				t.Fatalf("overlap policy %s", d.Schedule.Policy.Overlap)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the schedule took %d actions in a minute", d.Info.NumActions)
		}
		time.Sleep(500 * time.Millisecond)
	}
	w1.stop(t)
	w2.stop(t)
	for _, w := range []*running{w1, w2} {
		if out := w.out.String(); !strings.Contains(out, "worker stopped") {
			t.Fatalf("no clean stop:\n%s", out)
		}
	}
	if _, err := http.Get("http://" + m[1] + "/metrics"); err == nil {
		t.Fatal("/metrics still answers after the worker stopped")
	}

	// Every worker restarted: still one schedule per purpose.
	w3 := start(t, c, worker.Options{TaskQueue: queue, StopTimeout: 2 * time.Second})
	w4 := start(t, c, worker.Options{TaskQueue: queue, StopTimeout: 2 * time.Second})
	defer w3.stop(t)
	defer w4.stop(t)
	for _, w := range []*running{w3, w4} {
		if !strings.Contains(w.out.String(), "schedule "+id+" unchanged") {
			t.Fatalf("a restarted worker changed the schedule:\n%s", w.out.String())
		}
	}
	ids := listSchedules(t, addr, ns)
	if len(ids) != 1 || ids[0] != id {
		t.Fatalf("temporal schedule list shows %v, want only %s", ids, id)
	}
}

// listSchedules runs 'temporal schedule list' on the namespace and returns
// the schedule IDs it shows (visibility is eventually consistent: it
// waits for at least one).
func listSchedules(t *testing.T, addr, ns string) []string {
	t.Helper()
	cli := os.Getenv("HOSTFORGE_TEMPORAL_CLI")
	if cli == "" {
		t.Fatal("HOSTFORGE_TEMPORAL_CLI is unset")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.Command(cli, "schedule", "list", "--address", addr, "--namespace", ns, "-o", "json").Output()
		if err != nil {
			t.Fatalf("temporal schedule list: %v", err)
		}
		ids := regexp.MustCompile(`"scheduleId":\s*"([^"]+)"`).FindAllStringSubmatch(string(out), -1)
		if len(ids) > 0 || time.Now().After(deadline) {
			var got []string
			for _, m := range ids {
				got = append(got, m[1])
			}
			t.Logf("temporal schedule list --namespace %s:\n%s", ns, out)
			return got
		}
		time.Sleep(time.Second)
	}
}
