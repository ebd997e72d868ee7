package bmc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/bmc/bmctest"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/internal/syncbuf"
	"github.com/hostforge/hostforge/link"
)

type world struct {
	site *fakes.Site
	host *fakes.Host
	b    *fakes.FakeBMC
	cfg  *bmc.Configurator
	logs *syncbuf.Buffer
}

func newWorld(t *testing.T, vendor string) *world {
	t.Helper()
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "node-" + vendor, Vendor: vendor})
	b, ok := site.BMCs.Of(h.Name)
	if !ok {
		t.Fatal("no fake BMC for the host")
	}
	logs := &syncbuf.Buffer{}
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

func (w *world) bmcWrites() int   { return w.site.Calls()[fakes.SysBMC].Writes }
func (w *world) vaultWrites() int { return w.site.Calls()[fakes.SysVault].Writes }

// converge runs the phase's attempts to their end, sleeping its waits on
// the site's clock, as the workflow runtime does.
func (w *world) converge(tg bmc.Target) bmctest.Outcome {
	return bmctest.Converge(context.Background(), w.cfg, tg, w.site.Clock)
}

// configure converges and fails the test unless the phase converged.
func (w *world) configure(t *testing.T, tg bmc.Target) bmctest.Outcome {
	t.Helper()
	o := w.converge(tg)
	if o.Err != nil {
		t.Fatalf("Configure: %v\nwaits: %v\nsteps: %v\nlogs:\n%s", o.Err, o.Reasons(), o.Steps(), w.logs)
	}
	return o
}

// admin is the host's admin vault item.
func (w *world) admin() map[string]string {
	it, _ := w.site.Vault.Item(context.Background(), fakes.AdminItem(w.host.Name))
	return it
}

func stepNames(res bmc.Result) []string {
	var out []string
	for _, s := range res.Steps {
		out = append(out, s[:strings.IndexByte(s, ':')])
	}
	return out
}

