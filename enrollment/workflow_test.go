package enrollment_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/dhcp"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/intent"
)

// world is a fake site plus an executor and runtime over it.
type world struct {
	site *fakes.Site
	exec *enrollment.Executor
	rt   *flow.Local
	cfg  enrollment.SiteConfig
	logs *bytes.Buffer
	evts []flow.Event
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{site: fakes.NewSite(), logs: &bytes.Buffer{}}
	w.exec = &enrollment.Executor{
		NetBox: w.site.NetBox, FleetManager: w.site.FleetManager, Vault: w.site.Vault,
		Log: slog.New(slog.NewTextHandler(w.logs, nil)),
	}
	w.rt = w.exec.Local(w.site.Clock)
	w.rt.RoundTrip = true
	w.rt.OnEvent = func(e flow.Event) { w.evts = append(w.evts, e) }
	w.cfg = enrollment.SiteConfig{IronicInstances: map[string]string{
		intent.ClassGPUCompute: "ironic-gpu", intent.ClassCPUBaremetal: "ironic-cpu", intent.ClassHypervisor: "ironic-cpu",
	}}
	return w
}

func (w *world) enroll(t *testing.T, device, class string, p enrollment.Params) (enrollment.Result, error) {
	t.Helper()
	req := enrollment.NewRequest(device, class, "lab1", w.cfg, true, p)
	w.rt.Subject = device
	res, err := enrollment.Enroll(context.Background(), w.rt, req)
	if err != nil {
		if _, ok := err.(*hostforge.Failure); !ok {
			t.Fatalf("Enroll returned a %T, want *hostforge.Failure: %v", err, err)
		}
		if res.Failure == nil || res.Failure.Code != hostforge.CodeOf(err) || res.Enrolled {
			t.Fatalf("result does not carry the failure: %+v", res)
		}
	}
	return res, err
}

func gpuHost(name string) fakes.HostSpec {
	return fakes.HostSpec{Name: name, Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2", GPUType: "GB300",
		HasZTP: true, ZTP: map[string]any{"infiniband": map[string]any{"rails": 8}}}
}

func wantFailure(t *testing.T, err error, code string, retryable bool, owner hostforge.Owner, msgParts ...string) *hostforge.Failure {
	t.Helper()
	f, ok := hostforge.AsFailure(err)
	if !ok {
		t.Fatalf("err = %v, want failure %s", err, code)
	}
	if f.Code != code || f.Retryable != retryable || f.Owner != owner || f.Action == "" {
		t.Fatalf("failure = %+v, want code %s retryable %v owner %s with an action", f, code, retryable, owner)
	}
	for _, p := range msgParts {
		if !strings.Contains(f.Error(), p) {
			t.Fatalf("failure %q does not mention %q", f.Error(), p)
		}
	}
	return f
}

func TestEnrollHappyPathRecordsAndActivates(t *testing.T) {
	w := newWorld(t)
	w.site.AddHost(gpuHost("gpu-1"))
	res, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Enrolled || res.Instance != "ironic-gpu" || res.PlatformClass != "GB300_LENOVOHG635NV2_IB_01" {
		t.Fatalf("result = %+v", res)
	}
	var phases []string
	for _, p := range res.Phases {
		phases = append(phases, p.Phase+":"+p.Status)
	}
	want := "resolve_ironic_instance:done netbox_status_gate:done record_platform_class:done configure_dhcp:skipped configure_bmc:skipped netbox_activation:done ironic:skipped"
	if got := strings.Join(phases, " "); got != want {
		t.Fatalf("phases = %s\nwant     %s", got, want)
	}
	d, _ := w.site.NetBox.Device(context.Background(), "gpu-1")
	if d.Status != intent.StatusActive || d.PlatformClass != "GB300_LENOVOHG635NV2_IB_01" {
		t.Fatalf("NetBox after = status %s platform_class %q", d.Status, d.PlatformClass)
	}
	if got := w.site.FleetManager.Get("gpu-1"); got != "GB300_LENOVOHG635NV2_IB_01" {
		t.Fatalf("fleet manager platform_class = %q", got)
	}
	if !strings.Contains(w.logs.String(), "device=gpu-1") || !strings.Contains(w.logs.String(), "phase=netbox_activation") {
		t.Fatalf("logs lack device/phase fields:\n%s", w.logs)
	}
}

