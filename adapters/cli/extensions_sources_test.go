package cli

import (
	"encoding/base64"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A payload without the stage's object is refused before anything runs:
// exit 2 naming the key and the stage, from render and from fire, and the
// receiver is never contacted.
func TestExtensionsRefuseAPayloadOfAnotherStage(t *testing.T) {
	recv := &countingReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	def, _, vaultFile := fireSetup(t, srv.URL, "")
	switchPayload := filepath.Join(t.TempDir(), "networkDevice.json")
	if err := os.WriteFile(switchPayload, []byte(`{"networkDevice": {"id": "ND-001", "identifierString": "switch-01"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"extensions", "render", "--definition", def, "--stage", "serverRegistered", "--payload", switchPayload},
		{"extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", switchPayload, "--vault", vaultFile, "-o", "json"},
	} {
		r := run(t, "", nil, args...)
		wantCode(t, r, ExitUsage)
		wantError(t, r, "INPUT_INVALID", "--payload", `no "server" key: a serverRegistered payload is {"server": {...}} (it has the keys networkDevice)`)
	}
	if got := recv.take(); len(got) != 0 {
		t.Fatalf("the receiver was contacted: %v", got)
	}
}

// A JSON webhook body that renders to invalid JSON fails the dry run with
// EXTENSION_TEMPLATE_INVALID_JSON naming the task and the offset.
func TestExtensionsRenderRefusesInvalidJSONBodies(t *testing.T) {
	dir := t.TempDir()
	def, payload := filepath.Join(dir, "vendor.json"), filepath.Join(dir, "server.json")
	doc := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "vendor", "label": "vendor", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [{"label": "tell", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "https://hooks.example.com/", "method": "POST", "requestTemplate": "{\"vendor\": {{ server.serverVendor }}, \"sn\": {{ server.serialNumber | dump }}}"}}]}]}`
	if err := os.WriteFile(def, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(payload, []byte(`{"server": {"serialNumber": "6SBT0R3"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", nil, "extensions", "render", "--definition", def, "--stage", "serverRegistered", "--payload", payload)
	wantCode(t, r, ExitInfra)
	wantError(t, r, "EXTENSION_TEMPLATE_INVALID_JSON", "task tell ($.onAssetChange[0].tasks[0].options.requestTemplate): the rendered body is not valid JSON at offset 11")
}

func TestExtensionsFireRefusesANonPositiveStageDeadline(t *testing.T) {
	def, payload := extFiles(t)
	for _, d := range []string{"-1s", "0s"} {
		r := run(t, "", nil, "extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "--stage-deadline", d)
		wantCode(t, r, ExitUsage)
		wantError(t, r, "CLI_INPUT_INVALID", "--stage-deadline "+strings.TrimSuffix(d, "0s"))
	}
}

// siteConfig writes a config whose extensions: section holds the DNS
// definition below, the given instances block, a vault and a ledger; it
// returns the config's path and the directory.
func siteConfig(t *testing.T, url, instances string) (cfgPath, dir string) {
	t.Helper()
	dir = t.TempDir()
	defs := filepath.Join(dir, "defs")
	if err := os.MkdirAll(defs, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "dns", "label": "dns", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "outputs": [], "assets": [],
 "inputs": [{"label": "TTL", "name": "ttl", "inputType": "ExtensionInputInteger", "defaultValue": 300}],
 "configVars": [{"label": "Zone", "name": "zone", "inputType": "ExtensionInputString"},
                {"label": "API key", "name": "apiKey", "inputType": "ExtensionInputString", "isPassword": true}],
 "onAssetChange": [{"stage": "serverCreateDNS", "tasks": [{"label": "add-record", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "` + url + `/records", "method": "POST", "signingSecret": "notify-signing", "timeout": 7200,
     "requestTemplate": "{\"name\": {{ (serverDNSRecordSet.hostname + '.' + configVars.zone) | dump }}, \"ttl\": {{ extensionInstanceVariables.ttl }}, \"key\": {{ configVars.apiKey | dump }}}"}}]}]}`
	if err := os.WriteFile(filepath.Join(defs, "dns.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	vault := "notify-signing:\n  password: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\ndns-api:\n  password: k3y-0f-the-dns-api\n"
	if err := os.WriteFile(filepath.Join(dir, "vault.yaml"), []byte(vault), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := `site: lab1
netbox: {url: https://netbox.example.net}
vault: {kind: file, path: ` + filepath.Join(dir, "vault.yaml") + `}
ledger: {driver: sqlite, path: ` + filepath.Join(dir, "state.db") + `}
extensions:
  definitions: ` + defs + `
  stage_deadline: 30m
` + instances
	cfgPath = filepath.Join(dir, "site.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, dir
}

// extensions validate --config checks the site's values against the
// definitions at their config keys and lines, and says which task the
// stage deadline cuts.
func TestExtensionsValidateConfigInstances(t *testing.T) {
	for name, c := range map[string]struct {
		instances string
		code      int
		want      []string
	}{
		"required values missing": {"", ExitUsage, []string{
			`extensions.instances.dns.apiKey: missing: configVar "apiKey" of extension dns has no defaultValue`,
			`extensions.instances.dns.zone: missing: configVar "zone"`}},
		"password inline": {"  instances:\n    dns:\n      zone: dc1.example.com\n      apiKey: hunter22\n", ExitUsage, []string{
			"line 11: extensions.instances.dns.apiKey: apiKey is an isPassword input of extension dns: its value must be a vault reference"}},
		"complete": {"  instances:\n    dns:\n      zone: dc1.example.com\n      apiKey: {vault: dns-api.password}\n", ExitOK, []string{
			"valid (extensions.instances)",
			"warning: $.onAssetChange[0].tasks[0].options.timeout: the task may run 2h0m0s, longer than the stage deadline 30m0s"}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg, _ := siteConfig(t, "https://dns.example.net", c.instances)
			r := run(t, "", nil, "extensions", "validate", "--config", cfg)
			wantCode(t, r, c.code)
			for _, w := range c.want {
				if !strings.Contains(r.out, w) {
					t.Errorf("validate output lacks %q:\n%s", w, r.out)
				}
			}
			if strings.Contains(r.out+r.err, "hunter22") && c.code == ExitOK {
				t.Error("a password reached the output")
			}
		})
	}
}

// fire --config gives the tasks the site's values (the password read from
// the vault, never printed), refuses a required input without one, and
// history and outputs read what it recorded.
func TestExtensionsFireWithSiteInputsAndHistory(t *testing.T) {
	secret, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	recv := &hookReceiver{t: t, secret: secret, statuses: []int{200}}
	srv := httptest.NewServer(recv)
	defer srv.Close()

	missing, dir := siteConfig(t, srv.URL, "")
	payload := filepath.Join(dir, "dns.json")
	if err := os.WriteFile(payload, []byte(`{"serverDNSRecordSet": {"serverId": 10, "hostname": "server-10", "managementAddress": "192.168.100.100", "operation": "create"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", nil, "extensions", "fire", "--config", missing, "--stage", "serverCreateDNS", "--payload", payload)
	wantCode(t, r, ExitUsage)
	if !strings.Contains(r.err, "CONFIG_INVALID") || !strings.Contains(r.err, `line 5: extensions.instances.dns.zone: missing`) {
		t.Fatalf("stderr %s: want CONFIG_INVALID naming the missing key", r.err)
	}
	if len(recv.got()) != 0 {
		t.Fatal("a refused fire contacted the receiver")
	}

	cfg, _ := siteConfig(t, srv.URL, "  instances:\n    dns:\n      zone: dc1.example.com\n      apiKey: {vault: dns-api.password}\n")
	r = run(t, "", nil, "extensions", "fire", "--config", cfg, "--stage", "serverCreateDNS", "--payload", payload, "--event-id", "dns-1", "-o", "json")
	wantCode(t, r, ExitOK)
	if strings.Contains(r.out+r.err, "k3y-0f-the-dns-api") {
		t.Fatal("the vault's password reached the output")
	}
	if len(recv.got()) != 1 {
		t.Fatalf("the receiver got %d deliveries", len(recv.got()))
	}

	r = run(t, "", nil, "extensions", "history", "--config", cfg, "-o", "json")
	wantCode(t, r, ExitOK)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("history %s (%v)", r.out, err)
	}
	keys := make([]string, 0)
	for k := range rows[0] {
		keys = append(keys, k)
	}
	if len(keys) != 10 {
		t.Errorf("history row has keys %v, want exactly eventId, deliveryId, extension, stage, task, status, startedAt, finishedAt, attempts, message", keys)
	}
	row := rows[0]
	if row["eventId"] != "dns-1" || row["extension"] != "dns" || row["stage"] != "serverCreateDNS" || row["task"] != "add-record" ||
		row["status"] != "succeeded" || row["attempts"] != 1.0 || row["deliveryId"] != recv.got()[0] || row["finishedAt"] == nil {
		t.Errorf("history row %v", row)
	}
	for _, args := range [][]string{{"--extension", "other"}, {"--stage", "serverDeleteDNS"}, {"--event-id", "dns-2"}} {
		r = run(t, "", nil, append([]string{"extensions", "history", "--config", cfg, "-o", "json"}, args...)...)
		if strings.TrimSpace(r.out) != "[]" {
			t.Errorf("history %v = %s, want none", args, r.out)
		}
	}
	r = run(t, "", nil, "extensions", "history", "--config", cfg, "--since", "1h", "--extension", "dns", "-o", "json")
	if !strings.Contains(r.out, `"dns-1"`) {
		t.Errorf("history --since 1h = %s", r.out)
	}
	r = run(t, "", nil, "extensions", "history", "--config", cfg, "--since", "-1h")
	wantCode(t, r, ExitUsage)

	r = run(t, "", nil, "extensions", "outputs", "--config", cfg, "--extension", "dns", "-o", "json")
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, `"values": null`) {
		t.Errorf("outputs of an extension that stored none: %s", r.out)
	}
	r = run(t, "", nil, "extensions", "outputs", "--config", cfg, "--extension", "nope")
	wantCode(t, r, ExitUsage)
}
