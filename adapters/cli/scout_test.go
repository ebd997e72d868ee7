package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
)

func TestScoutCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	secret := []byte("cli-test-site-secret")
	store, task, srv, ca := scoutServer(t, dir, "scout-5e0c3b2a1d9f48e7b6a5c4d3e2f1a0b9", []byte("#!/bin/sh\necho \"flashed $HOSTFORGE_FIRMWARE_VERSION\"\n"), secret)
	defer srv.Close()
	tokens := map[string]string{}
	for _, m := range []string{"m1", "m2"} {
		tokens[m] = scoutTokenFile(t, dir, secret, m)
	}

	// Without the CA the server's certificate is not trusted: nothing runs.
	r := run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1", "--token-file", tokens["m1"])
	wantCode(t, r, ExitInfra)
	wantError(t, r, "SCOUT_SERVER_UNAVAILABLE", "certificate")
	if _, ok, _ := store.Result(ctx, "m1", task.ID); ok {
		t.Fatal("a task ran over an unverified connection")
	}

	// Another machine's token is refused before anything is asked.
	r = run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1", "--token-file", tokens["m2"], "--ca-file", ca)
	wantCode(t, r, ExitUsage)
	wantError(t, r, `machine "m2"'s token`)

	r = run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1", "--token-file", tokens["m1"], "--ca-file", ca, "--work-dir", dir, "-o", "json")
	wantCode(t, r, ExitOK)
	var res scout.Result
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Task == nil || res.Report == nil || !res.Report.OK {
		t.Fatalf("output %q (%v)", r.out, err)
	}
	stored, ok, _ := store.Result(ctx, "m1", task.ID)
	if !ok || !stored.OK || stored.Output != "flashed 28.47.2682\n" {
		t.Fatalf("stored %+v", stored)
	}
	r = run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1", "--token-file", tokens["m1"], "--ca-file", ca)
	wantCode(t, r, ExitOK)
	if r.out != "no task for this machine\n" {
		t.Errorf("second run: %q", r.out)
	}
	wantCode(t, run(t, "", nil, "scout", "--machine", "m1"), ExitUsage)
	// Without a token the agent does not start.
	r = run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1", "--ca-file", ca)
	wantCode(t, r, ExitUsage)
	wantError(t, r, "--token-file is required")
}

// The agent refuses a plain http:// server (exit 2) before it sends
// anything: its token would travel in clear.
func TestScoutRefusesPlainHTTP(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++; w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	tok, err := scout.MachineToken([]byte("cli-test-site-secret"), "m1")
	if err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(t.TempDir(), "m1.token")
	writeFW(t, tokFile, tok)
	r := run(t, "", nil, "scout", "--server", srv.URL, "--machine", "m1", "--token-file", tokFile)
	wantCode(t, r, ExitUsage)
	wantError(t, r, "plain http:// is refused", "https://")
	if hits != 0 {
		t.Errorf("the agent sent %d requests to an http:// server", hits)
	}
	if strings.Contains(r.out+r.err, tok) {
		t.Error("the token is in the output")
	}
}

