//go:build integration

package lab_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/internal/itenv"
	"github.com/hostforge/hostforge/ironic"
)

// agentIronic is the Ironic whose conductor can hand a ramdisk its API's
// URL (scripts/integration.d/ironic_agent.sh); the test skips without it,
// and fails under HOSTFORGE_REQUIRE_INTEGRATION=1.
func agentIronic(t *testing.T) string {
	t.Helper()
	return itenv.Var(t, "HOSTFORGE_IRONIC_AGENT_URL", "scripts/integration did not start its component")
}

// waitState polls the node until it rests in want (or fails on another
// resting state; clean failed keeps its target, manageable).
func waitState(t *testing.T, c *ironicapi.Client, name, want string) ironic.Node {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n, err := c.GetNode(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if ironic.Stable(n) && n.ProvisionState == want {
			return n
		}
		if ironic.Stable(n) {
			t.Fatalf("node %s is %q (last_error %q), want %q", name, n.ProvisionState, n.LastError, want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s still %q (target %q), want %q", name, n.ProvisionState, n.TargetProvisionState, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The lab's Agent makes a real Ironic's fake-hardware node with the direct
// deploy interface run the agent's erase steps: a manual clean of
// erase_devices_metadata reaches the agent's command API (the lookup, the
// heartbeat, the token, get_clean_steps, execute_clean_step) and the node
// goes back to manageable; a step the agent fails sends the node to clean
// failed, in maintenance, and Ironic's node history records it.
func TestAgentRunsManualCleanSteps(t *testing.T) {
	url := agentIronic(t)
	var b [3]byte
	_, _ = rand.Read(b[:])
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "it-agent-" + hex.EncodeToString(b[:]), Class: intent.ClassCPUBaremetal})
	ctx, cancel := context.WithCancel(context.Background())
	agent := &lab.Agent{Site: site, IronicURL: url, Every: 200 * time.Millisecond}
	done := make(chan struct{})
	go func() { defer close(done); _ = agent.Run(ctx) }()
	defer func() { cancel(); <-done }()

	c, err := ironicapi.New(ctx, ironicapi.Config{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := c.CreateNode(ctx, ironic.NodeCreate{Name: h.Name, Driver: ironic.DriverFakeHardware,
		Interfaces: map[string]string{"deploy": "direct", "raid": "fake", "network": "noop", "inspect": "fake"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = c.SetMaintenance(context.Background(), n.UUID, true, "test cleanup")
		if err := c.DeleteNode(context.Background(), n.UUID); err != nil {
			t.Logf("cleanup: %v", err)
		}
	}()
	if err := c.ChangeProvisionState(ctx, n.UUID, ironic.ActionManage); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, h.Name, ironic.StateManageable)

	// The metadata erase as a manual clean.
	if err := c.Clean(ctx, n.UUID, []ironic.CleanStep{ironic.EraseMetadata}); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, h.Name, ironic.StateManageable)
	ran := agent.Ran(h.Name)
	if len(ran) != 1 || ran[0].Step.String() != ironic.EraseMetadata.String() || ran[0].Target != ironic.StateManageable || ran[0].Failed {
		t.Fatalf("the agent ran %+v, want one %s towards manageable", ran, ironic.EraseMetadata)
	}

	// A failing erase: clean failed, maintenance, an entry in the history.
	agent.FailStep(h.Name, ironic.EraseMetadata, 1)
	if err := c.Clean(ctx, n.UUID, []ironic.CleanStep{ironic.EraseMetadata}); err != nil {
		t.Fatal(err)
	}
	failed := waitState(t, c, h.Name, ironic.StateCleanFailed)
	if !failed.Maintenance || !strings.Contains(failed.LastError, "erase_devices_metadata") {
		t.Errorf("clean failed node: maintenance %v, last_error %q", failed.Maintenance, failed.LastError)
	}
	hist, err := c.History(ctx, n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range hist {
		t.Logf("history: %s %s %s %s", e.CreatedAt, e.Severity, e.EventType, e.Event)
		if e.Severity == "ERROR" && strings.Contains(e.Event, "erase_devices_metadata") {
			found = true
		}
	}
	if !found {
		t.Errorf("the node's history has no error naming the failed step: %+v", hist)
	}
	if ran := agent.Ran(h.Name); len(ran) != 2 || !ran[1].Failed {
		t.Errorf("the agent ran %+v, want the second run failed", ran)
	}
}
