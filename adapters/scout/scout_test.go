package scout_test

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/adapters/scout"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// siteSecret is the test site's secret every machine token derives from.
var siteSecret = []byte("site-secret-of-the-test-rig")

// token is a machine's token under siteSecret.
func token(t testing.TB, machine string) string {
	t.Helper()
	tok, err := scout.MachineToken(siteSecret, machine)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

type rig struct {
	store  *firmwarefake.MemStore
	clk    *clock.Fake
	srv    *httptest.Server
	client *http.Client
	dir    string
	task   firmware.ScoutTask
}

// newRig offers machine m1 a task: the script, one artifact the worker
// holds as a file and one on an artifact server.
func newRig(t *testing.T, script string) *rig {
	t.Helper()
	ctx := context.Background()
	r := &rig{store: firmwarefake.NewMemStore(), clk: clock.NewFake(time.Now()), dir: t.TempDir()}
	sp := filepath.Join(r.dir, "upgrade.sh")
	must(t, os.WriteFile(sp, []byte(script), 0o755))
	local := filepath.Join(r.dir, "cx7-fw.bin")
	must(t, os.WriteFile(local, []byte("CX7 image"), 0o600))
	remote := []byte("CX7 signature")
	art := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != "" {
			http.Error(w, "a token leaked to the artifact server", http.StatusBadRequest)
			return
		}
		_, _ = w.Write(remote)
	}))
	t.Cleanup(art.Close)
	r.task = firmware.ScoutTask{ID: "scout-3f1c0a9e5b7d42e68c0d1f2a3b4c5d6e", MachineID: "m1", Component: firmware.CX7, Version: "28.47.2682",
		Script:    firmware.ScoutScript{Path: sp, SHA256: digest([]byte(script)), ExecutionTimeout: 20 * time.Second, DownloadTimeout: 10 * time.Second},
		Artifacts: []firmware.Artifact{{Filename: local}, {URL: art.URL + "/fw/cx7.sig?sig=abc", SHA256: digest(remote)}},
		Deadline:  r.clk.Now().Add(time.Hour)}
	_, err := r.store.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: firmware.WaitingForScoutUpgrade, Started: true, TaskID: r.task.ID, Deadline: r.task.Deadline})
	must(t, err)
	must(t, firmware.StoredScout{Store: r.store}.Offer(ctx, r.task))
	r.srv = httptest.NewTLSServer(&scout.Server{Store: r.store, Clock: r.clk, SiteSecret: siteSecret})
	t.Cleanup(r.srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(r.srv.Certificate())
	pool.AddCert(art.Certificate())
	tr := r.srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.RootCAs = pool
	r.client = &http.Client{Transport: tr}
	t.Cleanup(tr.CloseIdleConnections)
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// agent is machine m1's agent with its own token.
func (r *rig) agent(t testing.TB) *scout.Agent {
	return &scout.Agent{Server: r.srv.URL, Machine: "m1", Client: r.client, Token: token(t, "m1"), WorkDir: r.dir}
}

func TestAgentRunsTheScriptAndReports(t *testing.T) {
	script := `#!/bin/sh
set -e
echo "task=$HOSTFORGE_TASK_ID comp=$HOSTFORGE_FIRMWARE_COMPONENT ver=$HOSTFORGE_FIRMWARE_VERSION"
for f in "$@"; do echo "arg $(basename "$f"): $(cat "$f")"; done
i=0; while [ $i -lt 300 ]; do echo "progress line $i of a long flash log"; i=$((i+1)); done
echo done
`
	r := newRig(t, script)
	res, err := r.agent(t).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Task == nil || res.Report == nil || !res.Report.OK {
		t.Fatalf("result %+v", res)
	}
	stored, ok, err := r.store.Result(context.Background(), "m1", r.task.ID)
	if err != nil || !ok || !stored.OK {
		t.Fatalf("stored result %+v, %v, %v", stored, ok, err)
	}
	if len(stored.Output) > firmware.MaxOutput || !strings.HasSuffix(strings.TrimSpace(stored.Output), "done") {
		t.Errorf("stored output (%d bytes) is not the capped tail: %q", len(stored.Output), stored.Output)
	}
	// The reported task is no longer offered; a second run finds nothing.
	res, err = r.agent(t).Run(context.Background())
	if err != nil || res.Task != nil {
		t.Fatalf("second run = %+v, %v", res, err)
	}
	if entries, _ := filepath.Glob(filepath.Join(r.dir, "hostforge-scout-*")); len(entries) != 0 {
		t.Errorf("the task's files were left: %v", entries)
	}
}

func TestAgentReportsFailures(t *testing.T) {
	cases := []struct {
		name   string
		script string
		tamper func(r *rig)
		code   int
		output string
	}{
		{"the script fails", "#!/bin/sh\necho flint: -E- burn failed >&2\nexit 5\n", nil, 5, "burn failed"},
		{"an artifact does not match its digest", "#!/bin/sh\nexit 0\n", func(r *rig) {
			r.task.Artifacts[1].SHA256 = digest([]byte("something else"))
			_ = firmware.StoredScout{Store: r.store}.Offer(context.Background(), r.task)
		}, 2, "sha256"},
		{"the script runs past its timeout", "#!/bin/sh\nsleep 30\n", func(r *rig) {
			r.task.Script.ExecutionTimeout = time.Second
			_ = firmware.StoredScout{Store: r.store}.Offer(context.Background(), r.task)
		}, -1, "killed after the execution timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.script)
			if c.tamper != nil {
				c.tamper(r)
			}
			res, err := r.agent(t).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Report == nil || res.Report.OK || res.Report.ExitCode != c.code || !strings.Contains(res.Report.Output, c.output) {
				t.Fatalf("report %+v; want exit %d with %q", res.Report, c.code, c.output)
			}
			stored, ok, _ := r.store.Result(context.Background(), "m1", r.task.ID)
			if !ok || stored.OK || stored.Code != firmware.ScoutFailed.Code {
				t.Errorf("stored %+v", stored)
			}
		})
	}
}

