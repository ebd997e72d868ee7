package cli

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/realdata"
)

// serveJSON runs a command that serves until interrupted with -o json:
// once its document is printed it is interrupted, and everything it
// printed on the standard output is returned.
func serveJSON(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, args, Streams{Out: &out}, func(string) (string, bool) { return "", false })
	}()
	for deadline := time.Now().Add(60 * time.Second); !json.Valid([]byte(strings.TrimSpace(out.String()))); {
		select {
		case code := <-done:
			t.Fatalf("%v exited %d before printing its document:\n%s", args, code, out.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("%v printed no document:\n%s", args, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("%v exited %d after the interrupt", args, code)
	}
	return out.String()
}

// jsonRun runs args with -o json, checks the exit code, and that it
// printed a document (run holds it to docs/json.md).
func jsonRun(t *testing.T, env map[string]string, code int, args ...string) string {
	t.Helper()
	r := run(t, "", env, append(args, "-o", "json")...)
	wantCode(t, r, code)
	if strings.TrimSpace(r.out) == "" {
		t.Fatalf("%v -o json printed nothing", args)
	}
	return r.out
}

// Each command's -o json, run for real, is one document (one per host
// for enroll) of the shape docs/json.md documents. The table holds one
// run per documented output; a documented output without one fails.
func TestJSONOutputs(t *testing.T) {
	runs := map[string]func(t *testing.T){
		"bmc detect": func(t *testing.T) {
			env := map[string]string{EnvBMCPassword: "calvin-test"}
			srv := httptest.NewServer(&mockupBMC{dir: realdata.Path(t, "redfish", "dell", "r750-idrac9"), user: "root", password: env[EnvBMCPassword]})
			defer srv.Close()
			jsonRun(t, env, ExitOK, "bmc", "detect", "--url", srv.URL, "--user", "root")
		},
		"enroll": func(t *testing.T) {
			out := jsonRun(t, nil, ExitInfra, "enroll", "--demo", "--log-level", "off", "cpu-r1-u10", "bad-offline-u18")
			if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != 2 {
				t.Errorf("%d lines for 2 hosts:\n%s", n, out)
			}
		},
		"extensions fire":     func(t *testing.T) { extensionsJSON(t, "fire") },
		"extensions history":  func(t *testing.T) { extensionsJSON(t, "history") },
		"extensions outputs":  func(t *testing.T) { extensionsJSON(t, "outputs") },
		"extensions render":   func(t *testing.T) { extensionsJSON(t, "render") },
		"extensions validate": func(t *testing.T) { extensionsJSON(t, "validate") },
		"extensions listen": func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			l, _, _ := eventsLab(t, ctx, retireDef("https://127.0.0.1:1"), "127.0.0.1:0")
			args := []string{"extensions", "listen", "--config", l.Config, "--log-level", "off", "-o", "json"}
			out := serveJSON(t, args...)
			checkJSONOutput(t, args, out)
			var doc listenJSON
			if err := json.Unmarshal([]byte(out), &doc); err != nil || !strings.HasPrefix(doc.Endpoint, "127.0.0.1:") || doc.Site == "" {
				t.Errorf("listen: %s (%v)", out, err)
			}
		},
		"failure-codes": func(t *testing.T) { jsonRun(t, nil, ExitOK, "failure-codes") },
		"firmware *":    firmwareJSON,
		"lab": func(t *testing.T) {
			args := []string{"lab", "--dir", filepath.Join(t.TempDir(), "lab"), "--no-ironic", "--log-level", "off", "-o", "json"}
			out := serveJSON(t, args...)
			checkJSONOutput(t, args, out)
			var doc labJSON
			if err := json.Unmarshal([]byte(out), &doc); err != nil || filepath.Base(doc.Config) != lab.ConfigFile || len(doc.BMCs) != len(doc.Hosts) || doc.IronicURL != "" {
				t.Errorf("lab: %s (%v)", out, err)
			}
		},
		"ledger *": func(t *testing.T) {
			var mu sync.Mutex
			ir := ironicNodes(t, &mu, map[string]string{"cpu-r1-u10": "11111111-aaaa"})
			cfg, _, _ := ledgerSite(t, ir.URL)
			jsonRun(t, nil, ExitInfra, "ledger", "project", "--config", cfg, "--log-level", "off")
			jsonRun(t, nil, ExitOK, "ledger", "show", "--config", cfg, "cpu-r1-u10")
		},
		"lldp decode": func(t *testing.T) {
			jsonRun(t, nil, ExitOK, "lldp", "decode", "--inventory", realdata.Path(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json"))
		},
		"platform-class backfill": func(t *testing.T) {
			jsonRun(t, nil, ExitOK, "platform-class", "backfill", "--demo", "--apply", "--log-level", "off", "--device", "gpu-r1-u02", "cpu-r1-u10")
		},
		"platform-class resolve": func(t *testing.T) {
			jsonRun(t, nil, ExitOK, "platform-class", "resolve", "--manufacturer", "Dell", "--model", "PowerEdge R7615", "--device-class", "CPU_BAREMETAL")
		},
		"scout": scoutJSON,
		"scout token": func(t *testing.T) {
			e := newFWEnv(t)
			cfg, err := os.ReadFile(e.config)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(e.config)
			writeFW(t, filepath.Join(dir, "vault.yaml"), "scout-site: {secret: Site-Secret-For-Scout-42}\n")
			withScout := filepath.Join(dir, "scout.yaml")
			writeFW(t, withScout, string(cfg)+"  scout: {listen: '127.0.0.1:0', cert_file: /etc/hostforge/scout.crt, key_file: /etc/hostforge/scout.key, site_secret_item: scout-site}\n")
			out := jsonRun(t, nil, ExitOK, "scout", "token", "--config", withScout, "--machine", "gpu-r1-u02")
			var doc scoutTokenJSON
			if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.MachineID != "gpu-r1-u02" {
				t.Fatalf("scout token: %s (%v)", out, err)
			}
			if m, ok := scout.TokenMachine(doc.Token); !ok || m != "gpu-r1-u02" {
				t.Errorf("the token claims %q (%v)", m, ok)
			}
		},
		"verify": func(t *testing.T) {
			inv := realdata.Path(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json")
			jsonRun(t, nil, ExitOnSite, "verify", "--inventory", inv, "--expect", "testdata/r7615-fail.yaml")
		},
		"version": func(t *testing.T) { jsonRun(t, nil, ExitOK, "version") },
		// A retirement needs an enrolled host: TestRetireThroughTheLab
		// enrols one in a lab, retires it with -o json, and run holds
		// its lines to docs/json.md.
		"retire": nil,
		// The worker needs Temporal: TestWorkerJSON runs it against the real
		// one in the integration run.
		"worker": nil,
	}
	for _, d := range jsonDocs {
		key := d.Command
		if _, ok := runs[key]; !ok {
			key = strings.Fields(d.Command)[0] + " *"
		}
		if _, ok := runs[key]; !ok {
			t.Errorf("no run checks hostforge %s -o json: add one", d.Command)
		}
	}
	for name, f := range runs {
		if f == nil {
			continue
		}
		t.Run(name, f)
	}
}

// extensionsJSON runs one extensions command with -o json.
func extensionsJSON(t *testing.T, sub string) {
	def, payload := extFiles(t)
	switch sub {
	case "validate":
		jsonRun(t, nil, ExitOK, "extensions", "validate", def)
	case "render":
		jsonRun(t, nil, ExitOK, "extensions", "render", def, "--stage", "serverRegistered", "--payload", payload)
	default:
		recv := &countingReceiver{ids: map[string][]string{}}
		srv := httptest.NewServer(recv)
		defer srv.Close()
		hook, hookPayload, vaultFile := fireSetup(t, srv.URL, "")
		state := filepath.Join(t.TempDir(), "state.db")
		out := jsonRun(t, nil, ExitOK, "extensions", "fire", hook, "--stage", "serverRegistered", "--payload", hookPayload, "--vault", vaultFile, "--state", state)
		if sub == "fire" {
			if !strings.Contains(out, `"deliveryId"`) {
				t.Errorf("fire rows lack MetalSoft's deliveryId:\n%s", out)
			}
			return
		}
		if sub == "history" {
			out = jsonRun(t, nil, ExitOK, "extensions", "history", "--state", state)
			if strings.Count(out, `"startedAt"`) != 2 {
				t.Errorf("history:\n%s", out)
			}
			return
		}
		jsonRun(t, nil, ExitOK, "extensions", "outputs", "--state", state, "--extension", "notify")
	}
}

// firmwareJSON runs every firmware command with -o json against one site.
func firmwareJSON(t *testing.T) {
	e := newFWEnv(t)
	ctx := context.Background()
	s := e.store(t)
	js := func(code int, args ...string) string {
		t.Helper()
		return jsonRun(t, map[string]string{"USER": "jdoe"}, code, append(args, "--config", e.config)...)
	}
	js(ExitOK, "firmware", "config", "set", "--vendor", "Dell", "--model", "PowerEdge R750", "--component", "bmc", "--version", "7.20.10.00", "--file", "/fw/idrac-7.20.exe")
	js(ExitOK, "firmware", "config", "list")
	js(ExitOK, "firmware", "config", "delete", "--vendor", "Dell", "--model", "PowerEdge R750", "--component", "bmc", "--version", "7.20.10.00")
	js(ExitOK, "firmware", "auto-update", "--machine", "m1", "--disable")
	js(ExitOK, "firmware", "start-updates", "--machine", "m1", "--machine", "m2")
	js(ExitOK, "firmware", "start-updates", "--machine", "m2", "--cancel")
	js(ExitOK, "firmware", "reprovision", "set", "--machine", "m1", "--update-message", "CHG-1")
	js(ExitOK, "firmware", "reprovision", "set", "--machine", "m2", "--update-message", "CHG-2")
	js(ExitOK, "firmware", "reprovision", "clear", "--machine", "m2")
	js(ExitOK, "firmware", "approve", "--machine", "m1")
	js(ExitOK, "firmware", "reprovision", "mark-manual-upgrade-complete", "--machine", "m1")
	if err := s.PutObserved(ctx, firmware.Observed{MachineID: "m1", Identity: firmware.Identity{Manufacturer: "Dell Inc.", Model: "PowerEdge R750"},
		Reported: firmware.Reported{firmware.BMC: {{ID: "Installed-25227-6.00.30.00__iDRAC.Embedded.1-1", Version: "6.00.30.00"}}}, At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PatchRequest(ctx, "m1", firmware.RequestPatch{StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: firmware.FailedFirmwareUpgrade, RetryCount: 5,
		Failure: &firmware.FailureInfo{Code: firmware.TaskFailed.Code}}); err != nil {
		t.Fatal(err)
	}
	js(ExitOK, "firmware", "reprovision", "list")
	js(ExitOK, "firmware", "show")
	js(ExitOK, "firmware", "show", "--machine", "m1")
	js(ExitOK, "firmware", "report")
	js(ExitOK, "firmware", "report", "--unmatched")
	js(ExitOK, "firmware", "reset", "--machine", "m1")
	js(ExitOK, "firmware", "cancel", "--machine", "m1")
	js(ExitOK, "firmware", "history", "--machine", "m1")
	jsonRun(t, nil, ExitOK, "firmware", "drift", "--catalog", fixtureCatalog, "--inventory", fixtureTree)
	args := []string{"firmware", "run", "--config", e.config, "--log-level", "off", "--metrics-listen", "127.0.0.1:0", "-o", "json"}
	out := serveJSON(t, args...)
	checkJSONOutput(t, args, out)
	var doc firmwareRunJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !strings.HasPrefix(doc.MetricsURL, "http://127.0.0.1:") || doc.IntervalSeconds != 300 {
		t.Errorf("firmware run: %s (%v)", out, err)
	}
}

// scoutJSON runs the agent with -o json against a server holding one task.
func scoutJSON(t *testing.T) {
	dir := t.TempDir()
	secret := []byte("cli-json-site-secret")
	_, _, srv, ca := scoutServer(t, dir, "scout-0123456789abcdef0123456789abcdef", []byte("#!/bin/sh\necho flashed\n"), secret)
	defer srv.Close()
	tokFile := scoutTokenFile(t, dir, secret, "m1")
	base := []string{"scout", "--server", srv.URL, "--machine", "m1", "--token-file", tokFile, "--ca-file", ca, "--work-dir", dir, "--log-level", "off"}
	if out := jsonRun(t, nil, ExitOK, base...); !strings.Contains(out, `"task_id"`) {
		t.Errorf("the task's report is missing:\n%s", out)
	}
	// No task left: an empty document.
	if out := jsonRun(t, nil, ExitOK, base...); strings.TrimSpace(out) != "{}" {
		t.Errorf("without a task: %s", out)
	}
}