// TestStrategiesConverge runs each vendor from its drifted state to
// converged, then checks a second run makes no writes at all, to the BMC or
// to the vault.
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
			if last := first.Last(); last.Vendor != tc.vendor || !slices.Equal(stepNames(last), tc.steps) {
				t.Fatalf("last attempt: vendor %q steps %v; want %q %v", last.Vendor, last.Steps, tc.vendor, tc.steps)
			}
			if first.Writes() == 0 || w.bmcWrites() != first.Writes() {
				t.Fatalf("the attempts counted %d writes, the BMC saw %d", first.Writes(), w.bmcWrites())
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
			if it := w.admin(); len(it) != 2 {
				t.Fatalf("admin item keeps state after convergence: fields %v", keys(it))
			}
			bw, vw := w.bmcWrites(), w.vaultWrites()
			second := w.configure(t, tg)
			if len(second.Attempts) != 1 || second.Writes() != 0 || w.bmcWrites() != bw || w.vaultWrites() != vw {
				t.Fatalf("second run: %d attempts, wrote %d times (BMC saw %d, vault %d): %v", len(second.Attempts), second.Writes(), w.bmcWrites()-bw, w.vaultWrites()-vw, second.Steps())
			}
			for _, s := range second.Last().Steps {
				if o := s[strings.IndexByte(s, ':')+1:]; !strings.HasSuffix(o, "ok") && o != "not_needed" {
					t.Errorf("second run step %s is not a no-op", s)
				}
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
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
				o := w.configure(t, tg)
				st := w.b.State()
				en := enabledSet(st)
				if got := map[bool]string{true: "enabled", false: "disabled"}[en["UEFI: PXE IPv4 eth1"]]; got != c.wantNIC1 {
					t.Fatalf("second NIC %s, want %s (steps %v)", got, c.wantNIC1, o.Steps())
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
				if !slices.ContainsFunc(o.Last().Steps, func(s string) bool {
					return strings.HasPrefix(s, "boot") && (c.name != "not identified" || strings.Contains(s, "not_identified")) &&
						(c.name != "restrict_boot off" || vendor != "ami" || strings.Contains(s, "skipped"))
				}) {
					t.Fatalf("boot step outcome not reported: %v", o.Last().Steps)
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

// attemptsUntil calls Configure, sleeping each wait on the site's clock,
// until stop accepts a wait; it returns that wait. It stands for a worker
// that dies while the runtime sleeps.
func (w *world) attemptsUntil(t *testing.T, tg bmc.Target, stop func(*hostforge.Wait) bool) *hostforge.Wait {
	t.Helper()
	for range bmctest.MaxAttempts {
		_, err := w.cfg.Configure(context.Background(), tg)
		wt, ok := hostforge.AsWait(err)
		if !ok {
			t.Fatalf("the attempts ended (%v) before the awaited wait", err)
		}
		if stop(wt) {
			return wt
		}
		w.site.Clock.Advance(wt.After)
	}
	t.Fatal("the awaited wait never came")
	return nil
}

// restart stands for a new worker: a fresh Configurator on the same BMC and
// vault, with nothing carried over in memory.
func (w *world) restart() {
	w.cfg = &bmc.Configurator{Connector: w.site.BMCs, Vault: w.site.Vault, Clock: w.site.Clock, Log: w.cfg.Log}
}

func TestIDRACJobs(t *testing.T) {
	t.Run("scheduled", func(t *testing.T) {
		w := newWorld(t, "dell")
		o := w.configure(t, w.target())
		st := w.b.State()
		if !slices.Contains(o.Steps(), "bios:applied") || !slices.Contains(o.Steps(), "boot_order:restricted/applied") || st.SystemResets != 2 {
			t.Fatalf("steps %v, host resets %d; want both jobs applied and one reset per staged job", o.Steps(), st.SystemResets)
		}
		for _, j := range st.Jobs {
			if j.State != bmc.JobCompleted {
				t.Fatalf("job %s left %s", j.ID, j.State)
			}
		}
		if !slices.Contains(o.Reasons(), bmc.WaitJobSchedule) || !slices.Contains(o.Reasons(), bmc.WaitJobRun) {
			t.Fatalf("waits %v; want the schedule and run waits", o.Reasons())
		}
	})
	t.Run("never scheduled", func(t *testing.T) {
		w := newWorld(t, "dell")
		w.b.NeverScheduleJobs()
		o := w.converge(w.target())
		if !bmc.JobNotScheduled.Is(o.Err) || !strings.Contains(o.Err.Error(), "deleted") {
			t.Fatalf("err = %v, want BMC_JOB_NOT_SCHEDULED after deleting the job", o.Err)
		}
		if o.Waited < bmc.JobScheduleBudget || o.Waited > bmc.JobScheduleBudget+bmc.JobPoll {
			t.Fatalf("waited %s for the schedule, want the %s budget", o.Waited, bmc.JobScheduleBudget)
		}
		st := w.b.State()
		if len(st.Jobs) != 0 || st.SystemResets != 0 || len(st.BiosPending) != 0 || w.admin()[bmc.FieldJobID] != "" {
			t.Fatalf("job not deleted and forgotten, or host reset: jobs %v resets %d pending %v", st.Jobs, st.SystemResets, st.BiosPending)
		}
	})
	t.Run("already carried", func(t *testing.T) {
		w := newWorld(t, "dell")
		id := w.b.StageRunningJob(bmc.DefaultBIOS[bmc.VendorDell])
		tg := w.target()
		tg.RestrictBoot = false
		o := w.configure(t, tg)
		if !slices.Contains(o.Steps(), "bios:carried") {
			t.Fatalf("steps %v; want bios:carried", o.Steps())
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
	t.Run("a poll reads the job queue and nothing else", func(t *testing.T) {
		// While a staged job is being scheduled or applied, an attempt
		// logs in and reads the job queue; the settings converged before
		// the job are read again once it has finished, not on every poll.
		w := newWorld(t, "dell")
		tg := w.target()
		for _, reason := range []string{bmc.WaitJobSchedule, bmc.WaitJobRun} {
			wt := w.attemptsUntil(t, tg, func(wt *hostforge.Wait) bool {
				return wt.Reason == reason && !strings.Contains(wt.Detail, "staged;") && !strings.Contains(wt.Detail, "host reset;")
			})
			w.site.Clock.Advance(time.Second)
			before := w.site.Calls()
			_, err := w.cfg.Configure(context.Background(), tg)
			got, ok := hostforge.AsWait(err)
			if !ok || got.Reason != reason {
				t.Fatalf("%s: the poll after %q returned %v", reason, wt.Detail, err)
			}
			calls := w.site.Calls().Sub(before)[fakes.SysBMC]
			for op := range calls.Ops {
				if op != "connect" && op != "identify" && op != "jobs" {
					t.Errorf("%s: a poll of the job called %s (ops %v)", reason, op, calls.Ops)
				}
			}
			if calls.Ops["jobs"] != 1 || calls.Writes != 0 {
				t.Errorf("%s: a poll read the job queue %d times and wrote %d times, want 1 and 0", reason, calls.Ops["jobs"], calls.Writes)
			}
		}
		o := w.configure(t, tg)
		if !slices.Contains(o.Steps(), "bios:applied") || w.b.State().SystemResets != 2 {
			t.Fatalf("after the polls: steps %v, resets %d", o.Steps(), w.b.State().SystemResets)
		}
	})
	t.Run("worker lost while the job runs", func(t *testing.T) {
		// The host was reset into the BIOS job, then the worker died: the
		// next worker waits for the job; it does not reboot the host again.
		w := newWorld(t, "dell")
		tg := w.target()
		w.attemptsUntil(t, tg, func(wt *hostforge.Wait) bool {
			return wt.Reason == bmc.WaitJobRun && strings.Contains(wt.Detail, "host reset; job")
		})
		if n := w.b.State().SystemResets; n != 1 {
			t.Fatalf("host resets before the loss = %d", n)
		}
		w.restart()
		w.configure(t, tg)
		if n := w.b.State().SystemResets; n != 2 {
			t.Fatalf("host resets = %d, want 2 (one per job, none repeated)", n)
		}
	})
	t.Run("job never finishes", func(t *testing.T) {
		w := newWorld(t, "dell")
		w.b.JobTiming(30*time.Second, 5*time.Hour)
		o := w.converge(w.target())
		if !bmc.JobFailed.Is(o.Err) {
			t.Fatalf("err = %v, want BMC_JOB_FAILED", o.Err)
		}
		if n := w.b.State().SystemResets; n != 1 {
			t.Fatalf("host resets = %d, want 1", n)
		}
		// The rerun knows when the host was reset: it fails at once rather
		// than waiting another 20 minutes or rebooting the host again.
		w.restart()
		start := w.site.Clock.Now()
		o = w.converge(w.target())
		if !bmc.JobFailed.Is(o.Err) || w.site.Clock.Now() != start || w.b.State().SystemResets != 1 {
			t.Fatalf("rerun: err %v after %s, resets %d", o.Err, w.site.Clock.Now().Sub(start), w.b.State().SystemResets)
		}
	})
}

func TestBusyBMC(t *testing.T) {
	t.Run("busy then free", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.b.Busy(3, "Service temporarily unavailable: host is booting")
		o := w.configure(t, w.target())
		if got := o.Reasons(); !slices.Equal(got, []string{bmc.WaitBusy, bmc.WaitBusy, bmc.WaitBusy}) {
			t.Fatalf("waits %v, want three busy waits", got)
		}
		// 5 s doubling: 5 + 10 + 20.
		if o.Waited != 35*time.Second || !strings.Contains(o.Waits[0].Detail, "host is booting") {
			t.Fatalf("waited %s, detail %q", o.Waited, o.Waits[0].Detail)
		}
	})
	t.Run("busy past the budget", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.b.Busy(1000, "Service temporarily unavailable: host is booting")
		o := w.converge(w.target())
		if !bmc.ServiceUnavailable.Is(o.Err) || !strings.Contains(o.Err.Error(), "host is booting") {
			t.Fatalf("err = %v, want BMC_HTTP_SERVICE_UNAVAILABLE with the BMC's message", o.Err)
		}
		f, _ := hostforge.AsFailure(o.Err)
		if !f.Retryable || f.Owner != hostforge.OwnerDCOps || o.Waited > bmc.BusyBudget {
			t.Fatalf("busy failure %+v after %s: want retryable, DC_OPS, within %s", f.Spec, o.Waited, bmc.BusyBudget)
		}
	})
	t.Run("AMI boot writes while the host boots", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.b.HostBooting(time.Hour)
		o := w.converge(w.target())
		if !bmc.ServiceUnavailable.Is(o.Err) || !strings.Contains(o.Err.Error(), "booting") {
			t.Fatalf("err = %v", o.Err)
		}
		w.b.HostBooting(0)
		w.site.Clock.Advance(time.Hour)
		w.configure(t, w.target())
	})
	t.Run("no answer", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.site.Inject(fakes.SysBMC, "connect", 1000, fmt.Errorf("dial tcp: connection refused: %w", hostforge.ErrUnavailable))
		o := w.converge(w.target())
		if !bmc.Unreachable.Is(o.Err) || o.Reasons()[0] != bmc.WaitUnreachable || w.bmcWrites() != 0 {
			t.Fatalf("err = %v after waits %v", o.Err, o.Reasons())
		}
	})
	t.Run("4xx is a refusal, not busy", func(t *testing.T) {
		w := newWorld(t, "dell")
		// Another tool's queued job blocks settings writes (iDRAC LC068).
		w.b.StageJob(map[string]any{"AcPwrRcvry": "Off"}, bmc.JobScheduled)
		o := w.converge(w.target())
		if !bmc.WriteRejected.Is(o.Err) || !strings.Contains(o.Err.Error(), "LC068") {
			t.Fatalf("err = %v, want BMC_WRITE_REJECTED with the iDRAC message", o.Err)
		}
		if f, _ := hostforge.AsFailure(o.Err); f.Retryable {
			t.Fatal("a refusal is not retryable unchanged")
		}
	})
}

// profiles are the two ways BMCs apply a password change.
var profiles = []struct {
	name  string
	apply func(*fakes.FakeBMC)
}{
	{"immediate", func(*fakes.FakeBMC) {}},
	{"reset-to-apply", (*fakes.FakeBMC).ApplyPasswordOnReset},
}

// rotationWorld is a BMC on its factory password with no per-host item.
func rotationWorld(t *testing.T, vendor string, profile func(*fakes.FakeBMC)) *world {
	w := newWorld(t, vendor)
	w.b.FactoryReset()
	profile(w.b)
	w.site.Vault.Set(fakes.AdminItem(w.host.Name), nil)
	return w
}

// rotatedOnce checks the end of a rotation: the vault holds exactly the
// BMC's working password, nothing pending, and the BMC's password changed
// once.
func (w *world) rotatedOnce(t *testing.T) {
	t.Helper()
	it := w.admin()
	pw := it[bmc.FieldPassword]
	if pw == "" || pw == fakes.FakeFactoryPassword || w.b.Password(fakes.FakeFactoryUser) != pw {
		t.Fatalf("the vault's password is not the BMC's (vault fields %v)", keys(it))
	}
	if len(it) != 2 {
		t.Fatalf("admin item keeps rotation state: fields %v", keys(it))
	}
	if n := w.b.PasswordChanges(fakes.FakeFactoryUser); n != 1 {
		t.Fatalf("the BMC's password changed %d times, want exactly one rotation", n)
	}
}

// rerunWritesNothing converges again and checks nothing was written.
func (w *world) rerunWritesNothing(t *testing.T, tg bmc.Target) {
	t.Helper()
	bw, vw := w.bmcWrites(), w.vaultWrites()
	o := w.configure(t, tg)
	if len(o.Attempts) != 1 || w.bmcWrites() != bw || w.vaultWrites() != vw {
		t.Fatalf("rerun: %d attempts, %d BMC and %d vault writes: %v", len(o.Attempts), w.bmcWrites()-bw, w.vaultWrites()-vw, o.Steps())
	}
}

func TestPasswordRotation(t *testing.T) {
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			t.Run("rotate, reset, verify", func(t *testing.T) {
				w := rotationWorld(t, "lenovo", p.apply)
				tg := w.target()
				o := w.configure(t, tg)
				if !o.Rotated() || !o.Reset() || w.b.State().ManagerResets != 1 {
					t.Fatalf("rotated %v, reset %v, BMC resets %d", o.Rotated(), o.Reset(), w.b.State().ManagerResets)
				}
				// Order: rotate, then the cold reset, then the new
				// credential verified once Redfish is back.
				steps := o.Steps()
				i, j, k := slices.Index(steps, "password:rotated"), slices.Index(steps, "cold_reset:requested"), slices.Index(steps, "password:verified_after_reset")
				if i < 0 || j < i || k < j || !slices.Contains(steps, "cold_reset:done") {
					t.Fatalf("steps %v: want rotated, then the reset, then verification", steps)
				}
				if !slices.Contains(o.Reasons(), bmc.WaitReset) {
					t.Fatalf("waits %v: no wait for the reset", o.Reasons())
				}
				w.rotatedOnce(t)
				w.rerunWritesNothing(t, tg)
			})
			t.Run("lost answer to the password change", func(t *testing.T) {
				w := rotationWorld(t, "dell", p.apply)
				w.b.LoseAnswers("set_password", 1)
				tg := w.target()
				o := w.converge(tg)
				if o.Err != nil {
					// The BMC staged the change and cannot confirm it before
					// its reset: a retryable failure nobody on site acts on.
					f, ok := hostforge.AsFailure(o.Err)
					if !ok || !bmc.PasswordUnconfirmed.Is(o.Err) || !f.Retryable || f.Owner == hostforge.OwnerDCOps {
						t.Fatalf("err = %v: an ambiguous answer must fail retryably, not to DC_OPS", o.Err)
					}
					if w.admin()[bmc.FieldPendingPassword] == "" {
						t.Fatal("the pending password was dropped")
					}
					w.restart()
					o = w.configure(t, tg)
				} else if p.name == "reset-to-apply" {
					t.Fatal("a staged change cannot be confirmed before the reset")
				}
				w.rotatedOnce(t)
				w.rerunWritesNothing(t, tg)
			})
			t.Run("refused answer to the password change", func(t *testing.T) {
				// A 401 to the change itself (the BMC dropped the old
				// credential before answering, or never applied it): the same
				// password is tried and sent again, never factory-reset.
				w := rotationWorld(t, "ami", p.apply)
				w.site.Inject(fakes.SysBMC, "set_password", 1, bmc.HTTPError(401, "Base.1.8.NoValidSession"))
				tg := w.target()
				o := w.converge(tg)
				f, _ := hostforge.AsFailure(o.Err)
				if !bmc.PasswordUnconfirmed.Is(o.Err) || !f.Retryable || f.Owner == hostforge.OwnerDCOps {
					t.Fatalf("err = %v", o.Err)
				}
				w.restart()
				w.configure(t, tg)
				w.rotatedOnce(t)
			})
			for _, crash := range []struct {
				name string
				// the crash: before or after the n-th vault write of the run
				n      int
				before bool
				resets int
			}{
				{"before the write-ahead", 1, true, 1},
				{"after the write-ahead, before the BMC change", 1, false, 1},
				{"after the BMC change, before the promote", 2, true, 1},
				{"after the promote, before the reset", 2, false, 1},
				// The BMC accepted the reset, the record of it is lost: the
				// rerun resets again rather than never.
				{"after the reset, before it is recorded", 3, true, 2},
				{"during the reset wait", 3, false, 1},
			} {
				t.Run("crash "+crash.name, func(t *testing.T) {
					w := rotationWorld(t, "dell", p.apply)
					ctx, cancel := context.WithCancel(context.Background())
					w.cfg.Vault = &crashVault{Vault: w.site.Vault, n: crash.n, before: crash.before, crash: cancel}
					tg := w.target()
					o := bmctest.Converge(ctx, w.cfg, tg, w.site.Clock)
					if o.Err == nil {
						t.Fatal("the run did not crash")
					}
					cancel()
					w.restart()
					w.configure(t, tg)
					w.rotatedOnce(t)
					if n := w.b.State().ManagerResets; n != crash.resets {
						t.Fatalf("cold resets = %d, want %d", n, crash.resets)
					}
					w.rerunWritesNothing(t, tg)
				})
			}
		})
	}
	t.Run("every credential refused", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.site.Vault.Set(fakes.FactoryItem, map[string]string{"username": "admin", "password": "wrong-wrong"})
		w.site.Vault.Set(fakes.AdminItem(w.host.Name), map[string]string{"username": "admin", "password": "also-wrong"})
		if o := w.converge(w.target()); !bmc.CredentialInvalid.Is(o.Err) || w.bmcWrites() != 0 {
			t.Fatalf("err = %v, writes %d", o.Err, w.bmcWrites())
		}
	})
	t.Run("password refused by the BMC's policy", func(t *testing.T) {
		w := rotationWorld(t, "ami", func(b *fakes.FakeBMC) { b.RefusePasswords(1) })
		w.cfg.NewPassword = func() (string, error) { return "Refused-Policy-Pw-1", nil }
		o := w.converge(w.target())
		if !bmc.WriteRejected.Is(o.Err) || !strings.Contains(o.Err.Error(), "PropertyValueFormatError") || strings.Contains(o.Err.Error(), "Refused-Policy-Pw-1") {
			t.Fatalf("err = %v, want BMC_WRITE_REJECTED with the BMC's reason and no password", o.Err)
		}
	})
	t.Run("a generated password shorter than 8 characters is refused before it is stored or sent", func(t *testing.T) {
		w := rotationWorld(t, "ami", func(*fakes.FakeBMC) {})
		w.cfg.NewPassword = func() (string, error) { return "short", nil }
		before, _ := w.site.Vault.Item(context.Background(), fakes.AdminItem(w.host.Name))
		o := w.converge(w.target())
		if !hostforge.SecretTooShort.Is(o.Err) || strings.Contains(o.Err.Error(), "short") || !strings.Contains(o.Err.Error(), "generated BMC admin password") {
			t.Fatalf("err = %v, want %s naming the generated password", o.Err, hostforge.SecretTooShort.Code)
		}
		after, _ := w.site.Vault.Item(context.Background(), fakes.AdminItem(w.host.Name))
		if after[bmc.FieldPendingPassword] == "short" || len(after) != len(before) {
			t.Errorf("the vault item changed: %v → %v", before, after)
		}
		if w.b.PasswordChanges(fakes.FakeFactoryUser) != 0 {
			t.Error("the BMC's password changed")
		}
	})
	t.Run("supermicro has no password setup", func(t *testing.T) {
		w := newWorld(t, "supermicro")
		w.b.FactoryReset()
		if o := w.converge(w.target()); !bmc.CredentialInvalid.Is(o.Err) || w.bmcWrites() != 0 {
			t.Fatalf("err = %v, writes %d", o.Err, w.bmcWrites())
		}
	})
}