func TestServerRefusals(t *testing.T) {
	r := newRig(t, "#!/bin/sh\nexit 0\n")
	ctx := context.Background()
	wrong := r.agent(t)
	wrong.Token = token(t, "m1") + "x"
	if _, err := wrong.Run(ctx); !scout.CredentialInvalid.Is(err) {
		t.Errorf("a malformed token: %v", err)
	}
	other := r.agent(t)
	other.Machine, other.Token = "m2", token(t, "m2")
	if res, err := other.Run(ctx); err != nil || res.Task != nil {
		t.Errorf("a machine without a task: %+v, %v", res, err)
	}
	// A report for another task is refused and stores nothing.
	if code := r.do(t, http.MethodPost, "/machines/m1/tasks/scout-0/report", token(t, "m1"), `{"ok":true}`); code != http.StatusConflict {
		t.Errorf("a report of another task: HTTP %d", code)
	}
	if _, ok, _ := r.store.Result(ctx, "m1", "scout-0"); ok {
		t.Error("a refused report was stored")
	}
	// A task past its deadline is no longer offered.
	r.clk.Advance(2 * time.Hour)
	if res, err := r.agent(t).Run(ctx); err != nil || res.Task != nil {
		t.Errorf("a task past its deadline: %+v, %v", res, err)
	}
}

