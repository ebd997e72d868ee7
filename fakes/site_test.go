package fakes_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

func TestBuilderProducesCoherentIntent(t *testing.T) {
	site := fakes.NewSite()
	h := site.AddHost(fakes.HostSpec{Name: "h1", NICs: 3, GPUType: "H100", Class: intent.ClassGPUCompute})
	site.AddHost(fakes.HostSpec{Name: "h2"})
	ctx := context.Background()
	d, err := site.NetBox.Device(ctx, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != intent.StatusStaged || d.Role.DeviceClass != intent.ClassGPUCompute || d.DeviceType.GPUType != "H100" ||
		d.DeviceType.Manufacturer != "Dell" || d.OOBIP != h.OOBIP || d.Site.Slug != "lab1" {
		t.Fatalf("device = %+v", d)
	}
	// bmc, bond0, eth0..eth2 in natural order; frontend NICs cabled to the real wiring.
	var names []string
	for _, i := range d.Interfaces {
		names = append(names, i.Name)
	}
	if fmt.Sprint(names) != "[bmc bond0 eth0 eth1 eth2]" {
		t.Fatalf("interfaces = %v", names)
	}
	for k, nic := range h.NICs {
		i, _ := d.Interface(nic.Name)
		if i.MAC != nic.MAC || i.LAG != "bond0" || i.Peer == nil || i.Peer.Device != nic.Switch || i.Peer.Port != nic.Port || i.Peer.Kind != intent.PeerKindInterface || i.Peer.DeviceRole != fakes.RoleSwitch {
			t.Fatalf("nic %d: intent %+v peer %+v vs wiring %+v", k, i, i.Peer, nic)
		}
	}
	if h.NICs[0].Switch == h.NICs[1].Switch {
		t.Fatal("NICs are not spread across the leaves")
	}
	if names := site.HostNames(); fmt.Sprint(names) != "[h1 h2]" {
		t.Fatalf("hosts = %v", names)
	}
	if _, ok := site.Host("h2"); !ok {
		t.Fatal("Host(h2) missing")
	}
	// The intent is a copy: changing it does not change NetBox.
	d.ConfigContext["ironic_settings"] = "mutated"
	d2, _ := site.NetBox.Device(ctx, "h1")
	if _, ok := d2.ConfigContext["ironic_settings"].(map[string]any); !ok {
		t.Fatal("config context aliased fake state")
	}
	all, _ := site.NetBox.DeviceNames(ctx)
	if fmt.Sprint(all) != "[h1 h2 leaf-1 leaf-2]" {
		t.Fatalf("device names = %v", all)
	}
}

func TestNetBoxWritesTouchOnlyTheirField(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h"})
	ctx := context.Background()
	var id int
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		d := st.DeviceByName("h")
		id = d.ID
		d.CustomFields["owner_team"] = "compute"
		d.TagIDs = append(d.TagIDs, st.EnsureTag("keep-me").ID)
		return nil
	})
	if err := site.NetBox.AddTags(ctx, id, "ironic", "ironic", "keep-me"); err != nil {
		t.Fatal(err)
	}
	if err := site.NetBox.SetPlatformClass(ctx, id, "K_01"); err != nil {
		t.Fatal(err)
	}
	if err := site.NetBox.SetStatus(ctx, id, intent.StatusActive); err != nil {
		t.Fatal(err)
	}
	d, _ := site.NetBox.Device(ctx, "h")
	if fmt.Sprint(d.Tags) != "[ironic keep-me]" || d.PlatformClass != "K_01" || d.Status != intent.StatusActive {
		t.Fatalf("device = %+v", d)
	}
	site.NetBox.View(func(st *fakes.NetBoxState) {
		if st.DeviceByName("h").CustomFields["owner_team"] != "compute" {
			t.Fatal("a field the SDK does not own changed")
		}
	})
	for name, err := range map[string]error{
		"bad status":     site.NetBox.SetStatus(ctx, id, "nope"),
		"unknown device": site.NetBox.SetStatus(ctx, 9999, intent.StatusActive),
		"empty tag":      site.NetBox.AddTags(ctx, id, ""),
		"tag on ghost":   site.NetBox.AddTags(ctx, 9999, "x"),
		"pc on ghost":    site.NetBox.SetPlatformClass(ctx, 9999, "x"),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := site.NetBox.Device(ctx, "ghost"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("ghost: %v", err)
	}
}

