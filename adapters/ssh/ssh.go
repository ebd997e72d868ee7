package ssh

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/internal/syncbuf"
)

// VaultItem is the default vault item holding the SSH credentials.
const VaultItem = "ssh-config-dhcp"

// Vault field names of the item.
const (
	FieldPrivateKey = "private_key"
	FieldKnownHosts = "known_hosts"
	FieldPassphrase = "passphrase"
	FieldUser       = "user"
)

// DefaultTimeout is the default of every deadline.
const DefaultTimeout = 120 * time.Second

// Vault holds secrets as items of named fields.
type Vault interface {
	// Item returns the fields of the named item; hostforge.ErrNotFound
	// (wrapped) when absent.
	Item(ctx context.Context, name string) (map[string]string, error)
}

// Config says where the DHCP server is and how long each operation may take.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// User is the login user (the vault item's "user" field overrides it).
	User string
	// Vault holds the credentials; Item names the item (default VaultItem).
	Vault Vault
	Item  string
	// Deadlines; zero means DefaultTimeout.
	ConnectTimeout  time.Duration
	LoginTimeout    time.Duration
	CommandTimeout  time.Duration
	TransferTimeout time.Duration
	// Log may be nil.
	Log *slog.Logger
	// Secrets is the process's set of secret values: the passphrase is
	// registered in it, and what the server answers (command output, login
	// and command errors) is scrubbed with it (nil: a set of the dialer's
	// own).
	Secrets *hostforge.Secrets
}

// Dialer opens Clients. It implements dhcp.Dialer.
type Dialer struct {
	cfg Config
}

// New checks cfg and returns a Dialer. It does not connect.
func New(cfg Config) (*Dialer, error) {
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("ssh: Addr %q: want host:port: %w", cfg.Addr, err)
	}
	if cfg.Vault == nil {
		return nil, errors.New("ssh: Config.Vault is required")
	}
	if cfg.Item == "" {
		cfg.Item = VaultItem
	}
	for _, d := range []*time.Duration{&cfg.ConnectTimeout, &cfg.LoginTimeout, &cfg.CommandTimeout, &cfg.TransferTimeout} {
		if *d < 0 {
			return nil, errors.New("ssh: a deadline is negative")
		}
		if *d == 0 {
			*d = DefaultTimeout
		}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Secrets = cfg.Secrets.OrNew()
	return &Dialer{cfg: cfg}, nil
}

// Dial implements dhcp.Dialer.
func (d *Dialer) Dial(ctx context.Context) (dhcp.Remote, error) {
	c, err := d.DialClient(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// DialClient reads the credentials, connects and logs in. Its error is
// scrubbed of the process's secrets.
func (d *Dialer) DialClient(ctx context.Context) (*Client, error) {
	c, err := d.dialClient(ctx)
	if err != nil {
		return nil, d.cfg.Secrets.Err(err)
	}
	return c, nil
}

func (d *Dialer) dialClient(ctx context.Context) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cr, err := d.credentials(ctx)
	if err != nil {
		return nil, err
	}
	// The credentials are dropped when this function returns; the client
	// keeps only the signer, until Close.
	user := d.cfg.User
	if cr.user != "" {
		user = cr.user
	}
	if user == "" {
		return nil, CredentialsInvalid.New("no login user: set Config.User or the %q field of the vault item %s", FieldUser, d.cfg.Item)
	}

	var hostKeyErr error
	check := cr.hostKeys
	ccfg := &xssh.ClientConfig{
		User: user,
		Auth: []xssh.AuthMethod{xssh.PublicKeys(cr.signer)},
		HostKeyCallback: func(hostname string, remote net.Addr, key xssh.PublicKey) error {
			if err := check(hostname, remote, key); err != nil {
				hostKeyErr = err
				return err
			}
			return nil
		},
		HostKeyAlgorithms: knownAlgorithms(check, d.cfg.Addr),
	}

	dl := net.Dialer{Timeout: d.cfg.ConnectTimeout}
	conn, err := dl.DialContext(ctx, "tcp", d.cfg.Addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: "dial", Target: d.cfg.Addr, Deadline: dhcp.DeadlineConnect, Limit: d.cfg.ConnectTimeout, Err: err}
		}
		return nil, &dhcp.RemoteError{Kind: dhcp.KindConnect, Op: "dial", Target: d.cfg.Addr, Err: err}
	}

	// Login: handshake and authentication under their own deadline and the
	// caller's context.
	_ = conn.SetDeadline(time.Now().Add(d.cfg.LoginTimeout))
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	sc, chans, reqs, err := xssh.NewClientConn(conn, d.cfg.Addr, ccfg)
	stopped := stop()
	if err != nil {
		_ = conn.Close()
		if !stopped || ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, loginError(d.cfg, err, hostKeyErr)
	}
	_ = conn.SetDeadline(time.Time{})
	d.cfg.Log.Debug("connected to the DHCP server", "addr", d.cfg.Addr, "user", user)
	return &Client{cfg: d.cfg, conn: xssh.NewClient(sc, chans, reqs), signer: cr.signer}, nil
}