// crashVault stands for a worker that dies at a vault write: before the
// n-th PutItem (it is not made) or right after it.
type crashVault struct {
	bmc.Vault
	n, calls int
	before   bool
	crash    func()
}

func (c *crashVault) PutItem(ctx context.Context, name string, fields map[string]string) error {
	c.calls++
	if c.calls == c.n && c.before {
		c.crash()
		return ctx.Err()
	}
	err := c.Vault.PutItem(ctx, name, fields)
	if c.calls == c.n {
		c.crash()
	}
	return err
}

func TestColdReset(t *testing.T) {
	t.Run("forced, once per run", func(t *testing.T) {
		w := newWorld(t, "supermicro")
		tg := w.target()
		tg.ForceRestart, tg.RunID = true, "run-1"
		o := w.configure(t, tg)
		if !o.Reset() || w.b.State().ManagerResets != 1 || !slices.Contains(o.Reasons(), bmc.WaitReset) {
			t.Fatalf("forced restart did not reset a Supermicro BMC: waits %v", o.Reasons())
		}
		// More attempts of the same run do not reset again.
		w.rerunWritesNothing(t, tg)
		// A new run with force_restart does.
		tg.RunID = "run-2"
		w.configure(t, tg)
		if n := w.b.State().ManagerResets; n != 2 {
			t.Fatalf("a new forced run: %d resets, want 2", n)
		}
	})
	t.Run("force_restart needs a run id", func(t *testing.T) {
		w := newWorld(t, "supermicro")
		tg := w.target()
		tg.ForceRestart = true
		if o := w.converge(tg); !bmc.InputInvalid.Is(o.Err) || w.bmcWrites() != 0 {
			t.Fatalf("err = %v", o.Err)
		}
	})
	t.Run("Redfish does not come back", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.b.ResetDowntime(3 * bmc.ResetBudget)
		tg := w.target()
		tg.ForceRestart, tg.RunID = true, "run-1"
		o := w.converge(tg)
		if !bmc.ResetTimeout.Is(o.Err) || o.Waited > bmc.ResetBudget {
			t.Fatalf("err = %v after %s, want BMC_RESET_TIMEOUT within %s", o.Err, o.Waited, bmc.ResetBudget)
		}
		// Still down on the rerun: it knows when the reset was requested
		// and fails at once, without a second reset.
		w.restart()
		o = w.converge(tg)
		if !bmc.ResetTimeout.Is(o.Err) || len(o.Attempts) != 1 || w.b.State().ManagerResets != 1 {
			t.Fatalf("rerun: err %v after %d attempts, %d resets", o.Err, len(o.Attempts), w.b.State().ManagerResets)
		}
		// Back: the rerun converges, still without a second reset.
		w.site.Clock.Advance(3 * bmc.ResetBudget)
		w.configure(t, tg)
		if n := w.b.State().ManagerResets; n != 1 {
			t.Fatalf("resets = %d, want 1", n)
		}
	})
	t.Run("reset sent, its record lost, the BMC down past the busy budget", func(t *testing.T) {
		w := rotationWorld(t, "ami", func(*fakes.FakeBMC) {})
		w.b.ResetDowntime(5 * time.Minute)
		ctx, cancel := context.WithCancel(context.Background())
		w.cfg.Vault = &crashVault{Vault: w.site.Vault, n: 3, before: true, crash: cancel}
		tg := w.target()
		if o := bmctest.Converge(ctx, w.cfg, tg, w.site.Clock); o.Err == nil {
			t.Fatal("the run did not crash")
		}
		w.restart()
		o := w.configure(t, tg)
		if !slices.Contains(o.Reasons(), bmc.WaitReset) || slices.Contains(o.Reasons(), bmc.WaitUnreachable) {
			t.Fatalf("waits %v: an owed reset's silence is waited on the reset budget", o.Reasons())
		}
		w.rotatedOnce(t)
	})
	t.Run("reset request that never reached the BMC", func(t *testing.T) {
		// The request timed out before the BMC acted on it: the BMC keeps
		// answering on its factory credential, so after ResetBudget the
		// phase requests the reset again — within the same run's budget.
		// Found by the fault-schedule suite.
		w := rotationWorld(t, "lenovo", (*fakes.FakeBMC).ApplyPasswordOnReset)
		w.site.Inject(fakes.SysBMC, "reset_manager", 1, fmt.Errorf("no answer within the client's timeout: %w", hostforge.ErrUnavailable))
		tg := w.target()
		o := w.converge(tg)
		if o.Err != nil {
			t.Fatalf("err = %v after %s: a reset the BMC never took must be requested again within the budget", o.Err, o.Waited)
		}
		if n := w.b.State().ManagerResets; n != 1 {
			t.Fatalf("resets = %d, want the one that reached the BMC", n)
		}
		w.rotatedOnce(t)
	})
	t.Run("lost answer to the reset", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.b.LoseAnswers("reset_manager", 1)
		tg := w.target()
		tg.ForceRestart, tg.RunID = true, "run-1"
		w.configure(t, tg)
		if n := w.b.State().ManagerResets; n != 1 {
			t.Fatalf("resets = %d: a reset whose answer was lost is polled, not repeated", n)
		}
	})
}

