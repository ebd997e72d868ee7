package extevents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/adapters/extevents"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "the-webhook-s3cret"

// decomDef binds a webhook to serverDecommissioned and one to
// serverDeleteDNS.
const decomDef = `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "retire", "label": "retire", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [
  {"stage": "serverDecommissioned", "tasks": [{"label": "notify", "taskType": "ExtensionTaskWebhook",
    "options": {"endpoint": "https://hooks.example.com/retired", "method": "POST", "requestTemplate": "{{ server | dump }}"}}]},
  {"stage": "serverDeleteDNS", "tasks": [{"label": "drop-record", "taskType": "ExtensionTaskWebhook",
    "options": {"endpoint": "https://dns.example.com/", "method": "DELETE", "requestTemplate": "{{ serverDNSRecordSet | dump }}"}}]}]}`

type rig struct {
	emu    *netboxhttp.Server
	nb     *httptest.Server
	ep     *httptest.Server
	runner *extensionsfake.Runner
	store  *extensionsfake.Store
	local  *extevents.Local
	device int
}

func newRig(t *testing.T, def string) *rig {
	t.Helper()
	x, ps := extensions.Parse([]byte(def), "retire.json")
	if x == nil {
		t.Fatal(ps)
	}
	reg, _ := extensions.NewRegistry(x)
	r := &rig{runner: extensionsfake.NewRunner(), store: extensionsfake.NewStore()}
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: r.runner}, r.store)
	r.local = extevents.NewLocal(d, clock.Real{}, nil, 4)
	t.Cleanup(func() { r.local.Close(context.Background()) })
	h := &extevents.Handler{Secret: []byte(secret), Dispatcher: d, Submitter: r.local, Rules: extensions.NetBoxRules{SwitchRoles: []string{"switch"}}}
	r.ep = httptest.NewTLSServer(h)
	t.Cleanup(r.ep.Close)

	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	site.NetBox.View(func(st *fakes.NetBoxState) {
		for _, dev := range st.Devices {
			if dev.Name == "h1" {
				r.device = dev.ID
			}
		}
	})
	r.emu = netboxhttp.New(site.NetBox, netboxhttp.Options{})
	r.nb = httptest.NewServer(r.emu)
	t.Cleanup(r.nb.Close)
	return r
}

func (r *rig) rule(secret string) {
	r.emu.AddEventRule(netboxhttp.EventRule{Name: "hostforge " + secret, ObjectTypes: []string{"dcim.device"}, Events: []string{"object_updated", "object_deleted"},
		PayloadURL: r.ep.URL + extevents.Path, Secret: secret, Client: r.ep.Client()})
}