func loginError(cfg Config, err, hostKeyErr error) error {
	if hostKeyErr != nil {
		var ke *knownhosts.KeyError
		reason := "the server's host key is not trusted"
		if errors.As(hostKeyErr, &ke) {
			if len(ke.Want) == 0 {
				reason = "known_hosts has no entry for this server"
			} else {
				reason = fmt.Sprintf("the server's host key changed (known_hosts expects %s at %s:%d)", ke.Want[0].Key.Type(), ke.Want[0].Filename, ke.Want[0].Line)
			}
		}
		var re *knownhosts.RevokedError
		if errors.As(hostKeyErr, &re) {
			reason = "the server's host key is revoked in known_hosts"
		}
		return &dhcp.RemoteError{Kind: dhcp.KindHostKey, Op: "dial", Target: cfg.Addr, Err: fmt.Errorf("%s: %w", reason, dhcp.ErrHostKey)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: "dial", Target: cfg.Addr, Deadline: dhcp.DeadlineLogin, Limit: cfg.LoginTimeout, Err: err}
	}
	if strings.Contains(err.Error(), "unable to authenticate") {
		return &dhcp.RemoteError{Kind: dhcp.KindAuth, Op: "dial", Target: cfg.Addr, Err: err}
	}
	return &dhcp.RemoteError{Kind: dhcp.KindConnect, Op: "dial", Target: cfg.Addr, Err: err}
}

type credentials struct {
	signer   xssh.Signer
	hostKeys xssh.HostKeyCallback
	user     string
}

func (d *Dialer) credentials(ctx context.Context) (credentials, error) {
	var cr credentials
	item, err := d.cfg.Vault.Item(ctx, d.cfg.Item)
	if err != nil {
		if ctx.Err() != nil {
			return cr, ctx.Err()
		}
		if errors.Is(err, hostforge.ErrNotFound) {
			return cr, CredentialsInvalid.Wrap(err, "vault item %s", d.cfg.Item)
		}
		return cr, VaultUnavailable.Wrap(err, "vault item %s", d.cfg.Item)
	}
	defer func() {
		// The caller's map must not keep the key either.
		delete(item, FieldPrivateKey)
		delete(item, FieldPassphrase)
	}()
	pem := []byte(item[FieldPrivateKey])
	defer clear(pem)
	if len(bytes.TrimSpace(pem)) == 0 {
		return cr, CredentialsInvalid.New("vault item %s: field %q is missing or empty", d.cfg.Item, FieldPrivateKey)
	}
	if pass := item[FieldPassphrase]; pass != "" {
		d.cfg.Secrets.Add(pass)
		pp := []byte(pass)
		cr.signer, err = xssh.ParsePrivateKeyWithPassphrase(pem, pp)
		clear(pp)
	} else {
		cr.signer, err = xssh.ParsePrivateKey(pem)
	}
	if err != nil {
		// The parse error never quotes key material.
		return cr, CredentialsInvalid.New("vault item %s: field %q is not a usable private key: %v", d.cfg.Item, FieldPrivateKey, err)
	}
	kh := item[FieldKnownHosts]
	if strings.TrimSpace(kh) == "" {
		return cr, CredentialsInvalid.New("vault item %s: field %q is missing or empty; host keys are always verified", d.cfg.Item, FieldKnownHosts)
	}
	if cr.hostKeys, err = hostKeyCallback(kh); err != nil {
		return cr, CredentialsInvalid.New("vault item %s: field %q: %v", d.cfg.Item, FieldKnownHosts, err)
	}
	cr.user = item[FieldUser]
	return cr, nil
}

