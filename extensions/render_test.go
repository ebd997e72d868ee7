package extensions

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRenderStage(t *testing.T) {
	x := mustParse(t, definition(strings.Join([]string{
		stage("serverRegistered",
			webhookTask("notify", `{"serial": {{ server.serialNumber | dump }}, "ghz": {{ server.processorCoreMhz / 1000 }}, "rack": "{{ server.rackName }}", "pw": "{{ server.passwordEncrypted }}"}`),
			sshTask("log", "logger -t hostforge {{ server.model | shellquote }} {{ server.vendorInfo.management }}"),
			ansibleTask("playbook"),
		),
		stage("serverDecommissioned", webhookTask("bye", "{{ server.serverId }}")),
	}, ",")))
	got, err := x.Render(t.Context(), ServerRegisteredStage, specPayload(t, "server"), RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d tasks rendered, want 3 (the serverRegistered ones, in order)", len(got))
	}
	want := []struct {
		task     string
		typ      TaskType
		rendered string
	}{
		{"notify", TaskWebhook, `"{\"serial\": \"6SBT0R3\", \"ghz\": 4, \"rack\": \"\", \"pw\": \"\"}"`},
		{"log", TaskSSH, `"logger -t hostforge 'PowerEdge R450' iDRAC"`},
	}
	for i, w := range want {
		r := got[i]
		if r.Extension != "test-ext" || r.Stage != ServerRegisteredStage || r.Task != w.task || r.TaskType != w.typ || string(r.Rendered) != w.rendered {
			t.Errorf("task %d = %+v %s\nwant %s %s %s", i, r, r.Rendered, w.task, w.typ, w.rendered)
		}
	}
	var vars map[string]map[string]any
	if err := json.Unmarshal(got[2].Rendered, &vars); err != nil {
		t.Fatalf("Ansible extra-vars are not an object: %s", got[2].Rendered)
	}
	if vars["server"]["serialNumber"] != "6SBT0R3" || len(vars) != 1 {
		t.Errorf("extra-vars %v: want the payload's keys at top level", vars)
	}
	for k := range vars["server"] {
		if IsSecretKey(k) {
			t.Errorf("extra-vars carry the secret %s without includeSecrets", k)
		}
	}
}

func TestSecretsReachOnlyTasksThatOptIn(t *testing.T) {
	optIn := `{"label": "with", "taskType": "ExtensionTaskWebhook", "includeSecrets": true, "options": {"endpoint": "https://x.example/", "method": "POST", "requestTemplate": "{{ networkDevice.managementPassword }}|{{ networkDevice.secretsMaterializedForOSAssets.apiKey }}"}}`
	x := mustParse(t, definition(stage("switchRegistered", optIn, webhookTask("without", "[{{ networkDevice.managementPassword }}]{{ networkDevice.secretsMaterializedForOSAssets | dump }}"))))
	got, err := x.Render(t.Context(), SwitchRegistered, specPayload(t, "networkDevice"), RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Rendered) != `"password|secret-key"` {
		t.Errorf("opted-in task rendered %s, want the secrets", got[0].Rendered)
	}
	if string(got[1].Rendered) != `"[]"` {
		t.Errorf("other task rendered %s, want no secrets", got[1].Rendered)
	}
}

