package scout_test

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
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
func newRig(t *testing.T, script string, token string) *rig {
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
	r.task = firmware.ScoutTask{ID: "7-scout-1-0", MachineID: "m1", Component: firmware.CX7, Version: "28.47.2682",
		Script:    firmware.ScoutScript{Path: sp, SHA256: digest([]byte(script)), ExecutionTimeout: 20 * time.Second, DownloadTimeout: 10 * time.Second},
		Artifacts: []firmware.Artifact{{Filename: local}, {URL: art.URL + "/fw/cx7.sig?sig=abc", SHA256: digest(remote)}},
		Deadline:  r.clk.Now().Add(time.Hour)}
	_, err := r.store.PutUpdate(ctx, firmware.HostUpdate{MachineID: "m1", Substate: firmware.WaitingForScoutUpgrade, Started: true, TaskID: r.task.ID, Deadline: r.task.Deadline})
	must(t, err)
	must(t, firmware.StoredScout{Store: r.store}.Offer(ctx, r.task))
	r.srv = httptest.NewTLSServer(&scout.Server{Store: r.store, Clock: r.clk, Token: token})
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

func (r *rig) agent(token string) *scout.Agent {
	return &scout.Agent{Server: r.srv.URL, Machine: "m1", Client: r.client, Token: token, WorkDir: r.dir}
}

func TestAgentRunsTheScriptAndReports(t *testing.T) {
	script := `#!/bin/sh
set -e
echo "task=$HOSTFORGE_TASK_ID comp=$HOSTFORGE_FIRMWARE_COMPONENT ver=$HOSTFORGE_FIRMWARE_VERSION"
for f in "$@"; do echo "arg $(basename "$f"): $(cat "$f")"; done
i=0; while [ $i -lt 300 ]; do echo "progress line $i of a long flash log"; i=$((i+1)); done
echo done
`
	r := newRig(t, script, "tok-123")
	res, err := r.agent("tok-123").Run(context.Background())
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
	res, err = r.agent("tok-123").Run(context.Background())
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
			r := newRig(t, c.script, "")
			if c.tamper != nil {
				c.tamper(r)
			}
			res, err := r.agent("").Run(context.Background())
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
	r := newRig(t, "#!/bin/sh\nexit 0\n", "tok-123")
	ctx := context.Background()
	if _, err := r.agent("wrong").Run(ctx); !scout.Rejected.Is(err) {
		t.Errorf("a wrong token: %v", err)
	}
	other := r.agent("tok-123")
	other.Machine = "m2"
	if res, err := other.Run(ctx); err != nil || res.Task != nil {
		t.Errorf("a machine without a task: %+v, %v", res, err)
	}
	// A report for another task is refused and stores nothing.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.srv.URL+scout.PathPrefix+"machines/m1/tasks/7-scout-0-0/report", strings.NewReader(`{"ok":true}`))
	req.Header.Set("Authorization", "Bearer tok-123")
	resp, err := r.client.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("a report of another task: HTTP %d", resp.StatusCode)
	}
	if _, ok, _ := r.store.Result(ctx, "m1", "7-scout-0-0"); ok {
		t.Error("a refused report was stored")
	}
	// A task past its deadline is no longer offered.
	r.clk.Advance(2 * time.Hour)
	if res, err := r.agent("tok-123").Run(ctx); err != nil || res.Task != nil {
		t.Errorf("a task past its deadline: %+v, %v", res, err)
	}
	bad := &scout.Agent{Server: "ftp://x", Machine: "m1"}
	if _, err := bad.Run(ctx); !scout.Rejected.Is(err) {
		t.Errorf("a bad server URL: %v", err)
	}
}

func TestAgentServerUnavailable(t *testing.T) {
	a := &scout.Agent{Server: "https://127.0.0.1:1", Machine: "m1"}
	if _, err := a.Run(context.Background()); !scout.ServerUnavailable.Is(err) {
		t.Fatalf("err = %v", err)
	}
}
