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
	// fail, when set, fails the calls it returns an error for.
	fail func(op, arg string) error
}

func (r *recorder) Dial(ctx context.Context) (dhcp.Remote, error) {
	r.add("dial", "")
	rem, err := r.d.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return &recRemote{Remote: rem, r: r}, nil
}

func (r *recorder) add(op, arg string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, strings.TrimSpace(op+" "+arg))
	if r.fail != nil {
		return r.fail(op, arg)
	}
	return nil
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

func (x *recRemote) Hash(ctx context.Context, paths ...string) ([]string, error) {
	if err := x.r.add("hash", strings.Join(paths, " ")); err != nil {
		return nil, err
	}
	return x.Remote.Hash(ctx, paths...)
}

func (x *recRemote) Read(ctx context.Context, p string) ([]byte, bool, error) {
	if err := x.r.add("read", p); err != nil {
		return nil, false, err
	}
	return x.Remote.Read(ctx, p)
}

func (x *recRemote) Upload(ctx context.Context, p string, data []byte) error {
	if err := x.r.add("upload", p); err != nil {
		return err
	}
	return x.Remote.Upload(ctx, p, data)
}

func (x *recRemote) Remove(ctx context.Context, p string) error {
	if err := x.r.add("remove", p); err != nil {
		return err
	}
	return x.Remote.Remove(ctx, p)
}

func (x *recRemote) Lock(ctx context.Context, p string) (func() error, error) {
	if err := x.r.add("lock", p); err != nil {
		return nil, err
	}
	unlock, err := x.Remote.Lock(ctx, p)
	if err != nil {
		return nil, err
	}
	return func() error {
		_ = x.r.add("unlock", p)
		return unlock()
	}, nil
}

