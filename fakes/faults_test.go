package fakes_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/intent"
	"github.com/hostforge/hostforge/ironic"
)

// aWrite is one write of one fake system, and how to see whether it took
// effect.
type aWrite struct {
	name   string
	system string
	op     string
	// setup prepares the site; write performs the write; took reports
	// whether its effect is visible.
	setup func(t *testing.T, s *fakes.Site)
	write func(ctx context.Context, s *fakes.Site) error
	took  func(s *fakes.Site) bool
}

const faultHost = "h1"

func deviceID(s *fakes.Site, name string) int {
	id := 0
	s.NetBox.View(func(st *fakes.NetBoxState) { id = st.DeviceByName(name).ID })
	return id
}

func deviceOf(s *fakes.Site, name string) (d fakes.NBDevice) {
	s.NetBox.View(func(st *fakes.NetBoxState) { d = *st.DeviceByName(name) })
	return d
}

// everyFakesWrites lists a write of every fake: NetBox, the fleet
// manager and its proof ledger, the vault, the DHCP server, a BMC, Ironic.
func everyFakesWrites() []aWrite {
	dhcpFile := "/etc/dhcp/hosts.d/h1.conf"
	return []aWrite{
		{name: "netbox status", system: fakes.SysNetBox, op: "set_status",
			write: func(ctx context.Context, s *fakes.Site) error {
				return s.NetBox.SetStatus(ctx, deviceID(s, faultHost), intent.StatusActive)
			},
			took: func(s *fakes.Site) bool { return deviceOf(s, faultHost).Status == string(intent.StatusActive) }},
		{name: "netbox tags", system: fakes.SysNetBox, op: "add_tags",
			write: func(ctx context.Context, s *fakes.Site) error {
				return s.NetBox.AddTags(ctx, deviceID(s, faultHost), "ironic")
			},
			took: func(s *fakes.Site) bool {
				d, _ := s.NetBox.Device(context.Background(), faultHost)
				return d.HasTag("ironic")
			}},
		{name: "netbox platform class", system: fakes.SysNetBox, op: "set_platform_class",
			write: func(ctx context.Context, s *fakes.Site) error {
				return s.NetBox.SetPlatformClass(ctx, deviceID(s, faultHost), "DELL_R7615_01")
			},
			took: func(s *fakes.Site) bool {
				return deviceOf(s, faultHost).CustomFields["platform_class"] == "DELL_R7615_01"
			}},
		{name: "fleet manager platform class", system: fakes.SysFleetManager, op: "set_platform_class",
			write: func(ctx context.Context, s *fakes.Site) error {
				return s.FleetManager.SetPlatformClass(ctx, faultHost, "DELL_R7615_01")
			},
			took: func(s *fakes.Site) bool { return s.FleetManager.Get(faultHost) == "DELL_R7615_01" }},
		{name: "fleet manager proof", system: fakes.SysFleetManager, op: "prove_enrollment",
			setup: func(_ *testing.T, s *fakes.Site) {
				s.Proofs.Register(faultHost, "id-1")
				s.Proofs.SetReference(faultHost, "ironic-1/node-1")
			},
			write: func(ctx context.Context, s *fakes.Site) error {
				rec, _ := s.Proofs.Record(faultHost)
				_, err := s.Proofs.ProveEnrollment(ctx, faultHost, "id-1", "ironic-1/node-1", rec.Revision, "run-1", s.Clock.Now().Add(time.Hour))
				return err
			},
			took: func(s *fakes.Site) bool { r, _ := s.Proofs.Record(faultHost); return r.Valid() }},
		{name: "vault item", system: fakes.SysVault, op: "put_item",
			write: func(ctx context.Context, s *fakes.Site) error {
				return s.Vault.PutItem(ctx, "bmc-admin-h1", map[string]string{"username": "admin", "password": "rotated-1"})
			},
			took: func(s *fakes.Site) bool {
				it, _ := s.Vault.Item(context.Background(), "bmc-admin-h1")
				return it["password"] == "rotated-1"
			}},
		{name: "dhcp upload", system: fakes.SysDHCP, op: "upload",
			setup: func(_ *testing.T, s *fakes.Site) { s.DHCP.Mkdir("/etc/dhcp/hosts.d") },
			write: func(ctx context.Context, s *fakes.Site) error {
				r, err := s.DHCP.Dial(ctx)
				if err != nil {
					return err
				}
				defer r.Close()
				return r.Upload(ctx, dhcpFile, []byte("# new\n"))
			},
			took: func(s *fakes.Site) bool { b, ok := s.DHCP.File(dhcpFile); return ok && string(b) == "# new\n" }},
		{name: "dhcp command", system: fakes.SysDHCP, op: "run",
			write: func(ctx context.Context, s *fakes.Site) error {
				r, err := s.DHCP.Dial(ctx)
				if err != nil {
					return err
				}
				defer r.Close()
				_, err = r.Run(ctx, s.DHCP.Config().Restart)
				return err
			},
			took: func(s *fakes.Site) bool { return s.DHCP.Restarts() == 1 }},
		{name: "bmc password", system: fakes.SysBMC, op: "set_password",
			write: func(ctx context.Context, s *fakes.Site) error {
				m, _ := s.BMCs.Of(faultHost)
				cl, err := m.Connect(ctx, "", bmc.Credential{Username: fakes.FakeFactoryUser, Password: adminPassword(s)})
				if err != nil {
					return err
				}
				return cl.SetPassword(ctx, "2", "rotated-password-1")
			},
			took: func(s *fakes.Site) bool {
				m, _ := s.BMCs.Of(faultHost)
				return m.Password(fakes.FakeFactoryUser) == "rotated-password-1"
			}},
		{name: "bmc cold reset", system: fakes.SysBMC, op: "reset_manager",
			write: func(ctx context.Context, s *fakes.Site) error {
				m, _ := s.BMCs.Of(faultHost)
				cl, err := m.Connect(ctx, "", bmc.Credential{Username: fakes.FakeFactoryUser, Password: adminPassword(s)})
				if err != nil {
					return err
				}
				return cl.ResetManager(ctx)
			},
			took: func(s *fakes.Site) bool { m, _ := s.BMCs.Of(faultHost); return m.State().ManagerResets == 1 }},
		{name: "ironic create node", system: fakes.SysIronic, op: "create_node",
			write: func(ctx context.Context, s *fakes.Site) error {
				_, err := s.Ironic["ironic-1"].CreateNode(ctx, ironic.NodeCreate{Name: faultHost, Driver: "redfish"})
				return err
			},
			took: func(s *fakes.Site) bool { _, ok := s.Ironic["ironic-1"].Node(faultHost); return ok }},
		{name: "ironic maintenance", system: fakes.SysIronic, op: "maintenance",
			setup: func(t *testing.T, s *fakes.Site) {
				if _, err := s.Ironic["ironic-1"].CreateNode(context.Background(), ironic.NodeCreate{Name: faultHost, Driver: "redfish"}); err != nil {
					t.Fatal(err)
				}
			},
			write: func(ctx context.Context, s *fakes.Site) error {
				return s.Ironic["ironic-1"].SetMaintenance(ctx, faultHost, true, "operator")
			},
			took: func(s *fakes.Site) bool { n, _ := s.Ironic["ironic-1"].Node(faultHost); return n.Maintenance }},
	}
}

