package redfish_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/redfish"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/bmc/bmctest"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/redfishemu"
	"github.com/hostforge/hostforge/internal/realdata"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const adminPW = "Emulated-Admin-1"

// serve starts a TLS emulator and returns a connector pinned to its
// certificate's fingerprint.
func serve(t *testing.T, e *redfishemu.Emulator) (*redfish.Connector, string) {
	t.Helper()
	srv := httptest.NewTLSServer(e)
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(srv.Certificate().Raw)
	pin := hex.EncodeToString(sum[:])
	c := &redfish.Connector{TLSFor: func(_, _ string) redfish.TLS { return redfish.TLS{FingerprintSHA256: pin} }}
	t.Cleanup(func() { srv.Client().CloseIdleConnections() })
	return c, srv.Listener.Addr().String()
}

func newEmu(t *testing.T, vendor string, clk clock.Clock) *redfishemu.Emulator {
	t.Helper()
	e, err := redfishemu.New(vendor, redfishemu.Options{Clock: clk, AdminPassword: adminPW})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestContractOverEmulator(t *testing.T) {
	for _, v := range redfishemu.Vendors {
		t.Run(v, func(t *testing.T) {
			bmctest.Run(t, func(t *testing.T) bmctest.Env {
				e := newEmu(t, v, clock.NewFake(clock.Epoch))
				c, addr := serve(t, e)
				return bmctest.Env{Connector: c, Address: addr, Admin: bmc.Credential{Username: e.AdminUser(), Password: adminPW}, Vendor: bmc.Vendor(v)}
			})
		})
	}
}

type rig struct {
	site *fakes.Site
	emu  *redfishemu.Emulator
	cfg  *bmc.Configurator
	tg   bmc.Target
	logs *bytes.Buffer
}

func newRig(t *testing.T, vendor string) *rig {
	t.Helper()
	site := fakes.NewSite()
	e := newEmu(t, vendor, site.Clock)
	c, addr := serve(t, e)
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	c.Log = log
	site.Vault.Set(fakes.AdminItem("rack1-node7"), map[string]string{bmc.FieldUsername: e.AdminUser(), bmc.FieldPassword: adminPW})
	site.Vault.Set(fakes.FactoryItem, map[string]string{bmc.FieldUsername: e.AdminUser(), bmc.FieldPassword: "factory-pw-1"})
	cfg := &bmc.Configurator{Connector: c, Vault: site.Vault, Clock: site.Clock, Log: log}
	mac := map[string]string{"dell": "b8:3f:d2:90:97:c4", "lenovo": "b8:3f:d2:90:97:c4", "ami": "b8:3f:d2:90:97:c4", "supermicro": "b8:3f:d2:90:97:c4"}[vendor]
	tg := bmc.Target{Device: "rack1-node7", Address: addr, AdminItem: fakes.AdminItem("rack1-node7"), FactoryItem: fakes.FactoryItem, MonitoringItem: fakes.MonitoringItem, NTPServers: []string{"10.0.0.11", "10.0.0.12"}, SyslogServers: []string{"10.0.0.21"}, ProvisioningMAC: mac, RestrictBoot: true}
	return &rig{site: site, emu: e, cfg: cfg, tg: tg, logs: logs}
}

// converge runs the phase's attempts to their end on the rig's clock.
func (r *rig) converge() bmctest.Outcome {
	return bmctest.Converge(context.Background(), r.cfg, r.tg, r.site.Clock)
}

func (r *rig) configure(t *testing.T) bmctest.Outcome {
	t.Helper()
	o := r.converge()
	if o.Err != nil {
		t.Fatalf("%v\nwaits %v\n%s", o.Err, o.Reasons(), r.logs)
	}
	return o
}

// TestStrategiesOverEmulator: each vendor tree from drifted to converged,
// then a second run makes no PATCH/POST/DELETE at all (request log).
func TestStrategiesOverEmulator(t *testing.T) {
	for _, v := range redfishemu.Vendors {
		t.Run(v, func(t *testing.T) {
			r := newRig(t, v)
			o := r.configure(t)
			if o.Last().Vendor != v || o.Writes() == 0 {
				t.Fatalf("first run: %+v", o.Last())
			}
			before := r.emu.Writes()
			o2 := r.configure(t)
			res2 := o2.Last()
			if r.emu.Writes() != before || o2.Writes() != 0 || len(o2.Attempts) != 1 {
				var ws []string
				for _, q := range r.emu.Requests()[len(r.emu.Requests())-20:] {
					if q.Method != http.MethodGet {
						ws = append(ws, q.Method+" "+q.Path)
					}
				}
				t.Fatalf("second run wrote: %v (steps %v)", ws, res2.Steps)
			}
			if strings.Contains(r.logs.String(), adminPW) {
				t.Fatal("admin password in the logs")
			}
		})
	}
}

func TestBootRestrictionOverEmulator(t *testing.T) {
	for _, v := range []string{"dell", "ami"} {
		t.Run(v, func(t *testing.T) {
			r := newRig(t, v)
			r.configure(t)
			sys := map[string]string{"dell": "/redfish/v1/Systems/System.Embedded.1", "ami": "/redfish/v1/Systems/DGX"}[v]
			order := r.emu.Doc(sys)["Boot"].(map[string]any)["BootOrder"].([]any)
			var prov, other string
			for _, id := range []string{"Boot0002", "Boot0003"} {
				if v == "ami" {
					id = map[string]string{"Boot0002": "Boot0003", "Boot0003": "Boot0004"}[id]
				}
				if prov == "" {
					prov = id
				} else {
					other = id
				}
			}
			if order[0] != prov {
				t.Fatalf("order %v, want %s first", order, prov)
			}
			if en := r.emu.Doc(sys + "/BootOptions/" + other)["BootOptionEnabled"]; en != false {
				t.Fatalf("other NIC option %s enabled = %v", other, en)
			}
			if en := r.emu.Doc(sys + "/BootOptions/Boot0000")["BootOptionEnabled"]; en != true {
				t.Fatal("disk option disabled")
			}
		})
	}
}

func TestBusyOverEmulator(t *testing.T) {
	r := newRig(t, "ami")
	r.emu.Busy(2, "Service busy: host is booting")
	if o := r.configure(t); !slices.Equal(o.Reasons(), []string{bmc.WaitBusy, bmc.WaitBusy}) {
		t.Fatalf("busy for two writes: waits %v", o.Reasons())
	}
	r = newRig(t, "ami")
	r.emu.Busy(1000, "Service busy: host is booting")
	o := r.converge()
	if !bmc.ServiceUnavailable.Is(o.Err) || !strings.Contains(o.Err.Error(), "host is booting") {
		t.Fatalf("err = %v", o.Err)
	}
}

func TestIDRACJobNeverScheduledOverEmulator(t *testing.T) {
	r := newRig(t, "dell")
	r.emu.NeverSchedule = true
	o := r.converge()
	if !bmc.JobNotScheduled.Is(o.Err) {
		t.Fatalf("err = %v", o.Err)
	}
	jobs := r.emu.Doc("/redfish/v1/Managers/iDRAC.Embedded.1/Oem/Dell/Jobs")["Members"].([]any)
	if len(jobs) != 1 { // only the completed job the tree ships with
		t.Fatalf("unscheduled job not deleted: %v", jobs)
	}
	if n := len(r.emu.Doc("/redfish/v1/Systems/System.Embedded.1/Bios/Settings")["Attributes"].(map[string]any)); n != 0 {
		t.Fatalf("%d attributes left pending", n)
	}
}

// rotationRig is a BMC on its factory password, no per-host item, in
// either password profile.
func rotationRig(t *testing.T, vendor string, applyOnReset bool) *rig {
	r := newRig(t, vendor)
	r.emu.SetPassword(r.emu.AdminUser(), "factory-pw-1")
	r.site.Vault.Set(fakes.AdminItem("rack1-node7"), nil)
	if applyOnReset {
		r.emu.ApplyPasswordOnReset()
	}
	return r
}

// rotated checks the vault holds the one working password and nothing
// else, then that a rerun writes nothing.
func (r *rig) rotated(t *testing.T) {
	t.Helper()
	it, _ := r.site.Vault.Item(context.Background(), fakes.AdminItem("rack1-node7"))
	if len(it) != 2 {
		t.Fatalf("admin item keeps rotation state: %d fields", len(it))
	}
	if _, err := r.cfg.Connector.Connect(context.Background(), r.tg.Address, bmc.Credential{Username: it["username"], Password: it["password"]}); err != nil {
		t.Fatalf("rotated credential refused: %v", err)
	}
	if strings.Contains(r.logs.String(), it["password"]) || strings.Contains(r.logs.String(), "factory-pw-1") {
		t.Fatal("credential in the logs")
	}
	before := r.emu.Writes()
	if o := r.configure(t); o.Writes() != 0 || r.emu.Writes() != before {
		var ws []string
		for _, q := range r.emu.Requests() {
			if q.Method != http.MethodGet {
				ws = append(ws, q.Method+" "+q.Path)
			}
		}
		t.Fatalf("rerun wrote %d times: %v", r.emu.Writes()-before, ws[before:])
	}
}

func TestRotationAndColdResetOverEmulator(t *testing.T) {
	for _, applyOnReset := range []bool{false, true} {
		t.Run(map[bool]string{false: "immediate", true: "reset-to-apply"}[applyOnReset], func(t *testing.T) {
			t.Run("one run", func(t *testing.T) {
				r := rotationRig(t, "lenovo", applyOnReset)
				o := r.configure(t)
				if !o.Rotated() || !o.Reset() || r.emu.Resets() != 1 || !slices.Contains(o.Reasons(), bmc.WaitReset) {
					t.Fatalf("rotated %v reset %v, %d resets, waits %v", o.Rotated(), o.Reset(), r.emu.Resets(), o.Reasons())
				}
				r.rotated(t)
			})
			t.Run("lost answer to the password change", func(t *testing.T) {
				r := rotationRig(t, "dell", applyOnReset)
				r.emu.LoseAnswers(http.MethodPatch, "/AccountService/Accounts/2", 1)
				o := r.converge()
				if o.Err != nil {
					if f, _ := hostforge.AsFailure(o.Err); !bmc.PasswordUnconfirmed.Is(o.Err) || !f.Retryable || f.Owner == hostforge.OwnerDCOps {
						t.Fatalf("err = %v", o.Err)
					}
					r.configure(t)
				} else if applyOnReset {
					t.Fatal("a staged change confirmed before the reset")
				}
				if r.emu.Resets() != 1 {
					t.Fatalf("resets = %d", r.emu.Resets())
				}
				r.rotated(t)
			})
		})
	}
}

// TestWorkerLostDuringTheResetWait: the worker dies while Redfish is down
// after the rotation's cold reset; a new worker with nothing in memory
// finishes the run from the vault, with one rotation and one reset.
func TestWorkerLostDuringTheResetWait(t *testing.T) {
	for _, applyOnReset := range []bool{false, true} {
		r := rotationRig(t, "ami", applyOnReset)
		r.emu.SetResetDowntime(4 * time.Minute)
		for i := 0; ; i++ {
			_, err := r.cfg.Configure(context.Background(), r.tg)
			w, ok := hostforge.AsWait(err)
			if !ok || i > 100 {
				t.Fatalf("no reset wait: %v", err)
			}
			r.site.Clock.Advance(w.After)
			if w.Reason == bmc.WaitReset && strings.Contains(w.Detail, "not back") {
				break // Redfish is down: the worker dies here
			}
		}
		r.cfg = &bmc.Configurator{Connector: r.cfg.Connector, Vault: r.site.Vault, Clock: r.site.Clock, Log: r.cfg.Log}
		r.configure(t)
		if r.emu.Resets() != 1 {
			t.Fatalf("resets = %d", r.emu.Resets())
		}
		r.rotated(t)
	}
}

func TestTLSVerification(t *testing.T) {
	e := newEmu(t, "dell", clock.NewFake(clock.Epoch))
	srv := httptest.NewTLSServer(e)
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	cred := bmc.Credential{Username: "root", Password: adminPW}
	ctx := context.Background()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	logs := &bytes.Buffer{}
	cases := []struct {
		name string
		tls  redfish.TLS
		ok   bool
	}{
		{"verified by default: self-signed refused", redfish.TLS{}, false},
		{"per-BMC CA", redfish.TLS{CAPEM: caPEM}, true},
		{"wrong fingerprint", redfish.TLS{FingerprintSHA256: strings.Repeat("ab", 32)}, false},
		{"explicit opt-in", redfish.TLS{InsecureSkipVerify: true}, true},
	}
	for _, tc := range cases {
		c := &redfish.Connector{TLSFor: func(_, _ string) redfish.TLS { return tc.tls }, Log: slog.New(slog.NewTextHandler(logs, nil))}
		_, err := c.Connect(ctx, addr, cred)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
	if !strings.Contains(logs.String(), "opt-in") {
		t.Fatal("skipping verification was not logged")
	}
	c := &redfish.Connector{TLSFor: func(_, _ string) redfish.TLS { return redfish.TLS{CAPEM: caPEM} }}
	if _, err := c.Connect(ctx, addr, bmc.Credential{Username: "root", Password: "nope-nope"}); !errors.Is(err, hostforge.ErrUnauthorized) {
		t.Fatalf("wrong password: %v", err)
	}
}

// TestRealCapturesOverHTTP serves real capture trees and detects them
// through the adapter.
func TestRealCapturesOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want bmc.Vendor
	}{
		{"dell/r750-idrac9", bmc.VendorDell}, {"lenovo/sr670v2-xcc", bmc.VendorLenovo},
		{"ami/dgx-h100-megarac", bmc.VendorAMI}, {"supermicro/sys-821ge-tnhr", bmc.VendorSupermicro},
		{"other/hpe-dl385-gen10plus-ilo5", ""},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			e, err := redfishemu.FromDir(realdata.Path(t, "redfish", tc.dir), redfishemu.Options{Clock: clock.NewFake(clock.Epoch), AdminUser: "hostforge", AdminPassword: adminPW})
			if err != nil {
				t.Fatal(err)
			}
			c, addr := serve(t, e)
			cl, err := c.Connect(context.Background(), addr, bmc.Credential{Username: "hostforge", Password: adminPW})
			if tc.want == "" && err != nil {
				return // a tree without Managers cannot even be logged in to; refused either way
			}
			if err != nil {
				t.Fatal(err)
			}
			id, err := cl.Identify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			v, err := bmc.Detect(id)
			if tc.want == "" {
				if !bmc.VendorUnsupported.Is(err) {
					t.Fatalf("%+v detected as %q", id, v)
				}
				return
			}
			if v != tc.want {
				t.Fatalf("detected %q (%v), want %q", v, err, tc.want)
			}
			if nics, err := cl.HostNICs(context.Background()); err != nil || len(nics) == 0 {
				t.Fatalf("HostNICs on the real tree: %v %v", nics, err)
			}
			if opts, err := cl.BootOptions(context.Background()); err != nil || !slices.ContainsFunc(opts, func(o bmc.BootOption) bool { return o.DisplayName != "" }) {
				t.Fatalf("BootOptions on the real tree: %v %v", opts, err)
			}
		})
	}
}

