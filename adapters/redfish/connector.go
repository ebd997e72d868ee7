// Package redfish is the bmc.Connector over Redfish, on gofish
// (github.com/stmcginnis/gofish): gofish's client carries the transport,
// authentication and error decoding (schemas.Error); resources are read and
// written as raw JSON where gofish has no typed call for the vendor path
// (Lenovo has no OEM package; iDRAC attributes, Supermicro syslog).
//
// TLS is verified by default. BMCs ship self-signed certificates, so each
// BMC may be pinned by its CA (TLS.CAPEM) or by the SHA-256 fingerprint of
// its certificate (TLS.FingerprintSHA256). Skipping verification needs the
// explicit TLS.InsecureSkipVerify opt-in and is logged on every connection.
// Authentication is HTTP basic auth, so verifying a credential is a read:
// a converged run makes no writes, not even a session.
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

// Connector opens Redfish connections to BMCs.
type Connector struct {
	// TLSFor returns the TLS settings of the BMC at an address (nil: verify
	// against the system roots).
	TLSFor func(address string) TLS
	// Timeout bounds each request (default bmc.RequestTimeout, 60 s: the
	// BMC phase's attempt bound assumes it).
	Timeout time.Duration
	// Scheme is "https" (default) or "http" for tests.
	Scheme string
	Log    *slog.Logger
	// Transport, when set, is used as is (tests); TLSFor is then ignored.
	Transport http.RoundTripper
}

func (c *Connector) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

func (c *Connector) httpClient(address string) (*http.Client, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = bmc.RequestTimeout
	}
	if c.Transport != nil {
		return &http.Client{Transport: c.Transport, Timeout: timeout}, nil
	}
	var t TLS
	if c.TLSFor != nil {
		t = c.TLSFor(address)
	}
	cfg, err := tlsConfig(t)
	if err != nil {
		return nil, err
	}
	if t.InsecureSkipVerify {
		c.log().Warn("TLS verification of the BMC disabled by explicit opt-in", "address", address)
	}
	tr := &http.Transport{TLSClientConfig: cfg, Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext, IdleConnTimeout: 30 * time.Second, MaxIdleConnsPerHost: 2}
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

func tlsConfig(t TLS) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case t.InsecureSkipVerify:
		cfg.InsecureSkipVerify = true // opt-in: TLS.InsecureSkipVerify, logged per connection
	case t.FingerprintSHA256 != "":
		want, err := hex.DecodeString(strings.ReplaceAll(strings.ToLower(t.FingerprintSHA256), ":", ""))
		if err != nil || len(want) != sha256.Size {
			return nil, fmt.Errorf("redfish: TLS fingerprint is not a SHA-256 hex digest: %w", hostforge.ErrInvalid)
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
				return fmt.Errorf("redfish: BMC certificate fingerprint %x does not match the pin", got)
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

// Connect reads the service root (anonymously, as Redfish allows), then
// verifies the credential with an authenticated read of the managers.
func (c *Connector) Connect(ctx context.Context, address string, cred bmc.Credential) (bmc.Client, error) {
	scheme := c.Scheme
	if scheme == "" {
		scheme = "https"
	}
	endpoint := scheme + "://" + address
	if _, err := url.Parse(endpoint); err != nil || strings.ContainsAny(address, "/ ") {
		return nil, fmt.Errorf("redfish: address %q: %w", address, hostforge.ErrInvalid)
	}
	hc, err := c.httpClient(address)
	if err != nil {
		return nil, err
	}
	api, err := gofish.ConnectContext(ctx, gofish.ClientConfig{
		Endpoint: endpoint, Username: cred.Username, Password: cred.Password, BasicAuth: true,
		HTTPClient: hc, NoModifyTransport: true, ReuseConnections: true,
	})
	if err != nil {
		return nil, convert(err)
	}
	cl := &client{api: api}
	if _, err := cl.get(ctx, "/redfish/v1/Managers"); err != nil {
		return nil, err
	}
	return cl, nil
}
