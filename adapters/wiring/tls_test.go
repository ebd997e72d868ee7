package wiring

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes/redfishemu"
)

const tlsAdminPW = "Emulated-Admin-1"

// emulatorBMC serves a Redfish emulator over TLS with cert (httptest's own
// self-signed certificate when nil) and returns its address and the
// SHA-256 pin of its certificate.
func emulatorBMC(t *testing.T, cert *tls.Certificate) (addr, pin string) {
	t.Helper()
	e, err := redfishemu.New("dell", redfishemu.Options{Clock: clock.NewFake(clock.Epoch), AdminPassword: tlsAdminPW})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(e)
	if cert != nil {
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	return srv.Listener.Addr().String(), hex.EncodeToString(sum[:])
}

// caSigned makes a CA and a certificate it signs for 127.0.0.1; it writes
// the CA to a file and returns the file and the certificate.
func caSigned(t *testing.T) (caFile string, cert tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "site BMC CA"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "bmc"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "bmc-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// connector parses a config whose bmc section is bmcYAML and builds its
// Redfish connector, logging to logs.
func connector(t *testing.T, bmcYAML string, logs *bytes.Buffer) bmc.Connector {
	t.Helper()
	doc := "site: lab1\nnetbox:\n  url: https://netbox.example.net\nbmc:\n" + bmcYAML
	cfg, err := parseConfig([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	c, err := openBMCConnector(cfg, slog.New(slog.NewTextHandler(logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func wrongPin() string { return strings.Repeat("ab", 32) }

// Per-BMC TLS trust by device name or address range, each with a positive
// case: a pinned self-signed BMC is accepted, a wrong pin refused, a
// CA-signed BMC verifies against its CA, a device matched by name wins over
// a range, the narrowest range wins among ranges, and the section-wide
// ca_file of older configs still applies to BMCs no rule matches.
func TestPerBMCTLS(t *testing.T) {
	selfSigned, pin := emulatorBMC(t, nil)
	caFile, cert := caSigned(t)
	signed, _ := emulatorBMC(t, &cert)
	tests := []struct {
		name   string
		bmc    string
		device string
		addr   string
		ok     bool
	}{
		{"pinned self-signed BMC, by device", fmt.Sprintf("  tls:\n    - devices: [n1]\n      fingerprint_sha256: %q\n", pin), "n1", selfSigned, true},
		{"pin written with colons, upper case", fmt.Sprintf("  tls:\n    - devices: [n1]\n      fingerprint_sha256: %q\n", colons(strings.ToUpper(pin))), "n1", selfSigned, true},
		{"wrong pin refused", fmt.Sprintf("  tls:\n    - devices: [n1]\n      fingerprint_sha256: %q\n", wrongPin()), "n1", selfSigned, false},
		{"no rule: self-signed refused by default", "  endpoints: []\n", "n1", selfSigned, false},
		{"CA-signed BMC verifies, by range", fmt.Sprintf("  tls:\n    - cidrs: [127.0.0.0/8]\n      ca_file: %s\n", caFile), "n1", signed, true},
		{"CA of another BMC refused", fmt.Sprintf("  tls:\n    - cidrs: [127.0.0.0/8]\n      ca_file: %s\n", caFile), "n1", selfSigned, false},
		{"device wins over a range", fmt.Sprintf("  tls:\n    - cidrs: [127.0.0.1/32]\n      fingerprint_sha256: %q\n    - devices: [n1]\n      fingerprint_sha256: %q\n", wrongPin(), pin), "n1", selfSigned, true},
		{"device wins over a range, both ways", fmt.Sprintf("  tls:\n    - cidrs: [127.0.0.1/32]\n      fingerprint_sha256: %q\n    - devices: [n1]\n      fingerprint_sha256: %q\n", pin, wrongPin()), "n1", selfSigned, false},
		{"another device falls to the range", fmt.Sprintf("  tls:\n    - cidrs: [127.0.0.0/8]\n      fingerprint_sha256: %q\n    - devices: [n1]\n      fingerprint_sha256: %q\n", pin, wrongPin()), "n2", selfSigned, true},
		{"narrowest range wins", fmt.Sprintf("  tls:\n    - cidrs: [127.0.0.0/8]\n      fingerprint_sha256: %q\n    - cidrs: [127.0.0.1/32]\n      fingerprint_sha256: %q\n", wrongPin(), pin), "n1", selfSigned, true},
		{"section-wide ca_file still applies", fmt.Sprintf("  ca_file: %s\n", caFile), "n1", signed, true},
		{"a rule beats the section-wide default", fmt.Sprintf("  ca_file: %s\n  tls:\n    - devices: [n1]\n      fingerprint_sha256: %q\n", caFile, pin), "n1", selfSigned, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			c := connector(t, tc.bmc, &logs)
			ctx := hostforge.WithDevice(context.Background(), tc.device)
			_, err := c.Connect(ctx, tc.addr, bmc.Credential{Username: "root", Password: tlsAdminPW})
			if (err == nil) != tc.ok {
				t.Fatalf("Connect: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// insecure_skip_verify stays an explicit opt-in, logged at every use.
func TestInsecureRuleIsLoggedAtEveryUse(t *testing.T) {
	addr, _ := emulatorBMC(t, nil)
	var logs bytes.Buffer
	c := connector(t, "  tls:\n    - devices: [lab-node]\n      insecure_skip_verify: true\n", &logs)
	ctx := hostforge.WithDevice(context.Background(), "lab-node")
	for range 2 {
		if _, err := c.Connect(ctx, addr, bmc.Credential{Username: "root", Password: tlsAdminPW}); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "TLS verification of the BMC disabled by explicit opt-in"); n != 2 {
		t.Fatalf("%d warnings for two connections:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "bmc.tls[0]") {
		t.Fatalf("the opt-in rule was not logged at wiring:\n%s", logs.String())
	}
	// Another device is not covered by the opt-in.
	if _, err := c.Connect(hostforge.WithDevice(context.Background(), "n9"), addr, bmc.Credential{Username: "root", Password: tlsAdminPW}); err == nil {
		t.Fatal("the opt-in leaked to a device the rule does not name")
	}
}

func colons(hexs string) string {
	var parts []string
	for i := 0; i < len(hexs); i += 2 {
		parts = append(parts, hexs[i:i+2])
	}
	return strings.Join(parts, ":")
}

func TestBMCTLSConfigErrors(t *testing.T) {
	pin := strings.Repeat("0f", 32)
	for _, tc := range []struct {
		name, bmc, want string
	}{
		{"both at the top", "  ca_file: /x.pem\n  insecure_skip_verify: true\n", "bmc.insecure_skip_verify: set ca_file or insecure_skip_verify, not both"},
		{"a rule for nobody", fmt.Sprintf("  tls:\n    - fingerprint_sha256: %q\n", pin), "bmc.tls[0]: names no devices and no cidrs"},
		{"two trusts", fmt.Sprintf("  tls:\n    - devices: [n1]\n      fingerprint_sha256: %q\n      ca_file: /x.pem\n", pin), "bmc.tls[0]: set exactly one of"},
		{"no trust", "  tls:\n    - devices: [n1]\n", "bmc.tls[0]: set exactly one of"},
		{"bad pin", "  tls:\n    - devices: [n1]\n      fingerprint_sha256: abc\n", "bmc.tls[0].fingerprint_sha256"},
		{"device twice", fmt.Sprintf("  tls:\n    - devices: [n1]\n      fingerprint_sha256: %q\n    - devices: [n1]\n      insecure_skip_verify: true\n", pin), "bmc.tls[1].devices[0]: device n1 is already named by bmc.tls[0]"},
		{"range twice", fmt.Sprintf("  tls:\n    - cidrs: [10.0.0.0/24]\n      fingerprint_sha256: %q\n    - cidrs: [10.0.0.7/24]\n      insecure_skip_verify: true\n", pin), "bmc.tls[1].cidrs[0]"},
		{"bad range", fmt.Sprintf("  tls:\n    - cidrs: [10.0.0.0]\n      fingerprint_sha256: %q\n", pin), "bmc.tls[0].cidrs[0]"},
		{"bad network", "  networks: [nope]\n", "bmc.networks[0]"},
		{"relative CA path", "  redfish_verify_ca_paths: [certs/ca.pem]\n", "bmc.redfish_verify_ca_paths[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig([]byte("site: lab1\nnetbox:\n  url: https://netbox.example.net\nbmc:\n" + tc.bmc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// The bmc section of the sample config parses on its own.
func TestBMCSampleParses(t *testing.T) {
	var bmcSample string
	for _, k := range Reference {
		if k.Name == "bmc" {
			bmcSample = sectionExample(k)
		}
	}
	doc := "site: lab1\nnetbox:\n  url: https://netbox.example.net\n" + bmcSample
	c, err := parseConfig([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	if sc := c.SiteConfig(); len(sc.BMCNetworks) != 1 || len(sc.RedfishVerifyCAPaths) != 1 {
		t.Fatalf("site config %+v", sc)
	}
}