// hostKeyCallback builds a knownhosts callback from known_hosts data.
// knownhosts reads files only, so the data (public keys, not secret) goes
// through a private temporary file that is removed at once.
func hostKeyCallback(data string) (xssh.HostKeyCallback, error) {
	f, err := os.CreateTemp("", "hostforge-known_hosts-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := io.WriteString(f, data); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	cb, err := knownhosts.New(f.Name())
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), f.Name(), "known_hosts"))
	}
	return cb, nil
}

// probeKey is a public key no server presents; asking the known_hosts
// callback about it lists the keys known for an address.
var probeKey = func() xssh.PublicKey {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	k, err := xssh.NewPublicKey(pub)
	if err != nil {
		panic(err)
	}
	return k
}()

// knownAlgorithms returns the host-key algorithms known_hosts lists for
// addr, so the server is asked for a key we can verify rather than one we
// have no line for. nil (the library's default order) when none is listed.
func knownAlgorithms(cb xssh.HostKeyCallback, addr string) []string {
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		tcp = &net.TCPAddr{}
	}
	var ke *knownhosts.KeyError
	if err := cb(addr, tcp, probeKey); !errors.As(err, &ke) || len(ke.Want) == 0 {
		return nil
	}
	var algs []string
	seen := map[string]bool{}
	for _, k := range ke.Want {
		typ := k.Key.Type()
		var add []string
		switch typ {
		case xssh.KeyAlgoRSA:
			add = []string{xssh.KeyAlgoRSASHA512, xssh.KeyAlgoRSASHA256, xssh.KeyAlgoRSA}
		default:
			add = []string{typ}
		}
		for _, a := range add {
			if !seen[a] {
				seen[a] = true
				algs = append(algs, a)
			}
		}
	}
	return algs
}

// abortGrace is how long an operation stopped by its deadline or by the
// caller's context may take to wind down — its command killed, its session
// or SFTP client closed — before the adapter closes the connection under
// it, which ends every operation on it. A server that stalls therefore
// costs at most the operation's deadline plus abortGrace.
const abortGrace = 2 * time.Second

// maxRead bounds Read: DHCP host files and their backups are a few hundred
// bytes.
const maxRead = 1 << 20

// Client is one logged-in session with the DHCP server. It implements
// dhcp.Remote and is safe for concurrent use. Every operation — opening its
// SSH session included — runs under its own deadline and the caller's
// context.
type Client struct {
	cfg  Config
	conn *xssh.Client

	startMu sync.Mutex
	mu      sync.Mutex
	signer  xssh.Signer
	sftp    *sftp.Client
	closed  bool
}

// Close ends the session, releasing the locks it holds, and drops the key.
// It never waits for the server: the connection is closed first.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.signer = nil
	s := c.sftp
	c.sftp = nil
	c.mu.Unlock()
	err := c.conn.Close()
	if s != nil {
		// The connection is gone, so this returns at once.
		_ = s.Close()
	}
	return err
}

// kill closes the connection: every operation on it ends.
func (c *Client) kill() { _ = c.conn.Close() }

// bounded runs work under limit and ctx. work must return once the
// connection is closed. When the deadline or ctx ends first, stop (which may
// be nil) aborts work gently; if work has not returned abortGrace later, the
// connection is closed. bounded returns only after work (and stop) returned:
// nil when work finished in time, else expired() or ctx's error.
func (c *Client) bounded(ctx context.Context, limit time.Duration, expired func() error, work, stop func()) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		work()
	}()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var stopErr error
	select {
	case <-done:
		return nil
	case <-timer.C:
		stopErr = expired()
	case <-ctx.Done():
		stopErr = ctx.Err()
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if stop != nil {
			stop()
		}
	}()
	grace := time.NewTimer(abortGrace)
	defer grace.Stop()
	killed := false
	for pending := 2; pending > 0; pending-- {
		select {
		case <-done:
			done = nil
		case <-stopped:
			stopped = nil
		case <-grace.C:
			if !killed {
				killed = true
				c.cfg.Log.Warn("the DHCP server did not let an aborted operation end; closing the connection", "addr", c.cfg.Addr, "grace", abortGrace)
				c.kill()
			}
			pending++ // still waiting for the same operation
		}
	}
	return stopErr
}

func timeoutErr(op, target, deadline string, limit time.Duration) func() error {
	return func() error {
		return &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: op, Target: target, Deadline: deadline, Limit: limit, Err: context.DeadlineExceeded}
	}
}