func (x *recRemote) Run(ctx context.Context, cmd string) (dhcp.Output, error) {
	if err := x.r.add("run", cmd); err != nil {
		return dhcp.Output{}, err
	}
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
			backup := dhcp.BackupPath(file)
			wantCalls := []string{
				"dial",
				"hash " + file + " " + backup,
				"run mkdir -p -- '" + cfg.Dir + "'",
				// The server-wide lock covers everything from the backup on.
				"lock " + cfg.Dir,
				"hash " + file + " " + backup,
				"read " + file,
				"upload " + backup,
				"upload " + file,
				"run " + cfg.ConfigTest,
				"run " + cfg.Restart,
				"run " + cfg.Status,
				"remove " + backup,
				"unlock " + cfg.Dir,
			}
			if calls := rec.calls(); strings.Join(calls, "\n") != strings.Join(wantCalls, "\n") {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(wantCalls, "\n"))
			}
			if n := site.DHCP.Restarts(); n != 1 {
				t.Fatalf("restarts = %d, want 1", n)
			}
			c := site.Calls()[fakes.SysDHCP]
			if c.Ops["upload"] != 2 || c.Ops["lock"] != 1 {
				t.Fatalf("transfers = %d, locks = %d; want 2 (backup, host file) and 1", c.Ops["upload"], c.Ops["lock"])
			}
			if paths := site.DHCP.Paths(); len(paths) != 1 || paths[0] != file {
				t.Fatalf("the server holds %q, want only %s (no backup left)", paths, file)
			}
			if site.DHCP.Loaded()[file] != res.SHA256 {
				t.Fatalf("the service did not load %s", file)
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
	if commands(calls) != 1 || calls[1] != "hash "+res.Path+" "+dhcp.BackupPath(res.Path) {
		t.Fatalf("skip path calls %q, want exactly one remote command (the hash of the file and its backup)", calls)
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
		{"lock cannot be taken", "lock", &dhcp.RemoteError{Kind: dhcp.KindLock, Op: "lock", Err: errors.New("flock: not found")}, dhcp.LockFailed, "flock: not found"},
		{"lock wait times out", "lock", &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: "lock", Deadline: dhcp.DeadlineCommand, Limit: time.Second}, dhcp.Timeout, "waiting for the DHCP server's configuration lock"},
		{"reading the current file fails", "read", &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "read", Err: errors.New("permission denied")}, dhcp.TransferFailed, ""},
		{"a deadline reported as context.DeadlineExceeded is a timeout", "hash", fmt.Errorf("sha256sum: %w", context.DeadlineExceeded), dhcp.Timeout, ""},
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

	// A missing directory that mkdir cannot create surfaces as the lock's
	// failure, which names it; nothing is written.
	site2, rec2, p2 := newPhase(t, dhcp.Config{})
	rec2.exit = rec.exit
	_, err = p2.Configure(context.Background(), node1)
	if !dhcp.LockFailed.Is(err) || !strings.Contains(err.Error(), p2.Config().Dir) {
		t.Fatalf("err %v, want DHCP_LOCK_FAILED naming the directory", err)
	}
	if site2.DHCP.Restarts() != 0 || len(site2.DHCP.Paths()) != 0 {
		t.Fatal("something was written or restarted after the lock failed")
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

// A refused config test, a failed restart or an inactive service restores
// the host's previous file — a valid file is never moved aside because of
// another host's file — and the service ends up running on it.
func TestRefusedChangeRollsBack(t *testing.T) {
	moved := node1
	moved.IP = "10.10.0.50"
	other := dhcp.Entry{Hostname: "node-02", MAC: "0a:00:00:00:00:02", IP: "10.10.0.4"}
	tests := []struct {
		name     string
		break_   func(site *fakes.Site, rec *recorder, dir string)
		fix      func(site *fakes.Site, rec *recorder, dir string)
		code     *hostforge.Spec
		says     string
		restarts int // restarts the failed change made, rollback included
	}{
		{
			"config test refuses another host's broken file",
			func(site *fakes.Site, _ *recorder, dir string) {
				site.DHCP.PutFile(dir+"/other.conf", []byte("host other {\n"))
			},
			func(site *fakes.Site, _ *recorder, dir string) { site.DHCP.PutFile(dir+"/other.conf", []byte("")) },
			dhcp.ConfigRejected, "the service was not restarted and still runs on the configuration it had", 0,
		},
		{
			"restart fails once",
			func(site *fakes.Site, _ *recorder, _ string) { site.DHCP.FailRestarts(1) },
			func(*fakes.Site, *recorder, string) {},
			dhcp.RestartFailed, "restarted the service on it: the service is running", 1,
		},
		{
			"service inactive after its restart",
			func(_ *fakes.Site, rec *recorder, _ string) {
				n := 0
				rec.exit = func(cmd string) (int, bool) {
					if cmd == dhcp.Defaults(dhcp.ISC).Status {
						n++
						return 3, n == 1
					}
					return 0, false
				}
			},
			func(_ *fakes.Site, rec *recorder, _ string) { rec.exit = nil },
			dhcp.ServiceInactive, "restarted the service on it: the service is running", 2,
		},
		{
			"restart session breaks",
			func(_ *fakes.Site, rec *recorder, _ string) {
				n := 0
				rec.fail = func(op, arg string) error {
					if op == "run" && arg == dhcp.Defaults(dhcp.ISC).Restart {
						n++
						if n == 1 {
							return &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Target: arg, Err: errors.New("EOF")}
						}
					}
					return nil
				}
			},
			func(_ *fakes.Site, rec *recorder, _ string) { rec.fail = nil },
			dhcp.Transport, "restarted the service on it: the service is running", 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site, rec, p := newPhase(t, dhcp.Config{})
			dir := p.Config().Dir
			ctx := context.Background()
			before, err := p.Configure(ctx, node1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Configure(ctx, other); err != nil {
				t.Fatal(err)
			}
			restarts := site.DHCP.Restarts()
			tt.break_(site, rec, dir)
			_, err = p.Configure(ctx, moved)
			if !tt.code.Is(err) {
				t.Fatalf("err %v, want %s", err, tt.code.Code)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("failure %q does not say %q", err, tt.says)
			}
			// The host's previous, valid file is back in place; the other
			// host's file is untouched; no backup is left.
			if got, _ := site.DHCP.File(before.Path); dhcp.SHA256(got) != before.SHA256 {
				t.Fatalf("%s holds %q after the rollback, want the previous file", before.Path, got)
			}
			want := []string{dir + "/gpu-node-01.conf", dir + "/node-02.conf"}
			if paths := site.DHCP.Paths(); !sameStrings(paths, want) && !sameStrings(paths, append(want, dir+"/other.conf")) {
				t.Fatalf("server files %q, want %q (nothing moved aside, no backup left)", paths, want)
			}
			if !site.DHCP.Active() || site.DHCP.Loaded()[before.Path] != before.SHA256 {
				t.Fatalf("active %v, loaded %v: want the service running on the previous file", site.DHCP.Active(), site.DHCP.Loaded())
			}
			if got := site.DHCP.Restarts() - restarts; got != tt.restarts {
				t.Fatalf("%d successful restarts during the failed change, want %d", got, tt.restarts)
			}
			tt.fix(site, rec, dir)
			res, err := p.Configure(ctx, moved)
			if err != nil || !res.Changed {
				t.Fatalf("rerun after the fix: %+v, %v; want an upload and restart", res, err)
			}
			if site.DHCP.Loaded()[res.Path] != res.SHA256 {
				t.Fatal("the rerun's change was not loaded")
			}
		})
	}
}