func TestConfigVarsAndInputsReachTemplates(t *testing.T) {
	b := strings.Replace(string(definition(stage("serverRegistered", webhookTask("w", "{{ configVars.DNSResolvers }}|{{ configVars.token }}"), ansibleTask("a")))),
		`"inputs": [],`, `"inputs": [{"label": "size", "name": "size", "inputType": "ExtensionInputInteger", "defaultValue": 3}],
  "configVars": [{"label": "DNSResolvers", "name": "DNSResolvers", "inputType": "ExtensionInputString", "defaultValue": "1.1.1.1"},
                 {"label": "token", "name": "token", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": "s3cret-token"}],`, 1)
	x := mustParse(t, []byte(b))
	got, err := x.Render(t.Context(), ServerRegisteredStage, specPayload(t, "server"), RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Rendered) != `"1.1.1.1|[secret extensions.instances.test-ext.token]"` {
		t.Errorf("webhook rendered %s, want the configVar and the password configVar's placeholder (a dry run prints no secret)", got[0].Rendered)
	}
	var vars map[string]any
	_ = json.Unmarshal(got[1].Rendered, &vars)
	cv, _ := vars["configVars"].(map[string]any)
	iv, _ := vars["extensionInstanceVariables"].(map[string]any)
	if cv["DNSResolvers"] != "1.1.1.1" || cv["token"] != "[secret extensions.instances.test-ext.token]" || iv["size"] != 3.0 || vars["server"] == nil {
		t.Errorf("extra-vars %v: want payload keys, configVars with the password's placeholder, inputs", vars)
	}
	site, err := x.Render(t.Context(), ServerRegisteredStage, specPayload(t, "server"), RenderOptions{Instance: Instance{
		"DNSResolvers": {Value: json.RawMessage(`"10.0.0.53"`)}, "size": {Value: json.RawMessage(`5`)}, "token": {Vault: "dns-api.password"}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(site[0].Rendered) != `"10.0.0.53|[secret extensions.instances.test-ext.token]"` {
		t.Errorf("webhook rendered %s with the site's values", site[0].Rendered)
	}
	_ = json.Unmarshal(site[1].Rendered, &vars)
	if iv, _ := vars["extensionInstanceVariables"].(map[string]any); iv["size"] != 5.0 {
		t.Errorf("extra-vars %v: want the site's input value", vars)
	}
}

func TestRenderRefusesBadInput(t *testing.T) {
	x := mustParse(t, definition(stage("serverRegistered", webhookTask("w", "{{ server.modle }}"))))
	cases := map[string]struct {
		stage   Stage
		payload string
		opts    RenderOptions
		code    string
		msg     string
	}{
		"unknown stage":         {"serverRegistred", `{}`, RenderOptions{}, EventInvalid.Code, `did you mean "serverRegistered"`},
		"payload not JSON":      {ServerRegisteredStage, `{"server":`, RenderOptions{}, PayloadInvalid.Code, "not JSON"},
		"payload not an object": {ServerRegisteredStage, `[1]`, RenderOptions{}, PayloadInvalid.Code, "JSON object"},
		"strict mode, misspelt": {ServerRegisteredStage, `{"server": {"model": "R450"}}`, RenderOptions{Strict: true}, TemplateFailed.Code, "server.modle is undefined"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := x.Render(t.Context(), c.stage, []byte(c.payload), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.code) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want %s mentioning %q", err, c.code, c.msg)
			}
		})
	}
	if out, err := x.Render(t.Context(), ServerRegisteredStage, []byte(`{"server": {"model": "R450"}}`), RenderOptions{}); err != nil || string(out[0].Rendered) != `""` {
		t.Fatalf("lenient render = %s, %v; want an empty string", out[0].Rendered, err)
	}
}

func TestNewEventRemovesSecretsAndIDs(t *testing.T) {
	ev, original, err := NewEvent("", SwitchRegistered, specPayload(t, "networkDevice"))
	if err != nil {
		t.Fatal(err)
	}
	if !ev.HasSecrets || original == nil {
		t.Fatal("the networkDevice example carries secrets; the event must say so and hand back the original")
	}
	for _, s := range []string{"managementPassword", "secret-key", "secretsMaterializedForOSAssets"} {
		if strings.Contains(string(ev.Payload), s) {
			t.Errorf("event payload still holds %q", s)
		}
	}
	if !strings.Contains(string(ev.Payload), `"variablesMaterializedForOSAssets":{"osVersion":"1.2.3"}`) {
		t.Errorf("non-secret fields must stay: %s", ev.Payload)
	}
	// Without an ID from its source, an event is a new one: the same
	// payload fired again later (the same DNS record created again) must
	// not reuse the delivery IDs a receiver deduplicates by.
	again, _, _ := NewEvent("", SwitchRegistered, specPayload(t, "networkDevice"))
	if again.ID == ev.ID || len(ev.ID) != 36 || ev.ID[14] != '4' {
		t.Errorf("event IDs %q and %q: want two fresh random (version 4 UUID) IDs", ev.ID, again.ID)
	}
	clean, original2, _ := NewEvent("id-1", ServerCreateDNS, specPayload(t, "serverDNSRecordSet"))
	if clean.HasSecrets || original2 != nil || clean.ID != "id-1" {
		t.Errorf("a payload without secrets: %+v", clean)
	}
	d1 := DeliveryID("e", "ext", "task")
	if d1 != DeliveryID("e", "ext", "task") || d1 == DeliveryID("e", "ext", "task2") || d1 == DeliveryID("e2", "ext", "task") || d1 == DeliveryID("e", "ext2", "task") {
		t.Error("delivery IDs must be stable per (event, extension, task) and differ otherwise")
	}
	if len(d1) != 36 || d1[14] != '8' {
		t.Errorf("delivery ID %q is not a version-8 UUID", d1)
	}
	if DeliveryID("a\x00b", "c", "d") == DeliveryID("a", "b\x00c", "d") {
		t.Error("delivery ID fields must not run into each other")
	}
	r1, r2 := RedeliveryID("e", "ext", "task", 1), RedeliveryID("e", "ext", "task", 2)
	if RedeliveryID("e", "ext", "task", 0) != d1 || r1 == d1 || r2 == r1 || r1 != RedeliveryID("e", "ext", "task", 1) || r1 == RedeliveryID("e", "ext", "task2", 1) || len(r1) != 36 || r1[14] != '8' {
		t.Errorf("redelivery IDs %s %s after %s: want new, stable version-8 UUIDs", r1, r2, d1)
	}
}
