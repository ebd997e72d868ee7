package wiring_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/internal/realdata"
)

// fakeIronicWithInventory answers the API root and one node's inventory.
func fakeIronicWithInventory(t *testing.T, node string, inventory []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch strings.TrimSuffix(r.URL.Path, "/") {
		case "/v1":
			_, _ = w.Write([]byte(`{"id": "v1", "version": {"version": "1.82", "min_version": "1.1", "status": "CURRENT"}}`))
		case "/v1/nodes/" + node + "/inventory":
			_, _ = w.Write(inventory)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A config with an extensions: section wires dispatch: the definitions
// directory, the runners (the webhook here, signed with a vault item), and
// the serverRegistered source reading NetBox and the node's inventory.
func TestOpenWiresExtensionsAndFiresServerRegistered(t *testing.T) {
	inv := realdata.Read(t, "ipa-inventory", "understack", "dell-r7615-inventory-raw-lldp.json")
	r := newRig(t, fakeIronicWithInventory(t, "node-1", inv))
	host := r.lab.Hosts[0]

	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		mu.Lock()
		got, bodies = append(got, req), append(bodies, b)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()

	defs := t.TempDir()
	def := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "notify", "label": "notify", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [{"label": "hook", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "` + recv.URL + `/enrolled", "method": "POST", "signingSecret": "extension-hook",
     "requestTemplate": "{\"device\": {{ server.netboxDevice | dump }}, \"node\": {{ server.ironicNode | dump }}}"}}]}]}`
	if err := os.WriteFile(filepath.Join(defs, "notify.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(defs, "broken.json"), []byte(`{"kind": `), 0o644); err != nil {
		t.Fatal(err)
	}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	_ = os.WriteFile(kh, nil, 0o644)
	doc := r.cfg + fmt.Sprintf("extensions:\n  definitions: %q\n  known_hosts: %q\n  asset_cache: %q\n", defs, kh, t.TempDir())
	ctx := context.Background()
	sys, err := r.open(t, ctx, doc, wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sys.Extensions == nil || len(sys.Extensions.Registry().Extensions()) != 1 {
		t.Fatalf("extensions %+v: want the one valid definition loaded", sys.Extensions)
	}
	if err := sys.Vault.PutItem(ctx, "extension-hook", map[string]string{"password": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}); err != nil {
		t.Fatal(err)
	}
	rep, err := extensions.FireServerRegistered(ctx, sys.Extensions.Local(clock.Real{}), extensions.Enrolled{Device: host, Instance: lab.IronicInstance, Node: "node-1", Run: "cli/" + host + "/1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deliveries) != 1 || rep.Deliveries[0].Status != extensions.StatusSucceeded {
		t.Fatalf("report %+v", rep)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d deliveries reached the receiver", len(got))
	}
	var body map[string]string
	if err := json.Unmarshal(bodies[0], &body); err != nil || body["device"] != host || body["node"] != "node-1" {
		t.Errorf("body %s (%v)", bodies[0], err)
	}
	// The records are in the ledger's database.
	_, db, err := wiring.OpenLedger(ctx, sys.Config)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Extensions().Executions(ctx, extensions.Query{EventID: rep.EventID})
	if err != nil || len(recs) != 1 || recs[0].Status != extensions.StatusSucceeded || recs[0].DeliveryID != rep.Deliveries[0].DeliveryID {
		t.Errorf("records in the ledger's database: %+v (%v)", recs, err)
	}
	h := got[0].Header
	key, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.%s", h.Get("webhook-id"), h.Get("webhook-timestamp"), bodies[0])
	if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); h.Get("webhook-signature") != want || h.Get("webhook-id") != rep.Deliveries[0].DeliveryID {
		t.Errorf("headers %v: want the delivery ID and a signature with the vault item's secret", h)
	}
}

func TestOpenRefusesBadExtensionsSection(t *testing.T) {
	r := newRig(t, fakeIronicRoot(t, "1.82"))
	defs := t.TempDir()
	dnsDefs := t.TempDir()
	dns := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "dns", "label": "dns", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "configVars": [{"label": "Zone", "name": "zone", "inputType": "ExtensionInputString"},
                {"label": "API key", "name": "apiKey", "inputType": "ExtensionInputString", "isPassword": true}],
 "onAssetChange": [{"stage": "serverCreateDNS", "tasks": [{"label": "add", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://dns.example.net/", "method": "POST", "requestTemplate": "{{ configVars.zone }}"}}]}]}`
	if err := os.WriteFile(filepath.Join(dnsDefs, "dns.json"), []byte(dns), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, section, code, want string
	}{
		{"no definitions key", "extensions:\n  known_hosts: /etc/ssh/ssh_known_hosts\n", wiring.ConfigInvalid.Code, "extensions.definitions: missing"},
		{"definitions directory missing", "extensions:\n  definitions: /nonexistent/defs\n", wiring.ConfigInvalid.Code, "extensions.definitions"},
		{"known_hosts missing", "extensions:\n  definitions: " + defs + "\n  known_hosts: /nonexistent/known_hosts\n", wiring.ConfigInvalid.Code, "extensions.known_hosts"},
		{"unknown container runtime", "extensions:\n  definitions: " + defs + "\n  container_runtime: lxc\n", wiring.ConfigInvalid.Code, "want podman or docker"},
		{"unknown key", "extensions:\n  definitions: " + defs + "\n  knownhosts: x\n", wiring.ConfigInvalid.Code, "extensions.knownhosts: unknown key"},
		{"stage deadline zero", "extensions:\n  definitions: " + defs + "\n  stage_deadline: 0s\n", wiring.ConfigInvalid.Code, "extensions.stage_deadline: 0s: want a positive duration"},
		{"required input without a value", "extensions:\n  definitions: " + dnsDefs + "\n  instances:\n    dns:\n      apiKey: {vault: dns-api.password}\n", wiring.ConfigInvalid.Code,
			`extensions.instances.dns.zone: missing: configVar "zone" of extension dns has no defaultValue`},
		{"password inline", "extensions:\n  definitions: " + dnsDefs + "\n  instances:\n    dns:\n      zone: z\n      apiKey: hunter22\n", wiring.ConfigInvalid.Code,
			"extensions.instances.dns.apiKey: apiKey is an isPassword input of extension dns: its value must be a vault reference"},
		{"vault item missing", "extensions:\n  definitions: " + dnsDefs + "\n  instances:\n    dns:\n      zone: z\n      apiKey: {vault: dns-api.password}\n", wiring.ConfigInvalid.Code,
			"extensions.instances.dns.apiKey: the vault item dns-api"},
		{"bad vault reference", "extensions:\n  definitions: " + dnsDefs + "\n  instances:\n    dns:\n      zone: z\n      apiKey: {vault: dns-api}\n", wiring.ConfigInvalid.Code,
			`extensions.instances.dns.apiKey: vault: "dns-api": want ITEM.FIELD`},
		{"events without TLS", "extensions:\n  definitions: " + defs + "\n  netbox_events: {listen: 127.0.0.1:0, secret_item: nb}\n", wiring.ConfigInvalid.Code,
			"extensions.netbox_events.cert_file: the NetBox events endpoint serves TLS only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.open(t, context.Background(), r.cfg+tc.section, wiring.Options{})
			if f, ok := hostforge.AsFailure(err); !ok || f.Code != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v, want %s containing %q", err, tc.code, tc.want)
			}
		})
	}
	// Without the section, nothing is wired and nothing fires.
	sys, err := r.open(t, context.Background(), r.cfg, wiring.Options{})
	if err != nil || sys.Extensions != nil {
		t.Fatalf("no extensions: section: %v, %+v", err, sys.Extensions)
	}
}

