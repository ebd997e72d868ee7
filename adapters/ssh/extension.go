package ssh

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/extensions"
)

// Defaults of the extension runner.
const (
	// DefaultTaskTimeout bounds the command of an SSH task whose timeout
	// option is 0.
	DefaultTaskTimeout = extensions.DefaultSSHTimeout
	// DefaultLoginTimeout bounds connecting, and then logging in, for an
	// SSH task (each; never longer than the task's timeout).
	DefaultLoginTimeout = 30 * time.Second
	// MaxTaskOutput caps the output of a task's command that is kept: the
	// last MaxTaskOutput bytes of stdout and stderr together.
	MaxTaskOutput = 8 << 10
)

// ExtensionRunner runs ExtensionTaskSsh tasks (MetalSoft's SSH exec task):
// it connects to the task's host:port, logs in as its username with its
// password or the private key in the vault item its privateKeySecret
// names, verifies the host key against the site's known_hosts, runs the
// rendered commandTemplate under the task's timeout, and captures its
// output. It implements extensions.Runner and is safe for concurrent use;
// each run has its own connection.
type ExtensionRunner struct {
	// KnownHosts is the site's known_hosts file (the config's
	// extensions.known_hosts), read on every run: host keys are always
	// verified, and there is no option to skip it.
	KnownHosts string
	// Vault holds the private keys tasks name with privateKeySecret: an
	// item with the fields private_key (PEM), and optionally passphrase and
	// user (the login user when the task sets no username).
	Vault Vault
	// LoginTimeout bounds connecting and logging in, each
	// (DefaultLoginTimeout when 0).
	LoginTimeout time.Duration
	// Log receives a line per run; never a password, a key or output.
	Log *slog.Logger
}

var _ extensions.Runner = (*ExtensionRunner)(nil)

// Run runs one SSH task.
func (r *ExtensionRunner) Run(ctx context.Context, req extensions.Request) (extensions.Result, error) {
	o := req.SSH
	if o == nil {
		return extensions.Result{}, extensions.TaskFailed.New("extension %s task %s is not an SSH task (%s)", req.Extension, req.Task, req.TaskType)
	}
	if err := ctx.Err(); err != nil {
		return extensions.Result{}, err
	}
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	port := o.Port
	if port == 0 {
		port = 22
	}
	addr := net.JoinHostPort(o.Host, strconv.Itoa(port))
	timeout, limit := DefaultTaskTimeout, ""
	if o.Timeout > 0 {
		timeout = time.Duration(o.Timeout) * time.Second
	}
	limit = "its timeout of " + timeout.String()
	if !req.Deadline.IsZero() {
		left := time.Until(req.Deadline)
		if left <= 0 {
			return extensions.Result{}, extensions.TaskTimeout.New("the command was not run on %s: the event's stage deadline had passed", addr)
		}
		if left < timeout {
			timeout, limit = left, "the event's stage deadline"
		}
	}
	login := r.LoginTimeout
	if login <= 0 {
		login = DefaultLoginTimeout
	}
	login = min(login, timeout)

	auth, user, secrets, err := r.auth(ctx, o)
	if err != nil {
		return extensions.Result{}, err
	}
	hostKeys, err := r.hostKeys()
	if err != nil {
		return extensions.Result{}, err
	}
	cfg := Config{Addr: addr, User: user, ConnectTimeout: login, LoginTimeout: login, CommandTimeout: timeout, Log: log}
	c, err := dialTask(ctx, cfg, auth, hostKeys)
	if err != nil {
		if ctx.Err() != nil {
			return extensions.Result{}, ctx.Err()
		}
		return extensions.Result{}, taskDialError(err, user, addr)
	}
	defer c.Close()

	out := &tailBuffer{max: MaxTaskOutput}
	exit, err := c.runCapped(ctx, req.Body, out)
	output := out.String()
	if out.Total() > int64(len(output)) {
		// A secret cut by the start of the kept tail would survive
		// scrubbing in part: drop as many bytes as the longest one.
		longest := 0
		for _, s := range secrets {
			longest = max(longest, len(s))
		}
		output = output[min(longest, len(output)):]
	}
	output = scrubAll(output, secrets)
	log = log.With("extension", req.Extension, "task", req.Task, "delivery", req.DeliveryID, "addr", addr, "user", user)
	if err != nil {
		if ctx.Err() != nil {
			return extensions.Result{}, ctx.Err()
		}
		var re *dhcp.RemoteError
		if errors.As(err, &re) && re.Kind == dhcp.KindTimeout {
			log.Warn("SSH task timed out", "timeout", timeout)
			f := extensions.TaskTimeout.New("the command on %s as %s did not end within %s; it was killed", addr, user, limit)
			f.Detail = exchange(req, secrets, output, out)
			return extensions.Result{}, f
		}
		log.Warn("SSH task's session failed")
		f := SSHUnreachable.New("the session with %s as %s broke while the command ran: %s", addr, user, scrubAll(err.Error(), secrets))
		f.Detail = exchange(req, secrets, output, out)
		return extensions.Result{}, f
	}
	head := fmt.Sprintf("exit %d on %s as %s", exit, addr, user)
	log.Info("SSH task ran", "exit", exit)
	if exit != 0 {
		f := SSHCommandFailed.New("%s", head)
		f.Detail = exchange(req, secrets, output, out)
		return extensions.Result{}, f
	}
	return extensions.Result{Message: head + "\n" + exchange(req, secrets, output, out)}, nil
}

