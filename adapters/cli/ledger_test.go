package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/ironic"
)

// ledgerSite is the demo rack's NetBox behind the emulator, and a config
// with the platform_class gate on and a SQLite ledger.
func ledgerSite(t *testing.T, ironicURL string) (cfgPath string, nbURL string, ledgerPath string) {
	t.Helper()
	site := newDemoSite()
	nb := httptest.NewServer(netboxhttp.New(site.NetBox, netboxhttp.Options{Token: "tok-lab1"}))
	t.Cleanup(nb.Close)
	dir := t.TempDir()
	ledgerPath = filepath.Join(dir, "ledger.db")
	cfgPath = writeFile(t, dir, "lab1.yaml", `site: lab1
netbox:
  url: `+nb.URL+`
  token_file: `+writeFile(t, dir, "token", "tok-lab1\n", 0o600)+`
ironic:
  - name: ironic-cpu
    url: `+ironicURL+`
    device_classes: [CPU_BAREMETAL, HYPERVISOR]
  - name: ironic-gpu
    url: http://127.0.0.1:1
    device_classes: [GPU_COMPUTE]
gates:
  enrollment_ironic_enrol: false
  platform_class_activity_ready: true
ledger:
  driver: sqlite
  path: `+ledgerPath+"\n  projection_interval: 30s\n", 0o644)
	return cfgPath, nb.URL, ledgerPath
}

