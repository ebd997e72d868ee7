package ssh_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/ssh"
	"github.com/hostforge/hostforge/adapters/ssh/sshtest"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/dhcp/dhcptest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errNotFound = fmt.Errorf("vault: %w", hostforge.ErrNotFound)

// fixture is an in-process server and a Dialer that trusts it.
type fixture struct {
	srv    *sshtest.Server
	client sshtest.Key
	vault  memVault
	cfg    ssh.Config
}

func newFixture(t testing.TB, opts ...sshtest.Option) *fixture {
	t.Helper()
	client := sshtest.NewKey(t)
	srv := sshtest.Start(t, client.PublicKey(), opts...)
	f := &fixture{srv: srv, client: client}
	f.vault = memVault{ssh.VaultItem: {
		ssh.FieldPrivateKey: client.PEM,
		ssh.FieldKnownHosts: srv.KnownHosts(srv.HostKey.PublicKey()),
		ssh.FieldUser:       "hostforge",
	}}
	f.cfg = ssh.Config{Addr: srv.Addr, Vault: f.vault}
	return f
}

func (f *fixture) dialer(t testing.TB) *ssh.Dialer {
	t.Helper()
	d, err := ssh.New(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestContractInProcessServer(t *testing.T) {
	f := newFixture(t)
	d := f.dialer(t)
	dhcptest.Run(t, func(t *testing.T) dhcptest.Target {
		r, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return dhcptest.Target{Remote: r, Dir: t.TempDir(), Dialer: d, Service: dhcptest.ShellService(t, r, t.TempDir())}
	})
}

func TestHostKeyVerification(t *testing.T) {
	other := sshtest.NewKey(t)
	f := newFixture(t)
	unrelated := newFixture(t)
	tests := []struct {
		name       string
		knownHosts string
		want       string
	}{
		{"changed host key", f.srv.KnownHosts(other.PublicKey()), "host key changed"},
		{"no entry for this server", unrelated.srv.KnownHosts(unrelated.srv.HostKey.PublicKey()), "no entry"},
		{"revoked key", "@revoked " + f.srv.KnownHosts(f.srv.HostKey.PublicKey()), "revoked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.vault[ssh.VaultItem][ssh.FieldKnownHosts] = tt.knownHosts
			_, err := f.dialer(t).Dial(context.Background())
			if dhcp.KindOf(err) != dhcp.KindHostKey || !errors.Is(err, dhcp.ErrHostKey) {
				t.Fatalf("Dial: %v, want a host-key failure", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Dial: %q does not say %q", err, tt.want)
			}
			// Through the phase: a classified failure, nothing uploaded.
			p := dhcp.New(f.dialer(t), dhcp.Config{Dir: t.TempDir()}, nil)
			_, err = p.Configure(context.Background(), dhcp.Entry{Hostname: "n1", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"})
			if !dhcp.HostKeyRejected.Is(err) {
				t.Fatalf("Configure: %v, want DHCP_SSH_HOST_KEY_REJECTED", err)
			}
		})
	}
}

func TestLoginAndCredentialFailures(t *testing.T) {
	stranger := sshtest.NewKey(t)
	tests := []struct {
		name  string
		edit  func(f *fixture)
		check func(t *testing.T, err error)
	}{
		{"key not authorised", func(f *fixture) { f.vault[ssh.VaultItem][ssh.FieldPrivateKey] = stranger.PEM }, func(t *testing.T, err error) {
			if !dhcp.AuthFailed.Is(err) {
				t.Fatalf("%v, want DHCP_SSH_AUTH_FAILED", err)
			}
		}},
		{"vault item missing", func(f *fixture) { delete(f.vault, ssh.VaultItem) }, func(t *testing.T, err error) {
			if !ssh.CredentialsInvalid.Is(err) {
				t.Fatalf("%v, want DHCP_SSH_CREDENTIALS_INVALID", err)
			}
		}},
		{"private key missing", func(f *fixture) { delete(f.vault[ssh.VaultItem], ssh.FieldPrivateKey) }, func(t *testing.T, err error) {
			if !ssh.CredentialsInvalid.Is(err) || !strings.Contains(err.Error(), ssh.FieldPrivateKey) {
				t.Fatalf("%v, want DHCP_SSH_CREDENTIALS_INVALID naming %s", err, ssh.FieldPrivateKey)
			}
		}},
		{"private key garbage", func(f *fixture) {
			f.vault[ssh.VaultItem][ssh.FieldPrivateKey] = "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0\n-----END OPENSSH PRIVATE KEY-----\n"
		}, func(t *testing.T, err error) {
			if !ssh.CredentialsInvalid.Is(err) || strings.Contains(err.Error(), "c2VjcmV0") {
				t.Fatalf("%v, want DHCP_SSH_CREDENTIALS_INVALID without key material", err)
			}
		}},
		{"known_hosts missing", func(f *fixture) { delete(f.vault[ssh.VaultItem], ssh.FieldKnownHosts) }, func(t *testing.T, err error) {
			if !ssh.CredentialsInvalid.Is(err) || !strings.Contains(err.Error(), ssh.FieldKnownHosts) {
				t.Fatalf("%v, want DHCP_SSH_CREDENTIALS_INVALID naming %s", err, ssh.FieldKnownHosts)
			}
		}},
		{"connection refused", func(f *fixture) { f.cfg.Addr = closedPort(t) }, func(t *testing.T, err error) {
			if !dhcp.Unreachable.Is(err) {
				t.Fatalf("%v, want DHCP_SSH_UNREACHABLE", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tt.edit(f)
			p := dhcp.New(f.dialer(t), dhcp.Config{Dir: t.TempDir()}, nil)
			_, err := p.Configure(context.Background(), dhcp.Entry{Hostname: "n1", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"})
			tt.check(t, err)
			if f, ok := hostforge.AsFailure(err); !ok || f.Action == "" || f.Owner == "" {
				t.Fatalf("%v is not a classified failure with owner and action", err)
			}
		})
	}
}

func closedPort(t *testing.T) string {
	s := sshtest.Start(t, nil)
	s.Close()
	return s.Addr
}

func TestEachDeadlineIsItsOwn(t *testing.T) {
	entry := dhcp.Entry{Hostname: "n1", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"}
	tests := []struct {
		name     string
		opts     []sshtest.Option
		cfg      func(c *ssh.Config)
		dhcp     func(dir string) dhcp.Config
		deadline string
	}{
		{
			"login", []sshtest.Option{sshtest.StallLogin},
			func(c *ssh.Config) { c.LoginTimeout = 200 * time.Millisecond },
			func(dir string) dhcp.Config { return dhcp.Config{Dir: dir} },
			"login deadline (200ms)",
		},
		{
			"hung restart command", nil,
			func(c *ssh.Config) { c.CommandTimeout = 300 * time.Millisecond },
			func(dir string) dhcp.Config {
				return dhcp.Config{Dir: dir, ConfigTest: "true", Restart: "sleep 600", Status: "true"}
			},
			"command deadline (300ms) expired during run sleep 600",
		},
		{
			// The server logs us in, then never answers a session open:
			// the first command (the hash) must end on its deadline.
			"stall after login", []sshtest.Option{sshtest.StallAfterLogin},
			func(c *ssh.Config) { c.CommandTimeout = 200 * time.Millisecond },
			func(dir string) dhcp.Config { return dhcp.Config{Dir: dir} },
			"command deadline (200ms) expired during hash",
		},
		{
			"stall on session open", []sshtest.Option{sshtest.StallSession},
			func(c *ssh.Config) { c.CommandTimeout = 200 * time.Millisecond },
			func(dir string) dhcp.Config { return dhcp.Config{Dir: dir} },
			"command deadline (200ms) expired during hash",
		},
		{
			"stalled transfer", []sshtest.Option{sshtest.StallSFTP},
			func(c *ssh.Config) { c.TransferTimeout = 200 * time.Millisecond },
			func(dir string) dhcp.Config { return dhcp.Config{Dir: dir} },
			"transfer deadline (200ms)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.opts...)
			tt.cfg(&f.cfg)
			p := dhcp.New(f.dialer(t), tt.dhcp(t.TempDir()), nil)
			// The phase's own context is generous: only the adapter's
			// deadline may end the call.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			_, err := p.Configure(ctx, entry)
			if !dhcp.Timeout.Is(err) {
				t.Fatalf("%v, want DHCP_SSH_TIMEOUT", err)
			}
			if !strings.Contains(err.Error(), tt.deadline) {
				t.Fatalf("%q does not name %q", err, tt.deadline)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Fatalf("took %s; the deadline did not stop the call", took)
			}
			if ctx.Err() != nil {
				t.Fatal("the caller's context expired; the adapter's deadline should have come first")
			}
		})
	}
}

func TestPhaseOverSSH(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	log := filepath.Join(t.TempDir(), "restarts")
	cfg := dhcp.Config{
		Dir:        filepath.Join(dir, "hostforge.d"),
		ConfigTest: "test -s " + dhcp.ShellQuote(filepath.Join(dir, "hostforge.d", "gpu-node-01.conf")),
		Restart:    "echo restart >> " + dhcp.ShellQuote(log),
		Status:     "test -f " + dhcp.ShellQuote(log),
	}
	p := dhcp.New(f.dialer(t), cfg, nil)
	e := dhcp.Entry{Hostname: "gpu-node-01", MAC: "0A:1B:2C:3D:4E:5F", IP: "10.10.0.3"}
	ctx := context.Background()

	res, err := p.Configure(ctx, e)
	if err != nil || !res.Changed {
		t.Fatalf("%+v, %v", res, err)
	}
	want, _ := dhcp.RenderISC(e)
	got, err := os.ReadFile(res.Path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("remote file %q (%v), want %q", got, err, want)
	}
	if st, _ := os.Stat(res.Path); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644", st.Mode().Perm())
	}
	res, err = p.Configure(ctx, e)
	if err != nil || res.Changed {
		t.Fatalf("second run: %+v, %v; want a skip", res, err)
	}
	restarts, _ := os.ReadFile(log)
	if n := strings.Count(string(restarts), "restart"); n != 1 {
		t.Fatalf("%d restarts, want 1", n)
	}
	entries, _ := os.ReadDir(cfg.Dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the host file", len(entries))
	}
}

func TestParallelEnrollmentsOverSSH(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	lock := filepath.Join(dir, "restart.lock")
	log := filepath.Join(dir, "restarts")
	// The restart fails if another restart holds the lock directory: an
	// overlapping restart fails its enrollment.
	restart := fmt.Sprintf("mkdir %s && sleep 0.05 && echo x >> %s && rmdir %s", dhcp.ShellQuote(lock), dhcp.ShellQuote(log), dhcp.ShellQuote(lock))
	cfg := dhcp.Config{Dir: filepath.Join(dir, "hostforge.d"), ConfigTest: "true", Restart: restart, Status: "true"}
	p := dhcp.New(f.dialer(t), cfg, nil)
	const n = 10
	var wg sync.WaitGroup
	errs := make([]error, n)
	entries := make([]dhcp.Entry, n)
	for i := range n {
		entries[i] = dhcp.Entry{Hostname: fmt.Sprintf("node-%02d", i), MAC: fmt.Sprintf("0a:00:00:00:02:%02x", i), IP: fmt.Sprintf("10.10.2.%d", i+1)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.Configure(context.Background(), entries[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want, file, _ := dhcp.Render(dhcp.ISC, cfg.Dir, e)
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %q (%v)", file, got, err)
		}
	}
	restarts, _ := os.ReadFile(log)
	if c := strings.Count(string(restarts), "x"); c != n {
		t.Fatalf("%d restarts, want %d", c, n)
	}
	files, _ := os.ReadDir(cfg.Dir)
	if len(files) != n {
		t.Fatalf("%d files, want %d (no temporary files left)", len(files), n)
	}
}

func TestClosedClientRefusesWork(t *testing.T) {
	f := newFixture(t)
	c, err := f.dialer(t).DialClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), "true"); dhcp.KindOf(err) != dhcp.KindTransport {
		t.Fatalf("Run after Close: %v, want a transport failure", err)
	}
	if err := c.Upload(context.Background(), filepath.Join(t.TempDir(), "x"), []byte("x")); dhcp.KindOf(err) != dhcp.KindTransfer {
		t.Fatalf("Upload after Close: %v, want a transfer failure", err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]ssh.Config{
		"no port":           {Addr: "dhcp1", Vault: memVault{}},
		"no vault":          {Addr: "dhcp1:22"},
		"negative deadline": {Addr: "dhcp1:22", Vault: memVault{}, CommandTimeout: -time.Second},
	} {
		if _, err := ssh.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

// Every operation of a Client, on a server that stalls after login or on
// session open, ends on its own deadline — opening its SSH session
// included — instead of blocking until TCP gives up.
func TestEveryOperationIsBoundedOnAStalledServer(t *testing.T) {
	const limit = 200 * time.Millisecond
	ops := []struct {
		name     string
		deadline string
		call     func(ctx context.Context, c *ssh.Client, dir string) error
	}{
		{"run", dhcp.DeadlineCommand, func(ctx context.Context, c *ssh.Client, _ string) error {
			_, err := c.Run(ctx, "true")
			return err
		}},
		{"hash", dhcp.DeadlineCommand, func(ctx context.Context, c *ssh.Client, dir string) error {
			_, err := c.Hash(ctx, filepath.Join(dir, "a.conf"))
			return err
		}},
		{"lock", dhcp.DeadlineCommand, func(ctx context.Context, c *ssh.Client, dir string) error {
			u, err := c.Lock(ctx, dir)
			if err == nil {
				_ = u()
			}
			return err
		}},
		{"upload", dhcp.DeadlineTransfer, func(ctx context.Context, c *ssh.Client, dir string) error {
			return c.Upload(ctx, filepath.Join(dir, "a.conf"), []byte("a\n"))
		}},
		{"read", dhcp.DeadlineTransfer, func(ctx context.Context, c *ssh.Client, dir string) error {
			_, _, err := c.Read(ctx, filepath.Join(dir, "a.conf"))
			return err
		}},
		{"remove", dhcp.DeadlineTransfer, func(ctx context.Context, c *ssh.Client, dir string) error {
			return c.Remove(ctx, filepath.Join(dir, "a.conf"))
		}},
	}
	for _, stall := range []struct {
		name string
		opt  sshtest.Option
	}{{"stall after login", sshtest.StallAfterLogin}, {"stall on session open", sshtest.StallSession}} {
		for _, op := range ops {
			t.Run(stall.name+"/"+op.name, func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, stall.opt)
				f.cfg.CommandTimeout, f.cfg.TransferTimeout = limit, limit
				c, err := f.dialer(t).DialClient(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				err = boundedCall(t, func() error { return op.call(context.Background(), c, t.TempDir()) })
				var re *dhcp.RemoteError
				if !errors.As(err, &re) || re.Kind != dhcp.KindTimeout || re.Deadline != op.deadline || re.Limit != limit {
					t.Fatalf("%v, want the %s deadline (%s) to expire", err, op.deadline, limit)
				}
				// The adapter's own deadline is not the caller's context:
				// it must never read as a cancellation.
				if errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, hostforge.ErrUnavailable) {
					t.Fatalf("%v: a deadline of the adapter must match ErrUnavailable, not context.DeadlineExceeded", err)
				}
			})
		}
	}
}

// On a stalled server the caller's context still ends an operation, as a
// context error (CANCELLED for the phase), not as a timeout.
func TestCallerContextEndsAStalledOperation(t *testing.T) {
	for _, stall := range []sshtest.Option{sshtest.StallAfterLogin, sshtest.StallSession} {
		f := newFixture(t, stall)
		c, err := f.dialer(t).DialClient(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err = boundedCall(t, func() error {
			_, err := c.Run(ctx, "true")
			return err
		})
		cancel()
		var re *dhcp.RemoteError
		if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &re) {
			t.Fatalf("%v, want the caller's context error", err)
		}
		c.Close()
		p := dhcp.New(f.dialer(t), dhcp.Config{Dir: t.TempDir()}, nil)
		ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, err = p.Configure(ctx, dhcp.Entry{Hostname: "n1", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"})
		cancel()
		if !hostforge.Cancelled.Is(err) {
			t.Fatalf("Configure: %v, want CANCELLED", err)
		}
	}
}

// boundedCall runs call and fails the test if it has not returned after
// 20 s: the deadlines under test are a fraction of a second, plus the
// adapter's abort grace.
func boundedCall(t *testing.T, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("the operation did not end on its deadline")
		return nil
	}
}

// Waiting for the server's lock is bounded by the command deadline, and the
// failure says that the lock was being waited for.
func TestWaitingForTheServerLockIsBounded(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	holder, err := f.dialer(t).DialClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	unlock, err := holder.Lock(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	f.cfg.CommandTimeout = 300 * time.Millisecond
	p := dhcp.New(f.dialer(t), dhcp.Config{Dir: dir, ConfigTest: "true", Restart: "true", Status: "true"}, nil)
	_, err = p.Configure(context.Background(), dhcp.Entry{Hostname: "n1", MAC: "0a:00:00:00:00:01", IP: "10.0.0.1"})
	if !dhcp.Timeout.Is(err) || !strings.Contains(err.Error(), "waiting for the DHCP server's configuration lock") {
		t.Fatalf("%v, want DHCP_SSH_TIMEOUT naming the lock", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("%d files written without the lock", len(entries))
	}
}

// A server without fsync@openssh.com (this in-process one) has the
// temporary file flushed with sync(1) before the rename.
func TestUploadIsFlushedBeforeTheRename(t *testing.T) {
	f := newFixture(t)
	c, err := f.dialer(t).DialClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dir := t.TempDir()
	if err := c.Upload(context.Background(), filepath.Join(dir, "a.conf"), []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	prefix := "sync -- " + dhcp.ShellQuote(filepath.Join(dir, ".a.conf.hostforge-"))
	prefix = strings.TrimSuffix(prefix, "'")
	var synced bool
	for _, cmd := range f.srv.Commands() {
		synced = synced || strings.HasPrefix(cmd, prefix) && strings.HasSuffix(cmd, ".tmp'")
	}
	if !synced {
		t.Fatalf("no sync of the temporary file among the commands %q", f.srv.Commands())
	}
}