func TestLenovoHostResetOncePerRun(t *testing.T) {
	// The host was reset for staged settings, then a later step waits: the
	// next attempt does not reboot the host again.
	w := newWorld(t, "lenovo")
	w.site.Inject(fakes.SysBMC, "create_account", 2, fmt.Errorf("connection reset by peer: %w", hostforge.ErrUnavailable))
	o := w.configure(t, w.target())
	if n := w.b.State().SystemResets; n != 1 || len(o.Attempts) != 3 {
		t.Fatalf("host resets = %d over %d attempts, want 1 over 3", n, len(o.Attempts))
	}
	if w.admin()[bmc.FieldHostResetAt] != "" {
		t.Fatal("the host reset record outlived the run")
	}
}

// sleeplessClock fails the test when anything sleeps on it.
type sleeplessClock struct {
	*clock.Fake
	t *testing.T
}

func (c sleeplessClock) Sleep(context.Context, time.Duration) error {
	c.t.Error("the BMC phase slept on its clock")
	return nil
}

func TestAttemptsNeverSleep(t *testing.T) {
	for _, v := range bmc.Vendors {
		w := rotationWorld(t, string(v), func(*fakes.FakeBMC) {})
		if v == bmc.VendorSupermicro {
			w = newWorld(t, string(v))
		}
		w.cfg.Clock = sleeplessClock{Fake: w.site.Clock, t: t}
		w.b.Busy(2, "busy")
		tg := w.target()
		tg.ForceRestart, tg.RunID = true, "run-1"
		w.configure(t, tg)
	}
}