func TestEnrollConfigRecordsThePlatformClassInTheLedger(t *testing.T) {
	cfg, nbURL, _ := ledgerSite(t, "https://ironic-cpu.example.net:6385")
	r := run(t, "", nil, "enroll", "--config", cfg, "--log-level", "off", "-o", "json", "cpu-r1-u10")
	wantCode(t, r, ExitOK)
	var got enrollJSON
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.out)), &got); err != nil {
		t.Fatal(err)
	}
	const key = "NOGPU_DELLPOWEREDGER7615_NORDMA_01"
	if got.PlatformClass != key || got.Proof == nil || got.Proof.Kind != "diagnostic" || got.Proof.Action != "none" {
		t.Fatalf("enroll: %+v proof %+v", got, got.Proof)
	}
	// NetBox (the emulator, over HTTP) holds the key.
	req, _ := http.NewRequest(http.MethodGet, nbURL+"/api/dcim/devices/?name=cpu-r1-u10", nil)
	req.Header.Set("Authorization", "Token tok-lab1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Results []struct {
			CustomFields map[string]any `json:"custom_fields"`
		} `json:"results"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&page)
	resp.Body.Close()
	if len(page.Results) != 1 || page.Results[0].CustomFields["platform_class"] != key {
		t.Fatalf("NetBox custom fields %+v", page.Results)
	}
	// The ledger holds it too.
	r = run(t, "", nil, "ledger", "show", "--config", cfg, "-o", "json", "cpu-r1-u10")
	wantCode(t, r, ExitOK)
	var show ledgerShowJSON
	if err := json.Unmarshal([]byte(r.out), &show); err != nil {
		t.Fatal(err)
	}
	if show.PlatformClass != key || show.Identity == "" || show.ProofState != "none" || show.Revision != 0 {
		t.Fatalf("ledger show: %+v", show)
	}
	r = run(t, "", nil, "ledger", "show", "--config", cfg, "cpu-r1-u10")
	wantCode(t, r, ExitOK)
	for _, want := range []string{"PLATFORM CLASS  " + key, "REVISION        0", "PROOF           none"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("ledger show does not say %q:\n%s", want, r.out)
		}
	}
	// A device the ledger does not know is a name to check, not a fleet
	// manager failure.
	r = run(t, "", nil, "ledger", "show", "--config", cfg, "ghost")
	wantCode(t, r, ExitInfra)
	wantError(t, r, "LEDGER_DEVICE_UNKNOWN")
}

func TestBackfillConfigDryRunApplyAndRerun(t *testing.T) {
	cfg, _, _ := ledgerSite(t, "https://ironic-cpu.example.net:6385")
	backfill := func(args ...string) []backfillJSON {
		t.Helper()
		r := run(t, "", nil, append([]string{"platform-class", "backfill", "--config", cfg, "--log-level", "off", "-o", "json", "--device", "cpu-r1-u10", "--device", "gpu-r1-u02"}, args...)...)
		wantCode(t, r, ExitOK)
		var rep backfillReportJSON
		if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
			t.Fatalf("-o json is not one document: %v\n%s", err, r.out)
		}
		rows := rep.Devices
		if len(rows) != 2 || rep.Applied != (len(args) > 0 && args[0] == "--apply") {
			t.Fatalf("rows %+v", rows)
		}
		return rows
	}
	for _, row := range backfill() {
		if row.NetBox != "would write" || row.Fleet != "would write" {
			t.Fatalf("dry run by default: %+v", row)
		}
	}
	for _, row := range backfill() {
		if row.NetBox != "would write" {
			t.Fatalf("the dry run wrote: %+v", row)
		}
	}
	for _, row := range backfill("--apply") {
		if row.NetBox != "written" || row.Fleet != "written" {
			t.Fatalf("--apply: %+v", row)
		}
	}
	for _, row := range backfill("--apply") {
		if row.NetBox != "-" || row.Fleet != "-" {
			t.Fatalf("a second --apply wrote: %+v", row)
		}
	}
	r := run(t, "", nil, "ledger", "show", "--config", cfg, "-o", "json", "gpu-r1-u02")
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, `"platform_class": "GB300_LENOVOHG635NV2_IB_01"`) {
		t.Fatalf("ledger after the backfill:\n%s", r.out)
	}
}

func TestLedgerConfigRefusals(t *testing.T) {
	dir := t.TempDir()
	const secret = "pw-never-printed"
	dsn := "postgres://hf:" + secret + "@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=2"
	loose := writeFile(t, dir, "loose.dsn", dsn, 0o644)
	tight := writeFile(t, dir, "tight.dsn", dsn, 0o600)
	tests := []struct {
		name    string
		section string
		args    []string
		code    int
		errs    []string
	}{
		{"a DSN file others can read", "ledger:\n  driver: postgres\n  dsn_file: " + loose + "\n", []string{"ledger", "show", "h1"},
			ExitUsage, []string{"CONFIG_INVALID", "ledger.dsn_file", "chmod 600"}},
		{"an unknown driver", "ledger:\n  driver: mysql\n", []string{"ledger", "show", "h1"},
			ExitUsage, []string{"CONFIG_INVALID", "ledger.driver"}},
		{"no ledger section", "", []string{"ledger", "show", "h1"},
			ExitUsage, []string{"CONFIG_INVALID", "ledger"}},
		{"a ledger that does not answer", "ledger:\n  driver: postgres\n  dsn_file: " + tight + "\n", []string{"ledger", "show", "h1"},
			ExitInfra, []string{"STATE_STORE_UNAVAILABLE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := writeFile(t, t.TempDir(), "c.yaml", "site: lab1\nnetbox:\n  url: https://netbox.example.net\n"+tt.section, 0o644)
			args := append([]string{tt.args[0], tt.args[1], "--config", cfg}, tt.args[2:]...)
			r := run(t, "", nil, args...)
			wantCode(t, r, tt.code)
			wantError(t, r, tt.errs...)
			if strings.Contains(r.out+r.err, secret) {
				t.Fatalf("the DSN was printed:\n%s%s", r.out, r.err)
			}
		})
	}

	// Enrollment with the gate on and a ledger that is down: the
	// platform-class phase fails PLATFORM_CLASS_RECORD_FAILED (retryable,
	// FLEET_MANAGER), the proof is reported unsettled with
	// FLEET_MANAGER_UNAVAILABLE, and nothing prints the DSN.
	cfg, _, _ := ledgerSite(t, "https://ironic-cpu.example.net:6385")
	b := strings.Replace(readFile(t, cfg), "ledger:\n  driver: sqlite\n", "ledger:\n  driver: postgres\n  dsn_file: "+tight+"\n", 1)
	b = b[:strings.Index(b, "  path: ")]
	writeFile(t, filepath.Dir(cfg), "lab1.yaml", b, 0o644)
	r := run(t, "", nil, "enroll", "--config", cfg, "--max-attempts", "1", "--log-level", "error", "-o", "json", "cpu-r1-u10")
	wantCode(t, r, ExitFleetManager)
	var got enrollJSON
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.out)), &got); err != nil {
		t.Fatalf("%v:\n%s", err, r.out)
	}
	if got.Failure == nil || got.Failure.Code != "PLATFORM_CLASS_RECORD_FAILED" || !got.Failure.Retryable || got.Failure.Owner != "FLEET_MANAGER" {
		t.Fatalf("enroll with the ledger down: %+v", got.Failure)
	}
	if got.Proof == nil || got.Proof.Action != enrollment.ProofNoAction || got.Proof.Failure == nil ||
		got.Proof.Failure.Code != enrollment.FleetManagerUnavailable.Code || !got.Proof.Failure.Retryable {
		t.Fatalf("proof with the ledger down: %+v", got.Proof)
	}
	if strings.Contains(r.out+r.err, secret) {
		t.Fatalf("the DSN was printed:\n%s%s", r.out, r.err)
	}
}

// ironicNodes is an Ironic API answering the version document and one page
// of nodes (name to UUID, read under mu).
func ironicNodes(t *testing.T, mu *sync.Mutex, nodes map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/", "/v1":
			fmt.Fprint(w, `{"version": {"version": "1.92", "min_version": "1.1"}}`)
		case "/v1/nodes":
			var page []map[string]string
			for name, uuid := range nodes {
				page = append(page, map[string]string{"name": name, "uuid": uuid, "provision_state": "available"})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"nodes": page})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLedgerProject(t *testing.T) {
	var mu sync.Mutex
	nodes := map[string]string{"cpu-r1-u10": "11111111-aaaa"}
	ir := ironicNodes(t, &mu, nodes)
	// ironic-gpu does not answer: its part of each pass fails, the rest is
	// projected.
	cfg, _, _ := ledgerSite(t, ir.URL)
	r := run(t, "", nil, "ledger", "project", "--config", cfg, "--log-level", "off", "-o", "json")
	wantCode(t, r, ExitInfra)
	var rep struct {
		Instances []struct{ Name, Code string }
		Changes   []struct{ Device, From, To string }
		Failure   *failureJSON
	}
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].To != "ironic-cpu/11111111-aaaa" || rep.Failure == nil || rep.Failure.Code != "IRONIC_PROJECTION_LIST_FAILED" ||
		len(rep.Instances) != 2 || rep.Instances[1].Code != "IRONIC_PROJECTION_LIST_FAILED" {
		t.Fatalf("ledger project:\n%s", r.out)
	}
	r = run(t, "", nil, "ledger", "show", "--config", cfg, "-o", "json", "cpu-r1-u10")
	if !strings.Contains(r.out, `"reference": "ironic-cpu/11111111-aaaa"`) || !strings.Contains(r.out, `"revision": 1`) {
		t.Fatalf("ledger show after the projection:\n%s", r.out)
	}
	// Unchanged: nothing written; a new node UUID moves the reference.
	r = run(t, "", nil, "ledger", "project", "--config", cfg, "--log-level", "off")
	wantCode(t, r, ExitInfra)
	if !strings.Contains(r.out, "0 changed (proof cleared), 1 unchanged") || !strings.Contains(r.out, "ironic-gpu  0      IRONIC_PROJECTION_LIST_FAILED") {
		t.Fatalf("second pass:\n%s", r.out)
	}
	mu.Lock()
	nodes["cpu-r1-u10"] = "22222222-bbbb"
	mu.Unlock()
	run(t, "", nil, "ledger", "project", "--config", cfg, "--log-level", "off")
	r = run(t, "", nil, "ledger", "show", "--config", cfg, "cpu-r1-u10")
	if !strings.Contains(r.out, "ironic-cpu/22222222-bbbb") || !strings.Contains(r.out, "REVISION        2") {
		t.Fatalf("after a new node UUID:\n%s", r.out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// staticNodes is a node lister with a fixed answer.
type staticNodes []ironic.Node

func (s staticNodes) ListNodes(context.Context) ([]ironic.Node, error) { return s, nil }

// TestLocalSettlementProjectsFirst: after a local run, the CLI settles
// against the ledger's projection of Ironic, which it refreshes before the
// compare-and-set; a result naming a node Ironic does not have is rejected.
func TestLocalSettlementProjectsFirst(t *testing.T) {
	ctx := context.Background()
	l, db, err := sqlstore.OpenLedger(ctx, sqlstore.LedgerConfig{Driver: "sqlite", Path: filepath.Join(t.TempDir(), "l.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lister := staticNodes{{Name: "cpu-r1-u10", UUID: "uuid-1"}}
	w := &ledgerWiring{ledger: l, clock: clock.NewFake(clock.Epoch), log: slog.New(slog.DiscardHandler),
		projector: &enrollment.Projector{Instances: map[string]enrollment.NodeLister{"ironic-cpu": lister}, Ledger: l}}
	l.Clock = w.clock
	pr, err := w.before(ctx, "cpu-r1-u10")
	if err != nil || pr.identity == "" {
		t.Fatalf("before: %+v, %v", pr, err)
	}
	res := enrollment.Result{Device: "cpu-r1-u10", Instance: "ironic-cpu", Node: "uuid-1", Enrolled: true, ProvisionState: "available",
		Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseIronic, Status: "done"}}}
	out, err := w.settle(ctx, pr, res, nil)
	if err != nil || out.Action != enrollment.ProofEstablished {
		t.Fatalf("settle: %+v, %v", out, err)
	}
	if r, _ := l.Record(ctx, "cpu-r1-u10"); r.ProofState() != sqlstore.ProofStateValid {
		t.Fatalf("record %+v", r)
	}
	res.Node = "uuid-other"
	if out, err := w.settle(ctx, pr, res, nil); hostforge.CodeOf(err) != enrollment.ProofRejected.Code {
		t.Fatalf("a node Ironic does not have: %+v, %v", out, err)
	}
	// A failed run is a failure write: the valid proof is kept.
	if out, err := w.settle(ctx, pr, enrollment.Result{Device: "cpu-r1-u10"}, enrollment.NotImplemented.New("x")); err != nil || out.Action != enrollment.ProofFailureWrite {
		t.Fatalf("failed run: %+v, %v", out, err)
	}
}
