//go:build integration

package temporal_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/internal/itenv"
)

// envExtensionWorker carries the JSON extWorker of the worker process
// TestWorkerKilledDuringAnSSHTaskRunsItOnce starts (TestExtensionWorkerProcess).
const envExtensionWorker = "HOSTFORGE_TEST_EXTENSION_WORKER"

// extWorker is what an extension worker needs: its task queue, the
// definition, the SQLite state both workers share, and the real sshd's
// known_hosts and client key.
type extWorker struct {
	Queue, Definition, State, KnownHosts, Key string
}

// keyVault holds the one item SSH tasks name: the client key.
type keyVault struct{ key string }

func (v keyVault) Item(_ context.Context, name string) (map[string]string, error) {
	if name != "sshd-key" {
		return nil, fmt.Errorf("vault item %s: %w", name, hostforge.ErrNotFound)
	}
	return map[string]string{ssh.FieldPrivateKey: v.key}, nil
}

// start runs an extension worker on the queue: the real SSH runner, the
// execution records in the shared SQLite state.
func (x extWorker) start(t *testing.T, c client.Client) (worker.Worker, *sqlstore.DB) {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile(x.Definition)
	if err != nil {
		t.Fatal(err)
	}
	def, ps := extensions.Parse(b, x.Definition)
	if def == nil {
		t.Fatal(ps)
	}
	reg, err := extensions.NewRegistry(def)
	if err != nil {
		t.Fatal(err)
	}
	key, err := os.ReadFile(x.Key)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(ctx, sqlstore.SQLite, x.State)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, sqlstore.ComponentExtensions); err != nil {
		t.Fatal(err)
	}
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{
		extensions.TaskSSH: &ssh.ExtensionRunner{KnownHosts: x.KnownHosts, Vault: keyVault{string(key)}},
	}, db.Extensions())
	w := worker.New(c, x.Queue, worker.Options{WorkerStopTimeout: time.Second})
	temporal.Register(w, &temporal.Activities{Exec: d, HeartbeatEvery: 500 * time.Millisecond}, temporal.ActivityOptions{}, temporal.Extensions)
	if err := w.Start(); err != nil {
		t.Fatalf("worker start: %v", err)
	}
	return w, db
}

// TestExtensionWorkerProcess is the worker process the test kills: it
// polls the queue until it is killed. It does nothing unless started by
// the test.
func TestExtensionWorkerProcess(t *testing.T) {
	raw := os.Getenv(envExtensionWorker)
	if raw == "" {
		t.Skip("started by TestWorkerKilledDuringAnSSHTaskRunsItOnce only")
	}
	var x extWorker
	if err := json.Unmarshal([]byte(raw), &x); err != nil {
		t.Fatal(err)
	}
	c := dial(t, os.Getenv("HOSTFORGE_TEMPORAL_ADDRESS"))
	x.start(t, c)
	fmt.Println("POLLING")
	time.Sleep(time.Hour)
}

func sshdEnv(t *testing.T, key string) string {
	t.Helper()
	return itenv.Var(t, key, "scripts/integration.d/sshd.sh did not start sshd")
}

