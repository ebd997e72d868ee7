package cli

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// hookReceiver is a webhook receiver that checks each delivery's Standard
// Webhooks signature itself and answers with the next scripted status.
type hookReceiver struct {
	t        *testing.T
	secret   []byte
	mu       sync.Mutex
	ids      []string
	statuses []int
	n        int
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	mac := hmac.New(sha256.New, h.secret)
	fmt.Fprintf(mac, "%s.%s.%s", id, ts, body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	h.mu.Lock()
	defer h.mu.Unlock()
	if r.Header.Get("webhook-signature") != want {
		h.t.Errorf("delivery %s: signature %q, want %q", id, r.Header.Get("webhook-signature"), want)
	}
	h.ids = append(h.ids, id)
	status := h.statuses[min(h.n, len(h.statuses)-1)]
	h.n++
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"received": %q}`, id)
}

func (h *hookReceiver) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids...)
}

// fireSetup writes a definition with two webhook tasks to url (the first
// with policy, the second after it), a payload with a secret, and a vault
// holding the signing secret.
func fireSetup(t *testing.T, url, policy string) (def, payload, vaultFile string) {
	t.Helper()
	dir := t.TempDir()
	def, payload, vaultFile = filepath.Join(dir, "notify.json"), filepath.Join(dir, "server.json"), filepath.Join(dir, "vault.yaml")
	task := func(label, extra string) string {
		return `{"label": "` + label + `", "taskType": "ExtensionTaskWebhook", ` + extra + `
  "options": {"endpoint": "` + url + `/` + label + `", "method": "POST", "signingSecret": "notify-signing",
    "requestTemplate": "{\"serial\": {{ server.serialNumber | dump }}, \"task\": \"` + label + `\"}"}}`
	}
	policyField := ""
	if policy != "" {
		policyField = `"failurePolicy": "` + policy + `",`
	}
	doc := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "notify", "label": "notify", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [` + task("first", policyField) + `, ` + task("second", "") + `]}]}`
	for name, body := range map[string]string{def: doc, payload: `{"server": {"serialNumber": "6SBT0R3", "passwordEncrypted": "hunter22"}}`,
		vaultFile: "notify-signing:\n  password: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n"} {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return def, payload, vaultFile
}

// The fire contract: -o json prints [{extension, stage, task, status,
// deliveryId, message, eventId}]
// with status succeeded or failed, deliveries really reach the receiver
// signed with the vault's secret, and the exit code says whether any task
// failed.
func TestExtensionsFireDeliversForReal(t *testing.T) {
	secret, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	tests := []struct {
		name     string
		policy   string
		statuses []int
		code     int
		want     [][2]string // status, message fragment per task
		hits     int
	}{
		{"all delivered", "", []int{200}, ExitOK, [][2]string{{"succeeded", "answered 200 OK"}, {"succeeded", "answered 200 OK"}}, 2},
		{"a failure stops the extension", "", []int{500, 200}, ExitInfra, [][2]string{{"failed", "EXTENSION_WEBHOOK_UNAVAILABLE"}, {"failed", "not run: task first of extension notify failed"}}, 1},
		{"continue goes on", "continue", []int{404, 200}, ExitInfra, [][2]string{{"failed", "EXTENSION_WEBHOOK_REJECTED"}, {"succeeded", "answered 200 OK"}}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recv := &hookReceiver{t: t, secret: secret, statuses: tc.statuses}
			srv := httptest.NewServer(recv)
			defer srv.Close()
			def, payload, vaultFile := fireSetup(t, srv.URL, tc.policy)
			r := run(t, "", nil, "extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "--vault", vaultFile, "-o", "json")
			wantCode(t, r, tc.code)
			var rows []map[string]string
			if err := json.Unmarshal([]byte(r.out), &rows); err != nil || len(rows) != 2 {
				t.Fatalf("output %s (%v)", r.out, err)
			}
			for i, row := range rows {
				keys := make([]string, 0, len(row))
				for k := range row {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				if strings.Join(keys, ",") != "deliveryId,eventId,extension,message,stage,status,task" {
					t.Errorf("row %d has keys %v, want extension, stage, task, status, deliveryId, message, eventId", i, keys)
				}
				if row["extension"] != "notify" || row["stage"] != "serverRegistered" {
					t.Errorf("row %d names extension %q and stage %q", i, row["extension"], row["stage"])
				}
				if row["status"] != tc.want[i][0] || !strings.Contains(row["message"], tc.want[i][1]) {
					t.Errorf("row %d = %v, want status %s and a message containing %q", i, row, tc.want[i][0], tc.want[i][1])
				}
			}
			got := recv.got()
			if len(got) != tc.hits {
				t.Fatalf("the receiver got %d deliveries, want %d", len(got), tc.hits)
			}
			for i, id := range got {
				if id != rows[i]["deliveryId"] {
					t.Errorf("delivery %d: webhook-id %s, the output says %s", i, id, rows[i]["deliveryId"])
				}
			}
			if strings.Contains(r.out+r.err, "hunter22") || strings.Contains(r.out+r.err, "MfKQ9r8G") {
				t.Error("a secret reached the output")
			}
		})
	}
}

func TestExtensionsFireRefusesAnExposedVault(t *testing.T) {
	def, payload, vaultFile := fireSetup(t, "http://127.0.0.1:1", "")
	if err := os.Chmod(vaultFile, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", nil, "extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "--vault", vaultFile)
	wantCode(t, r, ExitUsage)
	wantError(t, r, "--vault", "readable by group or others")
}

// Without the vault item a signed task names, the task fails with a code
// and an action, and nothing is sent.
func TestExtensionsFireWithoutTheSigningSecret(t *testing.T) {
	recv := &hookReceiver{t: t, statuses: []int{200}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	def, payload, _ := fireSetup(t, srv.URL, "continue")
	r := run(t, "", nil, "extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "-o", "json")
	wantCode(t, r, ExitInfra)
	if !strings.Contains(r.out, "EXTENSION_SECRET_UNAVAILABLE") || len(recv.got()) != 0 {
		t.Fatalf("output %s; %d deliveries sent", r.out, len(recv.got()))
	}
}

// countingReceiver counts the deliveries each task's endpoint receives,
// with their webhook-ids, and answers each endpoint with its scripted
// statuses in turn (200 once they run out).
type countingReceiver struct {
	mu       sync.Mutex
	ids      map[string][]string
	statuses map[string][]int
}

func (c *countingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, "/")
	c.ids[path] = append(c.ids[path], r.Header.Get("webhook-id"))
	status := http.StatusOK
	if s := c.statuses[path]; len(s) > 0 {
		status, c.statuses[path] = s[0], s[1:]
	}
	w.WriteHeader(status)
}

// take returns and forgets the webhook-ids each endpoint received.
func (c *countingReceiver) take() map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.ids
	c.ids = map[string][]string{}
	return got
}

func fireRowsOf(t *testing.T, r result) map[string]map[string]string {
	t.Helper()
	var rows []map[string]string
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil {
		t.Fatalf("output %s: %v\n%s", r.out, err, r.err)
	}
	out := map[string]map[string]string{}
	for _, row := range rows {
		out[row["task"]] = row
	}
	return out
}

// Firing an event ID again against the same --state contacts only the
// tasks that have not succeeded, and reports the others skipped with the
// delivery that succeeded; --redeliver runs exactly the named task again,
// under a new delivery ID.
func TestExtensionsFireAgainDeliversOnlyWhatDidNotSucceed(t *testing.T) {
	recv := &countingReceiver{ids: map[string][]string{}, statuses: map[string][]int{"second": {500}}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	def, payload, vaultFile := fireSetup(t, srv.URL, "continue")
	state := filepath.Join(t.TempDir(), "state.db")
	fire := func(extra ...string) result {
		args := append([]string{"extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload,
			"--vault", vaultFile, "--event-id", "dns-change-4711", "--state", state, "-o", "json"}, extra...)
		return run(t, "", nil, args...)
	}

	r := fire()
	wantCode(t, r, ExitInfra)
	first := fireRowsOf(t, r)
	got := recv.take()
	if len(got["first"]) != 1 || len(got["second"]) != 1 || first["first"]["status"] != "succeeded" || first["second"]["status"] != "failed" {
		t.Fatalf("first firing: contacted %v, rows %v", got, first)
	}

	r = fire()
	wantCode(t, r, ExitOK)
	again := fireRowsOf(t, r)
	got = recv.take()
	if len(got["first"]) != 0 {
		t.Fatalf("the re-fire contacted the task that had succeeded: %v", got)
	}
	if len(got["second"]) != 1 || got["second"][0] != first["second"]["deliveryId"] || again["second"]["status"] != "succeeded" {
		t.Fatalf("the failed task was not delivered again with its webhook-id %s: %v, row %v", first["second"]["deliveryId"], got, again["second"])
	}
	skipped := again["first"]
	if skipped["status"] != "skipped" || skipped["deliveryId"] != first["first"]["deliveryId"] || !strings.Contains(skipped["message"], first["first"]["deliveryId"]) {
		t.Fatalf("the succeeded task's row %v, want skipped naming delivery %s", skipped, first["first"]["deliveryId"])
	}
	for task, row := range again {
		if row["eventId"] != "dns-change-4711" {
			t.Errorf("row %s has eventId %q", task, row["eventId"])
		}
	}

	r = fire("--redeliver", "first")
	wantCode(t, r, ExitOK)
	redo := fireRowsOf(t, r)
	got = recv.take()
	if len(got["first"]) != 1 || len(got["second"]) != 0 {
		t.Fatalf("--redeliver first contacted %v, want exactly the task first", got)
	}
	if id := got["first"][0]; id == first["first"]["deliveryId"] || id != redo["first"]["deliveryId"] || redo["first"]["status"] != "succeeded" {
		t.Fatalf("the redelivery carried webhook-id %s (first delivery %s), row %v: want a new delivery ID", id, first["first"]["deliveryId"], redo["first"])
	}
	if redo["second"]["status"] != "skipped" {
		t.Errorf("second after --redeliver first: %v, want skipped", redo["second"])
	}

	r = fire("--redeliver", "nope")
	wantCode(t, r, ExitUsage)
	if got := recv.take(); len(got) != 0 {
		t.Fatalf("a --redeliver naming no task contacted %v", got)
	}
}

// Without --event-id every firing is a new event: a fresh random ID,
// printed on the error stream in text mode and in every -o json row, so
// a receiver that deduplicates by webhook-id still gets a new event with
// the same payload.
func TestExtensionsFireWithoutAnEventIDIsANewEvent(t *testing.T) {
	recv := &countingReceiver{ids: map[string][]string{}}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	def, payload, vaultFile := fireSetup(t, srv.URL, "continue")
	args := []string{"extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "--vault", vaultFile}
	var events []string
	for range 2 {
		r := run(t, "", nil, append(args, "-o", "json")...)
		wantCode(t, r, ExitOK)
		rows := fireRowsOf(t, r)
		if rows["first"]["eventId"] == "" || rows["first"]["eventId"] != rows["second"]["eventId"] {
			t.Fatalf("rows %v: want one eventId in every row", rows)
		}
		events = append(events, rows["first"]["eventId"])
	}
	got := recv.take()
	if events[0] == events[1] || len(got["first"]) != 2 || got["first"][0] == got["first"][1] {
		t.Fatalf("two firings of one payload: events %v, webhook-ids %v; want two events", events, got["first"])
	}
	r := run(t, "", nil, args...)
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.err, "event ID ") || strings.Contains(r.out, "event ID ") {
		t.Fatalf("text mode: the generated event ID belongs on stderr:\nstdout:\n%s\nstderr:\n%s", r.out, r.err)
	}
}
