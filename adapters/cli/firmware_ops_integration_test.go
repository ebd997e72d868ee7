//go:build integration

package cli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ironicapi "github.com/hostforge/hostforge/adapters/ironic"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/firmware"
)

const itIDRAC = "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"

// opsHost is one emulated Dell of the operator tests, its Ironic node real.
type opsHost struct {
	machine, model string
	emu            *redfishemu.Emulator
	fb             *fakes.FirmwareBMC
	addr           string
	ca             []byte
}

// opsDell serves an emulated Dell of model with the BIOS and iDRAC
// members, each push held hold before the BMC takes it.
func opsDell(t *testing.T, machine, model string, hold time.Duration) *opsHost {
	t.Helper()
	e, err := redfishemu.New("dell", redfishemu.Options{Clock: clock.Real{}, AdminPassword: itPassword})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetProperties("/redfish/v1/Systems/System.Embedded.1", map[string]any{"Model": model}); err != nil {
		t.Fatal(err)
	}
	fb, err := e.EnableFirmware(redfishemu.FirmwareOptions{UploadHold: hold, Members: []fakes.FirmwareMember{
		{ID: itBIOS, Name: "BIOS", Version: "1.8.2", State: "Enabled"}, {ID: itIDRAC, Name: "iDRAC", Version: "6.00.30.00", State: "Enabled"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(e)
	t.Cleanup(srv.Close)
	return &opsHost{machine: machine, model: model, emu: e, fb: fb, addr: srv.Listener.Addr().String(),
		ca: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
}

// image writes an artifact and returns its path and sha256.
func opsImage(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	p := filepath.Join(dir, name)
	body := "image " + name + strings.Repeat("\x00", 64<<10)
	writeFW(t, p, body)
	s := sha256.Sum256([]byte(body))
	return p, hex.EncodeToString(s[:])
}

func suffix() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// opsConfig writes the vault, the BMCs' CA bundle and the config.
func opsConfig(t *testing.T, dir, ironicURL, catalog, ledger string, hosts ...*opsHost) string {
	t.Helper()
	vault, ca := "", ""
	for _, h := range hosts {
		vault += fmt.Sprintf("bmc-admin-%s: {username: root, password: %s}\n", h.machine, itPassword)
		ca += string(h.ca)
	}
	writeFW(t, filepath.Join(dir, "vault.yaml"), vault)
	writeFW(t, filepath.Join(dir, "bmc-ca.pem"), ca)
	cfg := filepath.Join(dir, "site.yaml")
	writeFW(t, cfg, fmt.Sprintf(`site: it-fw-ops
netbox: {url: 'https://netbox.invalid'}
ironic:
  - {name: ironic-it, url: '%s', device_classes: [CPU_BAREMETAL]}
bmc: {ca_file: %s}
vault: {kind: file, path: %s}
firmware:
  catalog: [%s]
  artifact_cache: %s
  explore_interval: 1s
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
%s
`, ironicURL, filepath.Join(dir, "bmc-ca.pem"), filepath.Join(dir, "vault.yaml"), catalog, filepath.Join(dir, "cache"), ledger))
	return cfg
}

// cli runs one hostforge command as its own process and returns its output.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	p := startProcess(t, args...)
	if code := p.wait(t, 2*time.Minute); code != 0 {
		t.Fatalf("hostforge %s exited %d:\n%s", strings.Join(args, " "), code, p.out.String())
	}
	return p.out.String()
}

func waitFor(t *testing.T, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// On a running 'hostforge worker' (Temporal, PostgreSQL, real Ironic, BMCs
// emulated over HTTPS): 'firmware config set' changes the next pass (a
// compliant R750 gets a new BIOS default and is updated to it, no
// restart); 'firmware cancel' during an R760's Redfish push lets the push
// finish and then stops the update, handing the host back out of
// maintenance; 'firmware history' and 'firmware report' tell both after
// the run.
func TestFirmwareOperatorsOnARunningWorker(t *testing.T) {
	temporalAddr := itEnv(t, "HOSTFORGE_TEMPORAL_ADDRESS")
	ironicURL := itEnv(t, "HOSTFORGE_IRONIC_URL")
	dsn := freshPostgres(t)
	ctx := context.Background()
	dir := t.TempDir()
	sfx := suffix()
	r750 := opsDell(t, "it-fwops-r750-"+sfx, "PowerEdge R750", 0)
	r760 := opsDell(t, "it-fwops-r760-"+sfx, "PowerEdge R760", 6*time.Second)
	bios, biosSum := opsImage(t, dir, "bios-1.13.2.exe")
	for _, h := range []*opsHost{r750, r760} {
		h.fb.AddImage(filepath.Base(bios), fakes.FirmwareImage{Targets: []string{itBIOS}, Version: "1.13.2", Activation: fakes.ActivateHostReboot, TaskTime: 2 * time.Second})
	}
	// The R750 is compliant with the catalog; the R760 is not.
	cat := filepath.Join(dir, "catalog.toml")
	writeFW(t, cat, fmt.Sprintf(`
[host_models.r750]
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["uefi"]
[host_models.r750.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
known_firmware = [ { version = "1.8.2", default = true } ]

[host_models.r760]
vendor = "Dell"
model = "PowerEdge R760"
ordering = ["uefi"]
[host_models.r760.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
known_firmware = [ { version = "1.13.2", default = true, files = [ { filename = %q, sha256 = %q } ] } ]
`, bios, biosSum))
	ic, err := ironicapi.New(ctx, ironicapi.Config{Endpoint: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []*opsHost{r750, r760} {
		availableNode(t, ic, h.machine, h.addr)
	}
	writeFW(t, filepath.Join(dir, "state.dsn"), dsn)
	config := opsConfig(t, dir, ironicURL, cat, fmt.Sprintf("ledger: {driver: postgres, dsn_file: %s}", filepath.Join(dir, "state.dsn")), r750, r760)
	t.Setenv("HOSTFORGE_NETBOX_TOKEN", "unused-by-firmware")
	t.Setenv("USER", "jdoe")
	db, err := sqlstore.Open(ctx, sqlstore.Postgres, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := sqlstore.NewFirmwareStore(db)

	queue := "it-fwops-" + sfx
	w := startProcess(t, "worker", "--config", config, "--temporal", temporalAddr, "--task-queue", queue, "--log-level", "info", "--stop-timeout", "5s")
	w.waitOutput(t, "worker polling task queue "+queue, 60*time.Second)

	// The R760's push is under way: its autoupdate is turned off (so no
	// pass selects it again), and its update cancelled.
	waitFor(t, "the R760's push", 2*time.Minute, func() bool { return r760.emu.UploadsInFlight() > 0 })
	cli(t, "firmware", "auto-update", "--config", config, "--machine", r760.machine, "--disable")
	out := cli(t, "firmware", "cancel", "--config", config, "--machine", r760.machine, "-o", "json")
	if !strings.Contains(out, `"cancelled_by": "operator jdoe"`) {
		t.Errorf("cancel said:\n%s", out)
	}
	waitFor(t, "the R760 handed back", 2*time.Minute, func() bool {
		_, hasReq, _ := store.Request(ctx, r760.machine)
		n, err := ic.GetNode(ctx, r760.machine)
		return !hasReq && err == nil && !n.Maintenance
	})
	if n := r760.emu.Pushes(); n != 1 {
		t.Errorf("the R760's BMC took %d pushes, want the one under way when the update was cancelled", n)
	}
	if st := r760.fb.State(); len(st.Resets) != 0 || st.Staged != 1 || !st.Lockdown {
		t.Errorf("after the cancel: resets %v, staged %d, lockdown %v; want none, the pushed image staged, lockdown on", st.Resets, st.Staged, st.Lockdown)
	}

	// A runtime override on the running worker: the R750's next pass sees
	// the new default and updates it.
	cli(t, "firmware", "config", "set", "--config", config, "--vendor", "Dell", "--model", "PowerEdge R750", "--component", "uefi",
		"--version", "1.13.2", "--default", "--file", bios+",sha256="+biosSum)
	waitFor(t, "the R750 at the override's default", 3*time.Minute, func() bool {
		_, hasReq, _ := store.Request(ctx, r750.machine)
		return !hasReq && r750.fb.Version(itBIOS) == "1.13.2"
	})

	// After the run: the history of each, the fleet's report.
	var hist []firmware.HistoryEntry
	if err := json.Unmarshal([]byte(cli(t, "firmware", "history", "--config", config, "--machine", r750.machine, "-o", "json")), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].Outcome != firmware.OutcomeDone || hist[0].FinishedAt == nil || len(hist[0].Components) != 1 ||
		hist[0].Components[0] != (firmware.ComponentChange{Component: firmware.UEFI, From: "1.8.2", To: "1.13.2"}) || hist[0].Failure != nil {
		t.Errorf("the R750's history: %+v", hist)
	}
	if err := json.Unmarshal([]byte(cli(t, "firmware", "history", "--config", config, "--machine", r760.machine, "-o", "json")), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].Outcome != firmware.OutcomeCancelled || hist[0].CancelledBy != "operator jdoe" || len(hist[0].Components) != 0 {
		t.Errorf("the R760's history: %+v", hist)
	}
	var report []firmware.ModelReport
	if err := json.Unmarshal([]byte(cli(t, "firmware", "report", "--config", config, "-o", "json")), &report); err != nil {
		t.Fatal(err)
	}
	got := map[string]firmware.ModelReport{}
	for _, l := range report {
		got[l.Model] = l
	}
	if l := got["PowerEdge R750"]; l.Hosts < 1 || l.Compliant != l.Hosts {
		t.Errorf("report of the R750s: %+v", l)
	}
	if l := got["PowerEdge R760"]; l.Hosts < 1 || l.Drifted < 1 || l.Updating != 0 {
		t.Errorf("report of the R760s: %+v", l)
	}
}

// 'hostforge firmware run' (no Temporal; the SQLite state file) killed
// with SIGKILL while it pushes a host's first image, and started again,
// brings the host to compliance with each image pushed once: the push the
// killed run sent is found on the BMC, not sent again.
func TestFirmwareRunKilledMidUpdateResumes(t *testing.T) {
	ironicURL := itEnv(t, "HOSTFORGE_IRONIC_URL")
	ctx := context.Background()
	dir := t.TempDir()
	h := opsDell(t, "it-fwrun-"+suffix(), "PowerEdge R750", 4*time.Second)
	bios, biosSum := opsImage(t, dir, "bios-1.13.2.exe")
	idrac, idracSum := opsImage(t, dir, "idrac-7.10.exe")
	h.fb.AddImage(filepath.Base(bios), fakes.FirmwareImage{Targets: []string{itBIOS}, Version: "1.13.2", Activation: fakes.ActivateHostReboot, TaskTime: 2 * time.Second})
	h.fb.AddImage(filepath.Base(idrac), fakes.FirmwareImage{Targets: []string{itIDRAC}, Version: "7.10.30.00", Activation: fakes.ActivateSelf, TaskTime: 2 * time.Second})
	cat := filepath.Join(dir, "catalog.toml")
	writeFW(t, cat, fmt.Sprintf(`
[host_models.r750]
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["uefi", "bmc"]
[host_models.r750.components.uefi]
current_version_reported_as = "^Installed-.*__BIOS.Setup."
known_firmware = [ { version = "1.13.2", default = true, files = [ { filename = %q, sha256 = %q } ] } ]
[host_models.r750.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."
known_firmware = [ { version = "7.10.30.00", default = true, files = [ { filename = %q, sha256 = %q } ] } ]
`, bios, biosSum, idrac, idracSum))
	ic, err := ironicapi.New(ctx, ironicapi.Config{Endpoint: ironicURL})
	if err != nil {
		t.Fatal(err)
	}
	availableNode(t, ic, h.machine, h.addr)
	state := filepath.Join(dir, "state.db")
	config := opsConfig(t, dir, ironicURL, cat, "ledger: {driver: sqlite, path: "+state+"}", h)
	t.Setenv("HOSTFORGE_NETBOX_TOKEN", "unused-by-firmware")

	run := startProcess(t, "firmware", "run", "--config", config, "--log-level", "info")
	run.waitOutput(t, "firmware run:", time.Minute)
	waitFor(t, "the first push", 2*time.Minute, func() bool { return h.emu.UploadsInFlight() > 0 })
	if err := run.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-run.done

	again := startProcess(t, "firmware", "run", "--config", config, "--log-level", "info")
	again.waitOutput(t, "firmware run:", time.Minute)
	waitFor(t, "compliance after the restart", 4*time.Minute, func() bool {
		n, err := ic.GetNode(ctx, h.machine)
		return h.fb.Version(itBIOS) == "1.13.2" && h.fb.Version(itIDRAC) == "7.10.30.00" && err == nil && !n.Maintenance
	})
	waitFor(t, "the update ended", time.Minute, func() bool {
		db, err := sqlstore.Open(ctx, sqlstore.SQLite, state)
		if err != nil {
			return false
		}
		defer db.Close()
		_, hasReq, _ := sqlstore.NewFirmwareStore(db).Request(ctx, h.machine)
		return !hasReq
	})
	per := map[string]int{}
	for _, p := range h.fb.State().Pushes {
		per[filepath.Base(p.Key)]++
	}
	if per["bios-1.13.2.exe"] != 1 || per["idrac-7.10.exe"] != 1 || len(per) != 2 {
		t.Errorf("pushes per image %v; want each image once across the kill", per)
	}
	if !h.fb.State().Lockdown {
		t.Error("lockdown left off")
	}
}
