package redfish_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
)

// A BMC that refuses a value echoes it (DMTF PropertyValueFormatError:
// "The value %1 for the property %2 ..."). The adapter keeps the BMC's
// reason and drops the value, whichever credential it was: the password
// being set, the one the connection logged in with, or one the process
// registered.
func TestRefusedPasswordEchoIsScrubbed(t *testing.T) {
	for _, v := range []string{"dell", "supermicro"} {
		t.Run(v, func(t *testing.T) {
			e := newEmu(t, v, clock.NewFake(clock.Epoch))
			c, addr := serve(t, e)
			ctx := context.Background()
			cl, err := c.Connect(ctx, addr, bmc.Credential{Username: e.AdminUser(), Password: adminPW})
			if err != nil {
				t.Fatal(err)
			}
			const pw = `Echo"Me\Pw-1`
			e.RefusePasswords(1)
			var werr error
			if v == "supermicro" {
				_, werr = cl.CreateAccount(ctx, bmc.Account{UserName: "ipmi_exporter", Role: "ReadOnly", Enabled: true}, pw)
			} else {
				accts, err := cl.ListAccounts(ctx)
				if err != nil || len(accts) == 0 {
					t.Fatal(accts, err)
				}
				werr = cl.SetPassword(ctx, accts[len(accts)-1].ID, pw)
			}
			var be *bmc.Error
			if !errors.As(werr, &be) || be.Status != http.StatusBadRequest || !errors.Is(werr, hostforge.ErrInvalid) {
				t.Fatalf("err = %v, want the BMC's 400", werr)
			}
			for _, s := range hostforge.Variants(pw) {
				if strings.Contains(werr.Error(), s) || strings.Contains(be.Message, s) {
					t.Fatalf("the refused password reached the error: %v", werr)
				}
			}
			if !strings.Contains(be.Message, "for the property Password") || !strings.Contains(be.Message, hostforge.Redacted) {
				t.Fatalf("the BMC's reason was lost: %q", be.Message)
			}
		})
	}
}

// The same echo through the BMC phase, with the process's set: the
// Failure, its JSON and the logs carry the reason, never the value.
func TestPhaseOverEchoingBMCKeepsSecretsOut(t *testing.T) {
	r := rotationRig(t, "lenovo", false)
	r.cfg.NewPassword = func() (string, error) { return "Rotated-Echo-Pw-9", nil }
	r.cfg.Secrets = hostforge.NewSecrets()
	r.emu.RefusePasswords(1)
	o := r.converge()
	if !bmc.WriteRejected.Is(o.Err) {
		t.Fatalf("err = %v", o.Err)
	}
	f, _ := hostforge.AsFailure(o.Err)
	b, _ := json.Marshal(f)
	for _, s := range []string{o.Err.Error(), string(b), r.logs.String()} {
		if strings.Contains(s, "Rotated-Echo-Pw-9") || strings.Contains(s, "factory-pw-1") {
			t.Fatalf("a secret reached the failure or the logs: %s", s)
		}
	}
	if !strings.Contains(o.Err.Error(), "PropertyValueFormatError") && !strings.Contains(o.Err.Error(), "for the property Password") {
		t.Fatalf("the BMC's reason was lost: %v", o.Err)
	}
}

func TestCheckLink(t *testing.T) {
	for _, tc := range []struct {
		link string
		ok   bool
	}{
		{"/redfish/v1/Managers/iDRAC.Embedded.1", true},
		{"/redfish/v1/Chassis/1/Thermal#/Fans/0", true},
		{"/redfish/v1/Dell/Managers/iDRAC.Embedded.1/DelliDRACCard/iDRAC.Embedded.1-1%23IDRACinfo", true},
		{"/redfish/v1/Systems/1/BootOptions?$expand=.", true},
		{"/redfish", true},
		{"@evil.example/x", false},
		{"/redfish/v1/@evil.example/x", false},
		{"//evil.example/redfish/v1", false},
		{"https://evil.example/redfish/v1", false},
		{"redfish/v1/Managers", false},
		{"/redfish/v1/../../admin", false},
		{"/redfish/v1/%2e%2e/x", false},
		{"/redfish/v1/%40evil/x", false},
		{`/redfish/v1\..\x`, false},
		{"/redfish/v1/Managers/1 ", false},
		{"/redfish/v1/Man\nagers", false},
		{"/redfish/v1/%zz", false},
		{"/other/v1", false},
		{"", false},
	} {
		if err := redfish.CheckLink(tc.link); (err == nil) != tc.ok {
			t.Errorf("CheckLink(%q) = %v, want ok=%v", tc.link, err, tc.ok)
		}
		// A push URI may lie outside /redfish/, nothing else differs.
		pushOK := tc.ok || tc.link == "/other/v1"
		if err := redfish.CheckPushURI(tc.link); (err == nil) != pushOK {
			t.Errorf("CheckPushURI(%q) = %v, want ok=%v", tc.link, err, pushOK)
		}
	}
	if err := redfish.CheckPushURI("/mfwupdate"); err != nil {
		t.Errorf("CheckPushURI(XCC's /mfwupdate) = %v", err)
	}
}

