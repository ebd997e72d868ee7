package bmc_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/link"
)

type world struct {
	site *fakes.Site
	host *fakes.Host
	b    *fakes.FakeBMC
	cfg  *bmc.Configurator
	logs *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newWorld(t *testing.T, vendor string) *world {
	t.Helper()
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "node-" + vendor, Vendor: vendor})
	b, ok := site.BMCs.Of(h.Name)
	if !ok {
		t.Fatal("no fake BMC for the host")
	}
	logs := &syncBuffer{}
	cfg := &bmc.Configurator{
		Connector: site.BMCs, Vault: site.Vault, Clock: site.Clock,
		Log: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	return &world{site: site, host: h, b: b, cfg: cfg, logs: logs}
}

func (w *world) target() bmc.Target {
	return bmc.Target{
		Device: w.host.Name, Address: w.host.OOBIP,
		NTPServers: []string{"10.0.0.11", "10.0.0.12"}, SyslogServers: []string{"10.0.0.21"},
		ProvisioningMAC: w.host.NICs[0].MAC, RestrictBoot: true,
		AdminItem: fakes.AdminItem(w.host.Name), FactoryItem: fakes.FactoryItem, MonitoringItem: fakes.MonitoringItem,
	}
}

func (w *world) bmcWrites() int { return w.site.Calls()[fakes.SysBMC].Writes }

func (w *world) configure(t *testing.T, tg bmc.Target) bmc.Result {
	t.Helper()
	res, err := w.cfg.Configure(context.Background(), tg)
	if err != nil {
		t.Fatalf("Configure: %v\nlogs:\n%s", err, w.logs)
	}
	return res
}

func stepNames(res bmc.Result) []string {
	var out []string
	for _, s := range res.Steps {
		out = append(out, s[:strings.IndexByte(s, ':')])
	}
	return out
}

// TestStrategiesConverge runs each vendor from its drifted state to
// converged, then checks a second run makes no writes at all.
func TestStrategiesConverge(t *testing.T) {
	cases := []struct {
		vendor string
		steps  []string
	}{
		{"dell", []string{"password", "cold_reset", "hostname", "dhcp", "security", "ntp", "syslog", "bios", "boot_order", "ipmi_user"}},
		{"lenovo", []string{"password", "cold_reset", "hostname", "dhcp", "security", "ntp", "syslog", "bios", "boot_order", "host_reset", "ipmi_user"}},
		{"ami", []string{"password", "cold_reset", "hostname", "ntp", "ipmi_user", "virtual_media", "boot_restriction"}},
		{"supermicro", []string{"cold_reset", "hostname", "ntp", "syslog", "ipmi_user"}},
	}
	for _, tc := range cases {
		t.Run(tc.vendor, func(t *testing.T) {
			w := newWorld(t, tc.vendor)
			tg := w.target()
			first := w.configure(t, tg)
			if first.Vendor != tc.vendor || !slices.Equal(stepNames(first), tc.steps) {
				t.Fatalf("first run: vendor %q steps %v; want %q %v", first.Vendor, first.Steps, tc.vendor, tc.steps)
			}
			if first.Writes == 0 || w.bmcWrites() != first.Writes {
				t.Fatalf("first run counted %d writes, the BMC saw %d", first.Writes, w.bmcWrites())
			}
			st := w.b.State()
			if st.Network.Hostname != bmc.Hostname(tg.Device) || !st.Network.NTPEnabled || !slices.Equal(st.Network.NTPServers, tg.NTPServers) {
				t.Fatalf("network not converged: %+v", st.Network)
			}
			ipmi := false
			for _, a := range st.Accounts {
				ipmi = ipmi || a.UserName == "ipmi_exporter" && a.Role == bmc.IPMIRole && a.Enabled
			}
			if !ipmi {
				t.Fatalf("no ipmi_exporter account: %+v", st.Accounts)
			}
			before := w.bmcWrites()
			second := w.configure(t, tg)
			if second.Writes != 0 || w.bmcWrites() != before {
				t.Fatalf("second run wrote %d times (BMC saw %d): %v", second.Writes, w.bmcWrites()-before, second.Steps)
			}
			for _, s := range second.Steps {
				if o := s[strings.IndexByte(s, ':')+1:]; !strings.HasSuffix(o, "ok") && o != "not_needed" {
					t.Errorf("second run step %s is not a no-op", s)
				}
			}
		})
	}
}

