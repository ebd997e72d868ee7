//go:build integration

package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/ironic"
)

const (
	itBIOS     = "Installed-159-1.8.2__BIOS.Setup.1-1"
	itPassword = "Emulated-Admin-1"
)

// fwHost is one managed host of the end-to-end test: an emulated Dell BMC
// over HTTPS and a real Ironic node pointing at it.
type fwHost struct {
	route, machine, model, image string
	emu                          *redfishemu.Emulator
	fb                           *fakes.FirmwareBMC
	addr                         string
	maintenanceSeen              bool
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hostforge agent server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writeFW(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFW(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	return certFile, keyFile
}

// freshPostgres creates a database on the integration PostgreSQL and
// returns its DSN; it is dropped when the test ends.
func freshPostgres(t *testing.T) string {
	t.Helper()
	dsn := itEnv(t, "HOSTFORGE_POSTGRES_DSN")
	ctx := context.Background()
	admin, err := sqlstore.Open(ctx, sqlstore.Postgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "hf_fw_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close()
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// availableNode creates a fake-hardware node whose driver_info points at
// the emulator, and brings it to available.
func availableNode(t *testing.T, c *ironicapi.Client, name, addr string) {
	t.Helper()
	ctx := context.Background()
	n, err := c.CreateNode(ctx, ironic.NodeCreate{Name: name, Driver: "fake-hardware", DriverInfo: map[string]any{"redfish_address": "https://" + addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.SetMaintenance(context.Background(), n.UUID, false, "")
		for range 40 {
			if c.DeleteNode(context.Background(), n.UUID) == nil {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
	})
	for _, step := range []struct{ action, want string }{{ironic.ActionManage, ironic.StateManageable}, {ironic.ActionProvide, ironic.StateAvailable}} {
		if err := c.ChangeProvisionState(ctx, n.UUID, step.action); err != nil {
			t.Fatalf("%s %s: %v", step.action, name, err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			got, err := c.GetNode(ctx, n.UUID)
			if err == nil && got.ProvisionState == step.want && got.TargetProvisionState == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s is %q, not %s (%v)", name, got.ProvisionState, step.want, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// One drifted host per route — Redfish (the worker pushes the image),
// the on-host agent (a real 'hostforge scout' process runs a real packaged
// script), a local script (a real script the worker runs, with the BMC in
// its environment, pushes and activates by itself) — goes from drift to
// compliance through a real 'hostforge worker' on Temporal, with the store
// on the real PostgreSQL, the hosts listed from the real Ironic (where the
// update's maintenance is set and cleared) and the BMCs emulated over
// HTTPS; /metrics counts three updates started and three completed.
func TestFirmwareEndToEndThroughEveryRoute(t *testing.T) {
	temporalAddr := itEnv(t, "HOSTFORGE_TEMPORAL_ADDRESS")
	ironicURL := itEnv(t, "HOSTFORGE_IRONIC_URL")
	dsn := freshPostgres(t)
	ctx := context.Background()
	dir := t.TempDir()
	var rb [3]byte
	_, _ = rand.Read(rb[:])
	suffix := hex.EncodeToString(rb[:])

	// The install hook the packaged agent script calls: it stages the image
	// on the host, as a flashing tool on the host would.
	hosts := map[string]*fwHost{}
	var hookMu sync.Mutex
	hookCalls := 0
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := hosts[strings.TrimPrefix(r.URL.Path, "/install/")]
		body, _ := io.ReadAll(r.Body)
		if h == nil || string(body) != "image of "+h.image {
			http.Error(w, "unknown host or image", http.StatusBadRequest)
			return
		}
		hookMu.Lock()
		hookCalls++
		hookMu.Unlock()
		if err := h.fb.Install(h.image, false); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	}))
	defer hook.Close()

	var bmcCA []byte
	for _, x := range []struct{ route, model string }{{"redfish", "PowerEdge R750"}, {"scout", "PowerEdge R760"}, {"script", "PowerEdge R660"}} {
		h := &fwHost{route: x.route, machine: "it-fw-" + x.route + "-" + suffix, model: x.model, image: strings.ToLower(strings.ReplaceAll(x.model, " ", "-")) + "-bios.exe"}
		e, err := redfishemu.New("dell", redfishemu.Options{Clock: clock.Real{}, AdminPassword: itPassword})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.SetProperties("/redfish/v1/Systems/System.Embedded.1", map[string]any{"Model": x.model}); err != nil {
			t.Fatal(err)
		}
		fb, err := e.EnableFirmware(redfishemu.FirmwareOptions{Members: []fakes.FirmwareMember{{ID: itBIOS, Name: "BIOS", Version: "1.8.2", State: "Enabled"}}})
		if err != nil {
			t.Fatal(err)
		}
		fb.AddImage(h.image, fakes.FirmwareImage{Targets: []string{itBIOS}, Version: "1.13.2", Activation: fakes.ActivateHostReboot, TaskTime: 300 * time.Millisecond})
		srv := httptest.NewTLSServer(e)
		defer srv.Close()
		bmcCA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		h.emu, h.fb, h.addr = e, fb, srv.Listener.Addr().String()
		writeFW(t, filepath.Join(dir, h.image), "image of "+h.image)
		hosts[h.machine] = h
	}
	byRoute := map[string]*fwHost{}
	for _, h := range hosts {
		byRoute[h.route] = h
	}
	caFile := filepath.Join(dir, "bmc-ca.pem")
	writeFW(t, caFile, string(bmcCA))

	// The catalog: one model per route.
	digest := func(h *fwHost) string {
		s := sha256.Sum256([]byte("image of " + h.image))
		return hex.EncodeToString(s[:])
	}
	flash := filepath.Join(dir, "flash-r660.sh")
	cat := ""
	for _, h := range []*fwHost{byRoute["redfish"], byRoute["scout"], byRoute["script"]} {
		entry := fmt.Sprintf(`files = [ { filename = %q, sha256 = %q } ]`, filepath.Join(dir, h.image), digest(h))
		if h.route == "script" {
			entry = fmt.Sprintf("script = %q", flash)
		}
		cat += fmt.Sprintf(`
[host_models.%[1]s]
vendor = "Dell"
model = %[2]q
ordering = ["uefi"]
[host_models.%[1]s.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
[[host_models.%[1]s.components.uefi.known_firmware]]
version = "1.13.2"
default = true
%[3]s
`, h.route, h.model, entry)
	}
	catFile := filepath.Join(dir, "catalog.toml")
	writeFW(t, catFile, cat)

	// The packaged agent script of the R760's uefi.
	pkg := filepath.Join(dir, "scout", "dell", "poweredge_r760", "uefi")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFW(t, filepath.Join(pkg, "upgrade.sh"), fmt.Sprintf(`#!/bin/sh
set -eu
echo "flashing $HOSTFORGE_FIRMWARE_COMPONENT $HOSTFORGE_FIRMWARE_VERSION (task $HOSTFORGE_TASK_ID) from $(basename "$1")"
curl -fsS --data-binary @"$1" %s/install/%s
echo flashed
`, hook.URL, byRoute["scout"].machine))
	writeFW(t, filepath.Join(pkg, "metadata.toml"), "execution_timeout_seconds = 120\nartifact_download_timeout_seconds = 60\n")

	// The R660's local script: it pushes the image over Redfish and
	// activates it itself, the credentials fed to curl on its standard
	// input, never on a command line.
	writeFW(t, flash, fmt.Sprintf(`#!/bin/sh
set -eu
rf() { printf 'user = "%%s:%%s"\n' "$HOSTFORGE_BMC_USERNAME" "$HOSTFORGE_BMC_PASSWORD" | curl -fsS --cacert %[1]s -K - "$@"; }
base="https://$HOSTFORGE_BMC_ADDRESS"
task=$(rf -F "UpdateFile=@%[2]s;type=application/octet-stream" -D - -o /dev/null "$base/redfish/v1/UpdateService/MultipartUpload" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
state=Running
i=0
while [ "$state" != Completed ] && [ $i -lt 100 ]; do
  sleep 0.2
  state=$(rf "$base$task" | sed -n 's/.*"TaskState":"\([A-Za-z]*\)".*/\1/p')
  i=$((i+1))
done
[ "$state" = Completed ] || { echo "task $task ended $state"; exit 1; }
rf -H 'Content-Type: application/json' -d '{"ResetType":"ForceRestart"}' "$base/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset"
echo "pushed, task $task completed, restarted"
`, caFile, filepath.Join(dir, byRoute["script"].image)))
	for _, f := range []string{flash, filepath.Join(pkg, "upgrade.sh")} {
		if err := os.Chmod(f, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Ironic nodes, the vault, the state database, the agent server's TLS.
	ic, err := ironicapi.New(ctx, ironicapi.Config{Endpoint: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	vault := "{}\n"
	for _, h := range hosts {
		availableNode(t, ic, h.machine, h.addr)
		vault += fmt.Sprintf("%s: {username: root, password: %s}\n", "bmc-admin-"+h.machine, itPassword)
	}
	var sb [24]byte
	_, _ = rand.Read(sb[:])
	siteSecret := "Site-" + hex.EncodeToString(sb[:])
	vault += "scout-site: {secret: " + siteSecret + "}\n"
	vault = strings.TrimPrefix(vault, "{}\n")
	vaultFile := filepath.Join(dir, "vault.yaml")
	writeFW(t, vaultFile, vault)
	dsnFile := filepath.Join(dir, "state.dsn")
	writeFW(t, dsnFile, dsn)
	scoutCert, scoutKey := selfSigned(t, dir, "scout")
	config := filepath.Join(dir, "site.yaml")
	t.Cleanup(func() { deleteSchedules(t, temporalAddr, "it-fw-"+suffix) })
	writeFW(t, config, fmt.Sprintf(`site: it-fw-%s
netbox: {url: 'https://netbox.invalid'}
ironic:
  - {name: ironic-it, url: '%s', device_classes: [CPU_BAREMETAL]}
bmc: {ca_file: %s}
vault: {kind: file, path: %s}
firmware:
  catalog: [%s]
  scout_scripts: %s
  artifact_cache: %s
  script_timeout: 2m
  explore_interval: 2s
  settings:
    autoupdate: true
    max_concurrent_machine_updates_absolute: 20
    max_uploads: 2
    machine_update_run_interval: 1s
    task_poll: 1s
    inventory_poll: 1s
    recheck: 1s
    new_firmware_wait: 30s
    host_firmware_upgrade_retry_interval: 10s
    max_retries: 2
  scout: {listen: '127.0.0.1:0', cert_file: %s, key_file: %s, site_secret_item: scout-site}
ledger: {driver: postgres, dsn_file: %s}
`, suffix, ironicURL, caFile, vaultFile, catFile, filepath.Join(dir, "scout"), filepath.Join(dir, "cache"), scoutCert, scoutKey, dsnFile))
	t.Setenv("HOSTFORGE_NETBOX_TOKEN", "unused-by-firmware")

	// The drift is there before the worker starts.
	for _, h := range hosts {
		if v := h.fb.Version(itBIOS); v != "1.8.2" {
			t.Fatalf("%s starts at %q", h.machine, v)
		}
	}

	// Watch Ironic: each node enters the update's maintenance and leaves it.
	// The watch starts before the worker: its first pass can start an update
	// (the script route's is over in about a second) before the worker has
	// even said where it serves.
	stopWatch := make(chan struct{})
	endWatch := sync.OnceFunc(func() { close(stopWatch) })
	var watch sync.WaitGroup
	t.Cleanup(func() { endWatch(); watch.Wait() })
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			for _, h := range hosts {
				if n, err := ic.GetNode(ctx, h.machine); err == nil && n.Maintenance && strings.HasPrefix(n.MaintenanceReason, firmware.ReportName) {
					hookMu.Lock()
					h.maintenanceSeen = true
					hookMu.Unlock()
				}
			}
			select {
			case <-stopWatch:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	queue := "it-fw-" + suffix
	w := startProcess(t, "worker", "--config", config, "--temporal", temporalAddr, "--task-queue", queue, "--log-level", "info",
		"--stop-timeout", "5s", "--metrics-listen", "127.0.0.1:0")
	w.waitOutput(t, "worker polling task queue "+queue, 60*time.Second)
	agentAddr := regexp.MustCompile(`agent server on https://(\S+)`).FindStringSubmatch(w.out.String())
	metricsAddr := regexp.MustCompile(`metrics on http://(\S+)/metrics`).FindStringSubmatch(w.out.String())
	if agentAddr == nil || metricsAddr == nil {
		t.Fatalf("the worker did not say where it serves:\n%s", w.out.String())
	}
	db, err := sqlstore.Open(ctx, sqlstore.Postgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := sqlstore.NewFirmwareStore(db)

	// Each host's own token, as an operator provisions it.
	tokenFiles := map[string]string{}
	for route, h := range byRoute {
		p := startProcess(t, "scout", "token", "--config", config, "--machine", h.machine)
		if code := p.wait(t, time.Minute); code != 0 {
			t.Fatalf("hostforge scout token exited %d:\n%s", code, p.out.String())
		}
		tokenFiles[route] = filepath.Join(dir, route+".token")
		writeFW(t, tokenFiles[route], p.out.String())
	}
	forgedScoutRequests(t, ctx, store, "https://"+agentAddr[1], scoutCert, byRoute["scout"].machine, byRoute["redfish"].machine, tokenFiles["redfish"])
	w.waitOutput(t, "names another machine than its token proves", 10*time.Second)

	agent := startProcess(t, "scout", "--server", "https://"+agentAddr[1], "--machine", byRoute["scout"].machine, "--ca-file", scoutCert,
		"--token-file", tokenFiles["scout"], "--wait", "4m", "--poll", "1s", "--work-dir", dir, "-o", "json", "--log-level", "info")

	deadline := time.Now().Add(4 * time.Minute)
	for {
		done := 0
		for _, h := range hosts {
			_, pending, _ := store.Request(ctx, h.machine)
			n, err := ic.GetNode(ctx, h.machine)
			if !pending && h.fb.Version(itBIOS) == "1.13.2" && err == nil && !n.Maintenance {
				done++
			}
		}
		if done == len(hosts) {
			break
		}
		if time.Now().After(deadline) {
			reqs, _ := store.Requests(ctx)
			ups, _ := store.Updates(ctx)
			t.Fatalf("not every host compliant after 4 min: requests %+v\nupdates %+v", reqs, ups)
		}
		time.Sleep(500 * time.Millisecond)
	}
	endWatch()
	watch.Wait()

	// Each route did its own work.
	if code := agent.wait(t, time.Minute); code != 0 {
		t.Fatalf("hostforge scout exited %d", code)
	}
	var res scout.Result
	if err := json.Unmarshal([]byte(agent.out.String()[strings.Index(agent.out.String(), "{"):]), &res); err != nil || res.Report == nil || !res.Report.OK ||
		!strings.Contains(res.Report.Output, "flashed") {
		t.Errorf("the agent's result: %+v (%v)\n%s", res, err, agent.out.String())
	}
	if hookCalls != 1 || byRoute["scout"].emu.Pushes() != 0 {
		t.Errorf("scout route: %d installs by the agent's script, %d pushes; want 1 and 0", hookCalls, byRoute["scout"].emu.Pushes())
	}
	if n := byRoute["redfish"].emu.Pushes(); n != 1 {
		t.Errorf("Redfish route: %d pushes, want 1", n)
	}
	if n := byRoute["script"].emu.Pushes(); n != 1 {
		t.Errorf("script route: %d pushes (by the script), want 1", n)
	}
	for _, h := range hosts {
		if !h.maintenanceSeen {
			t.Errorf("%s (%s route) was never seen in the update's Ironic maintenance", h.machine, h.route)
		}
		if st := h.fb.State(); !st.Lockdown {
			t.Errorf("%s: lockdown left off", h.machine)
		}
	}
	if strings.Contains(w.out.String(), itPassword) {
		t.Error("the worker's output carries the BMC password")
	}
	if strings.Contains(w.out.String(), siteSecret) || strings.Contains(agent.out.String(), siteSecret) {
		t.Error("the worker's or the agent's output carries the agent server's site secret")
	}

	// /metrics: three started, three completed (the gauges follow the pass),
	// and the three update workflows' runs, observed once under Temporal.
	deadline = time.Now().Add(30 * time.Second)
	var body string
	for {
		resp, err := http.Get("http://" + metricsAddr[1] + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		if strings.Contains(body, `hostforge_firmware_updates_total{phase="completed",target="host"} 3`) &&
			strings.Contains(body, "hostforge_active_host_firmware_update_count 0") &&
			strings.Contains(body, `hostforge_workflow_runs_finished_total{code="",outcome="succeeded",owner="",workflow="firmware"} 3`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics do not show the updates:\n%s", grepLines(body, "hostforge_"))
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, want := range []string{`hostforge_firmware_updates_total{phase="started",target="host"} 3`, "hostforge_pending_host_firmware_update_count 0",
		"hostforge_concurrent_machine_updates_available 20", "hostforge_exhausted_reprovision_retry_count 0",
		`hostforge_workflow_runs_started_total{workflow="firmware"} 3`,
		`hostforge_phase_duration_seconds_count{phase="Restore",status="done",workflow="firmware"} 3`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, grepLines(body, "hostforge_"))
		}
	}
	if strings.Contains(body, "hostforge_firmware_update_failures_total{") {
		t.Errorf("an attempt failed:\n%s", grepLines(body, "hostforge_firmware_update_failures_total"))
	}
}

// forgedScoutRequests waits until the worker offers machine's task, then
// speaks for machine with another machine's valid token (forger's, read
// from forgerTokenFile), as a host with a tenant's root on it could: the
// task, its script, its artifact and a success report with the real task
// ID are all refused 403, nothing is returned and the store is unchanged
// (no result, the update still waiting for the same task).
func forgedScoutRequests(t *testing.T, ctx context.Context, store firmware.Store, server, caFile, machine, forger, forgerTokenFile string) {
	t.Helper()
	var u firmware.HostUpdate
	for deadline := time.Now().Add(2 * time.Minute); ; {
		var ok bool
		u, ok, _ = store.Update(ctx, machine)
		if ok && u.Substate == firmware.WaitingForScoutUpgrade && u.Started {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not offer %s its agent task within 2 min: %+v", machine, u)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !regexp.MustCompile(`^scout-[0-9a-f]{32}$`).MatchString(u.TaskID) {
		t.Errorf("the agent task ID %q is not 128 random bits", u.TaskID)
	}
	tok, err := os.ReadFile(forgerTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := scout.TokenMachine(strings.TrimSpace(string(tok))); !ok || m != forger {
		t.Fatalf("the forger's token is machine %q's (%v), want %s's", m, ok, forger)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	base := server + scout.PathPrefix + "machines/" + url.PathEscape(machine)
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/task", ""},
		{http.MethodGet, "/tasks/" + u.TaskID + "/script", ""},
		{http.MethodGet, "/tasks/" + u.TaskID + "/artifacts/0", ""},
		{http.MethodPost, "/tasks/" + u.TaskID + "/report", `{"task_id":"` + u.TaskID + `","ok":true,"output":"forged"}`},
	} {
		req, _ := http.NewRequestWithContext(ctx, c.method, base+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s %s with %s's token: HTTP %d, want 403: %s", c.method, c.path, forger, resp.StatusCode, body)
		}
		if strings.Contains(string(body), "upgrade.sh") || strings.Contains(string(body), "image of") {
			t.Errorf("%s %s refused, yet answered the task's content: %s", c.method, c.path, body)
		}
	}
	if res, ok, _ := store.Result(ctx, machine, u.TaskID); ok {
		t.Errorf("a forged report was stored: %+v", res)
	}
	after, _, _ := store.Update(ctx, machine)
	if after.Substate != firmware.WaitingForScoutUpgrade || after.TaskID != u.TaskID || after.Failure != nil {
		t.Errorf("the forged requests moved the update: %+v", after)
	}
	if _, ok, err := firmware.OfferedScoutTask(ctx, store, time.Now(), machine); !ok || err != nil {
		t.Errorf("the task is no longer offered to its own machine after the forgeries (%v)", err)
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
