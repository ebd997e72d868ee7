package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/firmware"
)

// fwIronicNodes serves the little of Ironic's API the firmware commands use:
// the version document, a node by name, the node list.
func fwIronicNodes(t *testing.T, nodes map[string]map[string]any) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		p := strings.TrimSuffix(r.URL.Path, "/")
		switch {
		case p == "" || p == "/v1":
			_, _ = w.Write([]byte(`{"version": {"version": "1.87", "min_version": "1.1"}, "versions": [{"id": "v1", "version": "1.87", "min_version": "1.1", "status": "CURRENT"}]}`))
		case p == "/v1/nodes":
			var list []map[string]any
			for _, n := range nodes {
				list = append(list, n)
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"nodes": list})
		case strings.HasPrefix(p, "/v1/nodes/"):
			n, ok := nodes[strings.TrimPrefix(p, "/v1/nodes/")]
			if !ok {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"error_message": "{\"faultstring\": \"Node could not be found.\"}"}`))
				return
			}
			_ = json.NewEncoder(w).Encode(n)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type fwEnv struct {
	config string
	state  string
}

func newFWEnv(t *testing.T) fwEnv {
	t.Helper()
	dir := t.TempDir()
	url := fwIronicNodes(t, map[string]map[string]any{
		"m1": {"uuid": "u-1", "name": "m1", "provision_state": "available", "maintenance": false},
		"m2": {"uuid": "u-2", "name": "m2", "provision_state": "active", "instance_uuid": "i-2", "maintenance": false},
	})
	cat := filepath.Join(dir, "catalog.toml")
	writeFW(t, cat, `[host_models.r750]
