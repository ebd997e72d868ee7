package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/ssh/sshtest"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/vault"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
)

// The secrets of the echoing extension run: with quotes, upper case and
// '<', and one shorter than any a site may choose.
const (
	extPassword = `Sup"erSecret99<Ab>` // the payload's passwordEncrypted
	extShort    = "Zw9"                // the payload's vncPasswordEncrypted
	extAPIKey   = `TopSecret"Key<77>`  // an isPassword configVar
	extSigning  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	// renderedMarker is in the rendered body of a task without secrets:
	// its record may keep it, no log line may.
	renderedMarker = "RENDERED-BODY-MARKER"
)

// echoWorld is a site whose receivers echo what they are sent:
//
//	push     a webhook task with includeSecrets; the receiver answers 400
//	         with the request quoted in a JSON error
//	confirm  a webhook task with includeSecrets; the receiver answers 200
//	         echoing the request and its signature header
//	login    an SSH task with includeSecrets; the command echoes what it
//	         renders on stdout and stderr and exits 3
//	notify   a webhook task of another extension, without secrets; the
//	         receiver answers 500 echoing the request
//
// The templates render the secrets through dump, lower, upper, urlencode,
// escape and shellquote.
type echoWorld struct {
	dir, secretsDef, notifyDef, payload, vaultFile, knownHosts string
	clientKey                                                  string
}

