package metrics_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/firmware"
)

func TestFirmwareMetricsOnTheHandler(t *testing.T) {
	reg := metrics.NewRegistry()
	f, err := metrics.NewFirmware(reg)
	if err != nil {
		t.Fatal(err)
	}
	f.Gauges(firmware.Gauges{Pending: 5, Active: 3, Exhausted: 1, InMaintenance: 4, Started: 2, Ceiling: 10})
	f.UpdateStarted(firmware.TargetHost)
	f.UpdateStarted(firmware.TargetHost)
	f.UpdateCompleted(firmware.TargetHost)
	f.UpdateFailed(firmware.TargetHost, "FIRMWARE_TASK_FAILED")
	f.ReprovisionRetry()
	f.CatalogReload(true)
	f.CatalogReload(false)
	f.CatalogReload(false)
	srv := httptest.NewServer(metrics.Handler(reg))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for _, line := range []string{
		"hostforge_pending_host_firmware_update_count 5",
		"hostforge_active_host_firmware_update_count 3",
		"hostforge_exhausted_reprovision_retry_count 1",
		"hostforge_machines_in_maintenance_count 4",
		"hostforge_machine_updates_started_count 2",
		"hostforge_concurrent_machine_updates_available 10",
		`hostforge_firmware_updates_total{phase="started",target="host"} 2`,
		`hostforge_firmware_updates_total{phase="completed",target="host"} 1`,
		`hostforge_firmware_update_failures_total{cause="FIRMWARE_TASK_FAILED",target="host"} 1`,
		"hostforge_host_reprovision_retries_total 1",
		`hostforge_firmware_catalog_reloads_total{result="ok"} 1`,
		`hostforge_firmware_catalog_reloads_total{result="refused"} 2`,
		"go_goroutines",
	} {
		if !strings.Contains(body, line+"\n") && !strings.Contains(body, line+" ") {
			t.Errorf("metrics lack %q", line)
		}
	}
	if !strings.Contains(body, "assigned hosts") {
		t.Error("the help text does not say assigned hosts are counted")
	}
	if _, err := metrics.NewFirmware(reg); err == nil {
		t.Error("registering twice succeeded")
	}
}
