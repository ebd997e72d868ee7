package extensions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/flow"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// def is a definition named name whose tasks (label:type[:policy]) are all
// bound to serverRegistered.
func def(name, status string, tasks ...string) []byte {
	var ts []string
	for _, spec := range tasks {
		parts := strings.Split(spec, ":")
		label, typ := parts[0], parts[1]
		policy := ""
		if len(parts) > 2 {
			policy = fmt.Sprintf(`"failurePolicy": %q,`, parts[2])
		}
		var opts string
		switch typ {
		case "webhook":
			opts = `"taskType": "ExtensionTaskWebhook", "options": {"endpoint": "https://hooks.example.com/` + label + `", "method": "POST", "requestTemplate": "{\"serial\": \"{{ server.serialNumber }}\", \"task\": \"` + label + `\"}"}`
		case "ssh":
			opts = `"taskType": "ExtensionTaskSsh", "options": {"host": "10.0.0.9", "port": 22, "timeout": 10, "commandTemplate": "echo {{ server.model | shellquote }}"}`
		case "ansible":
			opts = `"taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "site.yml"}`
		}
		ts = append(ts, fmt.Sprintf(`{"label": %q, %s %s}`, label, policy, opts))
	}
	st := ""
	if status != "" {
		st = fmt.Sprintf(`"status": %q,`, status)
	}
	return []byte(fmt.Sprintf(`{%s "kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": %q, "label": %q,
  "extensionType": "workflow", "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [],
  "assets": [{"label": "bundle", "name": "bundle", "assetType": "AnsibleBundle", "url": "https://example.com/b.zip", "sha256": "b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1"}],
  "onAssetChange": [{"stage": "serverRegistered", "tasks": [%s]},
                    {"stage": "serverDecommissioned", "tasks": [{"label": "other-stage", "taskType": "ExtensionTaskAnsible", "options": {"asset": "bundle", "playbook": "x.yml"}}]}]}`,
		st, name, name, strings.Join(ts, ",")))
}

type world struct {
	d      *extensions.Dispatcher
	runner *extensionsfake.Runner
	store  *extensionsfake.Store
	clk    *clock.Fake
	rt     *flow.Local
	steps  []string
	// seen counts the runner's requests contacted has returned.
	seen int
}

func newWorld(t *testing.T, defs ...[]byte) *world {
	t.Helper()
	var exts []*extensions.Extension
	for i, b := range defs {
		x, ps := extensions.Parse(b, fmt.Sprintf("def-%d", i))
		if x == nil {
			t.Fatalf("definition %d: %v", i, ps)
		}
		exts = append(exts, x)
	}
	reg, err := extensions.NewRegistry(exts...)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{runner: extensionsfake.NewRunner(), store: extensionsfake.NewStore(), clk: clock.NewFake(clock.Epoch)}
	w.d = extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{
		extensions.TaskWebhook: w.runner, extensions.TaskSSH: w.runner, extensions.TaskAnsible: w.runner}, w.store)
	w.rt = w.d.Local(w.clk)
	w.rt.RoundTrip = true // every step input and output passes through JSON, as under Temporal
	w.rt.OnEvent = func(e flow.Event) {
		if e.Kind == "step" {
			w.steps = append(w.steps, e.Step)
		}
	}
	return w
}

