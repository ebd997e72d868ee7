package dhcp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/fakes"
)

// recorder wraps a Dialer and records every Remote call as "op arg".
type recorder struct {
	d   dhcp.Dialer
	mu  sync.Mutex
	log []string
	// exit, when set, overrides the exit status of commands it returns ok for.
	exit func(cmd string) (int, bool)
}

func (r *recorder) Dial(ctx context.Context) (dhcp.Remote, error) {
	r.add("dial", "")
	rem, err := r.d.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &recRemote{Remote: rem, r: r}, nil
}

func (r *recorder) add(op, arg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, strings.TrimSpace(op+" "+arg))
}

func (r *recorder) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

type recRemote struct {
	dhcp.Remote
	r *recorder
}

func (x *recRemote) Hash(ctx context.Context, p string) (string, error) {
	x.r.add("hash", p)
	return x.Remote.Hash(ctx, p)
}

func (x *recRemote) Upload(ctx context.Context, p string, data []byte) error {
	x.r.add("upload", p)
	return x.Remote.Upload(ctx, p, data)
}

func (x *recRemote) Run(ctx context.Context, cmd string) (dhcp.Output, error) {
	x.r.add("run", cmd)
	if x.r.exit != nil {
		if code, ok := x.r.exit(cmd); ok {
			return dhcp.Output{Exit: code, Output: []byte("forced by the test\n")}, nil
		}
	}
	return x.Remote.Run(ctx, cmd)
}

var node1 = dhcp.Entry{Hostname: "gpu-node-01", MAC: "0A:1B:2C:3D:4E:5F", IP: "10.10.0.3"}

func newPhase(t *testing.T, cfg dhcp.Config) (*fakes.Site, *recorder, *dhcp.Phase) {
	t.Helper()
	site := fakes.NewSite()
	if err := site.DHCP.UseConfig(cfg); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{d: site.DHCP}
	return site, rec, dhcp.New(rec, cfg, nil)
}

func commands(calls []string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, "hash ") || strings.HasPrefix(c, "run ") {
			n++
		}
	}
	return n
}

func TestChangedContentUploadsValidatesRestarts(t *testing.T) {
	for _, flavour := range []dhcp.Flavour{dhcp.ISC, dhcp.Kea} {
		t.Run(string(flavour), func(t *testing.T) {
			site, rec, p := newPhase(t, dhcp.Config{Flavour: flavour})
			cfg := p.Config()
			res, err := p.Configure(context.Background(), node1)
			if err != nil {
				t.Fatal(err)
			}
			want, file, _ := dhcp.Render(flavour, cfg.Dir, node1)
			if !res.Changed || res.Path != file || res.SHA256 != dhcp.SHA256(want) {
				t.Fatalf("result %+v", res)
			}
			got, ok := site.DHCP.File(file)
			if !ok || !bytes.Equal(got, want) {
				t.Fatalf("remote file %s = %q, want the rendered bytes %q", file, got, want)
			}
			wantCalls := []string{
				"dial",
				"hash " + file,
				"run mkdir -p -- '" + cfg.Dir + "'",
				"upload " + file,
				"run " + cfg.ConfigTest,
				"run " + cfg.Restart,
				"run " + cfg.Status,
			}
			if calls := rec.calls(); strings.Join(calls, "\n") != strings.Join(wantCalls, "\n") {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(wantCalls, "\n"))
			}
			if n := site.DHCP.Restarts(); n != 1 {
				t.Fatalf("restarts = %d, want 1", n)
			}
			c := site.Calls()[fakes.SysDHCP]
			if c.Ops["upload"] != 1 {
				t.Fatalf("transfers = %d, want 1", c.Ops["upload"])
			}
		})
	}
}

