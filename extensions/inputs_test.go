package extensions_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// dnsDef is an extension whose webhook needs site inputs: a zone (a
// configVar without a default), an API key (isPassword) and a TTL with a
// default.
const dnsDef = `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "dns", "label": "dns", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "outputs": [], "assets": [],
 "inputs": [{"label": "TTL", "name": "ttl", "inputType": "ExtensionInputInteger", "defaultValue": 300}],
 "configVars": [{"label": "Zone", "name": "zone", "inputType": "ExtensionInputString"},
                {"label": "API key", "name": "apiKey", "inputType": "ExtensionInputString", "isPassword": true}],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [{"label": "record", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://dns.example.net/", "method": "POST",
     "requestTemplate": "{\"name\": {{ (server.serialNumber + '.' + configVars.zone) | dump }}, \"ttl\": {{ extensionInstanceVariables.ttl }}, \"key\": {{ configVars.apiKey | dump }}}"}}]}]}`

type mapVault map[string]map[string]string

func (v mapVault) Item(_ context.Context, name string) (map[string]string, error) {
	if it, ok := v[name]; ok {
		return it, nil
	}
	return nil, hostforge.ErrNotFound
}

// A site's values are checked against the definition at their config
// keys: unknown names, inline passwords, bad vault references, wrong
// types, and required inputs left without a value.
func TestCheckInstance(t *testing.T) {
	x, ps := extensions.Parse([]byte(dnsDef), "dns.json")
	if x == nil {
		t.Fatal(ps)
	}
	raw := func(s string) extensions.SiteValue { return extensions.SiteValue{Value: json.RawMessage(s)} }
	for name, c := range map[string]struct {
		in   extensions.Instance
		want []string
	}{
		"complete": {extensions.Instance{"zone": raw(`"dc1.example.com"`), "apiKey": {Vault: "dns-api.password"}}, nil},
		"nothing given": {nil, []string{
			`extensions.instances.dns.apiKey: missing: configVar "apiKey" of extension dns has no defaultValue`,
			`extensions.instances.dns.zone: missing: configVar "zone"`}},
		"password inline": {extensions.Instance{"zone": raw(`"z"`), "apiKey": raw(`"hunter22"`)}, []string{
			"extensions.instances.dns.apiKey: apiKey is an isPassword input of extension dns: its value must be a vault reference ({vault: ITEM.FIELD})"}},
		"unknown key": {extensions.Instance{"zone": raw(`"z"`), "apiKey": {Vault: "a.b"}, "zones": raw(`"z"`)}, []string{
			`extensions.instances.dns.zones: extension dns declares no input or configVar "zones" (it declares apiKey, ttl, zone)`}},
		"bad vault reference": {extensions.Instance{"zone": raw(`"z"`), "apiKey": {Vault: "dns-api"}}, []string{
			`extensions.instances.dns.apiKey: vault: "dns-api": want ITEM.FIELD`}},
		"wrong type": {extensions.Instance{"zone": raw(`3`), "apiKey": {Vault: "a.b"}, "ttl": raw(`"long"`)}, []string{
			"extensions.instances.dns.ttl: want a whole number for an ExtensionInputInteger", "extensions.instances.dns.zone: want a string"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := x.CheckInstance(c.in)
			if len(got) != len(c.want) {
				t.Fatalf("problems %v, want %d", got, len(c.want))
			}
			for i, w := range c.want {
				if p := got[i]; p.Warning || !strings.Contains(p.Path+": "+p.Message, w) {
					t.Errorf("problem %d = %s, want %q", i, p, w)
				}
			}
		})
	}
}

// At run time the site's values reach the template as MetalSoft exposes
// them (configVars, extensionInstanceVariables), the password read from
// the vault; the request is then secret-bearing and what the runner
// reports back is scrubbed of it. A vault item that is missing fails the
// task EXTENSION_SECRET_UNAVAILABLE without contacting anything.
func TestSiteInputsReachTasksAsSecrets(t *testing.T) {
	w := newWorld(t, []byte(dnsDef))
	w.d.Instances = extensions.Instances{"dns": {"zone": {Value: json.RawMessage(`"dc1.example.com"`)}, "apiKey": {Vault: "dns-api.password"}}}
	w.d.Vault = mapVault{"dns-api": {"password": "k3y-from-the-vault"}}
	w.runner.On("record", outcomeEcho("the API said: bad key k3y-from-the-vault"))
	rep := w.fire(t, serverEvent(t, "evt-inputs"))
	reqs := w.runner.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests: %s", len(reqs), summary(rep))
	}
	if want := `{"name": "SN1.dc1.example.com", "ttl": 300, "key": "k3y-from-the-vault"}`; reqs[0].Body != want {
		t.Errorf("body %s, want %s", reqs[0].Body, want)
	}
	if !reqs[0].IncludesSecrets {
		t.Error("a request carrying an isPassword value is not marked secret-bearing")
	}
	rec, _, _ := w.store.Execution(context.Background(), rep.Deliveries[0].DeliveryID)
	if strings.Contains(rec.Message, "k3y-from-the-vault") || !strings.Contains(rec.Message, hostforge.Redacted) {
		t.Errorf("record message %q: want the password scrubbed", rec.Message)
	}

	w2 := newWorld(t, []byte(dnsDef))
	w2.d.Instances = extensions.Instances{"dns": {"zone": {Value: json.RawMessage(`"z"`)}, "apiKey": {Vault: "missing-item.password"}}}
	w2.d.Vault = mapVault{}
	rep = w2.fire(t, serverEvent(t, "evt-inputs-2"))
	if d := rep.Deliveries[0]; d.Status != extensions.StatusFailed || d.Code != extensions.SecretUnavailable.Code ||
		!strings.Contains(d.Message, "extensions.instances.dns.apiKey: the vault has no item missing-item") {
		t.Fatalf("delivery %+v: want %s naming the key and the item", d, extensions.SecretUnavailable.Code)
	}
	if n := len(w2.runner.Requests()); n != 0 {
		t.Fatalf("the runner was handed %d requests", n)
	}
}

func outcomeEcho(msg string) extensionsfake.Outcome {
	return extensionsfake.Outcome{Result: extensions.Result{Message: msg}}
}

// An isPassword value the vault holds is a secret the site chose: one
// shorter than 8 characters is refused when the task would read it, and
// nothing is sent.
func TestShortSiteSecretIsRefused(t *testing.T) {
	w := newWorld(t, []byte(dnsDef))
	w.d.Instances = extensions.Instances{"dns": {"zone": {Value: json.RawMessage(`"dc1.example.com"`)}, "apiKey": {Vault: "dns-api.password"}}}
	w.d.Vault = mapVault{"dns-api": {"password": "k3y"}}
	rep := w.fire(t, serverEvent(t, "evt-short"))
	if n := len(w.runner.Requests()); n != 0 {
		t.Fatalf("%d requests sent with a 3-character secret", n)
	}
	if len(rep.Deliveries) != 1 || rep.Deliveries[0].Code != hostforge.SecretTooShort.Code || strings.Contains(rep.Deliveries[0].Message, "k3y") {
		t.Fatalf("deliveries %s: want %s naming the value, not quoting it", summary(rep), hostforge.SecretTooShort.Code)
	}
}