func adminPassword(s *fakes.Site) string {
	it, _ := s.Vault.Item(context.Background(), fakes.AdminItem(faultHost))
	return it[bmc.FieldPassword]
}

func faultSite(t *testing.T, w aWrite) *fakes.Site {
	t.Helper()
	s := fakes.NewSite()
	s.AddHost(fakes.HostSpec{Name: faultHost})
	s.AddIronic("ironic-1")
	if w.setup != nil {
		w.setup(t, s)
	}
	return s
}

// TestEveryFakeHasEveryFaultKind: in every fake, a fault before the effect
// changes nothing, a lost answer changes the system and still fails, and a
// crash stops the attempt's later calls from reaching any system.
func TestEveryFakeHasEveryFaultKind(t *testing.T) {
	lost := errors.New("connection reset by peer after the write: " + hostforge.ErrUnavailable.Error())
	for _, w := range everyFakesWrites() {
		t.Run(w.name+"/before the effect", func(t *testing.T) {
			s := faultSite(t, w)
			s.Inject(w.system, w.op, 1, hostforge.ErrUnavailable)
			if err := w.write(context.Background(), s); !errors.Is(err, hostforge.ErrUnavailable) {
				t.Fatalf("write = %v, want the injected failure", err)
			}
			if w.took(s) {
				t.Fatal("a call that failed before its effect changed the system")
			}
			if err := w.write(context.Background(), s); err != nil || !w.took(s) {
				t.Fatalf("the next write: %v, took effect %v", err, w.took(s))
			}
		})
		t.Run(w.name+"/answer lost", func(t *testing.T) {
			s := faultSite(t, w)
			s.InjectLost(w.system, w.op, 1, lost)
			if err := w.write(context.Background(), s); !errors.Is(err, lost) {
				t.Fatalf("write = %v, want the lost answer", err)
			}
			if !w.took(s) {
				t.Fatal("a write whose answer was lost did not take effect")
			}
		})
		t.Run(w.name+"/crash after the write", func(t *testing.T) {
			s := faultSite(t, w)
			ctx, crash := fakes.WithCrash(context.Background(), 1)
			defer crash.Release()
			err := w.write(ctx, s)
			if !errors.Is(err, fakes.ErrCrashed) || !crash.Tripped() {
				t.Fatalf("write = %v (tripped %v), want the crash", err, crash.Tripped())
			}
			if !w.took(s) {
				t.Fatal("the write before the crash did not take effect")
			}
			if !strings.Contains(crash.Where(), w.system+"/"+w.op) {
				t.Fatalf("Where() = %q, want the last write %s/%s", crash.Where(), w.system, w.op)
			}
			before := s.Calls()
			// Nothing after the crash reaches a system, even detached from
			// the attempt's cancellation as cleanup code is.
			if _, err := s.NetBox.Device(context.WithoutCancel(ctx), faultHost); !errors.Is(err, fakes.ErrCrashed) {
				t.Fatalf("a read after the crash: %v", err)
			}
			if err := s.Vault.PutItem(context.WithoutCancel(ctx), "x", nil); !errors.Is(err, fakes.ErrCrashed) {
				t.Fatalf("a write after the crash: %v", err)
			}
			if ctx.Err() == nil {
				t.Fatal("the crashed attempt's context is still live")
			}
			if d := s.Calls().Sub(before); d.Reads()+d.Writes() != 0 {
				t.Fatalf("calls after the crash were counted: %s", d)
			}
		})
	}
}