func newEchoWorld(t *testing.T) *echoWorld {
	t.Helper()
	w := &echoWorld{dir: t.TempDir()}
	echo := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/push":
			rw.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(rw).Encode(map[string]string{"error": "cannot parse " + string(b)})
		case "/confirm":
			fmt.Fprintf(rw, "ok %s signed %s", b, r.Header.Get("webhook-signature"))
		default:
			rw.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(rw, "<html><body>broken: %s</body></html>", b)
		}
	})
	srv := httptest.NewServer(echo)
	t.Cleanup(srv.Close)

	client := sshtest.NewKey(t)
	ssrv := sshtest.Start(t, client.PublicKey())
	w.clientKey = client.PEM
	w.knownHosts = filepath.Join(w.dir, "known_hosts")
	host, port, _ := net.SplitHostPort(ssrv.Addr)

	hook := func(label, template string) string {
		return `{"label": "` + label + `", "taskType": "ExtensionTaskWebhook", "includeSecrets": true, "failurePolicy": "continue",
  "options": {"endpoint": "` + srv.URL + `/` + label + `", "method": "POST", "signingSecret": "ext-signing", "requestTemplate": ` + jsonText(template) + `}}`
	}
	secretsDef := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "dns", "label": "dns", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "configVars": [{"label": "API key", "name": "apiKey", "inputType": "ExtensionInputString", "isPassword": true, "defaultValue": ` + jsonText(extAPIKey) + `}],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [` +
		hook("push", `{"pw": {{ server.passwordEncrypted | dump }}, "low": {{ server.passwordEncrypted | lower | dump }}, "key": {{ configVars.apiKey | upper | dump }}, "vnc": {{ server.vncPasswordEncrypted | dump }}}`) + `, ` +
		hook("confirm", `key={{ configVars.apiKey | urlencode }}&pw={{ server.passwordEncrypted | escape }}&low={{ server.passwordEncrypted | lower }}&vnc={{ server.vncPasswordEncrypted }}`) + `,
  {"label": "login", "taskType": "ExtensionTaskSsh", "includeSecrets": true, "failurePolicy": "continue",
   "options": {"host": "` + host + `", "port": ` + port + `, "timeout": 20, "privateKeySecret": "ext-ssh",
     "commandTemplate": ` + jsonText(`echo {{ server.passwordEncrypted | lower | shellquote }} {{ server.vncPasswordEncrypted }}; echo {{ configVars.apiKey | dump | shellquote }} >&2; exit 3`) + `}}]}]}`
	notifyDef := `{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "notify", "label": "notify", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [{"label": "notify", "taskType": "ExtensionTaskWebhook",
  "options": {"endpoint": "` + srv.URL + `/notify", "method": "POST", "requestTemplate": "{\"serial\": {{ server.serialNumber | dump }}, \"marker\": \"` + renderedMarker + `\"}"}}]}]}`
	payload := `{"server": {"serialNumber": "6SBT0R3", "model": "PowerEdge R450", "passwordEncrypted": ` + jsonText(extPassword) + `, "vncPasswordEncrypted": "` + extShort + `"}}`
	w.secretsDef, w.notifyDef, w.payload, w.vaultFile = filepath.Join(w.dir, "dns.json"), filepath.Join(w.dir, "notify.json"), filepath.Join(w.dir, "server.json"), filepath.Join(w.dir, "vault.yaml")
	for name, body := range map[string]string{w.secretsDef: secretsDef, w.notifyDef: notifyDef, w.payload: payload,
		w.knownHosts: ssrv.KnownHosts(ssrv.HostKey.PublicKey())} {
		if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := vault.Create(w.vaultFile, map[string]map[string]string{
		"ext-signing": {"password": extSigning},
		"ext-ssh":     {ssh.FieldPrivateKey: client.PEM, ssh.FieldUser: "deploy"},
	}); err != nil {
		t.Fatal(err)
	}
	return w
}

func jsonText(s string) string { b, _ := json.Marshal(s); return string(b) }

// secrets are every secret of the run: the payload's, the isPassword
// configVar, the signing secret and the SSH client's private key (its
// base64 body, without the PEM armour's words).
func (w *echoWorld) secrets() []string {
	var key []string
	for _, line := range strings.Split(w.clientKey, "\n") {
		if line != "" && !strings.HasPrefix(line, "-----") {
			key = append(key, line)
		}
	}
	return []string{extPassword, extShort, extAPIKey, extSigning, strings.Join(key, "")}
}

// registry loads the two definitions.
func (w *echoWorld) registry(t *testing.T) *extensions.Registry {
	t.Helper()
	var exts []*extensions.Extension
	for _, f := range []string{w.secretsDef, w.notifyDef} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		x, ps := extensions.Parse(b, f)
		if x == nil {
			t.Fatalf("%s: %v", f, ps)
		}
		exts = append(exts, x)
	}
	reg, err := extensions.NewRegistry(exts...)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// dispatcher wires the real runners (webhook, SSH) over the world's vault
// and known_hosts, and a SQLite store; raw, when set, receives what the
// runners report before the dispatcher scrubs it.
func (w *echoWorld) dispatcher(t *testing.T, log *slog.Logger, raw *strings.Builder) (*extensions.Dispatcher, *extensions.Event, *sqlstore.DB) {
	t.Helper()
	v, err := vault.Open(w.vaultFile)
	if err != nil {
		t.Fatal(err)
	}
	runners, closeRunners, err := wiring.ExtensionRunners(wiring.RunnerOptions{Vault: v, KnownHosts: w.knownHosts, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeRunners)
	if raw != nil {
		for typ, r := range runners {
			runners[typ] = rawReports(r, raw)
		}
	}
	db, err := sqlstore.Open(context.Background(), sqlstore.SQLite, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(context.Background(), sqlstore.ComponentExtensions); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(w.payload)
	if err != nil {
		t.Fatal(err)
	}
	ev, original, err := extensions.NewEvent("evt-echo", extensions.ServerRegisteredStage, b)
	if err != nil {
		t.Fatal(err)
	}
	src := &extensions.MemorySecrets{}
	src.Put(ev.ID, original)
	d := extensions.NewDispatcher(w.registry(t), runners, db.Extensions())
	d.Secrets, d.Log = src, log
	return d, &ev, db
}

// rawReports records what a runner reports, unscrubbed, for a request not
// marked as receiving secrets: what the receivers echo, as it would be
// kept if nothing knew the task received secrets.
func rawReports(r extensions.Runner, raw *strings.Builder) extensions.Runner {
	return extensions.RunnerFunc(func(ctx context.Context, req extensions.Request) (extensions.Result, error) {
		req.IncludesSecrets = false
		res, err := r.Run(ctx, req)
		raw.WriteString(res.Message + "\n")
		if f, ok := hostforge.AsFailure(err); ok {
			raw.WriteString(f.Message + "\n" + f.Detail + "\n")
		}
		return res, err
	})
}

// records adds every execution record the store holds.
func records(t *testing.T, a artifacts, db *sqlstore.DB) {
	t.Helper()
	recs, err := db.Extensions().Executions(context.Background(), extensions.Query{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(recs)
	a.add("records", string(b))
}

// runExtensionsLocal fires the event inline with debug logs that nothing
// scrubs: whatever keeps secrets out of them does so by construction.
func runExtensionsLocal(t *testing.T, w *echoWorld, raw *strings.Builder) artifacts {
	t.Helper()
	a := artifacts{}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d, ev, db := w.dispatcher(t, log, raw)
	rt := d.Local(clock.Real{})
	rt.RoundTrip = true
	rep, err := extensions.Fire(context.Background(), rt, *ev)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	a.add("report", string(b))
	records(t, a, db)
	a.add("logs", logs.String())
	return a
}

// runExtensionsCLI runs 'extensions fire' with debug logs, -o json and
// text, recording to a state file it then reads.
func runExtensionsCLI(t *testing.T, w *echoWorld) artifacts {
	t.Helper()
	a := artifacts{}
	state := filepath.Join(t.TempDir(), "state.db")
	for _, format := range []string{"json", "text"} {
		r := run(t, "", nil, "extensions", "fire", "--definition", w.secretsDef, "--definition", w.notifyDef, "--stage", "serverRegistered",
			"--payload", w.payload, "--vault", w.vaultFile, "--known-hosts", w.knownHosts, "--state", state, "--log-level", "debug", "-o", format)
		wantCode(t, r, ExitInfra)
		a.add("CLI -o "+format, r.out)
		a.add("CLI logs", r.err)
	}
	db, err := sqlstore.Open(context.Background(), sqlstore.SQLite, state)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	records(t, a, db)
	return a
}

// runExtensionsTemporal fires the event under the SDK's test environment
// and records the history's payloads, the activities' errors, the
// workflow's result, the SDK's logs and the records.
func runExtensionsTemporal(t *testing.T, w *echoWorld) artifacts {
	t.Helper()
	a := artifacts{}
	var sdkLogs bytes.Buffer
	d, ev, db := w.dispatcher(t, slog.New(slog.DiscardHandler), nil)
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewJSONHandler(&sdkLogs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	env := s.NewTestWorkflowEnvironment()
	rec := &recordingConverter{DataConverter: converter.GetDefaultDataConverter()}
	env.SetDataConverter(rec)
	env.SetTestTimeout(time.Minute)
	env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, err error) {
		if err != nil {
			a.add("activity errors", info.ActivityType.Name+": "+err.Error())
		}
	})
	temporal.Register(env, &temporal.Activities{Exec: d, Secrets: hostforge.NewSecrets()}, temporal.ActivityOptions{}, temporal.Extensions)
	env.ExecuteWorkflow(temporal.ExtensionsWorkflowName, *ev)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the dispatch did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var rep extensions.Report
	if err := env.GetWorkflowResult(&rep); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	a.add("workflow result", string(b))
	rec.mu.Lock()
	a.add("history payloads", strings.Join(rec.payloads, "\n"))
	rec.mu.Unlock()
	a.add("Temporal SDK logs", sdkLogs.String())
	records(t, a, db)
	return a
}

// alnumRun matches the runs of letters and digits a secret is made of,
// long enough not to be found in other text by chance.
var alnumRun = regexp.MustCompile(`[A-Za-z0-9]{8,}`)

// anyFormLeaks lists "kind: secret" for each secret found in an artifact
// in any form, judged without the scrubber's own list of forms: any run of
// eight or more letters and digits of it, in any case (every escaping —
// JSON once or twice, HTML, URL, shell quoting — and every case change
// keep such a run whole), its base64, and a short secret as a whole word
// in any case.
func anyFormLeaks(a artifacts, secrets []string) []string {
	var out []string
	for kind, b := range a {
		text := b.String()
		low := strings.ToLower(text)
		for _, v := range secrets {
			found := false
			for _, run := range alnumRun.FindAllString(v, -1) {
				found = found || strings.Contains(low, strings.ToLower(run))
			}
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				found = found || strings.Contains(text, enc.EncodeToString([]byte(v)))
			}
			if len(v) < 5 {
				found = found || regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_])`+regexp.QuoteMeta(v)+`([^A-Za-z0-9_]|$)`).MatchString(text)
			}
			if found {
				out = append(out, fmt.Sprintf("%s: %.24q", kind, v))
			}
		}
	}
	sort.Strings(out)
	return out
}