// exchange is what the record keeps of the command run and the output it
// wrote: the command (scrubbed of the task's own secrets) and the tail of
// the output, or for a task that receives secrets each only by its
// SHA-256 and length. A failure carries it as its Detail, which log lines
// leave out.
func exchange(req extensions.Request, secrets []string, output string, out *tailBuffer) string {
	cmd := "command: " + extensions.Recorded([]byte(req.Body), req.IncludesSecrets, func(b []byte) string {
		return capText(scrubAll(string(b), secrets), MaxTaskOutput)
	})
	if req.IncludesSecrets {
		if out.Total() == 0 {
			return cmd
		}
		return cmd + "\noutput: " + extensions.DigestSum(out.Sum(), out.Total()) + extensions.NotRecorded
	}
	return cmd + outputText(output, out)
}

// auth builds the login methods: the task's password (also offered to
// keyboard-interactive prompts), and the private key of the vault item its
// privateKeySecret names. It returns the secrets to scrub from output.
func (r *ExtensionRunner) auth(ctx context.Context, o *extensions.SSHOptions) ([]xssh.AuthMethod, string, []string, error) {
	var methods []xssh.AuthMethod
	var secrets []string
	user := o.Username
	if o.PrivateKeySecret != "" {
		if r.Vault == nil {
			return nil, "", nil, extensions.SecretUnavailable.New("privateKeySecret names the vault item %s, but no vault is configured (--vault, or vault.path in the config)", o.PrivateKeySecret)
		}
		item, err := r.Vault.Item(ctx, o.PrivateKeySecret)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", nil, ctx.Err()
			}
			if errors.Is(err, hostforge.ErrNotFound) {
				return nil, "", nil, extensions.SecretUnavailable.New("privateKeySecret: the vault has no item %s", o.PrivateKeySecret)
			}
			return nil, "", nil, extensions.SecretUnavailable.New("privateKeySecret: the vault item %s cannot be read: %v", o.PrivateKeySecret, err)
		}
		pem := []byte(item[FieldPrivateKey])
		defer clear(pem)
		if len(bytes.TrimSpace(pem)) == 0 {
			return nil, "", nil, extensions.SecretUnavailable.New("privateKeySecret: the vault item %s has no %q field", o.PrivateKeySecret, FieldPrivateKey)
		}
		var signer xssh.Signer
		if pass := item[FieldPassphrase]; pass != "" {
			signer, err = xssh.ParsePrivateKeyWithPassphrase(pem, []byte(pass))
			secrets = append(secrets, pass)
		} else {
			signer, err = xssh.ParsePrivateKey(pem)
		}
		if err != nil {
			return nil, "", nil, extensions.SecretUnavailable.New("privateKeySecret: the %q field of the vault item %s is not a usable private key: %v", FieldPrivateKey, o.PrivateKeySecret, err)
		}
		methods = append(methods, xssh.PublicKeys(signer))
		if user == "" {
			user = item[FieldUser]
		}
	}
	if o.Password != "" {
		pw := o.Password
		secrets = append(secrets, pw)
		methods = append(methods, xssh.Password(pw), xssh.KeyboardInteractive(func(_, _ string, questions []string, _ []bool) ([]string, error) {
			answers := make([]string, len(questions))
			for i := range answers {
				answers[i] = pw
			}
			return answers, nil
		}))
	}
	if len(methods) == 0 {
		return nil, "", nil, extensions.SecretUnavailable.New("the SSH task has no credential: set its password, or privateKeySecret naming a vault item with a %s field", FieldPrivateKey)
	}
	if user == "" {
		return nil, "", nil, extensions.SecretUnavailable.New("the SSH task has no login user: set its username (or the %q field of the vault item privateKeySecret names)", FieldUser)
	}
	return methods, user, secrets, nil
}

// hostKeys reads the site's known_hosts.
func (r *ExtensionRunner) hostKeys() (xssh.HostKeyCallback, error) {
	if r.KnownHosts == "" {
		return nil, extensions.RunnerConfigInvalid.New("SSH tasks verify host keys against the site's known_hosts, and none is configured: set extensions.known_hosts in the config (or --known-hosts of 'extensions fire')")
	}
	if _, err := os.Stat(r.KnownHosts); err != nil {
		return nil, extensions.RunnerConfigInvalid.New("the site's known_hosts (extensions.known_hosts) cannot be read: %v", err)
	}
	cb, err := knownhosts.New(r.KnownHosts)
	if err != nil {
		return nil, extensions.RunnerConfigInvalid.New("the site's known_hosts (extensions.known_hosts): %v", err)
	}
	return cb, nil
}