func sameStrings(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// A rollback never restarts the service onto a configuration its test
// refuses, and says plainly when DHCP is down.
func TestRollbackReportsAServiceThatStaysDown(t *testing.T) {
	site, _, p := newPhase(t, dhcp.Config{})
	ctx := context.Background()
	if _, err := p.Configure(ctx, node1); err != nil {
		t.Fatal(err)
	}
	site.DHCP.SetBroken(true)
	moved := node1
	moved.IP = "10.10.0.51"
	_, err := p.Configure(ctx, moved)
	if !dhcp.RestartFailed.Is(err) || !strings.Contains(err.Error(), "restarting the service on it failed too") || !strings.Contains(err.Error(), "DHCP is down on this server") {
		t.Fatalf("err %v, want DHCP_RESTART_FAILED saying that DHCP is down", err)
	}
	_, file, _ := dhcp.Render(dhcp.ISC, p.Config().Dir, node1)
	if got, _ := site.DHCP.File(file); !bytes.Contains(got, []byte("10.10.0.3;")) {
		t.Fatalf("the previous file was not restored: %q", got)
	}
	if _, ok := site.DHCP.File(dhcp.BackupPath(file)); ok {
		t.Fatal("the backup was left behind after the restore")
	}
}

// A restart that fails and a rollback that cannot restore the host's
// previous state (here: a new host, whose new file the rollback cannot
// remove) still leave DHCP running when the live configuration passes its
// test, and the failure says what runs; when even the test cannot run, it
// says DHCP may be down. Found by the fault-schedule suite.
func TestRollbackThatCannotRestoreStillRestartsTheService(t *testing.T) {
	testCmd := dhcp.Defaults(dhcp.ISC).ConfigTest
	for _, tc := range []struct {
		name          string
		failTestAgain bool
		says          string
		active        bool
	}{
		{"the live configuration passes its test", false, "restarted the service on the configuration on the server (the new file, which its test accepts): the service is running", true},
		{"the config test cannot run either", true, "DHCP may be down on this server", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site, rec, p := newPhase(t, dhcp.Config{})
			ctx := context.Background()
			_, file, _ := dhcp.Render(dhcp.ISC, p.Config().Dir, node1)
			site.DHCP.FailRestarts(1)
			tests := 0
			rec.fail = func(op, arg string) error {
				if op == "remove" && arg == file {
					return &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "remove", Target: arg, Err: errors.New("EOF")}
				}
				if op == "run" && arg == testCmd {
					if tests++; tests == 2 && tc.failTestAgain {
						return &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Target: arg, Err: errors.New("EOF")}
					}
				}
				return nil
			}
			_, err := p.Configure(ctx, node1)
			if !dhcp.RestartFailed.Is(err) {
				t.Fatalf("err %v, want DHCP_RESTART_FAILED", err)
			}
			if !strings.Contains(err.Error(), "could not restore the previous file") || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("failure %q does not say the restore failed and %q", err, tc.says)
			}
			if site.DHCP.Active() != tc.active {
				t.Fatalf("service active %v, want %v", site.DHCP.Active(), tc.active)
			}
			if _, ok := site.DHCP.File(dhcp.BackupPath(file)); !ok {
				t.Fatal("the backup of the unfinished change is gone; the rerun could not tell it is unfinished")
			}
			rec.fail = nil
			res, err := p.Configure(ctx, node1)
			if err != nil || !res.Changed || !site.DHCP.Active() {
				t.Fatalf("rerun: %+v, %v, active %v; want the change completed and the service running", res, err, site.DHCP.Active())
			}
			if _, ok := site.DHCP.File(dhcp.BackupPath(file)); ok {
				t.Fatal("the rerun left the backup behind")
			}
		})
	}
}