// TestWorkerKilledDuringAnSSHTaskRunsItOnce: the worker running an SSH
// extension task on the real sshd — a command that appends a line to a
// file, then sleeps — is SIGKILLed mid-command. Another worker takes the
// dispatch over once Temporal declares the call lost: it does not run the
// command again. The file has exactly one line, and the task's record
// says interrupted.
func TestWorkerKilledDuringAnSSHTaskRunsItOnce(t *testing.T) {
	addr := devServer(t)
	host, port, _ := net.SplitHostPort(sshdEnv(t, "HOSTFORGE_SSHD_ADDR"))
	stamp := time.Now().Format("150405.000000")
	x := extWorker{Queue: "it-ext-once-" + stamp, Definition: filepath.Join(t.TempDir(), "once.json"),
		State: filepath.Join(t.TempDir(), "state.db"), KnownHosts: sshdEnv(t, "HOSTFORGE_SSHD_KNOWN_HOSTS"), Key: sshdEnv(t, "HOSTFORGE_SSHD_KEY")}
	effect := filepath.Join(sshdEnv(t, "HOSTFORGE_SSHD_DIR"), "ext-once-"+stamp)
	t.Cleanup(func() { _ = os.Remove(effect) })
	def := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "once", "label": "once", "extensionType": "workflow",
 "vendor": "hostforge", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [
   {"label": "append", "taskType": "ExtensionTaskSsh",
    "options": {"host": "` + host + `", "port": ` + port + `, "username": "` + sshdEnv(t, "HOSTFORGE_SSHD_USER") + `", "privateKeySecret": "sshd-key", "timeout": 10,
      "commandTemplate": "echo {{ server.serialNumber | shellquote }} >> ` + effect + `; sleep 30"}}]}]}`
	if err := os.WriteFile(x.Definition, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// The first worker, its own process.
	cfg, _ := json.Marshal(x)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestExtensionWorkerProcess$", "-test.v")
	cmd.Env = append(os.Environ(), envExtensionWorker+"="+string(cfg))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	polling := false
	for sc := bufio.NewScanner(stdout); !polling && sc.Scan(); {
		polling = sc.Text() == "POLLING"
	}
	if !polling {
		t.Fatal("the worker process ended before it polled")
	}

	c := dial(t, addr)
	defer c.Close()
	ev, _, err := extensions.NewEvent("it-once-"+stamp, extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "SN-ONCE"}}`))
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: temporal.ExtensionsWorkflowID(ev.ID), TaskQueue: x.Queue}, temporal.ExtensionsWorkflowName, ev)
	if err != nil {
		t.Fatal(err)
	}
	lines := func() []string {
		b, _ := os.ReadFile(effect)
		return strings.Fields(string(b))
	}
	for len(lines()) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the SSH command never ran")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // mid-command: it sleeps 30 s
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Log("worker killed while the SSH command ran")

	w2, db := x.start(t, c)
	defer w2.Stop()
	defer db.Close()
	var rep extensions.Report
	if err := run.Get(ctx, &rep); err != nil {
		t.Fatalf("dispatch: %v", temporal.FailureOf(err))
	}
	if got := lines(); len(got) != 1 || got[0] != "SN-ONCE" {
		t.Fatalf("the effect file holds %q: want the command's one line", got)
	}
	if len(rep.Deliveries) != 1 || rep.Deliveries[0].Code != extensions.TaskInterrupted.Code {
		t.Fatalf("report %+v, want the task interrupted", rep)
	}
	rec, ok, err := db.Extensions().Execution(ctx, rep.Deliveries[0].DeliveryID)
	if err != nil || !ok || rec.Status != extensions.StatusFailed || !strings.HasPrefix(rec.Message, extensions.TaskInterrupted.Code+": ") {
		t.Fatalf("record %+v (%v): want it failed %s", rec, err, extensions.TaskInterrupted.Code)
	}

	// The history: the killed call had one attempt and timed out; the
	// next call found the delivery started.
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]bool{}
	var runs, timedOut, retried int
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == extensions.StepRun {
			scheduled[e.GetEventId()] = true
			runs++
			if a.GetRetryPolicy().GetMaximumAttempts() != 1 || a.GetHeartbeatTimeout().AsDuration() != 45*time.Second {
				t.Errorf("extensions.run scheduled with %d attempts and a %s heartbeat timeout, want 1 and the task's run bound (45s)",
					a.GetRetryPolicy().GetMaximumAttempts(), a.GetHeartbeatTimeout().AsDuration())
			}
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] && a.GetAttempt() > 1 {
			retried++
		}
		if a := e.GetActivityTaskTimedOutEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			timedOut++
		}
	}
	if runs != 2 || timedOut != 1 || retried != 0 {
		t.Fatalf("history: %d extensions.run calls, %d timed out, %d retried; want the killed one timed out, never retried, and one more call", runs, timedOut, retried)
	}
	time.Sleep(2 * time.Second)
	if got := lines(); len(got) != 1 {
		t.Fatalf("the effect file holds %q after the dispatch", got)
	}
}