// evilServer counts the requests that reach it and those that carry a
// credential. It serves httptest's certificate, the same one the BMC
// emulator serves, so only the link check stands between a planted link
// and the credential.
func evilServer(t *testing.T) (host string, hits, withAuth *atomic.Int32) {
	hits, withAuth = &atomic.Int32{}, &atomic.Int32{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "" {
			withAuth.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"Members":[{"@odata.id":"/redfish/v1/AccountService/Accounts/2"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), hits, withAuth
}

// Links a BMC answers must stay on the BMC: a planted "@host/x" link would
// otherwise move the authenticated request — the password PATCH too — to
// another host. The phase fails with BMC_LINK_OFF_ORIGIN and nothing
// reaches the other host.
func TestLinksThatLeaveTheBMCAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(e interface {
			Edit(string, func(map[string]any))
		}, evil string)
	}{
		{"account collection", func(e interface {
			Edit(string, func(map[string]any))
		}, evil string) {
			e.Edit("/redfish/v1/AccountService", func(d map[string]any) {
				d["Accounts"] = map[string]any{"@odata.id": "@" + evil + "/redfish/v1/AccountService/Accounts"}
			})
		}},
		{"manager member", func(e interface {
			Edit(string, func(map[string]any))
		}, evil string) {
			e.Edit("/redfish/v1/Managers", func(d map[string]any) {
				d["Members"] = []any{map[string]any{"@odata.id": "@" + evil + "/redfish/v1/Managers/1"}}
			})
		}},
		{"reset action target", func(e interface {
			Edit(string, func(map[string]any))
		}, evil string) {
			e.Edit("/redfish/v1/Managers/1", func(d map[string]any) {
				d["Actions"] = map[string]any{"#Manager.Reset": map[string]any{"target": "@" + evil + "/redfish/v1/Managers/1/Actions/Manager.Reset"}}
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rotationRig(t, "lenovo", false)
			evil, hits, withAuth := evilServer(t)
			tc.plant(r.emu, evil)
			o := r.converge()
			if hits.Load() != 0 || withAuth.Load() != 0 {
				t.Fatalf("%d requests (%d with a credential) reached the other host", hits.Load(), withAuth.Load())
			}
			if !bmc.LinkOffOrigin.Is(o.Err) {
				t.Fatalf("err = %v, want BMC_LINK_OFF_ORIGIN", o.Err)
			}
		})
	}
}

// stallingBMC accepts connections and answers nothing until the test ends.
func stallingBMC(t *testing.T) (*redfish.Connector, string) {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	sum := sha256.Sum256(srv.Certificate().Raw)
	pin := hex.EncodeToString(sum[:])
	c := &redfish.Connector{Timeout: 200 * time.Millisecond, TLSFor: func(_, _ string) redfish.TLS { return redfish.TLS{FingerprintSHA256: pin} }}
	t.Cleanup(func() { _ = c.Close() })
	return c, srv.Listener.Addr().String()
}

// A BMC that does not answer within the client's timeout, while the caller
// still waits, is unreachable (retryable), not a cancelled run; a caller
// that gives up is cancelled.
func TestClientTimeoutIsUnreachableNotCancelled(t *testing.T) {
	c, addr := stallingBMC(t)
	cred := bmc.Credential{Username: "root", Password: "pw-123456"}

	_, err := c.Connect(context.Background(), addr, cred)
	if !errors.Is(err, hostforge.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || hostforge.Settled(err) {
		t.Fatalf("client timeout: %v; want ErrUnavailable with no context error in the chain", err)
	}
	specs := hostforge.SystemSpecs{Unavailable: bmc.Unreachable}
	if f, ok := hostforge.AsFailure(specs.Classify(err, bmc.Phase, "connect")); !ok || f.Code != bmc.Unreachable.Code || !f.Retryable {
		t.Fatalf("classified as %v, want BMC_UNREACHABLE", f)
	}
	reader := &bmc.LinkReader{Connector: c, Vault: vaultWith(t, cred)}
	if _, err := reader.FrontendLinks(context.Background(), addr, "bmc-admin-n1", nil); !bmc.LinkUnobservable.Is(err) || hostforge.Cancelled.Is(err) {
		t.Fatalf("link read: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c.Timeout = time.Minute
	_, err = c.Connect(ctx, addr, cred)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("caller's deadline: %v, want the context's error", err)
	}
	if _, f, _ := hostforge.Classify(err); f.Code != hostforge.Cancelled.Code {
		t.Fatalf("caller's deadline classified %s, want CANCELLED", f.Code)
	}
}

func vaultWith(t *testing.T, cred bmc.Credential) bmc.Vault {
	t.Helper()
	site := fakes.NewSite()
	site.Vault.Set("bmc-admin-n1", map[string]string{bmc.FieldUsername: cred.Username, bmc.FieldPassword: cred.Password})
	return site.Vault
}

// One transport per TLS profile, reused by every BMC: connecting to many
// BMCs leaves neither a transport nor idle connections (two goroutines
// each) per BMC behind, and Close leaves no goroutine at all.
func TestTransportsAreSharedAndClosed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const bmcs = 24
	var addrs []string
	var servers []*httptest.Server
	for range bmcs {
		e := newEmu(t, "ami", clock.NewFake(clock.Epoch))
		srv := httptest.NewTLSServer(e)
		servers = append(servers, srv)
		addrs = append(addrs, srv.Listener.Addr().String())
	}
	// httptest servers share one certificate: one pin, one profile.
	sum := sha256.Sum256(servers[0].Certificate().Raw)
	pin := hex.EncodeToString(sum[:])
	c := &redfish.Connector{TLSFor: func(_, _ string) redfish.TLS { return redfish.TLS{FingerprintSHA256: pin} }}
	before := runtime.NumGoroutine()
	for _, addr := range addrs {
		cl, err := c.Connect(context.Background(), addr, bmc.Credential{Username: "admin", Password: adminPW})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Identify(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := redfish.Transports(c); n != 1 {
		t.Fatalf("%d transports for one TLS profile", n)
	}
	// Each idle client connection holds two goroutines, and each BMC's
	// server one more per connection: the pool, not the fleet, bounds them.
	if grown := runtime.NumGoroutine() - before; grown > 3*redfish.MaxIdleConns+8 {
		t.Fatalf("%d goroutines more after connecting to %d BMCs (bound %d)", grown, bmcs, 3*redfish.MaxIdleConns+8)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		s.Close()
	}
}

// The connector chooses TLS by the device the caller names
// (hostforge.WithDevice) and the BMC's address, and dials the endpoint the
// address maps to.
func TestTLSForSeesDeviceAndAddress(t *testing.T) {
	e := newEmu(t, "dell", clock.NewFake(clock.Epoch))
	srv := httptest.NewTLSServer(e)
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	pin := hex.EncodeToString(sum[:])
	var seen []string
	c := &redfish.Connector{
		Endpoints: map[string]string{"10.10.0.12": srv.Listener.Addr().String()},
		TLSFor: func(device, address string) redfish.TLS {
			seen = append(seen, device+"@"+address)
			if device == "rack1-node7" {
				return redfish.TLS{FingerprintSHA256: pin}
			}
			return redfish.TLS{}
		},
	}
	defer c.Close()
	cred := bmc.Credential{Username: "root", Password: adminPW}
	if _, err := c.Connect(hostforge.WithDevice(context.Background(), "rack1-node7"), "10.10.0.12", cred); err != nil {
		t.Fatalf("pinned by device name: %v", err)
	}
	if _, err := c.Connect(hostforge.WithDevice(context.Background(), "rack1-node8"), "10.10.0.12", cred); err == nil {
		t.Fatal("another device's pin was used")
	}
	if strings.Join(seen, ",") != "rack1-node7@10.10.0.12,rack1-node8@10.10.0.12" {
		t.Fatalf("TLSFor saw %v", seen)
	}
}

// A BMC whose certificate the site does not trust fails at once with
// BMC_TLS_UNTRUSTED and the certificate's SHA-256 — not a wait for an
// unreachable BMC that ends, minutes later, in advice about power and
// cabling — whether no rule trusts it or its pin differs.
func TestUntrustedCertificateIsItsOwnFailure(t *testing.T) {
	e := newEmu(t, "ami", clock.NewFake(clock.Epoch))
	srv := httptest.NewTLSServer(e)
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	other := sha256.Sum256([]byte("another certificate"))
	for name, tlsCfg := range map[string]redfish.TLS{
		"system roots": {},
		"another pin":  {FingerprintSHA256: hex.EncodeToString(other[:])},
	} {
		t.Run(name, func(t *testing.T) {
			c := &redfish.Connector{TLSFor: func(_, _ string) redfish.TLS { return tlsCfg }}
			defer c.Close()
			_, err := c.Connect(context.Background(), srv.Listener.Addr().String(), bmc.Credential{Username: "admin", Password: adminPW})
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != bmc.TLSUntrusted.Code || f.Retryable {
				t.Fatalf("Connect: %v, want %s", err, bmc.TLSUntrusted.Code)
			}
			if !strings.Contains(f.Message, redfish.Fingerprint(sum[:])) {
				t.Errorf("the message does not give the certificate's SHA-256 %s: %s", redfish.Fingerprint(sum[:]), f.Message)
			}
		})
	}
}
