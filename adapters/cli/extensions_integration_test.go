//go:build integration

package cli

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/extensions"
)

// signedReceiver keeps the deliveries whose Standard Webhooks signature
// verifies with key; others are answered 401.
type signedReceiver struct {
	key []byte
	mu  sync.Mutex
	ids []string
	bod [][]byte
}

func (s *signedReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	mac := hmac.New(sha256.New, s.key)
	fmt.Fprintf(mac, "%s.%s.%s", r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), b)
	if r.Header.Get("webhook-signature") != "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	s.ids, s.bod = append(s.ids, r.Header.Get("webhook-id")), append(s.bod, b)
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *signedReceiver) got() ([]string, [][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ids...), append([][]byte(nil), s.bod...)
}

// extensionsLab adds to a real lab an extensions: section whose
// definition binds three tasks to serverRegistered — a signed webhook to a
// receiver, a command on the real sshd, a playbook on the real
// ansible-playbook — with their secrets in the lab's vault.
type extensionsLab struct {
	*realLab
	recv   *signedReceiver
	marker string // the SSH task's effect
	outDir string // the playbook's effect
}

func newExtensionsLab(t *testing.T) *extensionsLab {
	t.Helper()
	playbook := itEnv(t, "HOSTFORGE_ANSIBLE_PLAYBOOK")
	r := newRealLab(t, "supermicro", false, nil)
	key, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	e := &extensionsLab{realLab: r, recv: &signedReceiver{key: key}, outDir: t.TempDir()}
	srv := httptest.NewServer(e.recv)
	t.Cleanup(srv.Close)
	e.marker = filepath.Join(itEnv(t, "HOSTFORGE_SSHD_DIR"), "registered-"+r.host.Name)
	t.Cleanup(func() { _ = os.Remove(e.marker) })

	sshKey, err := os.ReadFile(itEnv(t, "HOSTFORGE_SSHD_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(filepath.Join(r.Dir, lab.VaultFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := v.PutItem(ctx, "extension-hook", map[string]string{"password": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}); err != nil {
		t.Fatal(err)
	}
	if err := v.PutItem(ctx, "extension-ssh", map[string]string{"private_key": string(sshKey)}); err != nil {
		t.Fatal(err)
	}

	defs := t.TempDir()
	bundle := filepath.Join(defs, "bundle")
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		t.Fatal(err)
	}
	play := `- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.copy:
        content: "{{ {'device': server.netboxDevice, 'node': server.ironicNode, 'delivery': hostforge_delivery_id, 'event': hostforge_event_id} | to_json }}"
        dest: "{{ configVars.out_dir }}/{{ server.netboxDevice }}.json"
    - ansible.builtin.copy:
        content: "{{ {'registered': server.netboxDevice} | to_json }}"
        dest: "{{ context_json_file_path }}"
`
	if err := os.WriteFile(filepath.Join(bundle, "site.yml"), []byte(play), 0o644); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(itEnv(t, "HOSTFORGE_SSHD_ADDR"))
	def := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "registration", "label": "registration", "extensionType": "workflow",
 "vendor": "hostforge", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [],
 "configVars": [{"label": "Out", "name": "out_dir", "inputType": "ExtensionInputString", "defaultValue": "` + e.outDir + `"}],
 "assets": [{"label": "Bundle", "name": "bundle", "assetType": "AnsibleBundle", "url": "bundle"}],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [
   {"label": "hook", "taskType": "ExtensionTaskWebhook", "failurePolicy": "continue",
    "options": {"endpoint": "` + srv.URL + `/enrolled", "method": "POST", "signingSecret": "extension-hook", "retries": 2,
      "requestTemplate": "{\"device\": {{ server.netboxDevice | dump }}, \"node\": {{ server.ironicNode | dump }}}"}},
   {"label": "announce", "taskType": "ExtensionTaskSsh", "failurePolicy": "continue",
    "options": {"host": "` + host + `", "port": ` + port + `, "username": "` + itEnv(t, "HOSTFORGE_SSHD_USER") + `", "privateKeySecret": "extension-ssh", "timeout": 30,
      "commandTemplate": "echo {{ server.ironicNode | shellquote }} > ` + e.marker + `"}},
   {"label": "inventory", "taskType": "ExtensionTaskAnsible",
    "options": {"asset": "bundle", "playbook": "site.yml", "executionTimeout": 300, "executionTimeoutTick": 10}}]},
  {"stage": "serverCreateDNS", "tasks": [
   {"label": "bmc-record", "taskType": "ExtensionTaskWebhook",
    "options": {"endpoint": "` + srv.URL + `/dns", "method": "POST", "signingSecret": "extension-hook",
      "requestTemplate": "{\"name\": {{ serverDNSRecordSet.hostname | dump }}, \"ip\": {{ serverDNSRecordSet.ip.ip | dump }}, \"op\": {{ serverDNSRecordSet.operation | dump }}}"}}]}]}`
	if err := os.WriteFile(filepath.Join(defs, "registration.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	section := fmt.Sprintf("extensions:\n  definitions: %q\n  known_hosts: %q\n  asset_cache: %q\n  ansible_playbook: %q\n",
		defs, itEnv(t, "HOSTFORGE_SSHD_KNOWN_HOSTS"), t.TempDir(), playbook)
	appendConfig(t, r.Config, section)
	return e
}

// check verifies the three tasks' effects for the enrolled node: one
// serverRegistered event, the enrollment run's, delivered to each; then
// serverCreateDNS, the run's too, with the BMC's hostname and address.
func (e *extensionsLab) check(t *testing.T, node string) {
	t.Helper()
	var out map[string]string
	b, err := os.ReadFile(filepath.Join(e.outDir, e.host.Name+".json"))
	if err != nil || json.Unmarshal(b, &out) != nil || out["node"] != node {
		t.Fatalf("the playbook's effect: %s, %v", b, err)
	}
	eventID := out["event"]
	if !strings.HasPrefix(eventID, "serverRegistered/") || out["delivery"] != extensions.DeliveryID(eventID, "registration", "inventory") {
		t.Errorf("the playbook saw event %q and delivery %q, want the enrollment run's serverRegistered", eventID, out["delivery"])
	}
	ids, bodies := e.recv.got()
	dnsEvent := "serverCreateDNS/" + strings.TrimPrefix(eventID, "serverRegistered/")
	if len(ids) != 2 || ids[0] != extensions.DeliveryID(eventID, "registration", "hook") || ids[1] != extensions.DeliveryID(dnsEvent, "registration", "bmc-record") {
		t.Errorf("webhook deliveries %v, want serverRegistered's then serverCreateDNS's", ids)
	} else {
		if want := fmt.Sprintf(`{"device": %q, "node": %q}`, e.host.Name, node); string(bodies[0]) != want {
			t.Errorf("webhook body %s, want %s", bodies[0], want)
		}
		if want := fmt.Sprintf(`{"name": %q, "ip": %q, "op": "create"}`, strings.ToLower(e.host.Name), e.host.OOBIP); string(bodies[1]) != want {
			t.Errorf("serverCreateDNS body %s, want %s", bodies[1], want)
		}
	}
	if b, err := os.ReadFile(e.marker); err != nil || strings.TrimSpace(string(b)) != node {
		t.Errorf("the SSH task's effect: %q, %v", b, err)
	}
}

// TestEnrollConfigFiresServerRegistered: an inline 'enroll --config' on a
// real Ironic fires serverRegistered once the host is enrolled, and -o
// json reports its deliveries.
func TestEnrollConfigFiresServerRegistered(t *testing.T) {
	e := newExtensionsLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	lines, res := enrollJSONLines(t, ctx, "--config", e.Config, e.host.Name)
	if res.code != ExitOK || len(lines) != 1 || !lines[0].Enrolled {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.out, res.err)
	}
	j := lines[0]
	if len(j.Extensions) != 4 {
		t.Fatalf("extensions %+v, want the three serverRegistered tasks and serverCreateDNS's", j.Extensions)
	}
	for _, x := range j.Extensions {
		if x.Status != "succeeded" {
			t.Errorf("task %s: %s %s", x.Task, x.Status, x.Message)
		}
	}
	e.check(t, j.Node)
}

// TestWorkerFiresServerRegistered: under 'hostforge worker' the same
// dispatch runs on Temporal, as a workflow of its own the enrollment starts
// once it succeeded.
func TestWorkerFiresServerRegistered(t *testing.T) {
	e := newExtensionsLab(t)
	w := e.worker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	lines, res := enrollJSONLines(t, ctx, "--config", e.Config, "--temporal", e.temporal, "--task-queue", e.queue, e.host.Name)
	if res.code != ExitOK || len(lines) != 1 || !lines[0].Enrolled {
		t.Fatalf("exit %d:\n%s\n%s", res.code, res.out, res.err)
	}
	node := lines[0].Node
	// The dispatch runs after the enrollment closed: wait for its last task.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if ids, _ := e.recv.got(); len(ids) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the serverRegistered dispatch did not finish; worker output:\n%s", w.out.String())
		}
		time.Sleep(time.Second)
	}
	e.check(t, node)
	if strings.Contains(w.out.String(), "MfKQ9r8G") {
		t.Error("the signing secret reached the worker's log")
	}
}