// BenchmarkConvergedRunOverEmulator: a rerun on a converged iDRAC over
// HTTPS against the emulator (reads only).
func BenchmarkConvergedRunOverEmulator(b *testing.B) {
	site := fakes.NewSite()
	e, _ := redfishemu.New("dell", redfishemu.Options{Clock: site.Clock, AdminPassword: adminPW})
	srv := httptest.NewTLSServer(e)
	defer srv.Close()
	sum := sha256.Sum256(srv.Certificate().Raw)
	c := &redfish.Connector{TLSFor: func(_, _ string) redfish.TLS { return redfish.TLS{FingerprintSHA256: hex.EncodeToString(sum[:])} }}
	site.Vault.Set(fakes.AdminItem("n1"), map[string]string{bmc.FieldUsername: "root", bmc.FieldPassword: adminPW})
	cfg := &bmc.Configurator{Connector: c, Vault: site.Vault, Clock: site.Clock}
	tg := bmc.Target{Device: "n1", Address: srv.Listener.Addr().String(), AdminItem: fakes.AdminItem("n1"), FactoryItem: fakes.FactoryItem, MonitoringItem: fakes.MonitoringItem, NTPServers: []string{"10.0.0.11"}, SyslogServers: []string{"10.0.0.21"}, ProvisioningMAC: "b8:3f:d2:90:97:c4", RestrictBoot: true}
	if o := bmctest.Converge(context.Background(), cfg, tg, site.Clock); o.Err != nil {
		b.Fatal(o.Err)
	}
	b.ResetTimer()
	for b.Loop() {
		if res, err := cfg.Configure(context.Background(), tg); err != nil || res.Writes != 0 {
			b.Fatal(err, res.Writes)
		}
	}
}