// session is an SSH session being opened or running, which an abort may
// kill at any point.
type session struct {
	mu      sync.Mutex
	s       *xssh.Session
	aborted bool
}

// open opens the session unless the operation was aborted meanwhile.
func (x *session) open(conn *xssh.Client) (*xssh.Session, error) {
	s, err := conn.NewSession()
	if err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.aborted {
		_ = s.Close()
		return nil, errors.New("aborted")
	}
	x.s = s
	return s, nil
}

// abort kills the session's command and closes it.
func (x *session) abort() {
	x.mu.Lock()
	x.aborted = true
	s := x.s
	x.mu.Unlock()
	if s != nil {
		_ = s.Signal(xssh.SIGKILL)
		_ = s.Close()
	}
}

// Run runs command under the command deadline, which covers opening its
// session as well as running it. Its output and error are scrubbed of the
// process's secrets (Config.Secrets): they end up in the DHCP phase's
// messages.
func (c *Client) Run(ctx context.Context, command string) (dhcp.Output, error) {
	out, err := c.run(ctx, command)
	if sec := c.cfg.Secrets; sec.Len() > 0 {
		if clean := sec.Scrub(string(out.Output)); clean != string(out.Output) {
			out.Output = []byte(clean)
		}
		err = sec.Err(err)
	}
	return out, err
}

func (c *Client) run(ctx context.Context, command string) (dhcp.Output, error) {
	if err := ctx.Err(); err != nil {
		return dhcp.Output{}, err
	}
	var out syncbuf.Buffer
	var x session
	var runErr error
	work := func() {
		s, err := x.open(c.conn)
		if err != nil {
			runErr = &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Target: command, Err: err}
			return
		}
		defer s.Close()
		s.Stdout, s.Stderr = &out, &out
		runErr = s.Run(command)
	}
	if err := c.bounded(ctx, c.cfg.CommandTimeout, timeoutErr("run", command, dhcp.DeadlineCommand, c.cfg.CommandTimeout), work, x.abort); err != nil {
		return dhcp.Output{Output: out.Bytes()}, err
	}
	res := dhcp.Output{Output: out.Bytes()}
	var exit *xssh.ExitError
	var re *dhcp.RemoteError
	switch {
	case runErr == nil:
		return res, nil
	case errors.As(runErr, &re):
		return res, runErr
	case errors.As(runErr, &exit):
		res.Exit = exit.ExitStatus()
		if exit.Signal() != "" && res.Exit == 0 {
			res.Exit = 128
		}
		return res, nil
	}
	return res, &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Target: command, Err: runErr}
}

// Hash hashes every file with one sha256sum process. A file it cannot read
// is missing from its output (its error goes to /dev/null) and hashes as "".
func (c *Client) Hash(ctx context.Context, paths ...string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sums := make([]string, len(paths))
	if len(paths) == 0 {
		return sums, nil
	}
	cmd := "sha256sum --"
	for _, p := range paths {
		cmd += " " + dhcp.ShellQuote(p)
	}
	out, err := c.Run(ctx, cmd+" 2>/dev/null")
	if err != nil {
		var re *dhcp.RemoteError
		if errors.As(err, &re) {
			re.Op = "hash"
		}
		return nil, err
	}
	// A non-zero exit only says that some file could not be read.
	got, ok := parseSHA256Sum(out.Output)
	if !ok {
		c.cfg.Log.Warn("unreadable sha256sum output; treating the remote files as changed", "paths", paths, "exit", out.Exit)
		return sums, nil
	}
	for i, p := range paths {
		sums[i] = got[p]
	}
	return sums, nil
}

// parseSHA256Sum reads sha256sum's output, "<hex>  <name>" per line, into
// hashes by name. GNU coreutils writes a name holding a backslash, newline
// or carriage return escaped, and marks such a line with a leading
// backslash.
func parseSHA256Sum(b []byte) (map[string]string, bool) {
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		escaped := strings.HasPrefix(line, `\`)
		if escaped {
			line = line[1:]
		}
		if len(line) < 66 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') {
			return nil, false
		}
		sum := strings.ToLower(line[:64])
		if h, err := hex.DecodeString(sum); err != nil || len(h) != 32 {
			return nil, false
		}
		name := line[66:]
		if escaped {
			name = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\r`, "\r").Replace(name)
		}
		sums[name] = sum
	}
	return sums, true
}