func TestConvergedSettingsPerVendor(t *testing.T) {
	for _, v := range []string{"dell", "lenovo"} {
		t.Run(v, func(t *testing.T) {
			w := newWorld(t, v)
			w.configure(t, w.target())
			st := w.b.State()
			for k, want := range bmc.DefaultBIOS[bmc.Vendor(v)] {
				if st.Bios[k] != want {
					t.Errorf("bios %s = %v, want %v", k, st.Bios[k], want)
				}
			}
			for p, on := range st.Network.Protocols {
				if on && slices.Contains(bmc.InsecureProtocols, p) {
					t.Errorf("%s still enabled", p)
				}
			}
			if !st.Network.DHCP || !st.Network.IPMIOverLAN || !slices.Equal(st.Syslog, []string{"10.0.0.21"}) {
				t.Errorf("dhcp/ipmi/syslog not converged: %+v %v", st.Network, st.Syslog)
			}
			if len(st.BiosPending) != 0 || st.PendingOrder != nil {
				t.Errorf("settings left pending: %v %v", st.BiosPending, st.PendingOrder)
			}
		})
	}
	// AMI converges no security, syslog or BIOS; Supermicro no BIOS.
	w := newWorld(t, "ami")
	w.configure(t, w.target())
	st := w.b.State()
	if !st.Network.Protocols["SSDP"] || st.Syslog != nil || !st.Network.VirtualMedia {
		t.Fatalf("AMI touched security/syslog or left virtual media off: %+v %v", st.Network, st.Syslog)
	}
}

func enabledSet(st fakes.BMCState) map[string]bool {
	m := map[string]bool{}
	for _, o := range st.Options {
		m[o.DisplayName] = o.Enabled == nil || *o.Enabled
	}
	return m
}

func TestBootRestriction(t *testing.T) {
	type tc struct {
		name     string
		mac      func(w *world) string
		restrict bool
		// want: first option in the order, and the enabled state of the
		// second frontend NIC and the disk.
		wantFirst     string
		wantNIC1, out string
	}
	prov := func(w *world) string { return w.host.NICs[0].MAC }
	unknown := func(*world) string { return "02:ff:ff:ff:ff:01" }
	for _, vendor := range []string{"ami", "dell"} {
		cases := []tc{
			{name: "identified", mac: prov, restrict: true, wantFirst: "UEFI: PXE IPv4 eth0", wantNIC1: "disabled"},
			{name: "not identified", mac: unknown, restrict: true, wantNIC1: "enabled"},
			{name: "restrict_boot off", mac: prov, restrict: false, wantNIC1: "enabled"},
		}
		for _, c := range cases {
			t.Run(vendor+"/"+c.name, func(t *testing.T) {
				w := newWorld(t, vendor)
				before := w.b.State()
				tg := w.target()
				tg.ProvisioningMAC, tg.RestrictBoot = c.mac(w), c.restrict
				res := w.configure(t, tg)
				st := w.b.State()
				en := enabledSet(st)
				if got := map[bool]string{true: "enabled", false: "disabled"}[en["UEFI: PXE IPv4 eth1"]]; got != c.wantNIC1 {
					t.Fatalf("second NIC %s, want %s (steps %v)", got, c.wantNIC1, res.Steps)
				}
				if !en["ubuntu"] || !en["Virtual CD"] || !en["UEFI: PXE IPv4 eth0"] {
					t.Fatalf("disk, virtual media or the provisioning NIC disabled: %v", en)
				}
				if vendor == "ami" && !en["UEFI: Built-in EFI Shell"] {
					t.Fatal("shell disabled")
				}
				name := map[string]string{}
				for _, o := range st.Options {
					name[o.ID] = o.DisplayName
				}
				switch {
				case c.wantFirst != "":
					if name[st.Order[0]] != c.wantFirst || en["UEFI: PXE IPv4 onboard"] {
						t.Fatalf("order %v, first %q, want %q; enabled %v", st.Order, name[st.Order[0]], c.wantFirst, en)
					}
				case vendor == "dell":
					// Label reorder: every NIC ahead of the disk, nothing disabled.
					if strings.Contains(name[st.Order[0]], "ubuntu") {
						t.Fatalf("label reorder left the disk first: %v", st.Order)
					}
				case vendor == "ami":
					if !slices.Equal(st.Order, before.Order) {
						t.Fatalf("AMI reordered although it must leave boot alone: %v", st.Order)
					}
				}
				for _, o := range st.Options {
					if o.Enabled != nil && !*o.Enabled && c.wantNIC1 == "enabled" {
						t.Fatalf("%s disabled although restriction did not apply", o.DisplayName)
					}
				}
				if !slices.ContainsFunc(res.Steps, func(s string) bool {
					return strings.HasPrefix(s, "boot") && (c.name != "not identified" || strings.Contains(s, "not_identified")) &&
						(c.name != "restrict_boot off" || vendor != "ami" || strings.Contains(s, "skipped"))
				}) {
					t.Fatalf("boot step outcome not reported: %v", res.Steps)
				}
			})
		}
	}
	// The identified case also disables the onboard NIC NetBox does not know.
	w := newWorld(t, "ami")
	w.configure(t, w.target())
	if en := enabledSet(w.b.State()); en["UEFI: PXE IPv4 onboard"] {
		t.Fatal("unknown onboard NIC left enabled")
	}
}