func TestUnchangedContentSkips(t *testing.T) {
	site, rec, p := newPhase(t, dhcp.Config{})
	ctx := context.Background()
	if _, err := p.Configure(ctx, node1); err != nil {
		t.Fatal(err)
	}
	before := site.Calls()
	restarts := site.DHCP.Restarts()
	n := len(rec.calls())

	res, err := p.Configure(ctx, node1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed {
		t.Fatalf("second run changed: %+v", res)
	}
	calls := rec.calls()[n:]
	if commands(calls) != 1 || calls[1] != "hash "+res.Path {
		t.Fatalf("skip path calls %q, want exactly one remote command (the hash)", calls)
	}
	d := site.Calls().Sub(before)[fakes.SysDHCP]
	if d.Ops["upload"] != 0 || d.Ops["run"] != 0 || d.Writes != 0 {
		t.Fatalf("skip path performed writes: %+v", d)
	}
	if site.DHCP.Restarts() != restarts {
		t.Fatalf("skip path restarted the service")
	}
}

func TestChangedEntryReplacesFile(t *testing.T) {
	site, _, p := newPhase(t, dhcp.Config{})
	ctx := context.Background()
	if _, err := p.Configure(ctx, node1); err != nil {
		t.Fatal(err)
	}
	moved := node1
	moved.IP = "10.10.0.99"
	res, err := p.Configure(ctx, moved)
	if err != nil || !res.Changed {
		t.Fatalf("%+v, %v", res, err)
	}
	got, _ := site.DHCP.File(res.Path)
	if !bytes.Contains(got, []byte("fixed-address 10.10.0.99;")) || site.DHCP.Restarts() != 2 {
		t.Fatalf("file %q, restarts %d", got, site.DHCP.Restarts())
	}
}

func TestMalformedInputRefusedBeforeAnyRemoteCall(t *testing.T) {
	for _, tt := range malformedEntries {
		t.Run(tt.name, func(t *testing.T) {
			site, rec, p := newPhase(t, dhcp.Config{})
			_, err := p.Configure(context.Background(), tt.entry)
			if !dhcp.EntryInvalid.Is(err) {
				t.Fatalf("err %v, want DHCP_ENTRY_INVALID", err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("failure %q does not name the field %s", err, tt.field)
			}
			if calls := rec.calls(); len(calls) != 0 {
				t.Fatalf("remote calls before validation: %q", calls)
			}
			if len(site.DHCP.Paths()) != 0 || site.Calls()[fakes.SysDHCP].Reads != 0 {
				t.Fatalf("something reached the DHCP server")
			}
		})
	}
}

func TestInvalidSettingsRefused(t *testing.T) {
	site := fakes.NewSite()
	p := dhcp.New(site.DHCP, dhcp.Config{Flavour: "dnsmasq"}, nil)
	_, err := p.Configure(context.Background(), node1)
	if !dhcp.SettingsInvalid.Is(err) || !strings.Contains(err.Error(), "flavour") {
		t.Fatalf("err %v, want DHCP_SETTINGS_INVALID naming flavour", err)
	}
	if site.Calls()[fakes.SysDHCP].Reads != 0 {
		t.Fatal("the DHCP server was contacted")
	}
}

func TestRemoteFailuresAreClassified(t *testing.T) {
	timeout := &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: "run", Deadline: dhcp.DeadlineCommand, Limit: 2 * time.Minute, Err: context.DeadlineExceeded}
	tests := []struct {
		name     string
		op       string
		err      error
		code     *hostforge.Spec
		contains string
	}{
		{"host key changed", "connect", dhcp.ErrHostKey, dhcp.HostKeyRejected, ""},
		{"auth refused", "connect", fmt.Errorf("ssh: unable to authenticate: %w", hostforge.ErrUnauthorized), dhcp.AuthFailed, ""},
		{"unreachable", "connect", fmt.Errorf("dial tcp: connection refused: %w", hostforge.ErrUnavailable), dhcp.Unreachable, ""},
		{"unclassified dial error", "connect", errors.New("boom"), dhcp.Unreachable, ""},
		{"hash times out naming its deadline", "hash", timeout, dhcp.Timeout, "command deadline (2m0s)"},
		{"hash transport", "hash", &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "hash", Err: errors.New("EOF")}, dhcp.Transport, ""},
		{"upload fails", "upload", &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "upload", Err: errors.New("permission denied")}, dhcp.TransferFailed, ""},
		{"unclassified upload error", "upload", errors.New("boom"), dhcp.TransferFailed, ""},
		{"transfer deadline", "upload", &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: "upload", Deadline: dhcp.DeadlineTransfer, Limit: time.Second}, dhcp.Timeout, "transfer deadline (1s)"},
		{"command transport", "run", errors.New("session EOF"), dhcp.Transport, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site, _, p := newPhase(t, dhcp.Config{})
			site.Inject(fakes.SysDHCP, tt.op, 1, tt.err)
			_, err := p.Configure(context.Background(), node1)
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != tt.code.Code {
				t.Fatalf("err %v, want %s", err, tt.code.Code)
			}
			if f.Owner == "" || f.Action == "" || f.Phase != dhcp.PhaseName {
				t.Fatalf("failure lacks owner, action or phase: %+v", f.Spec)
			}
			if tt.contains != "" && !strings.Contains(f.Error(), tt.contains) {
				t.Fatalf("failure %q does not say %q", f, tt.contains)
			}
			if site.DHCP.Restarts() != 0 {
				t.Fatalf("the service was restarted after a failure")
			}
		})
	}
}