// sftpClient returns the session's SFTP client, starting it on first use.
// Starting is serialised by startMu, never under mu, so that a transfer
// timing out can always abort a subsystem that does not answer.
func (c *Client) sftpClient() (*sftp.Client, error) {
	c.startMu.Lock()
	defer c.startMu.Unlock()
	c.mu.Lock()
	s, closed := c.sftp, c.closed
	c.mu.Unlock()
	if closed {
		return nil, errors.New("client closed")
	}
	if s != nil {
		return s, nil
	}
	s, err := sftp.NewClient(c.conn)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = s.Close()
		return nil, errors.New("client closed")
	}
	c.sftp = s
	return s, nil
}

// dropSFTP closes the SFTP client if it is still s, aborting its requests
// (the next transfer starts a new one). Closing may wait for the server, so
// it happens outside mu.
func (c *Client) dropSFTP(s *sftp.Client) {
	c.mu.Lock()
	if c.sftp == s {
		c.sftp = nil
	}
	c.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
}

// transfer runs f with the SFTP client under the transfer deadline and ctx.
// An abort closes the SFTP client; the SSH connection stays up for commands
// unless the server does not let the abort finish.
func (c *Client) transfer(ctx context.Context, op, target string, f func(ctx context.Context, s *sftp.Client) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// wctx ends work that f runs as remote commands (the fsync fallback).
	wctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu     sync.Mutex
		cur    *sftp.Client
		fErr   error
		inStop bool
	)
	work := func() {
		s, err := c.sftpClient()
		if err != nil {
			fErr = err
			return
		}
		mu.Lock()
		cur = s
		stopped := inStop
		mu.Unlock()
		if stopped {
			return
		}
		fErr = f(wctx, s)
	}
	stop := func() {
		cancel()
		mu.Lock()
		inStop = true
		s := cur
		mu.Unlock()
		if s != nil {
			c.dropSFTP(s)
		}
	}
	if err := c.bounded(ctx, c.cfg.TransferTimeout, timeoutErr(op, target, dhcp.DeadlineTransfer, c.cfg.TransferTimeout), work, stop); err != nil {
		return err
	}
	if fErr != nil {
		return &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: op, Target: target, Err: fErr}
	}
	return nil
}

// Upload writes data to p atomically and durably under the transfer
// deadline: a temporary file in p's directory, fsynced, mode 0644, renamed
// over p with the posix-rename extension.
func (c *Client) Upload(ctx context.Context, p string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "upload", Target: p, Err: err}
	}
	tmp := path.Join(path.Dir(p), "."+path.Base(p)+".hostforge-"+hex.EncodeToString(rnd[:])+".tmp")
	err := c.transfer(ctx, "upload", p, func(wctx context.Context, s *sftp.Client) error {
		return c.put(wctx, s, tmp, p, data)
	})
	var re *dhcp.RemoteError
	if err != nil && (!errors.As(err, &re) || re.Kind != dhcp.KindTransfer) {
		// Aborted: a half-written temporary file is never included by the
		// service, but should not pile up. Best effort, under its own
		// deadline; it fails at once if the abort closed the connection.
		rmCtx, cancel := context.WithTimeout(context.Background(), c.cfg.CommandTimeout)
		defer cancel()
		_, _ = c.Run(rmCtx, "rm -f -- "+dhcp.ShellQuote(tmp))
	}
	return err
}

func (c *Client) put(ctx context.Context, s *sftp.Client, tmp, p string, data []byte) (err error) {
	f, err := s.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = s.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := c.fsync(ctx, s, f, tmp); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := s.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return s.PosixRename(tmp, p)
}

// fsync flushes the temporary file to stable storage before it is renamed
// into place: with the fsync@openssh.com extension (OpenSSH 6.5 and later),
// or, on a server without it, with coreutils' `sync FILE` (8.24 and later).
func (c *Client) fsync(ctx context.Context, s *sftp.Client, f *sftp.File, tmp string) error {
	if v, ok := s.HasExtension("fsync@openssh.com"); ok && v == "1" {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("fsync %s: %w", tmp, err)
		}
		return nil
	}
	out, err := c.Run(ctx, "sync -- "+dhcp.ShellQuote(tmp))
	if err != nil {
		return fmt.Errorf("fsync %s with sync(1): %w", tmp, err)
	}
	if out.Exit != 0 {
		return fmt.Errorf("fsync %s: the SFTP server has no fsync@openssh.com and `sync` exited %d: %s", tmp, out.Exit, strings.TrimSpace(string(out.Output)))
	}
	return nil
}