func TestIDRACJobs(t *testing.T) {
	t.Run("scheduled", func(t *testing.T) {
		w := newWorld(t, "dell")
		res := w.configure(t, w.target())
		st := w.b.State()
		if !slices.Contains(res.Steps, "bios:applied") || st.SystemResets != 2 {
			t.Fatalf("steps %v, host resets %d; want the BIOS job applied and one reset per staged job", res.Steps, st.SystemResets)
		}
		for _, j := range st.Jobs {
			if j.State != bmc.JobCompleted {
				t.Fatalf("job %s left %s", j.ID, j.State)
			}
		}
	})
	t.Run("never scheduled", func(t *testing.T) {
		w := newWorld(t, "dell")
		w.b.NeverScheduleJobs()
		_, err := w.cfg.Configure(context.Background(), w.target())
		if !bmc.JobNotScheduled.Is(err) {
			t.Fatalf("err = %v, want BMC_JOB_NOT_SCHEDULED", err)
		}
		st := w.b.State()
		if len(st.Jobs) != 0 || st.SystemResets != 0 || len(st.BiosPending) != 0 {
			t.Fatalf("job not deleted or host reset: jobs %v resets %d pending %v", st.Jobs, st.SystemResets, st.BiosPending)
		}
	})
	t.Run("already carried", func(t *testing.T) {
		w := newWorld(t, "dell")
		id := w.b.StageRunningJob(bmc.DefaultBIOS[bmc.VendorDell])
		tg := w.target()
		tg.RestrictBoot = false
		res := w.configure(t, tg)
		if !slices.Contains(res.Steps, "bios:carried") {
			t.Fatalf("steps %v; want bios:carried", res.Steps)
		}
		st := w.b.State()
		// One reset only: the boot-order job's; none for the carried BIOS job.
		if st.SystemResets != 1 {
			t.Fatalf("host resets = %d, want 1 (boot order only)", st.SystemResets)
		}
		for _, j := range st.Jobs {
			if j.ID == id && j.State != bmc.JobCompleted {
				t.Fatalf("carried job %s", j.State)
			}
		}
	})
}

