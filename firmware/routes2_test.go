package firmware_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/internal/realdata"
)

// countingMetrics records what the workflow reports.
type countingMetrics struct {
	mu       sync.Mutex
	started  int
	done     int
	failures []string
	retries  int
	gauges   []firmware.Gauges
}

func (m *countingMetrics) Gauges(g firmware.Gauges) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gauges = append(m.gauges, g)
}

func (m *countingMetrics) UpdateStarted(target string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if target == firmware.TargetHost {
		m.started++
	}
}

func (m *countingMetrics) UpdateCompleted(target string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if target == firmware.TargetHost {
		m.done++
	}
}

func (m *countingMetrics) UpdateFailed(_, cause string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures = append(m.failures, cause)
}

func (m *countingMetrics) ReprovisionRetry() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.retries++
}

func TestMetricsCountStartedCompletedFailuresRetries(t *testing.T) {
	cases := []struct {
		name                   string
		taskEnd                string
		maxRetries             int
		started, done, retries int
		failures               []string
	}{
		{"compliant after one update", "", 5, 1, 1, 0, nil},
		{"every task fails until the budget is spent", "Killed", 2, 1, 0, 2, []string{"FIRMWARE_TASK_FAILED", "FIRMWARE_TASK_FAILED", "FIRMWARE_TASK_FAILED"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, firmware.Settings{MaxRetries: c.maxRetries})
			m := &countingMetrics{}
			w.exec.Metrics = m
			fb := w.dell("m1", firmware.HostReady)
			if c.taskEnd != "" {
				fb.AddImage("/fw/r750-bios-1.13.2.exe", fakesImage("Installed-159-1.8.2__BIOS.Setup.1-1", "1.13.2", c.taskEnd))
			}
			w.request("m1")
			_, _ = w.update("m1")
			if m.started != c.started || m.done != c.done || m.retries != c.retries || !reflect.DeepEqual(m.failures, c.failures) {
				t.Errorf("started %d completed %d retries %d failures %v; want %d %d %d %v", m.started, m.done, m.retries, m.failures, c.started, c.done, c.retries, c.failures)
			}
		})
	}
}