// Read reads the file at p under the transfer deadline.
func (c *Client) Read(ctx context.Context, p string) ([]byte, bool, error) {
	var data []byte
	var exists bool
	err := c.transfer(ctx, "read", p, func(_ context.Context, s *sftp.Client) error {
		f, err := s.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxRead+1))
		if err != nil {
			return err
		}
		if len(b) > maxRead {
			return fmt.Errorf("%s is larger than %d bytes: not a DHCP host file", p, maxRead)
		}
		data, exists = b, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return data, exists, nil
}

// Remove removes the file at p under the transfer deadline; an absent file
// is not an error.
func (c *Client) Remove(ctx context.Context, p string) error {
	return c.transfer(ctx, "remove", p, func(_ context.Context, s *sftp.Client) error {
		if err := s.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	})
}

// lockCommand holds flock(2) on p in a shell whose standard input stays
// open: it opens p (a directory read-only; a file for appending, created
// when absent, never truncated), waits for the lock, says "locked", and
// keeps the descriptor open in cat until its input ends — when the client
// releases the lock, or when the session or connection ends, which releases
// it too.
//
// The wait is bounded on the server too (flock -w, a few seconds past the
// client's own deadline, which expires first): an abandoned wait — the
// client gave up, and the server refuses to signal the session — does not
// linger there.
func lockCommand(p string, limit time.Duration) string {
	q := dhcp.ShellQuote(p)
	w := strconv.Itoa(int(limit.Seconds()) + 5)
	return "if [ -d " + q + " ]; then exec 9<" + q + "; else exec 9>>" + q + "; fi && flock -x -w " + w + " 9 && echo locked && exec cat >/dev/null"
}

// Lock takes the server's flock on p. Waiting for it is bounded by the
// command deadline and ctx; so is the release.
func (c *Client) Lock(ctx context.Context, p string) (func() error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var (
		x       session
		stdin   io.WriteCloser
		errOut  syncbuf.Buffer
		lockErr error
	)
	work := func() {
		s, err := x.open(c.conn)
		if err != nil {
			lockErr = &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "lock", Target: p, Err: err}
			return
		}
		var stdout io.Reader
		if stdin, err = s.StdinPipe(); err == nil {
			stdout, err = s.StdoutPipe()
		}
		if err == nil {
			s.Stderr = &errOut
			err = s.Start(lockCommand(p, c.cfg.CommandTimeout))
		}
		if err != nil {
			_ = s.Close()
			lockErr = &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "lock", Target: p, Err: err}
			return
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line == "locked\n" {
			x.mu.Lock()
			aborted := x.aborted
			x.mu.Unlock()
			if aborted {
				// Granted after the caller gave up: release it at once.
				_ = stdin.Close()
				_ = s.Close()
			}
			return
		}
		// The command ended without the lock.
		werr := s.Wait()
		_ = s.Close()
		why := strings.TrimSpace(string(errOut.Bytes()))
		var exit *xssh.ExitError
		if errors.As(werr, &exit) {
			lockErr = &dhcp.RemoteError{Kind: dhcp.KindLock, Op: "lock", Target: p, Err: fmt.Errorf("exit %d: %s", exit.ExitStatus(), why)}
			return
		}
		lockErr = &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "lock", Target: p, Err: fmt.Errorf("the lock command ended without the lock: %v %s", werr, why)}
	}
	if err := c.bounded(ctx, c.cfg.CommandTimeout, timeoutErr("lock", p, dhcp.DeadlineCommand, c.cfg.CommandTimeout), work, x.abort); err != nil {
		// If the lock came just as the wait ended, the abort's closing of
		// the session released it.
		return nil, err
	}
	if lockErr != nil {
		return nil, lockErr
	}
	s := x.s
	var once sync.Once
	var uerr error
	return func() error {
		once.Do(func() {
			// End cat's input: the shell exits and flock's descriptor closes.
			uerr = c.bounded(context.Background(), c.cfg.CommandTimeout, timeoutErr("unlock", p, dhcp.DeadlineCommand, c.cfg.CommandTimeout),
				func() {
					_ = stdin.Close()
					_ = s.Wait()
				}, x.abort)
			_ = s.Close()
		})
		return uerr
	}, nil
}
