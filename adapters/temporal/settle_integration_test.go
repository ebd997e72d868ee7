//go:build integration

package temporal_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// Environment of the submitting process TestSettlementSurvivesTheSubmitter
// starts (TestSubmittingProcess).
const (
	envSubmitter = "HOSTFORGE_TEST_SUBMITTER"
	envLedger    = "HOSTFORGE_TEST_LEDGER"
	envDevice    = "HOSTFORGE_TEST_DEVICE_JSON"
	envQueue     = "HOSTFORGE_TEST_QUEUE"
)

// intentFile is a NetBox that answers one device from a JSON file: the
// submitting process reads the device the test's fake NetBox holds.
type intentFile struct {
	enrollment.NetBox
	d intent.Device
}

func (n intentFile) Device(_ context.Context, name string) (intent.Device, error) { return n.d, nil }

// TestSubmittingProcess is the submitting process: it submits the
// enrollment with the SQL ledger the test shares with it, prints the run,
// waits for the enrollment to close, says so, and then would settle — the
// test kills it there. It does nothing unless started by the test.
func TestSubmittingProcess(t *testing.T) {
	if os.Getenv(envSubmitter) != "1" {
		t.Skip("started by TestSettlementSurvivesTheSubmitter only")
	}
	ctx := context.Background()
	c := dial(t, os.Getenv("HOSTFORGE_TEMPORAL_ADDRESS"))
	db, err := sqlstore.Open(ctx, sqlstore.SQLite, os.Getenv(envLedger))
	if err != nil {
		t.Fatal(err)
	}
	ledger, err := sqlstore.NewLedger(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(os.Getenv(envDevice))
	if err != nil {
		t.Fatal(err)
	}
	var d intent.Device
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	sub := &temporal.Submitter{Client: c, TaskQueue: os.Getenv(envQueue), NetBox: intentFile{d: d}, Proofs: ledger,
		ProofWindow: 30 * time.Second, ProofInterval: 500 * time.Millisecond}
	cfg := siteConfig()
	cfg.ConfigureDHCP = false
	run, err := sub.Submit(ctx, temporal.Submission{Device: d.Name, Site: "lab1", Config: cfg, PlatformClassReady: true})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(run)
	fmt.Printf("RUN %s\n", out)
	if _, f := sub.Wait(ctx, run); f != nil {
		fmt.Printf("FAILED %s\n", f.Code)
	}
	fmt.Println("CLOSED")
	// The process would settle now; it is killed before it can.
	time.Sleep(time.Hour)
}

// flipped lists an instance's nodes with every node UUID replaced: the
// node was deleted and enrolled again.
type flipped struct{ enrollment.NodeLister }

func (f flipped) ListNodes(ctx context.Context) ([]ironic.Node, error) {
	nodes, err := f.NodeLister.ListNodes(ctx)
	for i := range nodes {
		nodes[i].UUID = "replaced-" + nodes[i].UUID
	}
	return nodes, err
}

// TestSettlementSurvivesTheSubmitter: a separate process submits an
// enrollment and is killed (SIGKILL) once the enrollment has closed,
// before it settles anything. The settlement workflow the enrollment
// started still establishes proof in the SQL ledger, against the
// fleet manager's projection of the fake Ironic; a new node UUID in the
// next projection pass then clears it.
func TestSettlementSurvivesTheSubmitter(t *testing.T) {
	addr := devServer(t)
	site, steps := liveWorld(t)
	queue := "it-settle-" + time.Now().Format("150405.000")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	path := filepath.Join(t.TempDir(), "ledger.db")
	db, err := sqlstore.Open(ctx, sqlstore.SQLite, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ledger, err := sqlstore.NewLedger(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const device = "cpu-u10"
	if _, err := ledger.Register(ctx, device); err != nil {
		t.Fatal(err)
	}

	c := dial(t, addr)
	defer c.Close()
	w := startWorker(t, c, queue, steps, ledger)
	defer w.Stop()

	// The fleet manager's projector, on an interval, as the worker runs it.
	proj := &enrollment.Projector{Instances: map[string]enrollment.NodeLister{}, Ledger: ledger}
	var mu sync.Mutex
	for name := range site.Ironic {
		proj.Instances[name] = enrolltest.SiteNodes{Site: site, Instance: name}
	}
	pass := func() error {
		mu.Lock()
		defer mu.Unlock()
		_, err := proj.Project(ctx)
		return err
	}
	stop := make(chan struct{})
	var loop sync.WaitGroup
	loop.Add(1)
	go func() {
		defer loop.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				_ = pass()
			}
		}
	}()
	defer func() { close(stop); loop.Wait() }()

	// The submitting process.
	d, err := site.NetBox.Device(ctx, device)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d)
	devFile := filepath.Join(t.TempDir(), "device.json")
	if err := os.WriteFile(devFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSubmittingProcess$", "-test.v")
	cmd.Env = append(os.Environ(), envSubmitter+"=1", envLedger+"="+path, envDevice+"="+devFile, envQueue+"="+queue)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var run temporal.Run
	closed := false
	sc := bufio.NewScanner(stdout)
	for !closed && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "RUN "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "RUN ")), &run); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(line, "FAILED "):
			t.Errorf("the enrollment failed: %s", line)
		case line == "CLOSED":
			closed = true
		}
	}
	if !closed || !run.Durable {
		t.Fatalf("the submitting process ended before the close (run %+v)", run)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	// The settlement, started by the enrollment itself, settles alone.
	var out enrollment.ProofOutcome
	if err := c.GetWorkflow(ctx, temporal.SettleWorkflowID(run.WorkflowID, run.RunID), "").Get(ctx, &out); err != nil {
		t.Fatalf("settlement: %v", temporal.FailureOf(err))
	}
	if out.Action != enrollment.ProofEstablished || out.Holder != run.WorkflowID+"/"+run.RunID {
		t.Fatalf("settlement outcome %+v", out)
	}
	rec, err := ledger.Record(ctx, device)
	if err != nil || rec.ProofState() != sqlstore.ProofStateValid {
		t.Fatalf("ledger record %+v (%v): no valid proof after the submitter died", rec, err)
	}
	n, _ := site.Ironic["ironic-cpu"].Node(device)
	if rec.Reference != "ironic-cpu/"+n.UUID {
		t.Fatalf("proof of %s, but Ironic has node %s", rec.Reference, n.UUID)
	}

	// The node flips: a new UUID in the next projection clears the proof.
	mu.Lock()
	proj.Instances["ironic-cpu"] = flipped{proj.Instances["ironic-cpu"]}
	mu.Unlock()
	if err := pass(); err != nil {
		t.Fatal(err)
	}
	rec, _ = ledger.Record(ctx, device)
	if rec.ProofState() != sqlstore.ProofStateNone || rec.Reference != "ironic-cpu/replaced-"+n.UUID {
		t.Fatalf("after the node flip: %+v proof %+v", rec, rec.Proof)
	}
}