func TestGaugesCountAssignedHostsToo(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, firmware.Settings{MaxRetries: 1})
	for _, u := range []firmware.HostUpdate{
		{MachineID: "ready-active", Substate: firmware.WaitingForUpload},
		{MachineID: "assigned-active", Substate: firmware.CheckingFirmware, Assigned: true},
		{MachineID: "assigned-exhausted", Substate: firmware.FailedFirmwareUpgrade, RetryCount: 1, Assigned: true},
		{MachineID: "waiting-to-start", Substate: firmware.Pending},
	} {
		if _, err := w.store.PutUpdate(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	g, err := firmware.GaugesOf(ctx, w.store, firmware.Settings{MaxRetries: 1}, firmware.PassReport{Pending: 7, InMaintenance: 4, Ceiling: 10, Started: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	want := firmware.Gauges{Pending: 7, Active: 3, Exhausted: 1, InMaintenance: 4, Started: 2, Ceiling: 10}
	if g != want {
		t.Errorf("GaugesOf = %+v, want %+v", g, want)
	}
}

// stubResolver resolves every artifact to a local path, or fails.
type stubResolver struct {
	err   error
	calls int
}

func (r *stubResolver) Resolve(_ context.Context, a firmware.Artifact) (string, error) {
	r.calls++
	if r.err != nil {
		return "", r.err
	}
	return "/cache/" + filepath.Base(a.Filename), nil
}

func TestUploadResolvesArtifactsBeforeTheSlot(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		wantCode string
	}{
		{"resolved", nil, ""},
		{"missing file fails the attempt", firmware.ArtifactMissing.New("/fw/r750-bios-1.13.2.exe: no such file"), "FIRMWARE_ARTIFACT_MISSING"},
		{"a server that does not answer is transient until the budget", errors.New("dial tcp: connection refused"), "FIRMWARE_BMC_UNREACHABLE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, firmware.Settings{MaxRetries: 1})
			w.dell("m1", firmware.HostReady)
			res := &stubResolver{err: c.err}
			w.exec.Artifacts = res
			w.request("m1")
			out, err := w.update("m1")
			if c.wantCode == "" {
				if err != nil || out.Outcome != firmware.OutcomeDone {
					t.Fatalf("Update = %+v, %v", out, err)
				}
				w.handedBack("m1")
				return
			}
			if out.Failure == nil || out.Failure.Code != c.wantCode {
				t.Fatalf("Update = %+v, %v; want failure %s", out, err, c.wantCode)
			}
			if n, _ := w.store.UploadSlots(context.Background(), w.clk.Now()); n != 0 {
				t.Errorf("%d upload slots held", n)
			}
			if w.bmcs.Of("m1").State().Uploads != 0 {
				t.Error("uploaded an artifact that was never resolved")
			}
		})
	}
}

// uploadSpy records the upload requests.
type uploadSpy struct {
	firmware.BMCClient
	reqs []firmware.UploadRequest
}

func (s *uploadSpy) Upload(ctx context.Context, m string, u firmware.UploadRequest) (string, error) {
	s.reqs = append(s.reqs, u)
	return s.BMCClient.Upload(ctx, m, u)
}

func TestInstallOnlySpecifiedTargetsTheMatchedMembers(t *testing.T) {
	const cat = `
[host_models.r750]
vendor = "Dell"
model = "PowerEdge R750"
ordering = ["bmc"]
[host_models.r750.components.bmc]
current_version_reported_as = "^Installed-.*__iDRAC."
known_firmware = [ { version = "7.10.30.00", filename = "/fw/r750-idrac-7.10.exe", default = true, install_only_specified = true } ]
`
	w := newWorld(t, firmware.Settings{})
	w.cat = mustParse(t, "only.toml", cat)
	w.exec.Catalog = w.cat
	w.dell("m1", firmware.HostReady)
	spy := &uploadSpy{BMCClient: w.bmcs}
	w.exec.BMC = spy
	w.request("m1")
	if out, err := w.update("m1"); err != nil || out.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", out, err)
	}
	if len(spy.reqs) != 1 || !reflect.DeepEqual(spy.reqs[0].Targets, []string{"Installed-25227-6.00.30.00__iDRAC.Embedded.1-1"}) {
		t.Errorf("upload requests %+v; want one targeting the installed iDRAC member", spy.reqs)
	}
}

