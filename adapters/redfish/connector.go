// Package redfish is the bmc.Connector over Redfish, on gofish
// (github.com/stmcginnis/gofish): gofish's client carries the transport,
// authentication and error decoding (schemas.Error); resources are read and
// written as raw JSON where gofish has no typed call for the vendor path
// (Lenovo has no OEM package; iDRAC attributes, Supermicro syslog).
//
// TLS is verified by default. BMCs ship self-signed certificates, so each
// BMC may be trusted by its CA (TLS.CAPEM) or pinned by the SHA-256
// fingerprint of its certificate (TLS.FingerprintSHA256); Connector.TLSFor
// chooses per BMC, by device name or address. Skipping verification needs
// the explicit TLS.InsecureSkipVerify opt-in and is logged on every
// connection. One http.Transport serves every BMC of one TLS profile and is
// reused across connections; Close releases their idle connections.
//
// Authentication is HTTP basic auth, so verifying a credential is a read:
// a converged run makes no writes, not even a session.
//
// Links stay on the BMC: gofish builds a request's URL by appending a path
// to the endpoint, so a link a BMC answers ("@evil.example/x") could move an
// authenticated request — the password PATCH included — to another host.
// Every path the client follows is checked by CheckLink first and refused
// with BMC_LINK_OFF_ORIGIN.
//
// Secrets: text a BMC answers (its error messages echo refused values) is
// scrubbed of every credential the connection handles, and of the
// process's Connector.Secrets, before it becomes an error.
//
// Timeouts: a request the HTTP client gave up on (Connector.Timeout) while
// the caller's context is live is an unreachable BMC (ErrUnavailable,
// retryable); only the caller's own cancellation or deadline is a context
// error.
package redfish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/stmcginnis/gofish"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// TLS is how one BMC's certificate is verified.
type TLS struct {
	// CAPEM are CA certificates (PEM) to trust instead of the system pool.
	CAPEM []byte
	// FingerprintSHA256 pins the BMC's leaf certificate by the SHA-256 of
	// its DER bytes (hex, colons optional). Chain and name are then not
	// checked: the pin is the trust.
	FingerprintSHA256 string
	// InsecureSkipVerify turns verification off. Explicit opt-in only; every
	// connection made so logs a warning.
	InsecureSkipVerify bool
}

// key identifies a TLS profile: BMCs with equal profiles share a transport.
func (t TLS) key() string {
	ca := ""
	if len(t.CAPEM) > 0 {
		sum := sha256.Sum256(t.CAPEM)
		ca = hex.EncodeToString(sum[:])
	}
	pin := strings.ReplaceAll(strings.ToLower(t.FingerprintSHA256), ":", "")
	return fmt.Sprintf("ca=%s pin=%s insecure=%v", ca, pin, t.InsecureSkipVerify)
}

// Connector opens Redfish connections to BMCs. It is safe for concurrent
// use; Close it when done.
type Connector struct {
	// TLSFor returns the TLS settings of the BMC a connection is for: its
	// device name (hostforge.DeviceFrom of the Connect context; "" when the
	// caller named none) and its address as NetBox records it. nil: verify
	// against the system roots.
	TLSFor func(device, address string) TLS
	// Endpoints maps a BMC's address to the host:port that reaches it (a
	// jump host's forwarded port, a lab's emulator). TLS is still chosen by
	// the BMC's address and device, and still verified.
	Endpoints map[string]string
	// Timeout bounds each request (default bmc.RequestTimeout, 60 s: the
	// BMC phase's attempt bound assumes it).
	Timeout time.Duration
	// Scheme is "https" (default) or "http" for tests.
	Scheme string
	Log    *slog.Logger
	// Transport, when set, is used as is (tests); TLSFor is then ignored.
	Transport http.RoundTripper
	// Secrets is the process's set of secret values: every credential a
	// connection sends is registered in it, and the BMC's text is scrubbed
	// with it (nil: a set per connection).
	Secrets *hostforge.Secrets

	mu         sync.Mutex
	transports map[string]*http.Transport
}

var _ bmc.Connector = (*Connector)(nil)

func (c *Connector) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// MaxIdleConns bounds the idle connections one TLS profile's transport
// keeps across all its BMCs (two per BMC at most), so connecting to a whole
// fleet does not leave a connection, and its two goroutines, per BMC.
const MaxIdleConns = 16