// do sends one request to the rig's server with tok as the bearer token
// (none when empty) and returns the status; the body must not carry the
// task's ID unless it is 2xx.
func (r *rig) do(t *testing.T, method, path, tok, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, r.srv.URL+strings.TrimSuffix(scout.PathPrefix, "/")+path, strings.NewReader(body))
	must(t, err)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := r.client.Do(req)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 && strings.Contains(string(b), r.task.ID) {
		t.Errorf("%s %s refused with HTTP %d, yet its answer carries the task ID: %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// unchanged fails the test when the store moved: a result stored, the
// task no longer offered, the update record rewritten.
func (r *rig) unchanged(t *testing.T, before firmware.HostUpdate) {
	t.Helper()
	ctx := context.Background()
	if res, ok, _ := r.store.Result(ctx, "m1", r.task.ID); ok {
		t.Errorf("a result was stored: %+v", res)
	}
	if _, ok, _ := firmware.OfferedScoutTask(ctx, r.store, r.clk.Now(), "m1"); !ok {
		t.Error("the task is no longer offered to its machine")
	}
	if u, _, _ := r.store.Update(ctx, "m1"); u.Revision != before.Revision || u.Substate != before.Substate || u.TaskID != before.TaskID {
		t.Errorf("the update record moved: %+v, was %+v", u, before)
	}
}

// A host that holds machine m2's own valid token (m2 may be a tenant's
// host) can neither read machine m1's task, script or artifact nor
// report for it: 403, nothing returned, nothing stored.
func TestForgedRequestForAnotherMachineIsForbidden(t *testing.T) {
	r := newRig(t, "#!/bin/sh\nexit 0\n")
	ctx := context.Background()
	before, _, _ := r.store.Update(ctx, "m1")
	forged := token(t, "m2")
	base := "/machines/m1/tasks/" + r.task.ID
	for _, c := range []struct{ method, path, body string }{
		{http.MethodGet, "/machines/m1/task", ""},
		{http.MethodGet, base + "/script", ""},
		{http.MethodGet, base + "/artifacts/0", ""},
		{http.MethodPost, base + "/report", `{"task_id":"` + r.task.ID + `","ok":true}`},
		{http.MethodPost, base + "/report", `{"task_id":"` + r.task.ID + `","ok":false,"exit_code":1}`},
	} {
		if code := r.do(t, c.method, c.path, forged, c.body); code != http.StatusForbidden {
			t.Errorf("%s %s with m2's token: HTTP %d, want 403", c.method, c.path, code)
		}
	}
	// m1's own token, with a body that speaks for m2, is refused too.
	if code := r.do(t, http.MethodPost, base+"/report", token(t, "m1"), `{"task_id":"`+r.task.ID+`","ok":true,"machine_id":"m2"}`); code != http.StatusForbidden {
		t.Errorf("a report naming another machine in its body: HTTP %d, want 403", code)
	}
	// An agent configured with m2's token and m1's ID refuses to run.
	a := r.agent(t)
	a.Token = forged
	if _, err := a.Run(ctx); !scout.CredentialInvalid.Is(err) {
		t.Errorf("an agent with another machine's token: %v", err)
	}
	r.unchanged(t, before)
	// The real agent still gets its task and reports it.
	res, err := r.agent(t).Run(ctx)
	if err != nil || res.Report == nil || !res.Report.OK {
		t.Fatalf("m1's own agent after the forgeries: %+v, %v", res, err)
	}
	if stored, ok, _ := r.store.Result(ctx, "m1", r.task.ID); !ok || !stored.OK {
		t.Errorf("m1's own report was not stored: %+v", stored)
	}
}

// Every request needs a token the site secret made: none, the former
// fleet-wide bearer token, one made with another secret, one whose MAC
// was altered are all 401 and change nothing; a server without a site
// secret refuses everything.
func TestServerRequiresAMachineToken(t *testing.T) {
	r := newRig(t, "#!/bin/sh\nexit 0\n")
	ctx := context.Background()
	before, _, _ := r.store.Update(ctx, "m1")
	otherSite, err := scout.MachineToken([]byte("another-site-secret"), "m1")
	must(t, err)
	good := token(t, "m1")
	flipped := good[:len(good)-2] + map[bool]string{true: "A", false: "B"}[good[len(good)-2] != 'A'] + good[len(good)-1:]
	report := `{"task_id":"` + r.task.ID + `","ok":true}`
	for name, tok := range map[string]string{"no token": "", "a fleet-wide token": "tok-123", "another site's token": otherSite,
		"an altered MAC": flipped, "a token with its machine renamed": strings.Replace(good, "bTE", "bTI", 1)} {
		for _, c := range []struct{ method, path, body string }{
			{http.MethodGet, "/machines/m1/task", ""},
			{http.MethodPost, "/machines/m1/tasks/" + r.task.ID + "/report", report},
		} {
			if code := r.do(t, c.method, c.path, tok, c.body); code != http.StatusUnauthorized {
				t.Errorf("%s: %s %s: HTTP %d, want 401", name, c.method, c.path, code)
			}
		}
	}
	r.unchanged(t, before)

	bare := httptest.NewTLSServer(&scout.Server{Store: r.store, Clock: r.clk})
	defer bare.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, bare.URL+scout.PathPrefix+"machines/m1/tasks/"+r.task.ID+"/report", strings.NewReader(report))
	req.Header.Set("Authorization", "Bearer "+good)
	resp, err := bare.Client().Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a server without a site secret: HTTP %d, want 503", resp.StatusCode)
	}
	r.unchanged(t, before)
}