// A rerun on a host whose platform class is recorded makes zero NetBox and
// fleet manager writes.
func TestRerunOnRecordedHostMakesNoWrites(t *testing.T) {
	w := newWorld(t)
	w.site.AddHost(gpuHost("gpu-1"))
	if _, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{}); err != nil {
		t.Fatal(err)
	}
	first := w.site.Calls()
	if first[fakes.SysNetBox].Writes != 2 || first[fakes.SysFleetManager].Writes != 1 {
		t.Fatalf("first run writes = %s", first)
	}
	if _, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{}); err != nil {
		t.Fatal(err)
	}
	rerun := w.site.Calls().Sub(first)
	if rerun[fakes.SysNetBox].Writes != 0 || rerun[fakes.SysFleetManager].Writes != 0 {
		t.Fatalf("rerun writes = %s", rerun)
	}
	if rerun[fakes.SysNetBox].Reads == 0 || rerun[fakes.SysFleetManager].Reads == 0 {
		t.Fatalf("rerun did not re-read live state: %s", rerun)
	}
}

func TestRoutingPreflightTouchesNothing(t *testing.T) {
	tests := []struct {
		name, class string
		msg         string
	}{
		{"no device_class", "", "carries no device_class"},
		{"a class no instance manages", intent.ClassSwitch, `no Ironic instance manages device_class "SWITCH"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.site.AddHost(gpuHost("gpu-1"))
			res, err := w.enroll(t, "gpu-1", tt.class, enrollment.Params{})
			f := wantFailure(t, err, "IRONIC_ROUTING_UNRESOLVED", false, hostforge.OwnerInfraEng, tt.msg)
			if f.Phase != "resolve_ironic_instance" {
				t.Fatalf("phase = %s", f.Phase)
			}
			if calls := w.site.Calls(); calls.Reads()+calls.Writes() != 0 {
				t.Fatalf("routing failure touched systems: %s", calls)
			}
			if len(w.evts) != 0 {
				t.Fatalf("a step ran: %+v", w.evts)
			}
			if len(res.Phases) != 1 || res.Phases[0].Status != "failed" {
				t.Fatalf("phases = %+v", res.Phases)
			}
		})
	}
}

func TestStatusGate(t *testing.T) {
	for _, st := range []intent.Status{intent.StatusOffline, intent.StatusPlanned, intent.StatusFailed, intent.StatusInventory, intent.StatusDecommissioning} {
		t.Run(string(st), func(t *testing.T) {
			w := newWorld(t)
			w.site.AddHost(fakes.HostSpec{Name: "h", Status: st})
			_, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
			wantFailure(t, err, "NETBOX_STATUS_INELIGIBLE", false, hostforge.OwnerInfraEng, "h is "+string(st))
			if w.site.Calls().Writes() != 0 {
				t.Fatal("a refused device was written")
			}
		})
	}
	t.Run("active passes and is left active", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(fakes.HostSpec{Name: "h", Status: intent.StatusActive, PlatformClass: "NOGPU_DELLPOWEREDGER7615_NORDMA_01"})
		w.site.FleetManager.Set("h", "NOGPU_DELLPOWEREDGER7615_NORDMA_01")
		res, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
		if err != nil {
			t.Fatal(err)
		}
		if w.site.Calls().Writes() != 0 {
			t.Fatalf("writes on an active, recorded device: %s", w.site.Calls())
		}
		if last := res.Phases[5]; last.Phase != "netbox_activation" || last.Note != "left active" {
			t.Fatalf("activation = %+v", last)
		}
	})
	t.Run("device not found", func(t *testing.T) {
		w := newWorld(t)
		_, err := w.enroll(t, "ghost", intent.ClassCPUBaremetal, enrollment.Params{})
		wantFailure(t, err, "NETBOX_DEVICE_NOT_FOUND", false, hostforge.OwnerInfraEng, "ghost")
	})
}

// Activation re-reads the live status and only moves staged → active.
func TestActivationLeavesNonStagedUntouched(t *testing.T) {
	w := newWorld(t)
	w.site.AddHost(fakes.HostSpec{Name: "h"})
	// Someone marks the device failed after the status gate read it.
	w.exec.BMC = bmcFunc(func(context.Context, bmc.Target) (bmc.Result, error) {
		return bmc.Result{}, w.site.NetBox.Update(func(st *fakes.NetBoxState) error {
			st.DeviceByName("h").Status = string(intent.StatusFailed)
			return nil
		})
	})
	w.cfg.ConfigureBMC = true
	res, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := w.site.NetBox.Device(context.Background(), "h")
	if d.Status != intent.StatusFailed {
		t.Fatalf("status = %s, want failed left untouched", d.Status)
	}
	if got := w.site.Calls()[fakes.SysNetBox].Ops["set_status"]; got != 0 {
		t.Fatalf("set_status called %d times", got)
	}
	if res.Phases[5].Note != "left failed" {
		t.Fatalf("activation = %+v", res.Phases[5])
	}
}

func TestPlatformClassInWorkflow(t *testing.T) {
	t.Run("skipped when the readiness gate is off", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(fakes.HostSpec{Name: "h", Class: intent.ClassGPUCompute}) // no gpu_type: would fail
		req := enrollment.NewRequest("h", intent.ClassGPUCompute, "lab1", w.cfg, false, enrollment.Params{})
		res, err := enrollment.Enroll(context.Background(), w.rt, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Phases[2].Status != "skipped" || w.site.Calls()[fakes.SysFleetManager].Reads != 0 {
			t.Fatalf("platform class ran: %+v %s", res.Phases[2], w.site.Calls())
		}
		if d, _ := w.site.NetBox.Device(context.Background(), "h"); d.PlatformClass != "" {
			t.Fatal("a key was recorded while the gate was off")
		}
	})
	t.Run("GPU device without gpu_type fails before any host-touching step", func(t *testing.T) {
		w := newWorld(t)
		w.cfg.ConfigureDHCP, w.cfg.ConfigureBMC = true, true
		w.site.AddHost(fakes.HostSpec{Name: "h", Class: intent.ClassGPUCompute})
		res, err := w.enroll(t, "h", intent.ClassGPUCompute, enrollment.Params{})
		wantFailure(t, err, "PLATFORM_CLASS_UNRESOLVABLE", false, hostforge.OwnerInfraEng, "gpu_type")
		if w.site.Calls().Writes() != 0 {
			t.Fatal("wrote before failing")
		}
		if n := len(res.Phases); n != 3 {
			t.Fatalf("phases after failure = %+v", res.Phases)
		}
	})
	t.Run("divergent NetBox value is kept, warned about and pushed to the fleet manager", func(t *testing.T) {
		w := newWorld(t)
		spec := gpuHost("gpu-1")
		spec.PlatformClass = "GB200_LENOVOHG635NV2_IB_01"
		w.site.AddHost(spec)
		res, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{})
		if err != nil {
			t.Fatal(err)
		}
		if res.PlatformClass != "GB200_LENOVOHG635NV2_IB_01" {
			t.Fatalf("effective = %s", res.PlatformClass)
		}
		if d, _ := w.site.NetBox.Device(context.Background(), "gpu-1"); d.PlatformClass != "GB200_LENOVOHG635NV2_IB_01" {
			t.Fatal("NetBox value was overwritten")
		}
		if w.site.FleetManager.Get("gpu-1") != "GB200_LENOVOHG635NV2_IB_01" {
			t.Fatal("fleet manager not set to the effective value")
		}
		if !strings.Contains(w.logs.String(), "level=WARN") || !strings.Contains(w.logs.String(), "computed=GB300_LENOVOHG635NV2_IB_01") {
			t.Fatalf("no warning naming both values:\n%s", w.logs)
		}
	})
	t.Run("missing custom field is a retryable record failure", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(gpuHost("gpu-1"))
		w.site.RemovePlatformClassField()
		_ = w.site.NetBox.Update(func(st *fakes.NetBoxState) error {
			delete(st.DeviceByName("gpu-1").CustomFields, "platform_class")
			return nil
		})
		_, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{MaxAttemptsOverride: 1})
		wantFailure(t, err, "PLATFORM_CLASS_RECORD_FAILED", true, hostforge.OwnerFleetManager, "platform_class")
	})
	t.Run("fleet manager outage past the attempt budget", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(gpuHost("gpu-1"))
		w.site.Inject(fakes.SysFleetManager, "set_platform_class", 10, fmt.Errorf("HTTP 502: %w", hostforge.ErrUnavailable))
		_, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{})
		wantFailure(t, err, "PLATFORM_CLASS_RECORD_FAILED", true, hostforge.OwnerFleetManager)
		if got := w.site.Calls()[fakes.SysFleetManager].Ops["set_platform_class"]; got != enrollment.DefaultMaxAttempts {
			t.Fatalf("attempts = %d, want %d", got, enrollment.DefaultMaxAttempts)
		}
		// Activation never ran.
		if d, _ := w.site.NetBox.Device(context.Background(), "gpu-1"); d.Status != intent.StatusStaged {
			t.Fatalf("status = %s", d.Status)
		}
	})
}

func TestRetryPolicy(t *testing.T) {
	t.Run("a transient NetBox 5xx is retried after a backoff on the clock", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(gpuHost("gpu-1"))
		w.site.Inject(fakes.SysNetBox, "device", 2, fmt.Errorf("HTTP 503: %w", hostforge.ErrUnavailable))
		start := w.site.Clock.Now()
		if _, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{}); err != nil {
			t.Fatal(err)
		}
		if got := w.site.Clock.Now().Sub(start); got != 30*time.Second {
			t.Fatalf("virtual time spent = %s, want 10s + 20s of backoff", got)
		}
	})
	t.Run("past the budget: NETBOX_UNAVAILABLE", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(gpuHost("gpu-1"))
		w.site.Inject(fakes.SysNetBox, "device", 3, fmt.Errorf("HTTP 503: %w", hostforge.ErrUnavailable))
		_, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{})
		wantFailure(t, err, "NETBOX_UNAVAILABLE", true, hostforge.OwnerInfraEng, "gpu-1")
	})
	t.Run("max_attempts_override=1 fails fast", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(gpuHost("gpu-1"))
		w.site.Inject(fakes.SysNetBox, "device", 1, fmt.Errorf("HTTP 503: %w", hostforge.ErrUnavailable))
		start := w.site.Clock.Now()
		_, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{MaxAttemptsOverride: 1})
		wantFailure(t, err, "NETBOX_UNAVAILABLE", true, hostforge.OwnerInfraEng)
		if !w.site.Clock.Now().Equal(start) {
			t.Fatal("slept before failing fast")
		}
	})
	t.Run("401 is not retried", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(gpuHost("gpu-1"))
		w.site.Inject(fakes.SysNetBox, "device", 1, fmt.Errorf("HTTP 403: %w", hostforge.ErrUnauthorized))
		_, err := w.enroll(t, "gpu-1", intent.ClassGPUCompute, enrollment.Params{})
		wantFailure(t, err, "NETBOX_UNAUTHORIZED", false, hostforge.OwnerInfraEng)
		if got := w.site.Calls()[fakes.SysNetBox].Reads; got != 1 {
			t.Fatalf("reads = %d", got)
		}
	})
	t.Run("a NetBox write refusal names the step", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(fakes.HostSpec{Name: "h"})
		w.site.Inject(fakes.SysNetBox, "set_status", 1, fmt.Errorf("HTTP 400 status: %w", hostforge.ErrInvalid))
		_, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
		f := wantFailure(t, err, "NETBOX_WRITE_REJECTED", false, hostforge.OwnerInfraEng, "staged → active")
		if f.Phase != "netbox_activation" {
			t.Fatalf("phase = %s", f.Phase)
		}
	})
	t.Run("cancellation is CANCELLED, not a bug", func(t *testing.T) {
		w := newWorld(t)
		w.site.AddHost(fakes.HostSpec{Name: "h"})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := enrollment.Enroll(ctx, w.rt, enrollment.NewRequest("h", intent.ClassCPUBaremetal, "lab1", w.cfg, true, enrollment.Params{}))
		wantFailure(t, err, "CANCELLED", true, hostforge.OwnerInfraEng)
	})
}

type dhcpFunc func(context.Context, dhcp.Entry) (dhcp.Result, error)

func (f dhcpFunc) Configure(ctx context.Context, e dhcp.Entry) (dhcp.Result, error) { return f(ctx, e) }

type bmcFunc func(context.Context, bmc.Target) (bmc.Result, error)

func (f bmcFunc) Configure(ctx context.Context, t bmc.Target) (bmc.Result, error) { return f(ctx, t) }

func TestPhasesWithoutImplementationFailLoudly(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  func(*enrollment.SiteConfig)
		msg  string
	}{
		{"dhcp", func(c *enrollment.SiteConfig) { c.ConfigureDHCP = true }, "DHCP phase"},
		{"bmc", func(c *enrollment.SiteConfig) { c.ConfigureBMC = true }, "BMC phase"},
		{"ironic", func(c *enrollment.SiteConfig) { c.IronicEnrol = true }, "Ironic"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.exec.Ironic = nil
			tt.set(&w.cfg)
			w.site.AddHost(fakes.HostSpec{Name: "h"})
			_, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
			wantFailure(t, err, "NOT_IMPLEMENTED", false, hostforge.OwnerSDK, tt.msg)
		})
	}
}

func TestPhaseInputsAndTagging(t *testing.T) {
	w := newWorld(t)
	w.cfg.ConfigureDHCP, w.cfg.ConfigureBMC = true, true
	h := w.site.AddHost(fakes.HostSpec{Name: "h", NICs: 12})
	var gotEntry dhcp.Entry
	var gotTarget bmc.Target
	w.exec.DHCP = dhcpFunc(func(_ context.Context, e dhcp.Entry) (dhcp.Result, error) {
		gotEntry = e
		return dhcp.Result{Changed: true}, nil
	})
	w.exec.BMC = bmcFunc(func(_ context.Context, t bmc.Target) (bmc.Result, error) {
		gotTarget = t
		return bmc.Result{Vendor: "dell"}, nil
	})
	res, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{ForceBMCRestart: true})
	if err != nil {
		t.Fatal(err)
	}
	if gotEntry != (dhcp.Entry{Hostname: "h", MAC: h.BMCMAC, IP: h.OOBIP}) {
		t.Fatalf("dhcp entry = %+v", gotEntry)
	}
	// eth0 is the provisioning NIC: natural order puts eth10 and eth11 after eth9.
	if gotTarget.ProvisioningMAC != h.NICs[0].MAC || !gotTarget.RestrictBoot || !gotTarget.ForceRestart || !strings.HasPrefix(gotTarget.RunID, "h@") ||
		gotTarget.Address != h.OOBIP || strings.Join(gotTarget.NTPServers, ",") != "10.0.0.11,10.0.0.12" || len(gotTarget.SyslogServers) != 1 {
		t.Fatalf("bmc target = %+v", gotTarget)
	}
	d, _ := w.site.NetBox.Device(context.Background(), "h")
	if !d.HasTag(intent.TagIPMIExporter) {
		t.Fatalf("tags = %v", d.Tags)
	}
	if res.Phases[3].Status != "done" || res.Phases[4].Status != "done" {
		t.Fatalf("phases = %+v", res.Phases)
	}
	// Rerun: the tag is present, so no NetBox tag write.
	before := w.site.Calls()
	if _, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{}); err != nil {
		t.Fatal(err)
	}
	if got := w.site.Calls().Sub(before)[fakes.SysNetBox].Writes; got != 0 {
		t.Fatalf("rerun NetBox writes = %d", got)
	}
	// restrict_boot off reaches the BMC phase.
	off := false
	w.cfg.RestrictBoot = &off
	if _, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{}); err != nil || gotTarget.RestrictBoot {
		t.Fatalf("restrict_boot off: %v %+v", err, gotTarget)
	}
}

func TestWaitsSleepOnTheClockWithinTheirBudget(t *testing.T) {
	w := newWorld(t)
	w.cfg.ConfigureBMC = true
	w.site.AddHost(fakes.HostSpec{Name: "h"})
	calls := 0
	w.exec.BMC = bmcFunc(func(context.Context, bmc.Target) (bmc.Result, error) {
		calls++
		if calls <= 3 {
			return bmc.Result{}, hostforge.RetryAfter(time.Minute, "settling", "503 host booting")
		}
		return bmc.Result{}, nil
	})
	start := w.site.Clock.Now()
	if _, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{}); err != nil {
		t.Fatal(err)
	}
	if calls != 4 || w.site.Clock.Now().Sub(start) != 3*time.Minute {
		t.Fatalf("calls = %d, slept %s", calls, w.site.Clock.Now().Sub(start))
	}
	var sleeps, waits int
	for _, e := range w.evts {
		if e.Kind == "sleep" {
			sleeps++
		}
		if e.Kind == "step" && e.Outcome == hostforge.Waiting && e.Wait.Reason == "settling" {
			waits++
		}
	}
	if sleeps != 3 || waits != 3 {
		t.Fatalf("events: %d sleeps, %d waits", sleeps, waits)
	}

	t.Run("node lock budget is the site's NodeLockMaxWait", func(t *testing.T) {
		w := newWorld(t)
		w.cfg.ConfigureBMC = true
		w.cfg.NodeLockMaxWait = enrollment.Duration(2 * time.Minute)
		w.site.AddHost(fakes.HostSpec{Name: "h"})
		w.exec.BMC = bmcFunc(func(context.Context, bmc.Target) (bmc.Result, error) {
			return bmc.Result{}, hostforge.RetryAfter(time.Minute, enrollment.WaitReasonNodeLocked, "locked by conductor-2")
		})
		_, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
		// A locked node is a locked node whichever step met it: the
		// node_locked policy (budget, backoff, failure) applies everywhere.
		wantFailure(t, err, "IRONIC_NODE_LOCKED", true, hostforge.OwnerInfraEng, "conductor-2", "budget 2m0s")
	})
	t.Run("other reasons use the default budget", func(t *testing.T) {
		w := newWorld(t)
		w.cfg.ConfigureBMC = true
		w.site.AddHost(fakes.HostSpec{Name: "h"})
		w.exec.BMC = bmcFunc(func(context.Context, bmc.Target) (bmc.Result, error) {
			return bmc.Result{}, hostforge.RetryAfter(time.Minute, "settling", "still booting")
		})
		start := w.site.Clock.Now()
		_, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
		wantFailure(t, err, "WAIT_BUDGET_EXHAUSTED", true, hostforge.OwnerInfraEng, "still booting")
		if got := w.site.Clock.Now().Sub(start); got != enrollment.DefaultWaitBudget {
			t.Fatalf("waited %s", got)
		}
	})
}

// TestBMCWaitPolicies: the BMC phase's wait reasons sleep and fail as the
// phase declares (bmc.Waits), through the request's policy — so Local and
// Temporal, which both run the body with it, agree.
func TestBMCWaitPolicies(t *testing.T) {
	cases := []struct {
		reason string
		after  time.Duration
		// waited is the total sleep before the budget runs out; code is
		// the failure then.
		waited    time.Duration
		code      string
		retryable bool
		first3    []time.Duration
	}{
		// 5 + 10 + 20 + 30 + 30 s; one more 30 s would pass 2 min.
		{bmc.WaitBusy, time.Second, 95 * time.Second, bmc.ServiceUnavailable.Code, true, []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second}},
		{bmc.WaitUnreachable, time.Second, 95 * time.Second, bmc.Unreachable.Code, true, []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second}},
		{bmc.WaitReset, bmc.ResetPoll, bmc.ResetWaitBudget, bmc.ResetTimeout.Code, true, []time.Duration{15 * time.Second, 15 * time.Second, 15 * time.Second}},
		{bmc.WaitJobSchedule, bmc.JobPoll, bmc.JobsPerRun * (bmc.JobScheduleBudget + bmc.JobPoll), bmc.JobNotScheduled.Code, true, []time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second}},
		{bmc.WaitJobRun, bmc.JobPoll, bmc.JobsPerRun * bmc.JobRunBudget, bmc.JobFailed.Code, false, []time.Duration{10 * time.Second, 10 * time.Second, 10 * time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			w := newWorld(t)
			w.cfg.ConfigureBMC = true
			w.site.AddHost(fakes.HostSpec{Name: "h"})
			w.exec.BMC = bmcFunc(func(context.Context, bmc.Target) (bmc.Result, error) {
				return bmc.Result{}, hostforge.RetryAfter(tc.after, tc.reason, "the BMC's own reason")
			})
			start := w.site.Clock.Now()
			_, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
			f := wantFailure(t, err, tc.code, tc.retryable, hostforge.OwnerDCOps, "the BMC's own reason")
			if f.Phase != bmc.Phase {
				t.Fatalf("phase %q", f.Phase)
			}
			if got := w.site.Clock.Now().Sub(start); got != tc.waited {
				t.Fatalf("waited %s, want %s", got, tc.waited)
			}
			var sleeps []time.Duration
			for _, e := range w.evts {
				if e.Kind == "sleep" {
					sleeps = append(sleeps, e.Took)
				}
			}
			if len(sleeps) < 3 || !slices.Equal(sleeps[:3], tc.first3) {
				t.Fatalf("sleeps %v, want them to start %v", sleeps, tc.first3)
			}
		})
	}
}

func TestUnclassifiedPhaseErrorIsReportedAsABug(t *testing.T) {
	w := newWorld(t)
	w.cfg.ConfigureDHCP = true
	w.site.AddHost(fakes.HostSpec{Name: "h"})
	w.exec.DHCP = dhcpFunc(func(context.Context, dhcp.Entry) (dhcp.Result, error) {
		return dhcp.Result{}, errors.New("index out of range in renderer")
	})
	_, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
	f := wantFailure(t, err, "UNCLASSIFIED", false, hostforge.OwnerSDK, "index out of range")
	if !strings.Contains(f.Action, "bug") {
		t.Fatalf("action = %q", f.Action)
	}
	for _, field := range []string{"step failed", "device=h", "step=configure_dhcp", "code=UNCLASSIFIED", "owner=SDK"} {
		if !strings.Contains(w.logs.String(), field) {
			t.Errorf("failure log lacks %q:\n%s", field, w.logs)
		}
	}
}

func TestBadNetBoxData(t *testing.T) {
	tests := []struct {
		name   string
		spec   fakes.HostSpec
		mutate func(*fakes.NetBoxState)
		gates  func(*enrollment.SiteConfig)
		field  string
	}{
		{"unknown status", fakes.HostSpec{Name: "h"}, func(s *fakes.NetBoxState) { s.DeviceByName("h").Status = "borked" }, nil, "status"},
		{"missing device type", fakes.HostSpec{Name: "h"}, func(s *fakes.NetBoxState) { s.DeviceByName("h").DeviceTypeID = 0 }, nil, "device_type"},
		{"ironic_settings not an object", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"ironic_settings": "redfish"}}, nil, nil, "config_context.ironic_settings"},
		{"inspection_validation not an object", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"inspection_validation": []any{1}}}, nil, nil, "config_context.inspection_validation"},
		{"wrongly typed ironic_settings key", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"ironic_settings": map[string]any{"driver": 7}}}, nil, nil, "config_context.ironic_settings.driver"},
		{"ntp-servers not a list", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"ntp-servers": "10.0.0.1"}}, nil, nil, "config_context.ntp-servers"},
		{"empty syslog server", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"syslog-servers": []any{""}}}, nil, nil, "config_context.syslog-servers[0]"},
		{"no oob_ip with DHCP on", fakes.HostSpec{Name: "h", NoOOB: true}, nil, func(c *enrollment.SiteConfig) { c.ConfigureDHCP = true }, "oob_ip"},
		{"no oob_ip with BMC on", fakes.HostSpec{Name: "h", NoOOB: true}, nil, func(c *enrollment.SiteConfig) { c.ConfigureBMC = true }, "oob_ip"},
		{"no oob_ip with Ironic on", fakes.HostSpec{Name: "h", NoOOB: true}, nil, func(c *enrollment.SiteConfig) { c.IronicEnrol = true }, "oob_ip"},
		{"no BMC MAC with DHCP on", fakes.HostSpec{Name: "h"}, func(s *fakes.NetBoxState) {
			for _, i := range s.Interfaces {
				if i.MgmtOnly {
					i.MAC = ""
				}
			}
		}, func(c *enrollment.SiteConfig) { c.ConfigureDHCP = true }, "management-only interface"},
		{"frontend MAC not a MAC", fakes.HostSpec{Name: "h"}, func(s *fakes.NetBoxState) {
			for _, i := range s.Interfaces {
				if i.Name == "eth1" {
					i.MAC = "zz:zz"
				}
			}
		}, nil, "interfaces.eth1.mac_address"},
		{"cable peer is not a switch interface", fakes.HostSpec{Name: "h"}, func(s *fakes.NetBoxState) {
			for _, c := range s.Cables {
				c.B = []fakes.NBTermination{{ObjectType: "dcim.frontport", Name: "FP1", DeviceID: c.B[0].ObjectID}}
			}
		}, nil, "interfaces.eth0.cable"},
		{"no interface_type", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"ironic_settings": map[string]any{"driver": "redfish"}}}, nil, nil, "interface_type"},
		{"Ironic without ironic_settings", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"ironic_settings": nil}}, nil, func(c *enrollment.SiteConfig) { c.IronicEnrol = true }, "config_context.ironic_settings"},
		{"Ironic without raid interface", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"ironic_settings": map[string]any{"driver": "redfish", "interface_type": "25gbase-x-sfp28"}}}, nil, func(c *enrollment.SiteConfig) { c.IronicEnrol = true }, "interfaces.raid"},
		{"Ironic with an unknown driver", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"ironic_settings": map[string]any{"driver": "ilo", "interface_type": "25gbase-x-sfp28", "interfaces": map[string]any{"raid": "agent"}}}}, nil, func(c *enrollment.SiteConfig) { c.IronicEnrol = true }, "ironic_settings.driver"},
		{"Ironic with no frontend NIC", fakes.HostSpec{Name: "h", ConfigContext: map[string]any{"ironic_settings": map[string]any{"driver": "redfish", "interface_type": "400gbase-x-osfp", "interfaces": map[string]any{"raid": "agent"}}}}, nil, func(c *enrollment.SiteConfig) { c.IronicEnrol = true }, "no frontend interface"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			if tt.gates != nil {
				tt.gates(&w.cfg)
			}
			w.exec.DHCP = dhcpFunc(func(context.Context, dhcp.Entry) (dhcp.Result, error) {
				t.Fatal("DHCP ran on bad data")
				return dhcp.Result{}, nil
			})
			w.site.AddHost(tt.spec)
			if tt.mutate != nil {
				_ = w.site.NetBox.Update(func(s *fakes.NetBoxState) error { tt.mutate(s); return nil })
			}
			_, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{})
			wantFailure(t, err, "NETBOX_DATA_INVALID", false, hostforge.OwnerInfraEng, "device h", tt.field)
			if w.site.Calls().Writes() != 0 {
				t.Fatalf("bad data led to writes: %s", w.site.Calls())
			}
		})
	}
}

func TestLocalRoundTripCatchesUnserialisableOutput(t *testing.T) {
	w := newWorld(t)
	w.cfg.ConfigureBMC = true
	w.site.AddHost(fakes.HostSpec{Name: "h"})
	w.exec.BMC = bmcFunc(func(context.Context, bmc.Target) (bmc.Result, error) { return bmc.Result{Vendor: "dell"}, nil })
	if _, err := w.enroll(t, "h", intent.ClassCPUBaremetal, enrollment.Params{}); err != nil {
		t.Fatal(err)
	}
	// Unknown step names are bugs, not silent no-ops.
	err := w.rt.Do(context.Background(), "no_such_step", struct{}{}, nil)
	wantFailure(t, err, "UNCLASSIFIED", false, hostforge.OwnerSDK, "no_such_step")
	// A wrongly typed input is a bug.
	err = w.rt.Do(context.Background(), enrollment.StepReadIntent, 42, nil)
	wantFailure(t, err, "UNCLASSIFIED", false, hostforge.OwnerSDK)
	var wrongOut string
	err = w.rt.Do(context.Background(), enrollment.StepReadIntent, enrollment.ReadIntentIn{Device: "h"}, &wrongOut)
	wantFailure(t, err, "UNCLASSIFIED", false, hostforge.OwnerSDK)
	if names := w.exec.StepNames(); len(names) < 6 {
		t.Fatalf("step names = %v", names)
	}
}

func TestRequestJSONAndDefaults(t *testing.T) {
	off := false
	req := enrollment.NewRequest("h", "GPU_COMPUTE", "lab1", enrollment.SiteConfig{RestrictBoot: &off}, true, enrollment.Params{RunInspection: &off})
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"node_lock_max_wait":"15m0s"`, `"ironic_tag":"ironic"`, `"cleaning_deadline":"3h0m0s"`, `"platform_class_activity_ready":true`, `"run_inspection":false`, `"restrict_boot":false`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("request JSON lacks %s: %s", want, b)
		}
	}
	var back enrollment.Request
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Params.InspectionEnabled() || back.Snapshot.Site.BootRestricted() || back.Snapshot.Site.NodeLockMaxWait.D() != 15*time.Minute {
		t.Fatalf("round trip = %+v", back)
	}
	if !(enrollment.Params{}).InspectionEnabled() || !(enrollment.SiteConfig{}).BootRestricted() {
		t.Fatal("inspection and boot restriction must default on")
	}
	var d enrollment.Duration
	for in, want := range map[string]time.Duration{"900": 15 * time.Minute, "90s": 90 * time.Second} {
		if err := d.UnmarshalText([]byte(in)); err != nil || d.D() != want {
			t.Errorf("Duration(%q) = %s, %v", in, d.D(), err)
		}
	}
	for _, bad := range []string{"soon", "12x", "-"} {
		if err := d.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("Duration(%q) accepted", bad)
		}
	}
}