func TestBusyBMC(t *testing.T) {
	t.Run("busy then free", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.b.Busy(3, "Service temporarily unavailable: host is booting")
		start := w.site.Clock.Now()
		w.configure(t, w.target())
		if w.site.Clock.Now().Sub(start) < 5*time.Second {
			t.Fatal("busy answers were not waited out on the clock")
		}
	})
	t.Run("busy past the budget", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.b.Busy(1000, "Service temporarily unavailable: host is booting")
		_, err := w.cfg.Configure(context.Background(), w.target())
		if !bmc.ServiceUnavailable.Is(err) || !strings.Contains(err.Error(), "host is booting") {
			t.Fatalf("err = %v, want BMC_HTTP_SERVICE_UNAVAILABLE with the BMC's message", err)
		}
		f, _ := hostforge.AsFailure(err)
		if !f.Retryable {
			t.Fatal("busy failure must be retryable")
		}
	})
	t.Run("AMI boot writes while the host boots", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.b.HostBooting(time.Hour)
		_, err := w.cfg.Configure(context.Background(), w.target())
		if !bmc.ServiceUnavailable.Is(err) || !strings.Contains(err.Error(), "booting") {
			t.Fatalf("err = %v", err)
		}
		w.b.HostBooting(0)
		w.site.Clock.Advance(time.Hour)
		w.configure(t, w.target())
	})
	t.Run("4xx is a refusal, not busy", func(t *testing.T) {
		w := newWorld(t, "dell")
		// Another tool's queued job blocks settings writes (iDRAC LC068).
		w.b.StageJob(map[string]any{"AcPwrRcvry": "Off"}, bmc.JobScheduled)
		_, err := w.cfg.Configure(context.Background(), w.target())
		if !bmc.WriteRejected.Is(err) || !strings.Contains(err.Error(), "LC068") {
			t.Fatalf("err = %v, want BMC_WRITE_REJECTED with the iDRAC message", err)
		}
		if f, _ := hostforge.AsFailure(err); f.Retryable {
			t.Fatal("a refusal is not retryable unchanged")
		}
	})
}

// failingVault fails the n-th PutItem.
type failingVault struct {
	bmc.Vault
	n, calls int
}

func (f *failingVault) PutItem(ctx context.Context, name string, fields map[string]string) error {
	f.calls++
	if f.calls == f.n {
		return errors.New("vault: connection reset")
	}
	return f.Vault.PutItem(ctx, name, fields)
}

func TestPasswordRotation(t *testing.T) {
	t.Run("rotated from factory, then reset", func(t *testing.T) {
		w := newWorld(t, "lenovo")
		w.b.FactoryReset()
		w.site.Vault.Set(fakes.AdminItem(w.host.Name), nil)
		res := w.configure(t, w.target())
		it, _ := w.site.Vault.Item(context.Background(), fakes.AdminItem(w.host.Name))
		if !res.Rotated || !res.Reset || it[bmc.FieldPassword] == "" || it[bmc.FieldPassword] == fakes.FakeFactoryPassword ||
			w.b.Password(fakes.FakeFactoryUser) != it[bmc.FieldPassword] || it[bmc.FieldPendingPassword] != "" {
			t.Fatalf("rotation: res %+v, vault fields %d", res, len(it))
		}
		if w.b.State().ManagerResets != 1 {
			t.Fatal("no cold reset after rotation")
		}
	})
	for _, crash := range []struct {
		name string
		n    int
	}{{"crash before the BMC change", 1}, {"crash between the BMC change and the vault write", 2}} {
		t.Run(crash.name, func(t *testing.T) {
			w := newWorld(t, "dell")
			w.b.FactoryReset()
			fv := &failingVault{Vault: w.site.Vault, n: crash.n}
			w.cfg.Vault = fv
			if _, err := w.cfg.Configure(context.Background(), w.target()); !bmc.VaultUnavailable.Is(err) {
				t.Fatalf("err = %v", err)
			}
			w.cfg.Vault = w.site.Vault
			res := w.configure(t, w.target())
			it, _ := w.site.Vault.Item(context.Background(), fakes.AdminItem(w.host.Name))
			if w.b.Password(fakes.FakeFactoryUser) != it[bmc.FieldPassword] || it[bmc.FieldPendingPassword] != "" || !res.Rotated {
				t.Fatalf("not recovered: steps %v", res.Steps)
			}
			want := map[int]string{1: "password:rotated", 2: "password:recovered"}[crash.n]
			if !slices.Contains(res.Steps, want) {
				t.Fatalf("steps %v, want %s", res.Steps, want)
			}
		})
	}
	t.Run("every credential refused", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.site.Vault.Set(fakes.FactoryItem, map[string]string{"username": "admin", "password": "wrong-wrong"})
		w.site.Vault.Set(fakes.AdminItem(w.host.Name), map[string]string{"username": "admin", "password": "also-wrong"})
		if _, err := w.cfg.Configure(context.Background(), w.target()); !bmc.CredentialInvalid.Is(err) || w.bmcWrites() != 0 {
			t.Fatalf("err = %v, writes %d", err, w.bmcWrites())
		}
	})
	t.Run("supermicro has no password setup", func(t *testing.T) {
		w := newWorld(t, "supermicro")
		w.b.FactoryReset()
		if _, err := w.cfg.Configure(context.Background(), w.target()); !bmc.CredentialInvalid.Is(err) || w.bmcWrites() != 0 {
			t.Fatalf("err = %v, writes %d", err, w.bmcWrites())
		}
	})
}