func TestIPMIUser(t *testing.T) {
	t.Run("missing credentials fail", func(t *testing.T) {
		w := newWorld(t, "dell")
		w.site.Vault.Set(fakes.MonitoringItem, map[string]string{"username": "ipmi_exporter"})
		if o := w.converge(w.target()); !bmc.IPMICredentialMissing.Is(o.Err) {
			t.Fatalf("err = %v", o.Err)
		}
	})
	t.Run("no endpoint skips", func(t *testing.T) {
		w := newWorld(t, "supermicro")
		w.b.NoAccountEndpoint()
		w.site.Vault.Set(fakes.MonitoringItem, nil)
		o := w.configure(t, w.target())
		if !slices.Contains(o.Steps(), "ipmi_user:skipped_no_endpoint") {
			t.Fatalf("steps %v", o.Steps())
		}
	})
	t.Run("password drift is repaired", func(t *testing.T) {
		w := newWorld(t, "ami")
		w.configure(t, w.target())
		w.site.Vault.Set(fakes.MonitoringItem, map[string]string{"username": "ipmi_exporter", "password": "rotated-monitoring-pw"})
		o := w.configure(t, w.target())
		if !slices.Contains(o.Steps(), "ipmi_user:password_set") || w.b.Password("ipmi_exporter") != "rotated-monitoring-pw" {
			t.Fatalf("steps %v", o.Steps())
		}
	})
}

