package ssh

import (
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
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"
	xssh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/dhcp"
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

// DialClient reads the credentials, connects and logs in.
func (d *Dialer) DialClient(ctx context.Context) (*Client, error) {
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

// Client is one logged-in session with the DHCP server. It implements
// dhcp.Remote and is safe for concurrent use.
type Client struct {
	cfg  Config
	conn *xssh.Client

	startMu sync.Mutex
	mu      sync.Mutex
	signer  xssh.Signer
	sftp    *sftp.Client
	closed  bool
}

// Close ends the session and drops the key.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.signer = nil
	if c.sftp != nil {
		_ = c.sftp.Close()
		c.sftp = nil
	}
	return c.conn.Close()
}

// lockedBuffer collects stdout and stderr, which the session writes from
// two goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b.Bytes()...)
}

// Run runs command under the command deadline.
func (c *Client) Run(ctx context.Context, command string) (dhcp.Output, error) {
	if err := ctx.Err(); err != nil {
		return dhcp.Output{}, err
	}
	s, err := c.conn.NewSession()
	if err != nil {
		return dhcp.Output{}, &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Target: command, Err: err}
	}
	defer s.Close()
	var out lockedBuffer
	s.Stdout, s.Stderr = &out, &out
	done := make(chan error, 1)
	go func() { done <- s.Run(command) }()

	timer := time.NewTimer(c.cfg.CommandTimeout)
	defer timer.Stop()
	var stopErr error
	select {
	case err = <-done:
	case <-timer.C:
		stopErr = &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: "run", Target: command, Deadline: dhcp.DeadlineCommand, Limit: c.cfg.CommandTimeout, Err: context.DeadlineExceeded}
	case <-ctx.Done():
		stopErr = ctx.Err()
	}
	if stopErr != nil {
		_ = s.Signal(xssh.SIGKILL)
		_ = s.Close()
		<-done
		return dhcp.Output{Output: out.Bytes()}, stopErr
	}
	res := dhcp.Output{Output: out.Bytes()}
	var exit *xssh.ExitError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &exit):
		res.Exit = exit.ExitStatus()
		if exit.Signal() != "" && res.Exit == 0 {
			res.Exit = 128
		}
		return res, nil
	}
	return res, &dhcp.RemoteError{Kind: dhcp.KindTransport, Op: "run", Target: command, Err: err}
}

// Hash runs sha256sum on the file.
func (c *Client) Hash(ctx context.Context, p string) (string, error) {
	cmd := "sha256sum -- " + dhcp.ShellQuote(p)
	out, err := c.Run(ctx, cmd)
	if err != nil {
		var re *dhcp.RemoteError
		if errors.As(err, &re) {
			re.Op = "hash"
		}
		return "", err
	}
	if out.Exit != 0 {
		return "", nil
	}
	sum, _, _ := strings.Cut(string(out.Output), " ")
	if b, err := hex.DecodeString(sum); err != nil || len(b) != 32 {
		c.cfg.Log.Warn("unreadable sha256sum output; treating the remote file as changed", "path", p)
		return "", nil
	}
	return strings.ToLower(sum), nil
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

// dropSFTP closes the SFTP client if it is still s, aborting its requests.
func (c *Client) dropSFTP(s *sftp.Client) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sftp == s {
		c.sftp = nil
	}
	if s != nil {
		_ = s.Close()
	}
}

// Upload writes data to p atomically under the transfer deadline.
func (c *Client) Upload(ctx context.Context, p string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "upload", Target: p, Err: err}
	}
	tmp := path.Join(path.Dir(p), "."+path.Base(p)+".hostforge-"+hex.EncodeToString(rnd[:])+".tmp")

	var (
		mu  sync.Mutex
		cur *sftp.Client
	)
	done := make(chan error, 1)
	go func() {
		s, err := c.sftpClient()
		mu.Lock()
		cur = s
		mu.Unlock()
		if err != nil {
			done <- err
			return
		}
		done <- put(s, tmp, p, data)
	}()
	timer := time.NewTimer(c.cfg.TransferTimeout)
	defer timer.Stop()
	var stopErr error
	select {
	case err := <-done:
		if err != nil {
			return &dhcp.RemoteError{Kind: dhcp.KindTransfer, Op: "upload", Target: p, Err: err}
		}
		return nil
	case <-timer.C:
		stopErr = &dhcp.RemoteError{Kind: dhcp.KindTimeout, Op: "upload", Target: p, Deadline: dhcp.DeadlineTransfer, Limit: c.cfg.TransferTimeout, Err: context.DeadlineExceeded}
	case <-ctx.Done():
		stopErr = ctx.Err()
	}
	// Abort: closing the SFTP client fails its pending requests (the next
	// upload starts a new one); the SSH connection stays up for commands.
	mu.Lock()
	s := cur
	mu.Unlock()
	if s != nil {
		c.dropSFTP(s)
	} else {
		// Still starting the subsystem: closing the connection is the only
		// way to stop it.
		_ = c.conn.Close()
	}
	<-done
	// Best effort: a half-written temporary file is never included by the
	// service, but should not pile up.
	rmCtx, cancel := context.WithTimeout(context.Background(), c.cfg.CommandTimeout)
	defer cancel()
	_, _ = c.Run(rmCtx, "rm -f -- "+dhcp.ShellQuote(tmp))
	return stopErr
}

func put(s *sftp.Client, tmp, p string, data []byte) (err error) {
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
	if err := f.Close(); err != nil {
		return err
	}
	if err := s.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return s.PosixRename(tmp, p)
}