// noSecretLeavesAnExtensionRun (a part of TestNoSecretLeavesARun) fires an event whose tasks receive
// secrets — from the payload (with quotes, upper case, '<', and one of
// three characters) and an isPassword configVar — rendered through dump,
// lower, upper, urlencode, escape and shellquote, to receivers that echo
// them back: a webhook quoting its request in its error, one echoing it in
// its answer, an SSH command echoing what it ran. Inline, through the CLI
// and under the Temporal test environment, the records, the logs (which
// nothing scrubs inline), the CLI's -o json and text output and the
// recorded Temporal history hold no secret in any form; the records of
// the tasks that receive secrets hold their bodies only by SHA-256, and no
// log line holds a rendered body.
func noSecretLeavesAnExtensionRun(t *testing.T) {
	runs := []struct {
		name string
		run  func(t *testing.T, w *echoWorld) artifacts
	}{
		{"local", func(t *testing.T, w *echoWorld) artifacts { return runExtensionsLocal(t, w, nil) }},
		{"CLI", runExtensionsCLI},
		{"Temporal", runExtensionsTemporal},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			w := newEchoWorld(t)
			a := r.run(t, w)
			if l := anyFormLeaks(a, w.secrets()); len(l) > 0 {
				t.Fatalf("secrets left the run:\n%s", strings.Join(l, "\n"))
			}
			// The scrubber's own forms, of the secrets long enough to be
			// looked for inside other words.
			if l := leaks(a, []string{extPassword, extAPIKey, extSigning}); len(l) > 0 {
				t.Fatalf("secrets left the run in a scrubber's form:\n%s", strings.Join(l, "\n"))
			}
			recs := a["records"].String()
			for _, want := range []string{"EXTENSION_WEBHOOK_REJECTED", "EXTENSION_SSH_COMMAND_FAILED", "answered 200 OK", "request: sha256:", "response: sha256:", "output: sha256:", "EXTENSION_WEBHOOK_UNAVAILABLE", renderedMarker} {
				if !strings.Contains(recs, want) {
					t.Errorf("the records never say %q:\n%s", want, recs)
				}
			}
			for kind, b := range a {
				if kind != "records" && strings.Contains(kind, "log") && strings.Contains(b.String(), renderedMarker) {
					t.Errorf("%s carry a rendered body:\n%s", kind, b.String())
				}
			}
		})
	}
}