// dialTask connects and logs in, verifying the host key, under the
// connect and login deadlines and ctx.
func dialTask(ctx context.Context, cfg Config, auth []xssh.AuthMethod, check xssh.HostKeyCallback) (*Client, error) {
	var hostKeyErr error
	ccfg := &xssh.ClientConfig{
		User: cfg.User,
		Auth: auth,
		HostKeyCallback: func(hostname string, remote net.Addr, key xssh.PublicKey) error {
			if err := check(hostname, remote, key); err != nil {
				hostKeyErr = err
				return err
			}
			return nil
		},
		HostKeyAlgorithms: knownAlgorithms(check, cfg.Addr),
	}
	dl := net.Dialer{Timeout: cfg.ConnectTimeout}
	conn, err := dl.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: "dial", Target: cfg.Addr, Deadline: dhcp.DeadlineConnect, Limit: cfg.ConnectTimeout, Err: err}
		}
		return nil, &dhcp.RemoteError{Kind: dhcp.KindConnect, Op: "dial", Target: cfg.Addr, Err: err}
	}
	_ = conn.SetDeadline(time.Now().Add(cfg.LoginTimeout))
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	sc, chans, reqs, err := xssh.NewClientConn(conn, cfg.Addr, ccfg)
	stopped := stop()
	if err != nil {
		_ = conn.Close()
		if !stopped || ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, loginError(cfg, err, hostKeyErr)
	}
	_ = conn.SetDeadline(time.Time{})
	return &Client{cfg: cfg, conn: xssh.NewClient(sc, chans, reqs)}, nil
}

// taskDialError classifies a failed connection or login of a task.
func taskDialError(err error, user, addr string) error {
	var re *dhcp.RemoteError
	if !errors.As(err, &re) {
		return SSHUnreachable.New("connecting to %s: %v", addr, err)
	}
	switch re.Kind {
	case dhcp.KindHostKey:
		return SSHHostKey.New("%s: %v", addr, re.Err)
	case dhcp.KindAuth:
		return SSHAuth.New("%s refused the login of %s", addr, user)
	case dhcp.KindTimeout:
		return SSHUnreachable.New("%s: the %s deadline (%s) expired", addr, re.Deadline, re.Limit)
	}
	return SSHUnreachable.New("%s: %v", addr, re.Err)
}

// runCapped runs command under the command deadline, keeping the tail of
// its combined output in out, and returns its exit status.
func (c *Client) runCapped(ctx context.Context, command string, out *tailBuffer) (int, error) {
	var x session
	var runErr error
	work := func() {
		s, err := x.open(c.conn)
		if err != nil {
			runErr = &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Err: err}
			return
		}
		defer s.Close()
		s.Stdout, s.Stderr = out, out
		runErr = s.Run(command)
	}
	if err := c.bounded(ctx, c.cfg.CommandTimeout, timeoutErr("run", "", dhcp.DeadlineCommand, c.cfg.CommandTimeout), work, x.abort); err != nil {
		return 0, err
	}
	var exit *xssh.ExitError
	var missing *xssh.ExitMissingError
	switch {
	case runErr == nil:
		return 0, nil
	case errors.As(runErr, &exit):
		if exit.Signal() != "" && exit.ExitStatus() == 0 {
			return 128, nil
		}
		return exit.ExitStatus(), nil
	case errors.As(runErr, &missing):
		return 0, &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Err: errors.New("the server closed the session without an exit status")}
	}
	var re *dhcp.RemoteError
	if errors.As(runErr, &re) {
		return 0, runErr
	}
	return 0, &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Err: runErr}
}

// tailBuffer keeps the last max bytes written to it, and counts them all.
// stdout and stderr write to it from two goroutines.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	b     []byte
	total int64
	// sum hashes everything written, for the record of a task whose
	// output is kept only by its digest.
	sum hash.Hash
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sum == nil {
		t.sum = sha256.New()
	}
	t.sum.Write(p)
	t.total += int64(len(p))
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = slices.Clone(t.b[over:])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.b), "�")
}

// Sum is the SHA-256 of everything written.
func (t *tailBuffer) Sum() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sum == nil {
		t.sum = sha256.New()
	}
	return t.sum.Sum(nil)
}

func (t *tailBuffer) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// outputText renders captured output for a record.
func outputText(output string, t *tailBuffer) string {
	if output == "" {
		return ""
	}
	if total := t.Total(); total > int64(len(output)) {
		return fmt.Sprintf("\noutput (the last %d of %d bytes): %s", len(output), total, output)
	}
	return "\noutput: " + output
}

func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "… (truncated)"
}

// scrubAll replaces each secret in s, longest first.
func scrubAll(s string, secrets []string) string {
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range sorted {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}