// 'hostforge scout token' prints the machine's token under the vault's
// site secret, and refuses (exit 2, naming the key) a config without it.
func TestScoutTokenCommand(t *testing.T) {
	e := newFWEnv(t)
	cfg, err := os.ReadFile(e.config)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(e.config)
	vaultFile := filepath.Join(dir, "vault.yaml")
	const secret = "Site-Secret-For-Scout-42"
	writeFW(t, vaultFile, "scout-site: {secret: "+secret+"}\nscout-short: {secret: Abc1234}\n")
	scoutSection := func(item string) string {
		return string(cfg) + "  scout: {listen: '127.0.0.1:0', cert_file: /etc/hostforge/scout.crt, key_file: /etc/hostforge/scout.key, site_secret_item: " + item + "}\n"
	}
	withScout := filepath.Join(dir, "scout.yaml")
	writeFW(t, withScout, scoutSection("scout-site"))

	r := run(t, "", nil, "scout", "token", "--config", withScout, "--machine", "gpu-r1-u02")
	wantCode(t, r, ExitOK)
	want, _ := scout.MachineToken([]byte(secret), "gpu-r1-u02")
	if r.out != want+"\n" {
		t.Fatalf("printed %q, want %q", r.out, want)
	}
	if m, ok := scout.TokenMachine(strings.TrimSpace(r.out)); !ok || m != "gpu-r1-u02" {
		t.Errorf("the printed token claims %q (%v)", m, ok)
	}
	if strings.Contains(r.out+r.err, secret) {
		t.Error("the site secret is in the output")
	}
	other := run(t, "", nil, "scout", "token", "--config", withScout, "--machine", "gpu-r1-u03")
	wantCode(t, other, ExitOK)
	if other.out == r.out {
		t.Error("two machines got the same token")
	}

	short := filepath.Join(dir, "short.yaml")
	writeFW(t, short, scoutSection("scout-short"))
	r = run(t, "", nil, "scout", "token", "--config", short, "--machine", "gpu-r1-u02")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "CONFIG_INVALID", "firmware.scout.site_secret_item", "at least 8")
	if strings.Contains(r.err, "Abc1234") {
		t.Error("the refusal quotes the short secret")
	}

	noItem := filepath.Join(dir, "noitem.yaml")
	writeFW(t, noItem, strings.Replace(scoutSection("x"), ", site_secret_item: x", "", 1))
	r = run(t, "", nil, "scout", "token", "--config", noItem, "--machine", "gpu-r1-u02")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "firmware.scout.site_secret_item")

	r = run(t, "", nil, "scout", "token", "--config", e.config, "--machine", "gpu-r1-u02")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "firmware.scout")
	for _, args := range [][]string{{"--config", withScout}, {"--config", withScout, "--machine", "a/b"}, {"--machine", "m1"}} {
		wantCode(t, run(t, "", nil, append([]string{"scout", "token"}, args...)...), ExitUsage)
	}
}

// scoutServer serves the scout API over TLS for a site secret, on an
// in-memory store holding one started update of m1 waiting for its scout
// task id, whose script (written to dir, executable) is script. ca is the
// file of the server's certificate; the caller closes srv.
func scoutServer(t *testing.T, dir, id string, script, secret []byte) (store *firmwarefake.MemStore, task firmware.ScoutTask, srv *httptest.Server, ca string) {
	t.Helper()
	ctx := context.Background()
	sp := filepath.Join(dir, "upgrade.sh")
	writeFW(t, sp, string(script))
	if err := os.Chmod(sp, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(script)
	store = firmwarefake.NewMemStore()
	task = firmware.ScoutTask{ID: id, MachineID: "m1", Component: firmware.CX7, Version: "28.47.2682",
		Script:   firmware.ScoutScript{Path: sp, SHA256: hex.EncodeToString(sum[:]), ExecutionTimeout: time.Minute, DownloadTimeout: time.Minute},
		Deadline: time.Now().Add(time.Hour)}
	if _, err := store.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: firmware.WaitingForScoutUpgrade, Started: true, TaskID: task.ID}); err != nil {
		t.Fatal(err)
	}
	if err := store.PutScoutTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewTLSServer(&scout.Server{Store: store, Clock: clock.Real{}, SiteSecret: secret})
	ca = filepath.Join(dir, "ca.pem")
	writeFW(t, ca, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	return store, task, srv, ca
}

// scoutTokenFile writes machine's token under the site secret to
// dir/MACHINE.token and returns the file.
func scoutTokenFile(t *testing.T, dir string, secret []byte, machine string) string {
	t.Helper()
	tok, err := scout.MachineToken(secret, machine)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, machine+".token")
	writeFW(t, f, tok+"\n")
	return f
}