// extensionScanFindsWhatLeaks (a part of TestTheSecretScanFindsWhatLeaks):
// the scan of extension runs finds a secret in each form a template and
// an echo give it, planted in any artifact; and the receivers do echo the
// secrets: what the runners report before the dispatcher scrubs it holds
// them, transformed.
func extensionScanFindsWhatLeaks(t *testing.T) {
	w := newEchoWorld(t)
	var raw strings.Builder
	runExtensionsLocal(t, w, &raw)
	if l := anyFormLeaks(artifacts{"raw runner reports": &raw}, []string{extPassword, extShort, extAPIKey}); len(l) != 3 {
		t.Fatalf("the runners' own reports hold %v: the receivers do not echo the secrets, so the clean run proves nothing", l)
	}
	for _, form := range []string{strings.ToLower(extPassword), `TOPSECRET\\\"KEY\u003c77\u003e`, `TopSecret%22Key%3C77%3E`} {
		if !strings.Contains(raw.String(), form) {
			t.Errorf("the receivers' echoes do not hold the transformed form %s:\n%s", form, raw.String())
		}
	}
	a := runExtensionsLocal(t, w, nil)
	dump := func(v string) string { return jsonText(v) }
	forms := map[string]func(string) string{
		"raw":                  func(v string) string { return v },
		"lower | dump":         func(v string) string { return dump(strings.ToLower(v)) },
		"dump, echoed in JSON": func(v string) string { return dump(`{"pw": ` + dump(v) + `}`) },
		"upper, HTML-escaped": func(v string) string {
			return strings.NewReplacer(`"`, "&#34;", "<", "&lt;", ">", "&gt;").Replace(strings.ToUpper(v))
		},
		"urlencode":              func(v string) string { return strings.NewReplacer(`"`, "%22", "<", "%3C", ">", "%3E").Replace(v) },
		"dump, twice, uppercase": func(v string) string { return strings.ToUpper(dump(dump(v))) },
	}
	for _, kind := range []string{"records", "report", "logs", "CLI -o json", "CLI logs", "history payloads", "Temporal SDK logs"} {
		for name, form := range forms {
			for _, v := range []string{extPassword, extAPIKey, extShort} {
				planted := artifacts{}
				for k, b := range a {
					planted.add(k, b.String())
				}
				planted.add(kind, "receiver said: "+form(v)+" (end)")
				if l := anyFormLeaks(planted, w.secrets()); len(l) != 1 || !strings.HasPrefix(l[0], kind+":") {
					t.Errorf("%q planted %s in %s was found as %v", v, name, kind, l)
				}
			}
		}
	}
}