func serverEvent(t *testing.T, id string) extensions.Event {
	t.Helper()
	ev, _, err := extensions.NewEvent(id, extensions.ServerRegisteredStage, []byte(`{"server": {"serialNumber": "SN1", "model": "R450", "passwordEncrypted": "enc-value"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func (w *world) fire(t *testing.T, ev extensions.Event) extensions.Report {
	t.Helper()
	rep, err := extensions.Fire(context.Background(), w.rt, ev)
	if err != nil {
		t.Fatalf("Fire: %v", err)
	}
	return rep
}

func summary(rep extensions.Report) string {
	var s []string
	for _, d := range rep.Deliveries {
		s = append(s, d.Extension+"/"+d.Task+"="+string(d.Status))
	}
	return strings.Join(s, " ")
}

func TestFireRunsBoundTasksInStableOrder(t *testing.T) {
	w := newWorld(t,
		def("zeta", "", "z1:webhook"),
		def("alpha", "", "a1:webhook", "a2:ssh", "a3:ansible"),
		def("draft-ext", "draft", "d1:webhook"),
		def("old-ext", "archived", "o1:webhook"))
	ev := serverEvent(t, "evt-1")
	rep := w.fire(t, ev)
	if got, want := summary(rep), "alpha/a1=succeeded alpha/a2=succeeded alpha/a3=succeeded zeta/z1=succeeded"; got != want {
		t.Fatalf("deliveries %q, want %q (extensions by name, tasks in order, active only, this stage only)", got, want)
	}
	reqs := w.runner.Requests()
	for i, d := range rep.Deliveries {
		r := reqs[i]
		if r.DeliveryID != extensions.DeliveryID("evt-1", d.Extension, d.Task) || r.DeliveryID != d.DeliveryID {
			t.Errorf("%s/%s: delivery ID %s, want DeliveryID(event, extension, task)", d.Extension, d.Task, r.DeliveryID)
		}
		if r.Extension != d.Extension || r.Task != d.Task || r.EventID != "evt-1" || r.Stage != extensions.ServerRegisteredStage {
			t.Errorf("request %d: %+v", i, r)
		}
		if !r.Deadline.Equal(clock.Epoch.Add(extensions.DefaultStageDeadline)) {
			t.Errorf("deadline %v, want the event time plus the default stage deadline", r.Deadline)
		}
	}
	if reqs[0].Body != `{"serial": "SN1", "task": "a1"}` || reqs[0].Webhook == nil || reqs[0].Webhook.Endpoint != "https://hooks.example.com/a1" {
		t.Errorf("webhook request: body %q, options %+v", reqs[0].Body, reqs[0].Webhook)
	}
	if reqs[1].Body != "echo 'R450'" || reqs[1].SSH == nil || reqs[1].SSH.Port != 22 {
		t.Errorf("ssh request: body %q, options %+v", reqs[1].Body, reqs[1].SSH)
	}
	var vars map[string]map[string]string
	if err := json.Unmarshal(reqs[2].Variables, &vars); err != nil || vars["server"]["serialNumber"] != "SN1" || reqs[2].Ansible.Playbook != "site.yml" || len(reqs[2].Assets) != 1 {
		t.Errorf("ansible request: vars %s, options %+v", reqs[2].Variables, reqs[2].Ansible)
	}
	for _, r := range reqs {
		if strings.Contains(r.Body+string(r.Variables), "enc-value") || r.IncludesSecrets {
			t.Errorf("task %s received the payload's secret without opting in", r.Task)
		}
	}
	recs, _ := w.store.Executions(context.Background(), extensions.Query{EventID: "evt-1"})
	if len(recs) != 4 {
		t.Fatalf("%d execution records, want 4", len(recs))
	}
	for _, r := range recs {
		if r.Status != extensions.StatusSucceeded || r.StartedAt.IsZero() || r.FinishedAt.IsZero() || r.DeliveryID != extensions.DeliveryID("evt-1", r.Extension, r.Task) {
			t.Errorf("record %+v", r)
		}
	}
	for _, s := range w.steps {
		if !strings.HasPrefix(s, "extensions.") {
			t.Errorf("step %s is not prefixed extensions.", s)
		}
	}
}

func TestDeliveryIDIsReusedOnRetryAndRefire(t *testing.T) {
	w := newWorld(t, def("alpha", "", "a1:webhook", "a2:webhook"))
	w.runner.On("a1", extensionsfake.Outcome{Err: hostforge.RetryAfter(30*time.Second, "receiver_busy", "429 Retry-After 30"), Times: 2})
	ev := serverEvent(t, "evt-retry")
	rep := w.fire(t, ev)
	if summary(rep) != "alpha/a1=succeeded alpha/a2=succeeded" {
		t.Fatalf("deliveries %s", summary(rep))
	}
	reqs := w.runner.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d runner calls, want 3 for a1 (two waits) and 1 for a2", len(reqs))
	}
	if reqs[0].DeliveryID != reqs[1].DeliveryID || reqs[1].DeliveryID != reqs[2].DeliveryID {
		t.Errorf("retries used delivery IDs %s %s %s, want one", reqs[0].DeliveryID, reqs[1].DeliveryID, reqs[2].DeliveryID)
	}
	if got := w.clk.Now().Sub(clock.Epoch); got != time.Minute {
		t.Errorf("the runtime slept %v, want the runner's two 30 s waits", got)
	}
	first := rep.Deliveries[0].DeliveryID
	w.runner.Reset()
	again := w.fire(t, ev)
	if len(w.runner.Requests()) != 0 || again.Deliveries[0].DeliveryID != first || again.Deliveries[0].Status != extensions.StatusSkipped {
		t.Errorf("firing the event again contacted %d tasks, reported %+v: what succeeded is skipped", len(w.runner.Requests()), again.Deliveries[0])
	}
	recs, _ := w.store.Executions(context.Background(), extensions.Query{})
	if len(recs) != 2 || recs[0].Status != extensions.StatusSucceeded || recs[1].Status != extensions.StatusSucceeded {
		t.Errorf("records after a re-fire %+v, want the 2 successes left as they were", recs)
	}
}

func TestFailurePolicy(t *testing.T) {
	fail := extensionsfake.Outcome{Err: extensions.TaskFailed.New("receiver answered 500: token=enc-value")}
	cases := []struct {
		name, policy, want string
	}{
		{"fail (the default) stops the extension's remaining tasks", "", "alpha/a1=failed alpha/a2=skipped alpha/a3=skipped beta/b1=succeeded"},
		{"fail stops them", "fail", "alpha/a1=failed alpha/a2=skipped alpha/a3=skipped beta/b1=succeeded"},
		{"continue goes on", "continue", "alpha/a1=failed alpha/a2=succeeded alpha/a3=succeeded beta/b1=succeeded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := "a1:webhook"
			if c.policy != "" {
				spec += ":" + c.policy
			}
			w := newWorld(t, def("alpha", "", spec, "a2:webhook", "a3:ansible"), def("beta", "", "b1:webhook"))
			w.runner.On("a1", fail)
			rep := w.fire(t, serverEvent(t, "evt-p"))
			if got := summary(rep); got != c.want {
				t.Fatalf("deliveries %q, want %q", got, c.want)
			}
			if !rep.Failed() || rep.Deliveries[0].Code != extensions.TaskFailed.Code {
				t.Errorf("report: failed %v, first %+v", rep.Failed(), rep.Deliveries[0])
			}
			rec, ok, _ := w.store.Execution(context.Background(), rep.Deliveries[0].DeliveryID)
			if !ok || rec.Status != extensions.StatusFailed || !strings.Contains(rec.Message, "EXTENSION_TASK_FAILED: receiver answered 500") {
				t.Errorf("failed record %+v", rec)
			}
			if c.policy != "continue" {
				rec, _, _ := w.store.Execution(context.Background(), rep.Deliveries[1].DeliveryID)
				if rec.Status != extensions.StatusSkipped || !strings.Contains(rec.Message, "task a1 of extension alpha failed") {
					t.Errorf("skipped record %+v", rec)
				}
			}
		})
	}
}

func TestStageDeadlineSkipsLateTasks(t *testing.T) {
	w := newWorld(t, def("alpha", "", "slow:webhook", "late:webhook"), def("beta", "", "b1:webhook"))
	w.d.Runners[extensions.TaskWebhook] = extensions.RunnerFunc(func(ctx context.Context, r extensions.Request) (extensions.Result, error) {
		if r.Task == "slow" {
			w.clk.Advance(3 * time.Minute)
		}
		return w.runner.Run(ctx, r)
	})
	ev := serverEvent(t, "evt-d")
	ev.StageDeadline = 2 * time.Minute
	rep := w.fire(t, ev)
	if got := summary(rep); got != "alpha/slow=succeeded alpha/late=skipped beta/b1=skipped" {
		t.Fatalf("deliveries %q", got)
	}
	if rep.Deliveries[1].Code != extensions.StageDeadline.Code {
		t.Errorf("late task code %s, want %s", rep.Deliveries[1].Code, extensions.StageDeadline.Code)
	}
}

func TestMissingRunnerAndChangedDefinitionFailTheirTask(t *testing.T) {
	w := newWorld(t, def("alpha", "", "a1:ssh:continue", "a2:webhook:continue", "a3:webhook"))
	delete(w.d.Runners, extensions.TaskSSH)
	w.d.Runners[extensions.TaskWebhook] = extensions.RunnerFunc(func(ctx context.Context, r extensions.Request) (extensions.Result, error) {
		if r.Task == "a2" {
			// An operator reloads the definitions mid-dispatch.
			x, _ := extensions.Parse(def("alpha", "", "a1:ssh", "a2:webhook", "a3:webhook", "a4:webhook"), "reloaded")
			reg, _ := extensions.NewRegistry(x)
			w.d.SetRegistry(reg)
		}
		return w.runner.Run(ctx, r)
	})
	rep := w.fire(t, serverEvent(t, "evt-m"))
	if got := summary(rep); got != "alpha/a1=failed alpha/a2=succeeded alpha/a3=failed" {
		t.Fatalf("deliveries %q", got)
	}
	if rep.Deliveries[0].Code != extensions.RunnerMissing.Code || rep.Deliveries[2].Code != extensions.DefinitionChanged.Code {
		t.Errorf("codes %s, %s", rep.Deliveries[0].Code, rep.Deliveries[2].Code)
	}
}

func TestSecretsReachOptedInTasksOnlyAndNeverRecords(t *testing.T) {
	payload := `{"networkDevice": {"identifierString": "leaf-1", "managementPassword": "sw1tch-pa55", "secretsMaterializedForOSAssets": {"apiKey": "api-key-123"}}}`
	b := []byte(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "sw", "label": "sw", "extensionType": "workflow",
  "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
  "onAssetChange": [{"stage": "switchRegistered", "tasks": [
    {"label": "configure", "taskType": "ExtensionTaskSsh", "includeSecrets": true, "failurePolicy": "continue",
     "options": {"host": "10.1.1.1", "port": 22, "timeout": 30, "commandTemplate": "login {{ networkDevice.identifierString }} {{ networkDevice.managementPassword | shellquote }}"}},
    {"label": "notify", "taskType": "ExtensionTaskWebhook",
     "options": {"endpoint": "https://hooks.example.com/", "method": "POST", "requestTemplate": "{{ networkDevice | dump }}"}}]}]}`)
	w := newWorld(t, b)
	secrets := &extensions.MemorySecrets{}
	w.d.Secrets = secrets
	ev, original, err := extensions.NewEvent("evt-s", extensions.SwitchRegistered, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	secrets.Put(ev.ID, original)
	w.runner.On("configure", extensionsfake.Outcome{Err: extensions.TaskFailed.New("ssh: command echoed 'sw1tch-pa55' and api-key-123")})
	w.runner.On("notify", extensionsfake.Outcome{Result: extensions.Result{Message: "ok, saw sw1tch-pa55"}})
	var inputs []string
	w.rt.OnEvent = nil
	rep := w.fire(t, ev)
	reqs := w.runner.Requests()
	if !strings.Contains(reqs[0].Body, "'sw1tch-pa55'") || !reqs[0].IncludesSecrets {
		t.Errorf("the opted-in task got %q", reqs[0].Body)
	}
	if strings.Contains(reqs[1].Body, "sw1tch") || strings.Contains(reqs[1].Body, "api-key") {
		t.Errorf("the other task got secrets: %q", reqs[1].Body)
	}
	recs, _ := w.store.Executions(context.Background(), extensions.Query{})
	all, _ := json.Marshal(recs)
	rj, _ := json.Marshal(rep)
	inputs = append(inputs, string(all), string(rj), string(ev.Payload))
	for _, s := range inputs {
		if strings.Contains(s, "sw1tch-pa55") || strings.Contains(s, "api-key-123") {
			t.Fatalf("a secret reached a record, the report or the event: %s", s)
		}
	}
	if !strings.Contains(string(all), `\u003credacted\u003e`) {
		t.Errorf("records %s: the echoed secrets must be replaced by %s", all, hostforge.Redacted)
	}
}

// A task that receives secrets — by includeSecrets, or because its
// extension declares an isPassword configVar, whether or not the payload
// has secret fields — is told so (its runner then records only digests),
// and whatever its runner reports back is scrubbed of the payload's
// secrets and the isPassword values in every form: case-folded, dumped,
// echoed as JSON inside JSON, however short. The log lines carry no
// failure's detail.
func TestSecretTasksAreMarkedAndEveryFormIsScrubbed(t *testing.T) {
	const apiKey, password, short = "TopSecretApiKey77", `Sup"erSecret99<`, "pw1"
	b := []byte(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "dns", "label": "dns", "extensionType": "workflow",
  "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
  "configVars": [{"label": "Key", "name": "key", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": "` + apiKey + `"}],
  "onAssetChange": [{"stage": "serverRegistered", "tasks": [
    {"label": "push", "taskType": "ExtensionTaskWebhook", "includeSecrets": true, "failurePolicy": "continue",
     "options": {"endpoint": "https://hooks.example.com/", "method": "POST", "requestTemplate": "{\"key\": {{ configVars.key | dump }}, \"pw\": {{ server.passwordEncrypted | lower | dump }}, \"vnc\": {{ server.vncPasswordEncrypted | default(\"\") | dump }}}"}}]}]}`)
	dump := func(v string) string { j, _ := json.Marshal(v); return string(j) }
	for _, withPayloadSecrets := range []bool{false, true} {
		t.Run(fmt.Sprintf("payload secrets %v", withPayloadSecrets), func(t *testing.T) {
			w := newWorld(t, b, def("notify", "", "plain:webhook:continue"))
			var logs strings.Builder
			w.rt.Log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			payload := `{"server": {"serialNumber": "SN1"}}`
			if withPayloadSecrets {
				payload = `{"server": {"serialNumber": "SN1", "passwordEncrypted": ` + dump(password) + `, "vncPasswordEncrypted": "` + short + `"}}`
			}
			ev, original, err := extensions.NewEvent("evt-"+fmt.Sprint(withPayloadSecrets), extensions.ServerRegisteredStage, []byte(payload))
			if err != nil {
				t.Fatal(err)
			}
			src := &extensions.MemorySecrets{}
			src.Put(ev.ID, original)
			w.d.Secrets = src
			// The receiver echoes the request back, as a JSON error and in
			// upper case; the other extension's task reports its request
			// for its record.
			pw, vnc := "", ""
			if withPayloadSecrets {
				pw, vnc = password, short
			}
			echo := extensions.TaskFailed.New("POST answered 400 (attempt 1 of 1): the receiver refused %s", strings.ToLower(pw))
			echo.Detail = `response: {"error": ` + dump(`bad body {"key": `+dump(strings.ToLower(apiKey))+`, "pw": `+dump(strings.ToLower(pw))+`, "vnc": "`+vnc+`"}`) + `}` +
				"\nresponse headers: X-Echo: " + strings.ToUpper(apiKey) + " " + strings.ToUpper(pw)
			w.runner.On("push", extensionsfake.Outcome{Err: echo})
			plain := extensions.TaskFailed.New("POST answered 500 (attempt 1 of 1)")
			plain.Detail = `request: {"serial": "SN1-RENDERED-BODY"}`
			w.runner.On("plain", extensionsfake.Outcome{Err: plain})
			rep := w.fire(t, ev)
			reqs := w.runner.Requests()
			if len(reqs) != 2 || !reqs[0].IncludesSecrets || reqs[1].IncludesSecrets {
				t.Fatalf("requests %+v: the task of an extension with an isPassword configVar receives secrets, whatever the payload; the other extension's does not", reqs)
			}
			if !strings.Contains(reqs[0].Body, apiKey) {
				t.Fatalf("the opted-in task did not get the configVar: %q", reqs[0].Body)
			}
			recs, _ := w.store.Executions(context.Background(), extensions.Query{})
			rj, _ := json.Marshal(recs)
			pj, _ := json.Marshal(rep)
			for what, text := range map[string]string{"records": string(rj), "report": string(pj), "logs": logs.String()} {
				low := strings.ToLower(text)
				for _, core := range []string{"topsecretapikey77", `erSecret99`, `ersecret99`, `"pw1"`, `\"pw1\"`} {
					if strings.Contains(low, strings.ToLower(core)) {
						t.Errorf("%s carry %q:\n%s", what, core, text)
					}
				}
			}
			if !strings.Contains(string(rj), "SN1-RENDERED-BODY") || !strings.Contains(string(rj), "response headers") {
				t.Errorf("the records lost the failures' detail: %s", rj)
			}
			if strings.Contains(logs.String(), "SN1-RENDERED-BODY") || strings.Contains(logs.String(), "response headers") || !strings.Contains(logs.String(), "step failed") {
				t.Errorf("a log line carries a failure's detail:\n%s", logs.String())
			}
		})
	}
}