func TestScoutSegment(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"Nvidia", "nvidia", true},
		{"PowerEdge R750", "poweredge_r750", true},
		{"GB200 NVL", "gb200_nvl", true},
		{"combinedbmcuefi", "combinedbmcuefi", true},
		{"sys-821ge_tnhr", "sys-821ge_tnhr", true},
		{"../etc", "", false},
		{"a/b", "", false},
		{"ThinkSystem SR670 V2.1", "", false},
		{"   ", "", false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := firmware.ScoutSegment(c.in)
			if got != c.want || ok != c.ok {
				t.Errorf("ScoutSegment(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestParseScoutMetadata(t *testing.T) {
	real := realdata.Read(t, "firmware", "scout", "nvidia", "dgxh100", "cx7", "metadata.toml")
	cases := []struct {
		name       string
		in         string
		exec, down time.Duration
		err        string
	}{
		{"the shipped CX7 metadata", string(real), 2 * time.Hour, 10 * time.Minute, ""},
		{"unknown field", "execution_timeout_seconds = 1\nartifact_download_timeout_seconds = 1\nscript = \"x\"\n", 0, 0, "script"},
		{"zero", "execution_timeout_seconds = 0\nartifact_download_timeout_seconds = 1\n", 0, 0, "above zero"},
		{"negative", "execution_timeout_seconds = 10\nartifact_download_timeout_seconds = -1\n", 0, 0, "above zero"},
		{"missing", "execution_timeout_seconds = 10\n", 0, 0, "artifact_download_timeout_seconds is missing"},
		{"a string", "execution_timeout_seconds = \"10\"\nartifact_download_timeout_seconds = 1\n", 0, 0, "execution_timeout_seconds"},
		{"over a day", "execution_timeout_seconds = 90000\nartifact_download_timeout_seconds = 1\n", 0, 0, "at most"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, d, err := firmware.ParseScoutMetadata([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one naming %q", err, c.err)
				}
				return
			}
			if err != nil || e != c.exec || d != c.down {
				t.Fatalf("= %s, %s, %v; want %s, %s", e, d, err, c.exec, c.down)
			}
		})
	}
}

func FuzzParseScoutMetadata(f *testing.F) {
	if dir, ok := realdata.Dir(); ok {
		if b, err := os.ReadFile(filepath.Join(dir, "firmware", "scout", "nvidia", "dgxh100", "cx7", "metadata.toml")); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("execution_timeout_seconds = 7200\nartifact_download_timeout_seconds = 600\n"))
	f.Add([]byte("execution_timeout_seconds = 1e3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, d, err := firmware.ParseScoutMetadata(b)
		if err == nil && (e <= 0 || d <= 0 || e > 24*time.Hour || d > 24*time.Hour) {
			t.Fatalf("accepted out-of-range timeouts %s %s", e, d)
		}
	})
}

func TestScoutDirLookup(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "nvidia", "dgxh100", "cx7")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	script := []byte("#!/bin/sh\nflint -d \"$1\" burn\n")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(pkg, "upgrade.sh"), script, 0o755))
	must(os.WriteFile(filepath.Join(pkg, "metadata.toml"), realdata.Read(t, "firmware", "scout", "nvidia", "dgxh100", "cx7", "metadata.toml"), 0o644))
	broken := filepath.Join(dir, "dell", "poweredge_r750", "bmc")
	must(os.MkdirAll(broken, 0o755))
	must(os.WriteFile(filepath.Join(broken, "upgrade.sh"), script, 0o755))

	d := firmware.ScoutDir{Dir: dir}
	ctx := context.Background()
	s, ok, err := d.Lookup(ctx, "Nvidia", "DGXH100", firmware.CX7)
	if err != nil || !ok {
		t.Fatalf("Lookup = %v, %v", ok, err)
	}
	sum := sha256.Sum256(script)
	if s.Path != filepath.Join(pkg, "upgrade.sh") || s.ExecutionTimeout != 2*time.Hour || s.DownloadTimeout != 10*time.Minute || s.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("script %+v", s)
	}
	if dl := firmware.ScoutDeadline(s, 2); dl != 30*time.Second+2*time.Hour+20*time.Minute+30*time.Minute {
		t.Errorf("deadline %s", dl)
	}
	if dl := firmware.ScoutDeadline(firmware.ScoutScript{ExecutionTimeout: 4 * time.Hour, DownloadTimeout: time.Hour}, 3); dl != 5*time.Hour {
		t.Errorf("deadline %s, want the 5 h cap", dl)
	}
	if _, ok, err := d.Lookup(ctx, "Nvidia", "DGXH100", firmware.BMC); ok || err != nil {
		t.Errorf("a component without a script: %v, %v", ok, err)
	}
	if _, ok, err := d.Lookup(ctx, "Nvidia", "../../etc", firmware.CX7); ok || err != nil {
		t.Errorf("a model that is not a segment: %v, %v", ok, err)
	}
	if _, _, err := d.Lookup(ctx, "Dell", "PowerEdge R750", firmware.BMC); !firmware.CatalogInvalid.Is(err) {
		t.Errorf("a script without metadata: %v; want FIRMWARE_CATALOG_INVALID", err)
	}
}