// TestLostAnswersAreCountedOut: InjectLost covers exactly n writes that
// take effect; a read or a refused write does not use one up.
func TestLostAnswersAreCountedOut(t *testing.T) {
	s := fakes.NewSite()
	s.AddHost(fakes.HostSpec{Name: faultHost})
	ctx := context.Background()
	id := deviceID(s, faultHost)
	s.InjectLost(fakes.SysNetBox, "set_status", 2, hostforge.ErrUnavailable)
	if err := s.NetBox.SetStatus(ctx, id, "bogus"); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("a refused write: %v, want its own refusal", err)
	}
	for i := 0; i < 2; i++ {
		if err := s.NetBox.SetStatus(ctx, id, intent.StatusActive); !errors.Is(err, hostforge.ErrUnavailable) {
			t.Fatalf("write %d: %v, want the lost answer", i, err)
		}
	}
	if err := s.NetBox.SetStatus(ctx, id, intent.StatusActive); err != nil {
		t.Fatalf("third write: %v", err)
	}
	s.InjectLost(fakes.SysNetBox, "*", 1, hostforge.ErrUnavailable)
	if _, err := s.NetBox.Device(ctx, faultHost); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("a read under a lost answer: %v, want the failure (a read has no effect to keep)", err)
	}
	s.InjectLost(fakes.SysNetBox, "*", 3, hostforge.ErrUnavailable)
	s.Inject(fakes.SysNetBox, "*", 3, hostforge.ErrUnavailable)
	s.ClearFaults()
	if err := s.NetBox.SetStatus(ctx, id, intent.StatusActive); err != nil {
		t.Fatalf("after ClearFaults: %v", err)
	}
}