func TestOutputsAreReplacedByEachRun(t *testing.T) {
	w := newWorld(t, def("alpha", "", "play:ansible"))
	w.runner.On("play", extensionsfake.Outcome{Result: extensions.Result{Message: "ok", Outputs: json.RawMessage(`{"ip":"10.0.0.4"}`)}})
	w.fire(t, serverEvent(t, "evt-o1"))
	o, ok, _ := w.store.Outputs(context.Background(), "alpha")
	if !ok || string(o.Values) != `{"ip":"10.0.0.4"}` || o.DeliveryID != extensions.DeliveryID("evt-o1", "alpha", "play") {
		t.Fatalf("outputs %+v", o)
	}
	w.runner.On("play", extensionsfake.Outcome{Result: extensions.Result{Outputs: json.RawMessage(`{}`)}})
	w.fire(t, serverEvent(t, "evt-o2"))
	o, _, _ = w.store.Outputs(context.Background(), "alpha")
	if string(o.Values) != `{}` {
		t.Fatalf("outputs %s after a run that wrote none, want them wiped", o.Values)
	}
	w.runner.On("play", extensionsfake.Outcome{Result: extensions.Result{Message: "no outputs at all"}})
	w.fire(t, serverEvent(t, "evt-o3"))
	if o2, _, _ := w.store.Outputs(context.Background(), "alpha"); o2.DeliveryID != o.DeliveryID {
		t.Fatal("a run that returns no outputs object must leave the stored ones alone")
	}
}

