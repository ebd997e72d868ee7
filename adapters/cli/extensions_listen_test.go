package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/lab"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
)

// eventsCert writes a self-signed certificate for 127.0.0.1 and its key;
// the client trusts it.
func eventsCert(t *testing.T, dir string) (certFile, keyFile string, client *http.Client) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "hostforge events"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "events.crt"), filepath.Join(dir, "events.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// retireDef fires a signed webhook to url on serverDecommissioned with the
// device's name, serial and status.
func retireDef(url string) string {
	return `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "retire", "label": "retire", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverDecommissioned", "tasks": [{"label": "notify", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "` + url + `/retired", "method": "POST", "signingSecret": "notify-signing",
     "requestTemplate": "{\"device\": {{ server.netboxDevice | dump }}, \"serial\": {{ server.serialNumber | dump }}, \"status\": {{ server.serverStatus | dump }}}"}}]}]}`
}

// eventsLab is a lab whose config has an extensions: section with def
// (whose webhooks sign with the vault item notify-signing), and the NetBox
// events endpoint with its secret in the vault.
func eventsLab(t *testing.T, ctx context.Context, def, listen string) (*lab.Lab, string, *http.Client) {
	t.Helper()
	l := startLab(t)
	defs := filepath.Join(l.Dir, "extensions")
	if err := os.MkdirAll(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(defs, "ext.json"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(filepath.Join(l.Dir, lab.VaultFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, fields := range map[string]map[string]string{
		"netbox-webhook": {"secret": "n3tb0x-hook-secret"},
		"notify-signing": {"password": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
	} {
		if err := v.PutItem(ctx, name, fields); err != nil {
			t.Fatal(err)
		}
	}
	certFile, keyFile, client := eventsCert(t, l.Dir)
	// The lab's Ironic section names an Ironic on loopback it does not
	// start: without it, the projection and its deploy watcher do not run
	// (the Ironic test adds one that runs).
	b, err := os.ReadFile(l.Config)
	if err != nil {
		t.Fatal(err)
	}
	doc := ironicSection.ReplaceAllString(string(b), "gates:")
	section := fmt.Sprintf("extensions:\n  definitions: %q\n  switch_roles: [switch]\n  netbox_events:\n    listen: %s\n    cert_file: %q\n    key_file: %q\n    secret_item: netbox-webhook\n",
		defs, listen, certFile, keyFile)
	if err := os.WriteFile(l.Config, []byte(doc+section), 0o600); err != nil {
		t.Fatal(err)
	}
	return l, defs, client
}

var ironicSection = regexp.MustCompile(`(?ms)^ironic:\n.*?^gates:`)

var endpointLine = regexp.MustCompile(`NetBox events endpoint on (https://[^ \n]+)`)

// 'extensions listen' serves NetBox's event rules without Temporal: the
// emulator's rule, signed, reaches it and serverDecommissioned reaches
// the receiver with the device's fields; a rule signed with another
// secret fires nothing; history lists the delivery.
func TestExtensionsListenFiresNetBoxEventsInProcess(t *testing.T) {
	secret, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	recv := &hookReceiver{t: t, secret: secret, statuses: []int{200}}
	rs := httptest.NewServer(recv)
	defer rs.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, _, client := eventsLab(t, ctx, retireDef(rs.URL), "127.0.0.1:0")

	var out syncBuffer
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"extensions", "listen", "--config", l.Config, "--log-level", "off"}, Streams{Out: &out}, func(string) (string, bool) { return "", false })
	}()
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == ""; {
		if m := endpointLine.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("listen did not come up (exit %d?):\n%s", <-done, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	id, statuses := decommission(t, l, url, client, "cpu-r1-u11")
	if statuses["hostforge"] != http.StatusAccepted || statuses["impostor"] != http.StatusUnauthorized {
		t.Fatalf("the endpoint answered %v: want 202 for the signed request and 401 for the other", statuses)
	}
	for deadline := time.Now().Add(10 * time.Second); len(recv.got()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the receiver got nothing")
		}
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("listen exited %d:\n%s", code, out.String())
	}
	client.CloseIdleConnections()
	if n := len(recv.got()); n != 1 {
		t.Fatalf("the receiver got %d deliveries, want the signed request's one", n)
	}

	r := run(t, "", nil, "extensions", "history", "--config", l.Config, "-o", "json")
	wantCode(t, r, ExitOK)
	var rows []historyJSON
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("history %s (%v)", r.out, err)
	}
	if h := rows[0]; h.Stage != "serverDecommissioned" || h.Status != "succeeded" || h.DeliveryID != recv.got()[0] ||
		!strings.HasPrefix(h.EventID, "netbox/") || !strings.HasSuffix(h.EventID, fmt.Sprintf("/dcim.device/%d/serverDecommissioned", id)) || h.Attempts != 1 {
		t.Errorf("history row %+v", h)
	}
}

// listen refuses a config it cannot serve: no endpoint section, no ledger.
func TestExtensionsListenRefusals(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "c.yaml", goodConfig, 0o600)
	r := run(t, "", nil, "extensions", "listen", "--config", cfg)
	wantCode(t, r, ExitUsage)
	wantError(t, r, "CONFIG_INVALID", "extensions: missing")
	r = run(t, "", nil, "extensions", "listen")
	wantCode(t, r, ExitUsage)
	wantError(t, r, "--config is required")
}

// decommission sets the lab device's status to decommissioning through
// the NetBox emulator's REST API, with two event rules to the endpoint:
// one signed with the webhook's secret, one with another secret. It
// returns the device's ID and what the endpoint answered each rule.
func decommission(t *testing.T, l *lab.Lab, endpoint string, client *http.Client, device string) (int, map[string]int) {
	t.Helper()
	l.NetBox.AddEventRule(netboxhttp.EventRule{Name: "hostforge", ObjectTypes: []string{"dcim.device"}, Events: []string{"object_updated", "object_deleted"},
		PayloadURL: endpoint, Secret: "n3tb0x-hook-secret", Client: client})
	l.NetBox.AddEventRule(netboxhttp.EventRule{Name: "impostor", ObjectTypes: []string{"dcim.device"}, Events: []string{"object_updated"},
		PayloadURL: endpoint, Secret: "not-the-hook-secret", Client: client})
	token, _ := os.ReadFile(filepath.Join(l.Dir, lab.TokenFile))
	id := 0
	l.Site.NetBox.View(func(st *fakes.NetBoxState) {
		if d := st.DeviceByName(device); d != nil {
			id = d.ID
		}
	})
	req, _ := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/api/dcim/devices/%d/", l.NetBoxURL, id), strings.NewReader(`{"status": "decommissioning"}`))
	req.Header.Set("Authorization", "Token "+strings.TrimSpace(string(token)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	l.NetBox.ServeHTTP(rec, req) // the emulator's handler: its TLS listener is the lab's
	if rec.Code != http.StatusOK {
		t.Fatalf("PATCH: %d %s", rec.Code, rec.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.NetBox.WaitEvents(ctx); err != nil {
		t.Fatal(err)
	}
	statuses := map[string]int{}
	for _, d := range l.NetBox.EventDeliveries() {
		statuses[d.Rule] = d.Status
	}
	return id, statuses
}