func TestMachineToken(t *testing.T) {
	a, b := token(t, "gpu-r1-u02"), token(t, "gpu-r1-u03")
	if a == b || a != token(t, "gpu-r1-u02") {
		t.Errorf("tokens: %q and %q", a, b)
	}
	if strings.Contains(a, string(siteSecret)) {
		t.Error("the token carries the site secret")
	}
	if m, ok := scout.TokenMachine(a); !ok || m != "gpu-r1-u02" {
		t.Errorf("TokenMachine = %q, %v", m, ok)
	}
	for _, bad := range []string{"", "tok-123", "hfs1.", "hfs1.Z3B1.", a + "=="} {
		if m, ok := scout.TokenMachine(bad); ok {
			t.Errorf("TokenMachine(%q) = %q", bad, m)
		}
	}
	if _, err := scout.MachineToken([]byte("short77"), "m1"); !scout.CredentialInvalid.Is(err) || !strings.Contains(err.Error(), "at least 8") {
		t.Errorf("a 7-character site secret: %v", err)
	}
	for _, m := range []string{"", "a/b", "a b", "x?y", "..", strings.Repeat("m", 256)} {
		if _, err := scout.MachineToken(siteSecret, m); !scout.CredentialInvalid.Is(err) {
			t.Errorf("machine %q: %v", m, err)
		}
	}
}

// The agent speaks to its server over verified TLS only: an http:// server
// or a client that skips verification is refused before any request.
func TestAgentRefusesPlainHTTPAndUnverifiedTLS(t *testing.T) {
	ctx := context.Background()
	hits := 0
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++; w.WriteHeader(http.StatusNoContent) }))
	defer plain.Close()
	a := &scout.Agent{Server: plain.URL, Machine: "m1", Token: token(t, "m1")}
	if _, err := a.Run(ctx); !scout.Rejected.Is(err) || !strings.Contains(err.Error(), "https://") {
		t.Errorf("an http:// server: %v", err)
	}
	if hits != 0 {
		t.Errorf("the agent sent %d requests to an http:// server", hits)
	}
	r := newRig(t, "#!/bin/sh\nexit 0\n")
	insecure := r.agent(t)
	insecure.Client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if _, err := insecure.Run(ctx); !scout.Rejected.Is(err) {
		t.Errorf("a client that does not verify TLS: %v", err)
	}
	for _, u := range []string{"ftp://x", "https://", "https://user:pw@host:1"} {
		bad := &scout.Agent{Server: u, Machine: "m1", Token: token(t, "m1")}
		if _, err := bad.Run(ctx); !scout.Rejected.Is(err) {
			t.Errorf("server %q: %v", u, err)
		}
	}
}

func TestAgentServerUnavailable(t *testing.T) {
	a := &scout.Agent{Server: "https://127.0.0.1:1", Machine: "m1", Token: token(t, "m1")}
	if _, err := a.Run(context.Background()); !scout.ServerUnavailable.Is(err) {
		t.Fatalf("err = %v", err)
	}
}