func TestUnavailableStoreStopsDispatchBeforeAnyDelivery(t *testing.T) {
	w := newWorld(t, def("alpha", "", "a1:webhook"))
	unavailable := hostforge.Declare(hostforge.Spec{Code: "TEST_STORE_DOWN", Phase: "state", Owner: hostforge.OwnerInfraEng, Retryable: true, Action: "test"})
	w.store.Fail = unavailable.New("database is down")
	rep, err := extensions.Fire(context.Background(), w.rt, serverEvent(t, "evt-u"))
	if !unavailable.Is(err) {
		t.Fatalf("Fire = %v, want the store's failure", err)
	}
	if len(w.runner.Requests()) != 0 || len(rep.Deliveries) != 0 {
		t.Fatal("a task ran although its delivery could not be recorded")
	}
	if w.clk.Now().Equal(clock.Epoch) {
		t.Error("a retryable store failure must be retried (after a pause) before giving up")
	}
}

func TestFireRefusesBadEvents(t *testing.T) {
	w := newWorld(t, def("alpha", "", "a1:webhook"))
	for name, ev := range map[string]extensions.Event{
		"no ID":         {Stage: extensions.ServerRegisteredStage, Payload: json.RawMessage(`{}`)},
		"unknown stage": {ID: "x", Stage: "serverRegistred", Payload: json.RawMessage(`{}`)},
	} {
		if _, err := extensions.Fire(context.Background(), w.rt, ev); !extensions.EventInvalid.Is(err) {
			t.Errorf("%s: %v, want %s", name, err, extensions.EventInvalid.Code)
		}
	}
	if len(w.runner.Requests()) != 0 {
		t.Fatal("a bad event ran a task")
	}
}