func (r *rig) change(t *testing.T, method, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, r.nb.URL+"/api/dcim/devices/"+strconv.Itoa(r.device)+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode >= 300 {
		t.Fatalf("%s: %v %v", method, resp, err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.emu.WaitEvents(ctx); err != nil {
		t.Fatal(err)
	}
}

// drain waits for the in-process dispatch to run what it took.
func (r *rig) drain(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		recs, _ := r.store.Executions(context.Background(), extensions.Query{})
		done := 0
		for _, e := range recs {
			if e.Status == extensions.StatusSucceeded || e.Status == extensions.StatusFailed {
				done++
			}
		}
		if done >= want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("dispatch did not record %d deliveries", want)
}

// A NetBox event rule's webhook, signed, reaches the endpoint and fires
// serverDecommissioned then serverDeleteDNS with the device's fields; the
// same request sent again fires nothing new; a request signed with
// another secret, or unsigned, is answered 401 and fires nothing.
func TestNetBoxEventRuleFiresTheServerStages(t *testing.T) {
	r := newRig(t, decomDef)
	r.rule(secret)
	r.change(t, http.MethodPatch, `{"status": "offline"}`)
	r.drain(t, 2)
	sent := r.emu.EventDeliveries()
	if len(sent) != 1 || sent[0].Status != http.StatusAccepted {
		t.Fatalf("the emulator's webhook: %+v", sent)
	}
	reqs := r.runner.Requests()
	if len(reqs) != 2 || reqs[0].Stage != extensions.ServerDecommissioned || reqs[1].Stage != extensions.ServerDeleteDNS {
		t.Fatalf("requests %+v", reqs)
	}
	var server map[string]any
	if err := json.Unmarshal([]byte(reqs[0].Body), &server); err != nil {
		t.Fatal(err)
	}
	if server["netboxDevice"] != "h1" || server["serverStatus"] != "offline" || server["serialNumber"] != "SN000001" || server["managementAddress"] != "10.10.0.3" ||
		server["serverId"] != float64(r.device) || server["vendor"] != "Dell" {
		t.Errorf("server object %v", server)
	}
	wantEvent := "netbox/" + sent[0].RequestID + "/dcim.device/" + strconv.Itoa(r.device) + "/serverDecommissioned"
	if reqs[0].EventID != wantEvent {
		t.Errorf("event %s, want %s", reqs[0].EventID, wantEvent)
	}

	// NetBox's job requeued: the same request again fires nothing new.
	resp := post(t, r.ep, sent[0].Body, sent[0].Header.Get(extevents.SignatureHeader))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("redelivery answered %d", resp.StatusCode)
	}
	time.Sleep(100 * time.Millisecond)
	r.local.Close(context.Background())
	if n := len(r.runner.Requests()); n != 2 {
		t.Fatalf("a redelivered request ran %d tasks in all, want the first 2 only", n)
	}

	for name, sig := range map[string]string{
		"wrong secret":    extevents.Sign([]byte("another-secret"), sent[0].Body),
		"unsigned":        "",
		"not hex":         "zz",
		"body's own hash": extevents.Sign(nil, sent[0].Body),
	} {
		tampered := bytes.Replace(sent[0].Body, []byte(`"offline"`), []byte(`"decommissioning"`), 1)
		for _, body := range [][]byte{sent[0].Body, tampered} {
			if sig == "" && !bytes.Equal(body, sent[0].Body) {
				continue
			}
			if resp := post(t, r.ep, body, sig); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: answered %d, want 401", name, resp.StatusCode)
			}
		}
	}
	if resp := post(t, r.ep, bytes.Replace(sent[0].Body, []byte(`"offline"`), []byte(`"decommissioning"`), 1), sent[0].Header.Get(extevents.SignatureHeader)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a body changed under its signature answered %d, want 401", resp.StatusCode)
	}
	if n := len(r.runner.Requests()); n != 2 {
		t.Fatalf("refused requests ran tasks: %d in all", n)
	}
}

// A rule with the wrong secret fires nothing.
func TestNetBoxEventRuleWithAnotherSecretFiresNothing(t *testing.T) {
	r := newRig(t, decomDef)
	r.rule("not-the-s3cret")
	r.change(t, http.MethodDelete, "")
	if sent := r.emu.EventDeliveries(); len(sent) != 1 || sent[0].Status != http.StatusUnauthorized {
		t.Fatalf("the emulator's webhook: %+v", sent)
	}
	r.local.Close(context.Background())
	if n := len(r.runner.Requests()); n != 0 || r.store.Writes != 0 {
		t.Fatalf("%d tasks ran, %d records written", n, r.store.Writes)
	}
}

func post(t *testing.T, srv *httptest.Server, body []byte, sig string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+extevents.Path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if sig != "" {
		req.Header.Set(extevents.SignatureHeader, sig)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// What the endpoint answers besides a signed event: the wrong path or
// method, a body over the cap, a body that is not NetBox's, an event
// nothing binds.
func TestEndpointRefusals(t *testing.T) {
	r := newRig(t, decomDef)
	body := []byte(`{"event": "updated", "model": "site", "request_id": "r-1", "data": {"id": 1}}`)
	sig := extevents.Sign([]byte(secret), body)
	if resp := post(t, r.ep, body, sig); resp.StatusCode != http.StatusOK {
		t.Errorf("an event of another model answered %d, want 200", resp.StatusCode)
	}
	bad := []byte(`{"event": "deleted", "model": "device", "data": {"id": 1}}`)
	if resp := post(t, r.ep, bad, extevents.Sign([]byte(secret), bad)); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an event without request_id answered %d, want 400", resp.StatusCode)
	}
	big := bytes.Repeat([]byte(" "), extevents.DefaultMaxBody+1)
	if resp := post(t, r.ep, big, extevents.Sign([]byte(secret), big)); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the cap answered %d, want 413", resp.StatusCode)
	}
	resp, err := r.ep.Client().Get(r.ep.URL + extevents.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d, want 405", resp.StatusCode)
	}
	r.local.Close(context.Background())
	if r.store.Writes != 0 {
		t.Fatalf("%d records written", r.store.Writes)
	}
}
