//go:build integration

package ironic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"
	"time"

	adapter "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/internal/realdata"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/ironic/ironictest"
)

// env reads an integration variable; unset skips, or fails under
// HOSTFORGE_REQUIRE_INTEGRATION=1.
func env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("HOSTFORGE_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("%s is unset: scripts/integration.d/ironic.sh did not start Ironic", name)
		}
		t.Skipf("%s is unset (run make integration)", name)
	}
	return v
}

func connect(t *testing.T, url string) *adapter.Client {
	t.Helper()
	c, err := adapter.New(context.Background(), adapter.Config{Endpoint: url})
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// postInspection posts a real IPA payload (the Dell R320 from the shared
// test data) to ironic-inspector, its first NIC's MAC replaced by the node's
// port so the inspector matches it.
func postInspection(t *testing.T, inspector string, macs []string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(realdata.Read(t, "ipa-inventory", "metal3-docs", "dell-r320-inspector-data-lldp.json"), &doc); err != nil {
		t.Fatal(err)
	}
	inv := doc["inventory"].(map[string]any)
	ifs := inv["interfaces"].([]any)
	ifs[0].(map[string]any)["mac_address"] = macs[0]
	inv["bmc_address"] = "192.0.2.250"
	body, _ := json.Marshal(map[string]any{"inventory": inv, "boot_interface": macs[0], "root_disk": doc["root_disk"], "error": nil})
	for i := 0; i < 40; i++ {
		resp, err := http.Post(inspector+"/v1/continue", "application/json", bytes.NewReader(body))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(250 * time.Millisecond) // the inspector starts waiting ~0.6 s after inspect
	}
	t.Fatalf("ironic-inspector never accepted the inspection data")
}

func realEnv(t *testing.T, c *adapter.Client, inspector string) ironictest.Env {
	return ironictest.Env{
		Client: c, Driver: "fake-hardware",
		Interfaces: map[string]string{"inspect": "inspector", "raid": "fake", "network": "noop"},
		Sleep:      time.Sleep, Poll: 250 * time.Millisecond, Timeout: 90 * time.Second,
		Inspect: func(t *testing.T, n ironic.Node, macs []string) { postInspection(t, inspector, macs) },
		CleanFail: func(t *testing.T, n ironic.Node) {
			if err := c.CleanSteps(context.Background(), n.UUID, []map[string]any{{"interface": "deploy", "step": "erase_devices_metadata"}}); err != nil {
				t.Fatalf("manual clean: %v", err)
			}
		},
		Cleanup: func(t *testing.T, uuid string) { _ = c.DeleteNode(context.Background(), uuid) },
		// fake-hardware's fake BIOS interface runs factory_reset out of
		// band; its fake deploy interface has no agent to erase with.
		CleanStep:            ironic.CleanStep{Interface: "bios", Step: "factory_reset"},
		UnsupportedCleanStep: ironic.EraseMetadata,
	}
}

func TestContractRealIronic(t *testing.T) {
	url, inspector := env(t, "HOSTFORGE_IRONIC_URL"), env(t, "HOSTFORGE_IRONIC_INSPECTOR_URL")
	c := connect(t, url)
	ironictest.Run(t, func(t *testing.T) ironictest.Env { return realEnv(t, c, inspector) })
}

// TestNodeLockedRealIronic runs the lock part of the suite on an Ironic whose
// fake power change holds the node lock for 4 s.
func TestNodeLockedRealIronic(t *testing.T) {
	url := env(t, "HOSTFORGE_IRONIC_LOCKING_URL")
	c := connect(t, url)
	ironictest.Run(t, func(t *testing.T) ironictest.Env {
		e := realEnv(t, c, "")
		e.Interfaces = map[string]string{"inspect": "fake", "raid": "fake", "network": "noop"}
		e.Inspect, e.NoInventory = nil, true
		e.Timeout = 3 * time.Minute
		e.HoldLock = func(t *testing.T, n ironic.Node) {
			if err := c.ChangePowerState(context.Background(), n.UUID, ironic.PowerOn); err != nil {
				t.Fatalf("power on: %v", err)
			}
		}
		return e
	})
}