func TestCancelledContextIsCancelled(t *testing.T) {
	_, _, p := newPhase(t, dhcp.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Configure(ctx, node1)
	if !hostforge.Cancelled.Is(err) {
		t.Fatalf("err %v, want CANCELLED", err)
	}
}

func TestNonZeroHashAndPrepareAreBestEffort(t *testing.T) {
	site, rec, p := newPhase(t, dhcp.Config{})
	rec.exit = func(cmd string) (int, bool) {
		if strings.HasPrefix(cmd, "mkdir ") {
			return 1, true
		}
		return 0, false
	}
	// The directory exists, so the upload succeeds although mkdir "failed".
	site.DHCP.Mkdir(p.Config().Dir)
	res, err := p.Configure(context.Background(), node1)
	if err != nil || !res.Changed {
		t.Fatalf("%+v, %v; a failed prepare command must not stop the phase", res, err)
	}

	// A missing directory that mkdir cannot create surfaces as the upload's failure.
	site2, rec2, p2 := newPhase(t, dhcp.Config{})
	rec2.exit = rec.exit
	_, err = p2.Configure(context.Background(), node1)
	if !dhcp.TransferFailed.Is(err) {
		t.Fatalf("err %v, want DHCP_TRANSFER_FAILED", err)
	}
	if site2.DHCP.Restarts() != 0 {
		t.Fatal("restarted after a failed transfer")
	}
}

func TestUnreadableRemoteFileIsUploaded(t *testing.T) {
	site, _, p := newPhase(t, dhcp.Config{})
	_, file, _ := dhcp.Render(dhcp.ISC, p.Config().Dir, node1)
	site.DHCP.PutFile(file, []byte("stale content\n"))
	res, err := p.Configure(context.Background(), node1)
	if err != nil || !res.Changed {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestServiceRefusalQuarantinesFileAndRerunRetries(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(site *fakes.Site, dir string)
		fix    func(site *fakes.Site, dir string)
		code   *hostforge.Spec
	}{
		{
			"config test refuses another host's broken file",
			func(site *fakes.Site, dir string) { site.DHCP.PutFile(dir+"/other.conf", []byte("host other {\n")) },
			func(site *fakes.Site, dir string) { site.DHCP.PutFile(dir+"/other.conf", []byte("")) },
			dhcp.ConfigRejected,
		},
		{
			"restart fails",
			func(site *fakes.Site, _ string) { site.DHCP.SetBroken(true) },
			func(site *fakes.Site, _ string) { site.DHCP.SetBroken(false) },
			dhcp.RestartFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site, _, p := newPhase(t, dhcp.Config{})
			dir := p.Config().Dir
			tt.break_(site, dir)
			_, err := p.Configure(context.Background(), node1)
			if !tt.code.Is(err) {
				t.Fatalf("err %v, want %s", err, tt.code.Code)
			}
			_, file, _ := dhcp.Render(dhcp.ISC, dir, node1)
			if _, ok := site.DHCP.File(file); ok {
				t.Fatalf("the refused file is still at %s", file)
			}
			if _, ok := site.DHCP.File(file + ".rejected"); !ok {
				t.Fatalf("the refused file was not kept at %s.rejected", file)
			}
			tt.fix(site, dir)
			res, err := p.Configure(context.Background(), node1)
			if err != nil || !res.Changed {
				t.Fatalf("rerun after the fix: %+v, %v; want an upload and restart", res, err)
			}
			if site.DHCP.Restarts() != 1 || !site.DHCP.Active() {
				t.Fatalf("restarts %d active %v", site.DHCP.Restarts(), site.DHCP.Active())
			}
		})
	}
}

func TestParallelEnrollmentsSerialiseRestarts(t *testing.T) {
	site, _, p := newPhase(t, dhcp.Config{})
	// Widen each restart so that overlapping restarts would be seen.
	site.DHCP.DuringRestart(func() { time.Sleep(3 * time.Millisecond) })
	const n = 10
	entries := make([]dhcp.Entry, n)
	for i := range entries {
		entries[i] = dhcp.Entry{Hostname: fmt.Sprintf("node-%02d", i), MAC: fmt.Sprintf("0a:00:00:00:01:%02x", i), IP: fmt.Sprintf("10.10.1.%d", i+10)}
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = p.Configure(context.Background(), entries[i])
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want, file, _ := dhcp.Render(dhcp.ISC, p.Config().Dir, e)
		got, ok := site.DHCP.File(file)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("%s holds %q, want %q", file, got, want)
		}
	}
	if got := len(site.DHCP.Paths()); got != n {
		t.Fatalf("%d files on the server, want %d: %q", got, n, site.DHCP.Paths())
	}
	if site.DHCP.Restarts() != n {
		t.Fatalf("restarts = %d, want %d", site.DHCP.Restarts(), n)
	}
	if m := site.DHCP.MaxConcurrentRestarts(); m != 1 {
		t.Fatalf("%d restarts ran at once, want them serialised", m)
	}
}

func TestWaitingForTheLockHonoursContext(t *testing.T) {
	site, _, p := newPhase(t, dhcp.Config{})
	release := make(chan struct{})
	entered := make(chan struct{})
	var once sync.Once
	site.DHCP.DuringRestart(func() {
		once.Do(func() { close(entered) })
		<-release
	})
	done := make(chan error, 1)
	go func() {
		_, err := p.Configure(context.Background(), node1)
		done <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	other := dhcp.Entry{Hostname: "node-02", MAC: "0a:00:00:00:00:02", IP: "10.10.0.4"}
	_, err := p.Configure(ctx, other)
	if !hostforge.Cancelled.Is(err) {
		t.Fatalf("err %v, want CANCELLED while the lock is held", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