func TestUnsupportedAndBadInput(t *testing.T) {
	w := newWorld(t, "dell")
	w.b.SetIdentity(bmc.Identity{Vendor: "HPE", Product: "ProLiant DL385 Gen10 Plus v2", RootOem: []string{"Hpe"}})
	if o := w.converge(w.target()); !bmc.VendorUnsupported.Is(o.Err) || w.bmcWrites() != 0 {
		t.Fatalf("err = %v writes %d", o.Err, w.bmcWrites())
	}
	for name, mut := range map[string]func(*bmc.Target){
		"no device":  func(t *bmc.Target) { t.Device = "" },
		"bad name":   func(t *bmc.Target) { t.Device = "node 1/a" },
		"no address": func(t *bmc.Target) { t.Address = "" },
		"bad MAC":    func(t *bmc.Target) { t.ProvisioningMAC = "zz" },
		"bad ntp":    func(t *bmc.Target) { t.NTPServers = []string{""} },
		"no run id":  func(t *bmc.Target) { t.ForceRestart = true },
	} {
		tg := w.target()
		mut(&tg)
		if _, err := w.cfg.Configure(context.Background(), tg); !bmc.InputInvalid.Is(err) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if w.bmcWrites() != 0 || w.vaultWrites() != 0 {
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
		o := w.configure(t, w.target())
		w.site.Vault.Set(fakes.MonitoringItem, nil)
		failed := w.converge(w.target())
		text := w.logs.String() + failed.Err.Error() + strings.Join(o.Steps(), " ")
		for _, wt := range o.Waits {
			text += wt.Detail
		}
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

// TestEchoedSecretsAreScrubbed: a BMC that refuses a password echoes it
// (DMTF PropertyValueFormatError: "The value %1 for the property %2 ...").
// Neither the rotated admin password nor the shared monitoring password
// may reach the Failure, its JSON, err.Error(), a wait or a log line.
func TestEchoedSecretsAreScrubbed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		vendor string
		setup  func(w *world)
		// secret returns the value the BMC echoed.
		secret func(w *world) string
	}{
		{"rotated admin password refused", "dell", func(w *world) {
			w.b.FactoryReset()
			w.b.RefusePasswords(1)
			w.cfg.NewPassword = func() (string, error) { return "Rotated-Pw-Echoed-1", nil }
		}, func(*world) string { return "Rotated-Pw-Echoed-1" }},
		{"shared monitoring password refused on create", "ami", func(w *world) {
			w.site.Vault.Set(fakes.MonitoringItem, map[string]string{"username": "ipmi_exporter", "password": "Shared-Monitoring-Pw"})
			w.b.RefusePasswords(1)
		}, func(*world) string { return "Shared-Monitoring-Pw" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, shared := range []bool{false, true} {
				w := newWorld(t, tc.vendor)
				tc.setup(w)
				if shared {
					w.cfg.Secrets = hostforge.NewSecrets()
				}
				o := w.converge(w.target())
				if !bmc.WriteRejected.Is(o.Err) {
					t.Fatalf("err = %v, want the refusal", o.Err)
				}
				secret := tc.secret(w)
				f, _ := hostforge.AsFailure(o.Err)
				b, _ := json.Marshal(f)
				text := o.Err.Error() + string(b) + f.Error() + w.logs.String()
				for _, wt := range o.Waits {
					text += wt.Detail
				}
				if strings.Contains(text, secret) {
					t.Fatalf("shared set %v: the echoed secret reached the failure or the logs:\n%s", shared, text)
				}
				if !strings.Contains(o.Err.Error(), "PropertyValueFormatError") || !strings.Contains(o.Err.Error(), hostforge.Redacted) {
					t.Fatalf("the BMC's reason was lost: %v", o.Err)
				}
				if shared && !w.cfg.Secrets.Contains(secret) {
					t.Fatal("the handled secret was not registered in the configurator's set")
				}
			}
		})
	}
}

// slowQueue is a connector whose clients let time pass between a settings
// read and the job-queue read, as on a busy real iDRAC: a job can finish
// between the two.
type slowQueue struct {
	bmc.Connector
	clk *clock.Fake
	lag time.Duration
}

type slowQueueClient struct {
	bmc.Client
	q *slowQueue
}

func (q *slowQueue) Connect(ctx context.Context, addr string, cred bmc.Credential) (bmc.Client, error) {
	c, err := q.Connector.Connect(ctx, addr, cred)
	if err != nil {
		return nil, err
	}
	return &slowQueueClient{Client: c, q: q}, nil
}

func (c *slowQueueClient) ListJobs(ctx context.Context) ([]bmc.Job, error) {
	c.q.clk.Advance(c.q.lag)
	return c.Client.ListJobs(ctx)
}

// A job that completes after the step read its settings but before it read
// the job queue is applied, not "completed but the settings did not apply":
// the step reads its settings again before judging.
func TestJobCompletingBetweenReads(t *testing.T) {
	w := newWorld(t, "dell")
	w.cfg.Connector = &slowQueue{Connector: w.site.BMCs, clk: w.site.Clock, lag: bmc.JobPoll}
	o := w.converge(w.target())
	if o.Err != nil {
		t.Fatalf("Configure = %v after %d attempts, want converged", o.Err, len(o.Attempts))
	}
	before := w.bmcWrites()
	if o := w.converge(w.target()); o.Err != nil || w.bmcWrites() != before {
		t.Fatalf("rerun: %v, %d writes", o.Err, w.bmcWrites()-before)
	}
}

// TestPollsSpaceOutWhileNothingChanges: a staged iDRAC job, the host reset
// that carries it and a cold reset of the BMC are polled sooner after the
// phase acted and less often the longer they take (the time since the
// action plus the first pause, up to a cap), and the poll that judges an
// overrun lands on the budget's end, not past it.
func TestPollsSpaceOutWhileNothingChanges(t *testing.T) {
	afters := func(o bmctest.Outcome, reason string) []time.Duration {
		var out []time.Duration
		for _, w := range o.Waits {
			if w.Reason == reason {
				out = append(out, w.After)
			}
		}
		return out
	}
	s := time.Second
	t.Run("iDRAC jobs", func(t *testing.T) {
		// Scheduled 30 s after staging, applied 3 min after the host reset.
		w := newWorld(t, "dell")
		o := w.configure(t, w.target())
		// Each of the two jobs (BIOS, boot order): polled 10 s and 30 s
		// after staging, then 10, 30, 70, 130 and 190 s after the reset.
		schedule := []time.Duration{10 * s, 20 * s, 10 * s, 20 * s}
		run := []time.Duration{10 * s, 20 * s, 40 * s, 60 * s, 60 * s, 10 * s, 20 * s, 40 * s, 60 * s, 60 * s}
		if got := afters(o, bmc.WaitJobSchedule); !slices.Equal(got, schedule) {
			t.Errorf("schedule waits %v, want %v", got, schedule)
		}
		if got := afters(o, bmc.WaitJobRun); !slices.Equal(got, run) {
			t.Errorf("run waits %v, want %v", got, run)
		}
	})
	t.Run("a job never scheduled", func(t *testing.T) {
		w := newWorld(t, "dell")
		w.b.NeverScheduleJobs()
		o := w.converge(w.target())
		want := []time.Duration{10 * s, 20 * s, 40 * s, 60 * s, 50 * s} // judged at 3 min
		if got := afters(o, bmc.WaitJobSchedule); !slices.Equal(got, want) || !bmc.JobNotScheduled.Is(o.Err) {
			t.Errorf("schedule waits %v ending %v, want %v and BMC_JOB_NOT_SCHEDULED", got, o.Err, want)
		}
	})
	t.Run("cold reset", func(t *testing.T) {
		// Rotated from the factory password, then reset: Redfish is back
		// 90 s later.
		w := newWorld(t, "lenovo")
		w.b.FactoryReset()
		w.site.Vault.Set(fakes.AdminItem(w.host.Name), nil)
		o := w.configure(t, w.target())
		want := []time.Duration{15 * s, 30 * s, 30 * s, 30 * s}
		if got := afters(o, bmc.WaitReset); !slices.Equal(got, want) {
			t.Errorf("reset waits %v, want %v", got, want)
		}
	})
}