// TestCrashCountsOnlyWritesThatTookEffect: reads and refused writes do not
// bring the crash closer; a crash at 0 writes stops the first write.
func TestCrashCountsOnlyWritesThatTookEffect(t *testing.T) {
	s := fakes.NewSite()
	s.AddHost(fakes.HostSpec{Name: faultHost})
	ctx, crash := fakes.WithCrash(context.Background(), 2)
	defer crash.Release()
	id := deviceID(s, faultHost)
	if _, err := s.NetBox.Device(ctx, faultHost); err != nil {
		t.Fatal(err)
	}
	if err := s.NetBox.SetStatus(ctx, id, "bogus"); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("refused write: %v", err)
	}
	if err := s.NetBox.AddTags(ctx, id, "a"); err != nil || crash.Writes() != 1 {
		t.Fatalf("first write: %v, writes %d", err, crash.Writes())
	}
	if err := s.NetBox.AddTags(ctx, id, "b"); !errors.Is(err, fakes.ErrCrashed) {
		t.Fatalf("second write: %v, want the crash", err)
	}
	if d, _ := s.NetBox.Device(context.Background(), faultHost); !d.HasTag("a") || !d.HasTag("b") {
		t.Fatalf("tags %v: both writes took effect before the crash", d.Tags)
	}

	ctx0, crash0 := fakes.WithCrash(context.Background(), 0)
	defer crash0.Release()
	if _, err := s.NetBox.Device(ctx0, faultHost); err != nil {
		t.Fatalf("a read before the first write: %v", err)
	}
	if err := s.NetBox.AddTags(ctx0, id, "c"); !errors.Is(err, fakes.ErrCrashed) {
		t.Fatalf("first write of an attempt that crashes at once: %v", err)
	}
	if d, _ := s.NetBox.Device(context.Background(), faultHost); d.HasTag("c") {
		t.Fatal("the write the crash stopped took effect")
	}
	if crash0.Where() != "before any write" {
		t.Fatalf("Where() = %q", crash0.Where())
	}
}

// TestCrashEndsABlockedCall: a call waiting when the worker dies (another
// session's DHCP lock) ends with the attempt.
func TestCrashEndsABlockedCall(t *testing.T) {
	s := fakes.NewSite()
	s.DHCP.Mkdir("/etc/dhcp")
	holder, _ := s.DHCP.Dial(context.Background())
	defer holder.Close()
	if _, err := holder.Lock(context.Background(), "/etc/dhcp"); err != nil {
		t.Fatal(err)
	}
	ctx, crash := fakes.WithCrash(context.Background(), 1)
	defer crash.Release()
	r, _ := s.DHCP.Dial(ctx)
	defer r.Close()
	if _, err := r.Run(ctx, "true"); !errors.Is(err, fakes.ErrCrashed) {
		t.Fatalf("the write that reaches the limit: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := r.Lock(context.WithoutCancel(ctx), "/etc/dhcp"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, fakes.ErrCrashed) {
			t.Fatalf("lock after the crash: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call of a crashed attempt blocked on another session's lock")
	}
}

// TestNetBoxEmulatorLosesAnswers: over HTTP a lost answer is a 503 for a
// PATCH that was applied.
func TestNetBoxEmulatorLosesAnswers(t *testing.T) {
	s := fakes.NewSite()
	s.AddHost(fakes.HostSpec{Name: faultHost})
	srv := httptest.NewServer(netboxhttp.New(s.NetBox, netboxhttp.Options{}))
	defer srv.Close()
	id := deviceID(s, faultHost)
	s.InjectLost(fakes.SysNetBox, "set_status", 1, hostforge.ErrUnavailable)
	req, _ := http.NewRequest(http.MethodPatch, srv.URL+"/api/dcim/devices/"+itoa(id)+"/", strings.NewReader(`{"status":"active"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", resp.StatusCode)
	}
	if deviceOf(s, faultHost).Status != string(intent.StatusActive) {
		t.Fatal("the PATCH whose answer was lost was not applied")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestInjectingWhileCallingIsSafe: faults are injected while other
// goroutines call the fakes, as the fault-schedule suite does (-race).
func TestInjectingWhileCallingIsSafe(t *testing.T) {
	s := fakes.NewSite()
	s.AddHost(fakes.HostSpec{Name: faultHost})
	id := deviceID(s, faultHost)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_, _ = s.NetBox.Device(context.Background(), faultHost)
				_ = s.NetBox.SetStatus(context.Background(), id, intent.StatusActive)
			}
		}()
	}
	for i := 0; i < 200; i++ {
		s.Inject(fakes.SysNetBox, "device", 1, hostforge.ErrUnavailable)
		s.InjectLost(fakes.SysNetBox, "set_status", 1, hostforge.ErrUnavailable)
		if i%50 == 0 {
			s.ClearFaults()
		}
	}
	wg.Wait()
}