// A change whose rollback cannot run (the connection is gone) leaves its
// backup, and the next run completes the change although the file's hash
// already matches.
func TestUnfinishedChangeIsCompletedNotSkipped(t *testing.T) {
	site, rec, p := newPhase(t, dhcp.Config{})
	ctx := context.Background()
	if _, err := p.Configure(ctx, node1); err != nil {
		t.Fatal(err)
	}
	moved := node1
	moved.IP = "10.10.0.52"
	_, file, _ := dhcp.Render(dhcp.ISC, p.Config().Dir, moved)
	gone := false
	rec.fail = func(op, arg string) error {
		if gone && op != "unlock" {
			return &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: op, Err: errors.New("connection lost")}
		}
		if op == "run" && arg == p.Config().ConfigTest {
			gone = true
			return &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: op, Err: errors.New("connection lost")}
		}
		return nil
	}
	_, err := p.Configure(ctx, moved)
	if !dhcp.Transport.Is(err) || !strings.Contains(err.Error(), "the rerun restores or completes the change") {
		t.Fatalf("err %v, want DHCP_SSH_TRANSPORT saying the rerun completes the change", err)
	}
	if _, ok := site.DHCP.File(dhcp.BackupPath(file)); !ok {
		t.Fatal("no backup left by the cut-off change")
	}
	rec.fail = nil
	restarts := site.DHCP.Restarts()
	res, err := p.Configure(ctx, moved)
	if err != nil || !res.Changed || site.DHCP.Restarts() != restarts+1 {
		t.Fatalf("rerun: %+v, %v, %d restarts; want the change completed with one restart", res, err, site.DHCP.Restarts()-restarts)
	}
	if _, ok := site.DHCP.File(dhcp.BackupPath(file)); ok {
		t.Fatal("the backup outlived the completed change")
	}
	res, err = p.Configure(ctx, moved)
	if err != nil || res.Changed {
		t.Fatalf("third run: %+v, %v; want a skip", res, err)
	}
}

// Two Phases — two worker processes — on one DHCP server never run a config
// test or restart at the same time: they take turns through the server's
// lock, not a lock of their own process.
func TestTwoWorkersSerialiseOnTheServerLock(t *testing.T) {
	site := fakes.NewSite()
	site.DHCP.DuringRestart(func() { time.Sleep(3 * time.Millisecond) })
	cfg := site.DHCP.Config()
	workers := []*dhcp.Phase{dhcp.New(site.DHCP, cfg, nil), dhcp.New(site.DHCP, cfg, nil)}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		e := dhcp.Entry{Hostname: fmt.Sprintf("node-%02d", i), MAC: fmt.Sprintf("0a:00:00:00:03:%02x", i), IP: fmt.Sprintf("10.10.3.%d", i+10)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = workers[i%2].Configure(context.Background(), e)
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if site.DHCP.Restarts() != n {
		t.Fatalf("restarts = %d, want %d", site.DHCP.Restarts(), n)
	}
	if m := site.DHCP.MaxConcurrentRestarts(); m != 1 {
		t.Fatalf("%d restarts of two workers ran at once, want them serialised by the server's lock", m)
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