// The task's own credentials — an SSH task's password, a webhook's
// credential headers — are scrubbed from what its runner reports, in any
// case and however short, like the payload's secrets.
func TestTaskCredentialsAreScrubbedFromRecords(t *testing.T) {
	b := []byte(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "creds", "label": "creds", "extensionType": "workflow",
  "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
  "onAssetChange": [{"stage": "serverRegistered", "tasks": [
    {"label": "login", "taskType": "ExtensionTaskSsh", "failurePolicy": "continue",
     "options": {"host": "10.0.0.9", "port": 22, "timeout": 10, "username": "ops", "password": "Sw1tch-Passw0rd", "commandTemplate": "show version"}},
    {"label": "hook", "taskType": "ExtensionTaskWebhook", "failurePolicy": "continue",
     "options": {"endpoint": "https://hooks.example.com/", "method": "POST", "headers": {"Authorization": "Bearer Tok-9f8e7d6c", "X-Api-Key": "k9"}, "requestTemplate": "{}"}}]}]}`)
	w := newWorld(t, b)
	w.runner.On("login", extensionsfake.Outcome{Err: extensions.TaskFailed.New("banner: PASSWORD SW1TCH-PASSW0RD REJECTED")})
	w.runner.On("hook", extensionsfake.Outcome{Result: extensions.Result{Message: `answered 200: {"seen": "bearer tok-9f8e7d6c", "key": "k9"}`}})
	w.fire(t, serverEvent(t, "evt-c"))
	recs, _ := w.store.Executions(context.Background(), extensions.Query{})
	all, _ := json.Marshal(recs)
	for _, leak := range []string{"sw1tch-passw0rd", "tok-9f8e7d6c", `"k9"`, `\"k9\"`} {
		if strings.Contains(strings.ToLower(string(all)), leak) {
			t.Errorf("the records carry %q: %s", leak, all)
		}
	}
	if !strings.Contains(string(all), "banner: PASSWORD") {
		t.Errorf("the records lost the runner's message: %s", all)
	}
}