// transport returns the shared transport of a TLS profile, building it on
// first use.
func (c *Connector) transport(t TLS) (*http.Transport, error) {
	cfg, err := tlsConfig(t)
	if err != nil {
		return nil, err
	}
	key := t.key()
	c.mu.Lock()
	defer c.mu.Unlock()
	if tr, ok := c.transports[key]; ok {
		return tr, nil
	}
	tr := &http.Transport{TLSClientConfig: cfg, Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext, IdleConnTimeout: 30 * time.Second,
		MaxIdleConns: MaxIdleConns, MaxIdleConnsPerHost: 2}
	if c.transports == nil {
		c.transports = map[string]*http.Transport{}
	}
	c.transports[key] = tr
	return tr, nil
}

// Close closes the idle connections of every transport. The connector
// stays usable: a later Connect opens new connections.
func (c *Connector) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tr := range c.transports {
		tr.CloseIdleConnections()
	}
	return nil
}

func (c *Connector) httpClient(device, address string, timeout time.Duration) (*http.Client, error) {
	if timeout <= 0 {
		timeout = c.Timeout
	}
	if timeout <= 0 {
		timeout = bmc.RequestTimeout
	}
	if c.Transport != nil {
		return &http.Client{Transport: c.Transport, Timeout: timeout}, nil
	}
	var t TLS
	if c.TLSFor != nil {
		t = c.TLSFor(device, address)
	}
	tr, err := c.transport(t)
	if err != nil {
		return nil, err
	}
	if t.InsecureSkipVerify {
		c.log().Warn("TLS verification of the BMC disabled by explicit opt-in", "device", device, "address", address)
	}
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

func tlsConfig(t TLS) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case t.InsecureSkipVerify:
		cfg.InsecureSkipVerify = true // opt-in: TLS.InsecureSkipVerify, logged per connection
	case t.FingerprintSHA256 != "":
		want, err := ParseFingerprint(t.FingerprintSHA256)
		if err != nil {
			return nil, err
		}
		// The pin replaces chain verification; VerifyPeerCertificate still
		// runs, so a certificate that does not match is refused.
		cfg.InsecureSkipVerify = true
		cfg.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("redfish: BMC presented no certificate")
			}
			got := sha256.Sum256(raw[0])
			if !bytes.Equal(got[:], want) {
				return &pinMismatch{got: got}
			}
			return nil
		}
	case len(t.CAPEM) > 0:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(t.CAPEM) {
			return nil, fmt.Errorf("redfish: TLS CA: no certificate in PEM: %w", hostforge.ErrInvalid)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// ParseFingerprint reads a SHA-256 certificate fingerprint written as hex,
// with or without colons, in either case.
func ParseFingerprint(s string) ([]byte, error) {
	b, err := hex.DecodeString(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), ":", ""))
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("redfish: TLS fingerprint is not a SHA-256 hex digest: %w", hostforge.ErrInvalid)
	}
	return b, nil
}

// Connect reads the service root (anonymously, as Redfish allows), then
// verifies the credential with an authenticated read of the managers.
func (c *Connector) Connect(ctx context.Context, address string, cred bmc.Credential) (bmc.Client, error) {
	cl, err := c.connect(ctx, address, cred, 0)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// connect is Connect with each request bounded by timeout instead of
// c.Timeout when timeout > 0 (the firmware push of a large image).
func (c *Connector) connect(ctx context.Context, address string, cred bmc.Credential, timeout time.Duration) (*client, error) {
	scheme := c.Scheme
	if scheme == "" {
		scheme = "https"
	}
	dial := address
	if ep, ok := c.Endpoints[address]; ok {
		dial = ep
	}
	endpoint := scheme + "://" + dial
	u, err := url.Parse(endpoint)
	if err != nil || u.Host != dial || u.User != nil || strings.ContainsAny(dial, "/ @\\?#") {
		return nil, fmt.Errorf("redfish: address %q: %w", dial, hostforge.ErrInvalid)
	}
	device := hostforge.DeviceFrom(ctx)
	hc, err := c.httpClient(device, address, timeout)
	if err != nil {
		return nil, err
	}
	sec := c.Secrets.OrNew()
	sec.AddCredential(cred.Username, cred.Password)
	api, err := gofish.ConnectContext(ctx, gofish.ClientConfig{
		Endpoint: endpoint, Username: cred.Username, Password: cred.Password, BasicAuth: true,
		HTTPClient: hc, NoModifyTransport: true, ReuseConnections: true,
	})
	if err != nil {
		if u := Untrusted(u.Host, err); u != nil {
			return nil, u
		}
		return nil, convert(ctx, sec, err)
	}
	cl := &client{api: api, endpoint: u, secrets: sec}
	if _, err := cl.get(ctx, "/redfish/v1/Managers"); err != nil {
		return nil, err
	}
	return cl, nil
}