vendor = "Dell"
model = "PowerEdge R750"
explicit_start_needed = true
[host_models.r750.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."
known_firmware = [ { version = "7.10.30.00", filename = "/fw/idrac.exe", default = true } ]
`)
	vault := filepath.Join(dir, "vault.yaml")
	writeFW(t, vault, "{}\n")
	state := filepath.Join(dir, "state.db")
	cfg := filepath.Join(dir, "site.yaml")
	writeFW(t, cfg, fmt.Sprintf(`site: lab1
netbox: {url: 'https://netbox.example.net'}
ironic:
  - {name: ironic-cpu, url: '%s', device_classes: [CPU_BAREMETAL]}
vault: {kind: file, path: %s}
ledger: {driver: sqlite, path: %s}
firmware:
  catalog: [%s]
`, url, vault, state, cat))
	return fwEnv{config: cfg, state: state}
}

func writeFW(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// store opens the env's state database, as a worker would.
func (e fwEnv) store(t *testing.T) firmware.Store {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), sqlstore.SQLite, e.state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(context.Background(), sqlstore.FirmwareComponent); err != nil {
		t.Fatal(err)
	}
	return sqlstore.NewFirmwareStore(db)
}

func (e fwEnv) run(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, "", map[string]string{"USER": "jdoe"}, append(args, "--config", e.config)...)
}

func TestFirmwareAutoUpdate(t *testing.T) {
	e := newFWEnv(t)
	ctx := context.Background()
	r := e.run(t, "firmware", "auto-update", "--machine", "m1", "--disable", "-o", "json")
	wantCode(t, r, ExitOK)
	var got struct {
		MachineID  string `json:"machine_id"`
		AutoUpdate *bool  `json:"autoupdate"`
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil || got.MachineID != "m1" || got.AutoUpdate == nil || *got.AutoUpdate {
		t.Fatalf("output %q (%v)", r.out, err)
	}
	if au, _ := e.store(t).AutoUpdates(ctx); len(au) != 1 || au["m1"] {
		t.Fatalf("stored overrides %v", au)
	}
	wantCode(t, e.run(t, "firmware", "auto-update", "--machine", "m1", "--clear"), ExitOK)
	if au, _ := e.store(t).AutoUpdates(ctx); len(au) != 0 {
		t.Fatalf("override not cleared: %v", au)
	}
	r = e.run(t, "firmware", "auto-update", "--machine", "nope", "--enable")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "nope", "FIRMWARE_REQUEST_REFUSED")
	if au, _ := e.store(t).AutoUpdates(ctx); len(au) != 0 {
		t.Fatalf("an unknown machine changed the store: %v", au)
	}
	wantCode(t, e.run(t, "firmware", "auto-update", "--machine", "m1", "--enable", "--disable"), ExitUsage)
	wantCode(t, e.run(t, "firmware", "auto-update", "--machine", "m1"), ExitUsage)
}

func TestFirmwareStartUpdates(t *testing.T) {
	e := newFWEnv(t)
	ctx := context.Background()
	cases := []struct {
		name       string
		args       []string
		code       int
		start, end time.Time // zero: not checked
		windows    int
	}{
		{"explicit offsets, two machines", []string{"--machine", "m1", "--machine", "m2", "--start", "2026-07-01T02:00:00+0000", "--end", "2026-07-01T06:00:00+0200"},
			ExitOK, time.Date(2026, 7, 1, 2, 0, 0, 0, time.UTC), time.Date(2026, 7, 1, 4, 0, 0, 0, time.UTC), 2},
		{"local time, the end defaults to 24 h", []string{"--machine", "m1", "--start", "2026-07-02T10:00:00"},
			ExitOK, time.Date(2026, 7, 2, 10, 0, 0, 0, time.Local), time.Date(2026, 7, 3, 10, 0, 0, 0, time.Local), 2},
		{"an end before the start", []string{"--machine", "m2", "--start", "2026-07-05T10:00:00+0000", "--end", "2026-07-05T09:00:00+0000"}, ExitUsage, time.Time{}, time.Time{}, 2},
		{"an unknown machine among known ones", []string{"--machine", "m1", "--machine", "nope", "--start", "2026-08-01T00:00:00+0000"}, ExitUsage, time.Time{}, time.Time{}, 2},
		{"a bad time", []string{"--machine", "m1", "--start", "tomorrow"}, ExitUsage, time.Time{}, time.Time{}, 2},
		{"cancel with a time", []string{"--machine", "m1", "--cancel", "--start", "2026-07-01T02:00:00+0000"}, ExitUsage, time.Time{}, time.Time{}, 2},
		{"cancel", []string{"--machine", "m2", "--cancel"}, ExitOK, time.Time{}, time.Time{}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := e.store(t).Windows(ctx)
			r := e.run(t, append([]string{"firmware", "start-updates", "-o", "json"}, c.args...)...)
			wantCode(t, r, c.code)
			ws, _ := e.store(t).Windows(ctx)
			if len(ws) != c.windows {
				t.Errorf("%d windows stored, want %d: %v", len(ws), c.windows, ws)
			}
			if c.code != ExitOK {
				if fmt.Sprint(ws) != fmt.Sprint(before) {
					t.Errorf("a refused command changed the windows: %v → %v", before, ws)
				}
				return
			}
			if !c.start.IsZero() {
				w := ws["m1"]
				if !w.Start.Equal(c.start) || !w.End.Equal(c.end) {
					t.Errorf("window %s – %s, want %s – %s", w.Start, w.End, c.start, c.end)
				}
			}
		})
	}
}

func TestFirmwareReprovision(t *testing.T) {
	e := newFWEnv(t)
	ctx := context.Background()
	r := e.run(t, "firmware", "reprovision", "set", "--machine", "m1", "--update-message", "CHG-4711", "-o", "json")
	wantCode(t, r, ExitOK)
	var req firmware.Request
	if err := json.Unmarshal([]byte(r.out), &req); err != nil || req.MachineID != "m1" || req.Message != "CHG-4711" || req.Initiator != "operator jdoe" {
		t.Fatalf("output %q (%v)", r.out, err)
	}
	wantCode(t, e.run(t, "firmware", "reprovision", "set", "--machine", "m1", "--update-message", "again"), ExitUsage)
	wantCode(t, e.run(t, "firmware", "reprovision", "set", "--machine", "nope", "--update-message", "x"), ExitUsage)
	wantCode(t, e.run(t, "firmware", "reprovision", "set", "--machine", "m2"), ExitUsage)

	r = e.run(t, "firmware", "reprovision", "list", "-o", "json")
	wantCode(t, r, ExitOK)
	var list []firmware.RequestStatus
	if err := json.Unmarshal([]byte(r.out), &list); err != nil || len(list) != 1 || list[0].MachineID != "m1" || list[0].Update != nil {
		t.Fatalf("list %q (%v)", r.out, err)
	}

	// The tenant approves; the manual gate is confirmed.
	wantCode(t, e.run(t, "firmware", "approve", "--machine", "m1"), ExitOK)
	wantCode(t, e.run(t, "firmware", "approve", "--machine", "m2"), ExitUsage) // no request
	wantCode(t, e.run(t, "firmware", "reprovision", "mark-manual-upgrade-complete", "--machine", "m1", "-o", "json"), ExitOK)
	got, _, _ := e.store(t).Request(ctx, "m1")
	if got.ApprovedAt.IsZero() || got.ManualUpgradeCompletedAt.IsZero() {
		t.Errorf("request %+v", got)
	}

	// A clear after the start is refused and keeps the request.
	s := e.store(t)
	if _, err := s.PatchRequest(ctx, "m1", firmware.RequestPatch{StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r = e.run(t, "firmware", "reprovision", "clear", "--machine", "m1")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "started")
	if _, ok, _ := s.Request(ctx, "m1"); !ok {
		t.Fatal("a refused clear removed the request")
	}

	// Reset needs a started update; then it goes back to checking.
	wantCode(t, e.run(t, "firmware", "reset", "--machine", "m1"), ExitUsage)
	if _, err := s.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: firmware.FailedFirmwareUpgrade, RetryCount: 5,
		Failure: &firmware.FailureInfo{Code: firmware.TaskFailed.Code}}); err != nil {
		t.Fatal(err)
	}
	r = e.run(t, "firmware", "reprovision", "list")
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, "FailedFirmwareUpgrade (exhausted)") || !strings.Contains(r.out, "FIRMWARE_TASK_FAILED") {
		t.Errorf("list:\n%s", r.out)
	}
	r = e.run(t, "firmware", "reset", "--machine", "m1", "-o", "json")
	wantCode(t, r, ExitOK)
	u, _, _ := s.Update(ctx, "m1")
	if u.Substate != firmware.CheckingFirmwareRepeat || u.RetryCount != 0 {
		t.Errorf("after reset %+v", u)
	}

	// A request that has not started clears.
	wantCode(t, e.run(t, "firmware", "reprovision", "set", "--machine", "m2", "--update-message", "CHG-2"), ExitOK)
	wantCode(t, e.run(t, "firmware", "reprovision", "clear", "--machine", "m2", "-o", "json"), ExitOK)
	if _, ok, _ := s.Request(ctx, "m2"); ok {
		t.Error("the request was not cleared")
	}
}

func TestFirmwareShow(t *testing.T) {
	e := newFWEnv(t)
	ctx := context.Background()
	if err := e.store(t).PutOverride(ctx, firmware.Override{Vendor: "Dell", Model: "PowerEdge R750", Component: firmware.BMC,
		Entry: firmware.Entry{Version: "7.20.10.00", Default: true, Artifacts: []firmware.Artifact{{Filename: "/fw/idrac-7.20.exe"}}}, UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "firmware", "show", "-o", "json")
	wantCode(t, r, ExitOK)
	var shown struct {
		Catalog struct {
			Files []struct {
				Path string `json:"path"`
			} `json:"files"`
		} `json:"catalog"`
		Overrides            []firmware.Override `json:"overrides"`
		ArtifactCache        string              `json:"artifact_cache"`
		ArtifactCacheDefault bool                `json:"artifact_cache_default"`
		Models               []firmware.Model    `json:"models"`
	}
	if err := json.Unmarshal([]byte(r.out), &shown); err != nil || len(shown.Models) != 1 {
		t.Fatalf("output %q (%v)", r.out, err)
	}
	models := shown.Models
	if len(shown.Catalog.Files) != 1 || !strings.HasSuffix(shown.Catalog.Files[0].Path, "catalog.toml") || len(shown.Overrides) != 1 ||
		!shown.ArtifactCacheDefault || !strings.HasSuffix(shown.ArtifactCache, "firmware-artifacts") {
		t.Errorf("what is in force: %+v", shown)
	}
	bmc := models[0].Components[firmware.BMC]
	if bmc == nil || len(bmc.KnownFirmware) != 2 || !models[0].ExplicitStartNeeded {
		t.Fatalf("model %+v", models[0])
	}
	for _, e := range bmc.KnownFirmware {
		if e.Default != (e.Version == "7.20.10.00") {
			t.Errorf("the override is not the only default: %+v", bmc.KnownFirmware)
		}
	}
	r = e.run(t, "firmware", "show")
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, "Dell / PowerEdge R750 (explicit start needed)") || !strings.Contains(r.out, "7.20.10.00") ||
		!strings.Contains(r.out, "catalog.toml (modified") || !strings.Contains(r.out, "(the default, beside the state database)") {
		t.Errorf("text:\n%s", r.out)
	}
}

func TestFirmwareOpsNeedTheSection(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "site.yaml")
	writeFW(t, cfg, "site: lab1\nnetbox: {url: 'https://netbox.example.net'}\n")
	r := run(t, "", nil, "firmware", "reprovision", "list", "--config", cfg)
	wantCode(t, r, ExitUsage)
	wantError(t, r, "firmware")
}
