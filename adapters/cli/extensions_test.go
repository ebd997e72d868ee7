package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/internal/realdata"
)

const extDef = `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "notify", "label": "notify",
 "extensionType": "workflow", "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [],
 "assets": [{"label": "b", "name": "bundle", "assetType": "AnsibleBundle", "url": "https://example.com/b.zip", "sha256": "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1"}],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [
   {"label": "hook", "taskType": "ExtensionTaskWebhook", "failurePolicy": "continue",
    "options": {"endpoint": "https://hooks.example.com/", "method": "POST", "requestTemplate": "{\"sn\": {{ server.serialNumber | dump }}, \"ram\": {{ server.ramGbytes }}}"}},
   {"label": "cmd", "taskType": "ExtensionTaskSsh", "options": {"host": "10.0.0.1", "port": 22, "timeout": 5, "commandTemplate": "echo {{ server.model | shellquote }}"}},
   {"label": "play", "taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "p.yml"}}]}]}`

func extFiles(t *testing.T) (def, payload string) {
	t.Helper()
	dir := t.TempDir()
	def = filepath.Join(dir, "notify.json")
	payload = filepath.Join(dir, "server.json")
	if err := os.WriteFile(def, []byte(extDef), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(payload, []byte(`{"server": {"serialNumber": "6SBT0R3", "ramGbytes": 32, "model": "PowerEdge R450", "passwordEncrypted": "hunter22"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return def, payload
}

func TestExtensionsValidate(t *testing.T) {
	good, _ := extFiles(t)
	bad := realdata.Path(t, "extensions", "metalsoft", "demo-workflow.json")
	broken := realdata.Path(t, "extensions", "metalsoft", "simple-ansible-workflow__extension.json")

	r := run(t, "", nil, "extensions", "validate", good)
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, "valid (notify)") {
		t.Errorf("stdout %q", r.out)
	}

	r = run(t, "", nil, "extensions", "validate", good, bad, broken)
	wantCode(t, r, ExitUsage)
	for _, want := range []string{
		`error: $.onAssetChange[0].stage: unknown stage "server Registered": did you mean "serverRegistered"?`,
		`error: $.onAssetChange[0].tasks[0].options.endpoint:`,
		"trailing comma",
		"valid (notify)",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, r.out)
		}
	}

	r = run(t, "", nil, "extensions", "validate", "-o", "json", good, bad)
	wantCode(t, r, ExitUsage)
	var res []validateJSON
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || len(res) != 2 || !res[0].Valid || res[1].Valid || len(res[1].Problems) == 0 {
		t.Fatalf("json output %s (%v)", r.out, err)
	}
	r = run(t, "", nil, "extensions", "validate", filepath.Join(t.TempDir(), "missing.json"))
	wantCode(t, r, ExitUsage)
}

func TestExtensionsRender(t *testing.T) {
	def, payload := extFiles(t)
	r := run(t, "", nil, "extensions", "render", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "-o", "json")
	wantCode(t, r, ExitOK)
	var got []struct {
		Extension, Stage, Task, TaskType string
		Rendered                         json.RawMessage
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil || len(got) != 3 {
		t.Fatalf("output %s (%v)", r.out, err)
	}
	want := []struct{ task, typ, rendered string }{
		{"hook", "ExtensionTaskWebhook", `"{\"sn\": \"6SBT0R3\", \"ram\": 32}"`},
		{"cmd", "ExtensionTaskSsh", `"echo 'PowerEdge R450'"`},
		{"play", "ExtensionTaskAnsible", `{"server":{"serialNumber":"6SBT0R3","ramGbytes":32,"model":"PowerEdge R450"}}`},
	}
	for i, w := range want {
		var compact bytes.Buffer
		_ = json.Compact(&compact, got[i].Rendered)
		if got[i].Extension != "notify" || got[i].Stage != "serverRegistered" || got[i].Task != w.task || got[i].TaskType != w.typ || compact.String() != w.rendered {
			t.Errorf("task %d: %+v %s, want %s %s %s", i, got[i], got[i].Rendered, w.task, w.typ, w.rendered)
		}
	}
	if strings.Contains(r.out, "hunter22") {
		t.Error("a secret of the payload was rendered for a task that did not opt in")
	}

	r = run(t, "", nil, "extensions", "render", "--definition", def, "--stage", "serverRegistered", "--payload", payload)
	wantCode(t, r, ExitOK)
	if !strings.Contains(r.out, "== notify / serverRegistered / cmd (ExtensionTaskSsh)\necho 'PowerEdge R450'\n") {
		t.Errorf("text output:\n%s", r.out)
	}

	cases := map[string]struct {
		args []string
		code int
		msg  string
	}{
		"removed stage": {[]string{"--stage", "serverInstanceDeleteDNS", "--payload", payload}, ExitUsage, "serverInstanceUpdateDNS"},
		"no payload":    {[]string{"--stage", "serverRegistered", "--payload", filepath.Join(t.TempDir(), "x")}, ExitUsage, "--payload"},
		"strict":        {[]string{"--stage", "serverRegistered", "--payload", payload, "--strict"}, ExitOK, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := run(t, "", nil, append([]string{"extensions", "render", "--definition", def}, c.args...)...)
			wantCode(t, r, c.code)
			if c.msg != "" && !strings.Contains(r.err, c.msg) {
				t.Errorf("stderr %q lacks %q", r.err, c.msg)
			}
		})
	}
	strictFail := filepath.Join(t.TempDir(), "p.json")
	_ = os.WriteFile(strictFail, []byte(`{"server": {"serialNumber": "x"}}`), 0o644)
	r = run(t, "", nil, "extensions", "render", "--definition", def, "--stage", "serverRegistered", "--payload", strictFail, "--strict")
	wantCode(t, r, ExitInfra)
	wantError(t, r, "EXTENSION_TEMPLATE_FAILED", "server.ramGbytes is undefined")
}

func TestExtensionsFire(t *testing.T) {
	def, payload := extFiles(t)
	runner := extensionsfake.NewRunner().On("hook", extensionsfake.Outcome{Err: extensions.TaskFailed.New("receiver said 503")})
	saved := extensionRunners
	extensionRunners = func(wiring.RunnerOptions) (map[extensions.TaskType]extensions.Runner, func(), error) {
		return map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: runner, extensions.TaskSSH: runner}, func() {}, nil
	}
	t.Cleanup(func() { extensionRunners = saved })
	state := filepath.Join(t.TempDir(), "state.db")

	r := run(t, "", nil, "extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "--state", state, "-o", "json")
	wantCode(t, r, ExitInfra)
	var rows []fireJSON
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("output %s (%v)", r.out, err)
	}
	wantRows := []struct{ task, status, msg string }{
		{"hook", "failed", "EXTENSION_TASK_FAILED: receiver said 503"},
		{"cmd", "succeeded", ""},
		{"play", "failed", "EXTENSION_RUNNER_MISSING"},
	}
	for i, w := range wantRows {
		if rows[i].Task != w.task || rows[i].Status != w.status || !strings.Contains(rows[i].Message, w.msg) || len(rows[i].DeliveryID) != 36 {
			t.Errorf("row %d = %+v, want %s %s %q", i, rows[i], w.task, w.status, w.msg)
		}
	}
	if body := runner.Requests()[1].Body; body != "echo 'PowerEdge R450'" {
		t.Errorf("ssh body %q", body)
	}

	// The same payload again, without an event ID, is another event: new
	// delivery IDs, new records in the state database.
	r2 := run(t, "", nil, "extensions", "fire", "--definition", def, "--stage", "serverRegistered", "--payload", payload, "--state", state, "-o", "json")
	var rows2 []fireJSON
	_ = json.Unmarshal([]byte(r2.out), &rows2)
	if len(rows2) != 3 || rows2[0].DeliveryID == rows[0].DeliveryID || rows2[0].EventID == rows[0].EventID {
		t.Fatalf("a second firing delivered %v, want another event than %v", rows2, rows)
	}
	db, err := sqlstore.Open(context.Background(), sqlstore.SQLite, state)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs, err := db.Extensions().Executions(context.Background(), extensions.Query{})
	if err != nil || len(recs) != 6 {
		t.Fatalf("%d records in the state database (%v), want 3 per firing", len(recs), err)
	}
	all, _ := json.Marshal(recs)
	if strings.Contains(string(all), "hunter22") || strings.Contains(r.out+r.err, "hunter22") {
		t.Fatal("a payload secret reached a record or the output")
	}

	r = run(t, "", nil, "extensions", "fire", "--stage", "serverRegistered", "--payload", payload)
	wantCode(t, r, ExitUsage)
	wantError(t, r, "--definition", "--dir", "--config")
}