func TestColdReset(t *testing.T) {
	w := newWorld(t, "supermicro")
	tg := w.target()
	tg.ForceRestart = true
	res := w.configure(t, tg)
	if !res.Reset || w.b.State().ManagerResets != 1 {
		t.Fatal("forced restart did not reset a Supermicro BMC")
	}
	w.cfg.Budgets.Reset = 30 * time.Second // shorter than the BMC's 90s downtime
	if _, err := w.cfg.Configure(context.Background(), tg); !bmc.ResetTimeout.Is(err) {
		t.Fatalf("err = %v, want BMC_RESET_TIMEOUT", err)
	}
}

func TestIPMIUser(t *testing.T) {
	t.Run("missing credentials fail", func(t *testing.T) {
		w := newWorld(t, "dell")
		w.site.Vault.Set(fakes.MonitoringItem, map[string]string{"username": "ipmi_exporter"})
		if _, err := w.cfg.Configure(context.Background(), w.target()); !bmc.IPMICredentialMissing.Is(err) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("no endpoint skips", func(t *testing.T) {
		w := newWorld(t, "supermicro")
		w.b.NoAccountEndpoint()
		w.site.Vault.Set(fakes.MonitoringItem, nil)
		res := w.configure(t, w.target())
		if !slices.Contains(res.Steps, "ipmi_user:skipped_no_endpoint") {
			t.Fatalf("steps %v", res.Steps)
		}
	})
	t.Run("password drift is repaired", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.configure(t, w.target())
		w.site.Vault.Set(fakes.MonitoringItem, map[string]string{"username": "ipmi_exporter", "password": "rotated-monitoring-pw"})
		res := w.configure(t, w.target())
		if !slices.Contains(res.Steps, "ipmi_user:password_set") || w.b.Password("ipmi_exporter") != "rotated-monitoring-pw" {
			t.Fatalf("steps %v", res.Steps)
		}
	})
}

func TestUnsupportedAndBadInput(t *testing.T) {
	w := newWorld(t, "dell")
	w.b.SetIdentity(bmc.Identity{Vendor: "HPE", Product: "ProLiant DL385 Gen10 Plus v2", RootOem: []string{"Hpe"}})
	if _, err := w.cfg.Configure(context.Background(), w.target()); !bmc.VendorUnsupported.Is(err) || w.bmcWrites() != 0 {
		t.Fatalf("err = %v writes %d", err, w.bmcWrites())
	}
	for name, mut := range map[string]func(*bmc.Target){
		"no device":  func(t *bmc.Target) { t.Device = "" },
		"bad name":   func(t *bmc.Target) { t.Device = "node 1/a" },
		"no address": func(t *bmc.Target) { t.Address = "" },
		"bad MAC":    func(t *bmc.Target) { t.ProvisioningMAC = "zz" },
		"bad ntp":    func(t *bmc.Target) { t.NTPServers = []string{""} },
	} {
		tg := w.target()
		mut(&tg)
		if _, err := w.cfg.Configure(context.Background(), tg); !bmc.InputInvalid.Is(err) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if w.bmcWrites() != 0 {
		t.Fatal("bad input wrote")
	}
}

// TestNoSecretInLogs captures the logs and errors of full runs (rotation,
// IPMI user, a failure) and searches them for every credential.
func TestNoSecretInLogs(t *testing.T) {
	for _, v := range []string{"dell", "lenovo", "ami", "supermicro"} {
		w := newWorld(t, v)
		if v != "supermicro" {
			w.b.FactoryReset()
		}
		w.b.Busy(2, "busy")
		res := w.configure(t, w.target())
		w.site.Vault.Set(fakes.MonitoringItem, nil)
		_, err := w.cfg.Configure(context.Background(), w.target())
		text := w.logs.String() + err.Error() + strings.Join(res.Steps, " ")
		secrets := []string{fakes.FakeFactoryPassword, "hf-ipmi-exporter-site", w.b.Password(fakes.FakeFactoryUser)}
		for _, s := range secrets {
			if s == "" || strings.Contains(text, s) {
				t.Fatalf("%s: secret %q found in logs or errors", v, s)
			}
		}
		if !strings.Contains(w.logs.String(), `"device":"`+w.host.Name) {
			t.Fatalf("%s: logs lack the device field", v)
		}
	}
	if s := (bmc.Credential{Username: "u", Password: "p4ss"}); strings.Contains(s.String()+s.GoString(), "p4ss") {
		t.Fatal("credential prints its password")
	}
}

func TestFrontendLinks(t *testing.T) {
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "n1", NICs: 3})
	h.NICs[1].Link, h.NICs[2].Link = "down", "unknown"
	reader := &bmc.LinkReader{Connector: site.BMCs, Vault: site.Vault}
	macs := []string{strings.ToUpper(h.NICs[0].MAC), h.NICs[1].MAC, h.NICs[2].MAC, "02:99:99:99:99:99"}
	want := map[string]link.State{h.NICs[0].MAC: link.Up, h.NICs[1].MAC: link.Down, h.NICs[2].MAC: link.Unknown, "02:99:99:99:99:99": link.Unknown}
	for name, src := range map[string]interface {
		FrontendLinks(context.Context, string, string, []string) (map[string]link.State, error)
	}{"redfish reader": reader, "fake world": site.BMCs} {
		got, err := src.FrontendLinks(context.Background(), h.OOBIP, fakes.AdminItem("n1"), macs)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s: %v %v", name, got, err)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %s = %s, want %s", name, k, got[k], v)
			}
		}
	}
	b, _ := site.BMCs.Of("n1")
	b.NoLinkState()
	for name, src := range map[string]interface {
		FrontendLinks(context.Context, string, string, []string) (map[string]link.State, error)
	}{"redfish reader": reader, "fake world": site.BMCs} {
		if _, err := src.FrontendLinks(context.Background(), h.OOBIP, fakes.AdminItem("n1"), macs); !bmc.LinkUnobservable.Is(err) {
			t.Errorf("%s: unsupported link observation returned %v, want BMC_LINK_UNOBSERVABLE", name, err)
		}
	}
	// Both log in with the credential the named item holds: a stale one is refused.
	b.FactoryReset()
	for name, src := range map[string]interface {
		FrontendLinks(context.Context, string, string, []string) (map[string]link.State, error)
	}{"redfish reader": reader, "fake world": site.BMCs} {
		if _, err := src.FrontendLinks(context.Background(), h.OOBIP, fakes.AdminItem("n1"), macs); !bmc.LinkUnobservable.Is(err) {
			t.Errorf("%s: a refused credential returned %v, want BMC_LINK_UNOBSERVABLE", name, err)
		}
	}
}