// The NetBox events endpoint's certificate and secret are read only by a
// process that serves it: Open leaves them alone (an operator's 'enroll
// --config' needs neither), OpenNetBoxEvents refuses a missing or short
// secret and a certificate that does not load, naming the key.
func TestOpenNetBoxEventsReadsItsSecretWhenServed(t *testing.T) {
	r := newRig(t, fakeIronicRoot(t, "1.82"))
	defs := t.TempDir()
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "events"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "e.crt"), filepath.Join(dir, "e.key")
	kb, _ := x509.MarshalECPrivateKey(key)
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	section := func(cert string) string {
		return fmt.Sprintf("extensions:\n  definitions: %s\n  switch_roles: [leaf]\n  stage_deadline: 20m\n  netbox_events: {listen: 127.0.0.1:0, cert_file: %s, key_file: %s, secret_item: nb-hook}\n", defs, cert, keyFile)
	}
	ctx := context.Background()
	sys, err := r.open(t, ctx, r.cfg+section("/nonexistent/e.crt"), wiring.Options{})
	if err != nil {
		t.Fatalf("Open read the endpoint's files: %v", err)
	}
	if _, err := wiring.OpenNetBoxEvents(ctx, sys.Config, sys); !wiring.ConfigInvalid.Is(err) || !strings.Contains(err.Error(), "extensions.netbox_events.cert_file") {
		t.Fatalf("a certificate that does not load: %v", err)
	}
	sys, err = r.open(t, ctx, r.cfg+section(certFile), wiring.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fields map[string]string
		want   string
	}{
		{nil, `has no item "nb-hook"`},
		{map[string]string{"secret": "short"}, "the vault item \"nb-hook\"'s secret field has 5 characters; want at least 8"},
	} {
		if tc.fields != nil {
			if err := sys.Vault.PutItem(ctx, "nb-hook", tc.fields); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := wiring.OpenNetBoxEvents(ctx, sys.Config, sys); !wiring.ConfigInvalid.Is(err) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("OpenNetBoxEvents: %v, want %q", err, tc.want)
		}
	}
	if err := sys.Vault.PutItem(ctx, "nb-hook", map[string]string{"secret": "a-long-enough-secret"}); err != nil {
		t.Fatal(err)
	}
	ev, err := wiring.OpenNetBoxEvents(ctx, sys.Config, sys)
	if err != nil {
		t.Fatal(err)
	}
	if string(ev.Secret) != "a-long-enough-secret" || ev.TLS == nil || ev.Rules.SwitchRoles[0] != "leaf" || ev.Rules.StageDeadline != 20*time.Minute {
		t.Fatalf("events systems %+v", ev)
	}
	if !sys.Secrets.Contains("x a-long-enough-secret y") {
		t.Error("the secret is not registered with the process's secrets")
	}
}