func TestCallsAndFaults(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h"})
	ctx := context.Background()
	site.Inject(fakes.SysNetBox, "device", 2, hostforge.ErrUnavailable)
	site.Inject(fakes.SysVault, "*", 1, hostforge.ErrUnauthorized)
	for i := 0; i < 2; i++ {
		if _, err := site.NetBox.Device(ctx, "h"); !errors.Is(err, hostforge.ErrUnavailable) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := site.NetBox.Device(ctx, "h"); err != nil {
		t.Fatalf("third call still failing: %v", err)
	}
	if _, err := site.Vault.Item(ctx, "x"); !errors.Is(err, hostforge.ErrUnauthorized) {
		t.Fatalf("vault fault: %v", err)
	}
	if _, err := site.Vault.Item(ctx, "x"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("vault missing item: %v", err)
	}
	before := site.Calls()
	if err := site.Vault.PutItem(ctx, "bmc/h", map[string]string{"password": "p"}); err != nil {
		t.Fatal(err)
	}
	if it, err := site.Vault.Item(ctx, "bmc/h"); err != nil || it["password"] != "p" {
		t.Fatalf("item = %v %v", it, err)
	}
	if err := site.FleetManager.SetPlatformClass(ctx, "h", string(make([]byte, 129))); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("129-char key accepted: %v", err)
	}
	diff := site.Calls().Sub(before)
	if diff[fakes.SysVault].Writes != 1 || diff[fakes.SysVault].Reads != 1 || diff[fakes.SysFleetManager].Writes != 1 {
		t.Fatalf("diff = %s", diff)
	}
	c := site.Calls()
	if c[fakes.SysNetBox].Reads != 3 || c[fakes.SysNetBox].Ops["device"] != 3 || c.Reads() != 6 || c.Writes() != 2 {
		t.Fatalf("calls = %s (%+v)", c, c)
	}
	if got := c.String(); got != "fleet_manager r=0 w=1, netbox r=3 w=0, vault r=3 w=1" {
		t.Fatalf("String() = %q", got)
	}
	if fmt.Sprint(site.Vault.Names()) != "[bmc-admin-h bmc-factory bmc/h ipmi-exporter]" {
		t.Fatal("Names")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := site.NetBox.Device(cctx, "h"); !errors.Is(err, context.Canceled) {
		t.Fatal("cancelled context not honoured")
	}
}

func TestFakesAreSafeForConcurrentUse(t *testing.T) {
	site := fakes.NewSite()
	for i := 0; i < 8; i++ {
		site.AddHost(fakes.HostSpec{Name: fmt.Sprintf("h%d", i)})
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			name := fmt.Sprintf("h%d", i)
			d, err := site.NetBox.Device(ctx, name)
			if err != nil {
				t.Error(err)
				return
			}
			_ = site.NetBox.AddTags(ctx, d.ID, "ironic")
			_ = site.FleetManager.SetPlatformClass(ctx, name, "K")
			_, _ = site.FleetManager.PlatformClass(ctx, name)
			_ = site.Clock.Sleep(ctx, 0)
			_ = site.Calls()
		}(i)
	}
	wg.Wait()
	if got := site.Calls()[fakes.SysNetBox].Writes; got != 8 {
		t.Fatalf("writes = %d", got)
	}
}

func TestFakeRefusesWronglyTypedCustomFields(t *testing.T) {
	for _, tt := range []struct {
		name  string
		set   func(*fakes.NetBoxState)
		field string
	}{
		{"platform_class", func(st *fakes.NetBoxState) { st.DeviceByName("h").CustomFields["platform_class"] = 42.0 }, "custom_fields.platform_class"},
		{"gpu_type", func(st *fakes.NetBoxState) {
			st.DeviceTypes[st.DeviceByName("h").DeviceTypeID].CustomFields["gpu_type"] = true
		}, "device_type.custom_fields.gpu_type"},
		{"device_class", func(st *fakes.NetBoxState) {
			st.Roles[st.DeviceByName("h").RoleID].CustomFields["device_class"] = []any{"GPU"}
		}, "role.custom_fields.device_class"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := fakes.NewSite()
			site.AddHost(fakes.HostSpec{Name: "h"})
			_ = site.NetBox.Update(func(st *fakes.NetBoxState) error { tt.set(st); return nil })
			_, err := site.NetBox.Device(context.Background(), "h")
			f, ok := hostforge.AsFailure(err)
			if !ok || f.Code != "NETBOX_DATA_INVALID" || !strings.Contains(f.Message, tt.field) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestFollowWallClock(t *testing.T) {
	site := fakes.NewSite()
	start := site.Clock.Now()
	stop := site.FollowWallClock(time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for !site.Clock.Now().After(start) && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	stop()
	stop() // idempotent
	at := site.Clock.Now()
	if !at.After(start) {
		t.Fatal("the fake clock did not follow the wall clock")
	}
	if site.Clock.Now() != at {
		t.Fatal("the clock moved after stop")
	}
}

// TestBMCTiming: SetTiming reaches the BMCs already there and those added
// later; a staged iDRAC job then schedules on the shorter delay.
func TestBMCTiming(t *testing.T) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "early", Vendor: "dell"})
	site.BMCs.SetTiming(fakes.BMCTiming{JobSchedule: time.Second, JobRun: 2 * time.Second, ResetDowntime: time.Second})
	site.AddHost(fakes.HostSpec{Name: "late", Vendor: "dell"})
	for _, h := range []string{"early", "late"} {
		b, _ := site.BMCs.Of(h)
		b.StageJob(map[string]any{"AcPwrRcvry": "On"}, "Scheduling")
	}
	site.Clock.Advance(time.Second)
	for _, h := range []string{"early", "late"} {
		b, _ := site.BMCs.Of(h)
		if st := b.State(); st.Jobs[0].State != "Scheduled" {
			t.Fatalf("%s: job %s after the shortened delay", h, st.Jobs[0].State)
		}
	}
}