func TestOfferedScoutTask(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, firmware.Settings{})
	fb := w.dgx("m-dgx", firmware.HostReady)
	fb.SetMember(fakes.FirmwareMember{ID: "HGX_FW_BMC_0", Version: "HGX-23.04"})
	scripts := firmwarefake.NewScoutScripts()
	scripts.Add("Nvidia", "DGXH100", firmware.CX7, firmware.ScoutScript{Path: "/opt/scripts/nvidia/dgxh100/cx7/upgrade.sh", SHA256: "ab", ExecutionTimeout: 10 * time.Minute, DownloadTimeout: 10 * time.Minute})
	w.exec.Scout, w.exec.ScoutScripts = firmware.StoredScout{Store: w.store}, scripts
	w.request("m-dgx")
	// Run the body until its first agent step offered the task.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	rt := w.runtime()
	rt.OnEvent = func(e flow.Event) {
		if e.Step == firmware.StepWaitingForScoutUpgrade {
			cancel()
		}
	}
	if _, err := firmware.Update(runCtx, rt, firmware.UpdateInput{MachineID: "m-dgx"}); err == nil {
		t.Fatal("the body ended before the agent reported")
	}
	task, ok, err := firmware.OfferedScoutTask(ctx, w.store, w.clk.Now(), "m-dgx")
	if err != nil || !ok || task.Component != firmware.CX7 || task.Version != "28.47.2682" || len(task.Artifacts) != 1 {
		t.Fatalf("OfferedScoutTask = %+v, %v, %v", task, ok, err)
	}
	if _, ok, _ := firmware.OfferedScoutTask(ctx, w.store, task.Deadline, "m-dgx"); ok {
		t.Error("a task past its deadline is still offered")
	}
	if _, ok, _ := firmware.OfferedScoutTask(ctx, w.store, w.clk.Now(), "m-other"); ok {
		t.Error("a machine without an update has a task")
	}
	if err := firmware.ReportScout(ctx, w.store, w.clk.Now(), "m-dgx", "not-"+task.ID, true, ""); !firmware.RequestRefused.Is(err) {
		t.Errorf("a report of another task: %v", err)
	}
	// The agent flashes the cards (staged until the drain) and reports.
	if err := fb.Install(task.Artifacts[0].Filename, false); err != nil {
		t.Fatal(err)
	}
	if err := firmware.ReportScout(ctx, w.store, w.clk.Now(), "m-dgx", task.ID, true, strings.Repeat("x", 4000)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := firmware.OfferedScoutTask(ctx, w.store, w.clk.Now(), "m-dgx"); ok {
		t.Error("a reported task is still offered")
	}
	res, _, _ := w.store.Result(ctx, "m-dgx", task.ID)
	if len(res.Output) != firmware.MaxOutput {
		t.Errorf("output kept %d bytes, want %d", len(res.Output), firmware.MaxOutput)
	}
	// The body picks the persisted report up and finishes the update.
	if out, err := w.update("m-dgx"); err != nil || out.Outcome != firmware.OutcomeDone {
		t.Fatalf("Update = %+v, %v", out, err)
	}
	if _, ok, _ := w.store.ScoutTask(ctx, "m-dgx"); ok {
		t.Error("the agent task outlived the update")
	}
}

func TestExplorerObservesHostsWithoutRequests(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, firmware.Settings{})
	w.dell("d1", firmware.HostReady)
	w.dell("d2", firmware.HostReady)
	w.lenovo("busy", firmware.HostReady)
	w.dell("down", firmware.HostAssigned)
	w.bmcs.Of("down").Fail("inventory", 1, fmt.Errorf("no route to host: %w", hostforge.ErrUnavailable))
	w.request("busy")
	x := &firmware.Explorer{Store: w.store, Hosts: w.hosts, BMC: w.bmcs, Catalog: w.cat, Clock: w.clk, MaxAge: time.Hour}
	rep, err := x.Explore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Observed, []string{"d1", "d2"}) || len(rep.Failed) != 1 || rep.Failed["down"] == "" {
		t.Fatalf("report %+v", rep)
	}
	o, ok, _ := w.store.Observed(ctx, "d1")
	if !ok || len(o.Reported[firmware.UEFI]) != 1 || o.Reported[firmware.UEFI][0].Version != "1.8.2" {
		t.Errorf("observation %+v", o)
	}
	// The manager now sees the drift and selects the observed hosts.
	max := 10
	m := &firmware.Manager{Store: w.store, Hosts: w.hosts, Catalog: w.cat, Clock: w.clk,
		Settings: firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: &max}}
	pass, err := m.Pass(ctx)
	if err != nil || !reflect.DeepEqual(pass.Started, []string{"d1", "d2"}) {
		t.Fatalf("pass %+v, %v", pass, err)
	}
	// Fresh observations are not read again; the failed host is retried.
	rep, err = x.Explore(ctx)
	if err != nil || len(rep.Observed) != 1 || rep.Observed[0] != "down" {
		t.Fatalf("second explore %+v, %v", rep, err)
	}
}
