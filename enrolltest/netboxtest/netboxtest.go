// Package netboxtest is the contract suite of enrollment's NetBox
// interfaces. Every implementation runs it: the in-memory fake
// (fakes.Site.NetBox), the REST adapter against the REST emulator
// (adapters/netbox + fakes/netboxhttp), and a user's own client served from a
// fakes.Site. A fake that passes the same suite as the real adapter is a
// fake the workflow's tests can trust.
//
// The suite builds a fakes.Site per test, hands it to newHarness, and checks
// the client's answers and writes against the site's NetBox state. Faults
// are injected with Site.Inject(fakes.SysNetBox, ...), which the fake and
// the emulator both honour; a harness over HTTP should configure its client
// with short retry waits so the bursts stay fast.
package netboxtest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/intent"
)

// Client is what the suite exercises.
type Client interface {
	enrollment.NetBox
	enrollment.DeviceLister
}

// Harness is one implementation under test, serving site's NetBox state.
type Harness struct {
	Client Client
}

// Run runs the contract suite. newHarness is called once per test with a
// populated site and must return a client reading and writing that site's
// NetBox state.
func Run(t *testing.T, newHarness func(t *testing.T, site *fakes.Site) Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, func(*testing.T, *fakes.Site) Harness)
	}{
		{"ReadIntent", testReadIntent},
		{"ReadManyInterfacesInNaturalOrder", testManyInterfaces},
		{"ReadPeerLAGAndNonInterfacePeer", testPeers},
		{"ReadEmptyFields", testEmptyFields},
		{"ReadNotFound", testNotFound},
		{"SetStatus", testSetStatus},
		{"AddTags", testAddTags},
		{"SetPlatformClass", testSetPlatformClass},
		{"DeviceNamesAcrossPages", testDeviceNames},
		{"Unavailable", testUnavailable},
		{"Unauthorized", testUnauthorized},
		{"CanceledContext", testCanceled},
		{"ConcurrentWritersOfDifferentFields", testConcurrentWriters},
		{"Journal", testJournal},
		{"JournalRefused", testJournalRefused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newHarness) })
	}
}

// gpuHost is the suite's reference host.
func gpuHost(name string) fakes.HostSpec {
	return fakes.HostSpec{
		Name: name, Class: intent.ClassGPUCompute, Manufacturer: "Lenovo", Model: "HG635N V2",
		GPUType: "GB300", HasZTP: true, ZTP: map[string]any{"infiniband": map[string]any{"fabric": "ib0"}},
	}
}

// want is the site's own reading of a device: the reference mapping.
func want(t *testing.T, site *fakes.Site, name string) intent.Device {
	t.Helper()
	var d intent.Device
	var err error
	site.NetBox.View(func(st *fakes.NetBoxState) {
		nd := st.DeviceByName(name)
		if nd == nil {
			err = fmt.Errorf("no device %q in the site", name)
			return
		}
		d, err = st.Intent(nd)
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// normalise makes representation-only differences equal: MAC case, and
// empty versus nil maps and slices.
func normalise(d intent.Device) intent.Device {
	ifs := make([]intent.Interface, len(d.Interfaces))
	for k, i := range d.Interfaces {
		i.MAC = strings.ToLower(i.MAC)
		if i.Peer != nil {
			p := *i.Peer
			i.Peer = &p
		}
		ifs[k] = i
	}
	d.Interfaces = ifs
	return d
}

func diff(a, b intent.Device) string {
	return cmp.Diff(normalise(a), normalise(b), cmpopts.EquateEmpty())
}

func deviceID(t *testing.T, site *fakes.Site, name string) int {
	t.Helper()
	id := 0
	site.NetBox.View(func(st *fakes.NetBoxState) {
		if d := st.DeviceByName(name); d != nil {
			id = d.ID
		}
	})
	if id == 0 {
		t.Fatalf("no device %q", name)
	}
	return id
}

func testReadIntent(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	host := site.AddHost(gpuHost("gpu-1"))
	site.AddHost(fakes.HostSpec{Name: "cpu-1"})
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		d := st.DeviceByName("gpu-1")
		d.TagIDs = append(d.TagIDs, st.EnsureTag("rack-a1").ID)
		d.PrimaryIP4 = "192.0.2.10/24"
		return nil
	})
	h := newHarness(t, site)

	got, err := h.Client.Device(context.Background(), "gpu-1")
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	if d := diff(want(t, site, "gpu-1"), got); d != "" {
		t.Errorf("intent differs from the site's state (-want +got):\n%s", d)
	}
	// The mapping itself, independently of the reference.
	checks := []struct {
		field     string
		got, want any
	}{
		{"status", got.Status, intent.StatusStaged},
		{"role.slug", got.Role.Slug, fakes.RoleGPUCompute},
		{"role.device_class", got.Role.DeviceClass, intent.ClassGPUCompute},
		{"device_type.manufacturer", got.DeviceType.Manufacturer, "Lenovo"},
		{"device_type.model", got.DeviceType.Model, "HG635N V2"},
		{"device_type.gpu_type", got.DeviceType.GPUType, "GB300"},
		{"site.slug", got.Site.Slug, "lab1"},
		{"oob_ip", got.OOBIP, host.OOBIP},
		{"primary_ip4", got.PrimaryIP4, "192.0.2.10"},
		{"platform_class", got.PlatformClass, ""},
		{"tags", strings.Join(got.Tags, ","), "rack-a1"},
		{"interfaces", len(got.Interfaces), 4}, // bmc, bond0, eth0, eth1
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
	if _, ok := got.ConfigContext["ironic_settings"].(map[string]any); !ok {
		t.Errorf("config_context.ironic_settings = %T, want an object", got.ConfigContext["ironic_settings"])
	}
	if ntp, _ := got.ConfigContext["ntp-servers"].([]any); len(ntp) != 2 {
		t.Errorf("config_context.ntp-servers = %v, want two servers", got.ConfigContext["ntp-servers"])
	}
	eth0, ok := got.Interface("eth0")
	if !ok {
		t.Fatal("no eth0")
	}
	if !strings.EqualFold(eth0.MAC, host.NICs[0].MAC) || eth0.LAG != "bond0" || !eth0.Enabled || eth0.MgmtOnly {
		t.Errorf("eth0 = %+v, want MAC %s in bond0, enabled, not mgmt-only", eth0, host.NICs[0].MAC)
	}
	wantPeer := intent.Peer{Kind: intent.PeerKindInterface, Device: host.NICs[0].Switch, DeviceRole: fakes.RoleSwitch, Port: host.NICs[0].Port}
	if eth0.Peer == nil || *eth0.Peer != wantPeer {
		t.Errorf("eth0 peer = %+v, want %+v", eth0.Peer, wantPeer)
	}
	if bmc, _ := got.Interface("bmc"); !bmc.MgmtOnly || bmc.Peer != nil {
		t.Errorf("bmc = %+v, want mgmt-only and uncabled", bmc)
	}
}

func testManyInterfaces(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "wide-1", NICs: 32})
	h := newHarness(t, site)
	got, err := h.Client.Device(context.Background(), "wide-1")
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	if d := diff(want(t, site, "wide-1"), got); d != "" {
		t.Errorf("intent differs (-want +got):\n%s", d)
	}
	names := make([]string, 0, len(got.Interfaces))
	for _, i := range got.Interfaces {
		names = append(names, i.Name)
	}
	if !sort.SliceIsSorted(names, func(a, b int) bool { return intent.NaturalLess(names[a], names[b]) }) {
		t.Errorf("interfaces not in natural order: %v", names)
	}
	if len(names) != 34 || names[2] != "eth0" || names[4] != "eth2" || names[12] != "eth10" {
		t.Errorf("interfaces = %v, want bmc, bond0, eth0..eth31 in natural order", names)
	}
}

func testPeers(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	host := site.AddHost(fakes.HostSpec{Name: "lag-1"})
	// leaf-side LAG for eth0's switch port; eth1's cable lands on a front port.
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		sw := st.DeviceByName(host.NICs[0].Switch)
		lag := &fakes.NBInterface{ID: st.NextID, DeviceID: sw.ID, Name: "bond100", Type: "lag", Enabled: true}
		st.NextID++
		st.Interfaces[lag.ID] = lag
		for _, i := range st.DeviceInterfaces(sw.ID) {
			if i.Name == host.NICs[0].Port {
				i.LAGID = lag.ID
			}
		}
		d := st.DeviceByName("lag-1")
		for _, i := range st.DeviceInterfaces(d.ID) {
			if i.Name != "eth1" {
				continue
			}
			c := st.Cables[i.CableID]
			far := st.DeviceByName(host.NICs[1].Switch)
			fp := fakes.NBTermination{ObjectType: "dcim.frontport", ObjectID: st.NextID, DeviceID: far.ID, Name: "fp7"}
			st.NextID++
			c.B = []fakes.NBTermination{fp}
		}
		return nil
	})
	h := newHarness(t, site)
	got, err := h.Client.Device(context.Background(), "lag-1")
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	if d := diff(want(t, site, "lag-1"), got); d != "" {
		t.Errorf("intent differs (-want +got):\n%s", d)
	}
	eth0, _ := got.Interface("eth0")
	if eth0.Peer == nil || eth0.Peer.PortLAG != "bond100" || eth0.Peer.Port != host.NICs[0].Port {
		t.Errorf("eth0 peer = %+v, want port %s in LAG bond100", eth0.Peer, host.NICs[0].Port)
	}
	eth1, _ := got.Interface("eth1")
	if eth1.Peer == nil || eth1.Peer.Kind != "dcim.frontport" || eth1.Peer.Port != "fp7" || eth1.Peer.Device != host.NICs[1].Switch {
		t.Errorf("eth1 peer = %+v, want dcim.frontport fp7 on %s", eth1.Peer, host.NICs[1].Switch)
	}
}

func testEmptyFields(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "bare-1", NoClass: true, NoOOB: true, NoBond: true})
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		d := st.DeviceByName("bare-1")
		for _, i := range st.DeviceInterfaces(d.ID) {
			if i.Name == "eth1" {
				i.MAC = ""
				i.Enabled = false
			}
		}
		return nil
	})
	h := newHarness(t, site)
	got, err := h.Client.Device(context.Background(), "bare-1")
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	if d := diff(want(t, site, "bare-1"), got); d != "" {
		t.Errorf("intent differs (-want +got):\n%s", d)
	}
	if got.OOBIP != "" || got.Role.DeviceClass != "" || got.DeviceType.GPUType != "" || got.PlatformClass != "" || len(got.Tags) != 0 {
		t.Errorf("got oob_ip %q, device_class %q, gpu_type %q, platform_class %q, tags %v; want all empty",
			got.OOBIP, got.Role.DeviceClass, got.DeviceType.GPUType, got.PlatformClass, got.Tags)
	}
	if eth1, _ := got.Interface("eth1"); eth1.MAC != "" || eth1.Enabled || eth1.LAG != "" {
		t.Errorf("eth1 = %+v, want no MAC, disabled, no LAG", eth1)
	}
}

func testNotFound(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	h := newHarness(t, site)
	_, err := h.Client.Device(context.Background(), "no-such-host")
	if !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("Device(no-such-host) = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "no-such-host") {
		t.Errorf("error %q does not name the device", err)
	}
	if err := h.Client.SetStatus(context.Background(), 999999, intent.StatusActive); !errors.Is(err, hostforge.ErrNotFound) {
		t.Errorf("SetStatus(unknown id) = %v, want ErrNotFound", err)
	}
	if err := h.Client.SetPlatformClass(context.Background(), 999999, "X"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Errorf("SetPlatformClass(unknown id) = %v, want ErrNotFound", err)
	}
	if err := h.Client.AddTags(context.Background(), 999999, "ironic"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Errorf("AddTags(unknown id) = %v, want ErrNotFound", err)
	}
}

// onlyChanged asserts that the device differs from before only as change says.
func onlyChanged(t *testing.T, site *fakes.Site, name string, before intent.Device, change func(*intent.Device)) {
	t.Helper()
	change(&before)
	if d := diff(before, want(t, site, name)); d != "" {
		t.Errorf("device changed beyond the write (-expected +state):\n%s", d)
	}
}

func testSetStatus(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(gpuHost("h1"))
	h := newHarness(t, site)
	ctx := context.Background()
	id := deviceID(t, site, "h1")
	before := want(t, site, "h1")
	for i := 0; i < 2; i++ { // the second write is idempotent
		if err := h.Client.SetStatus(ctx, id, intent.StatusActive); err != nil {
			t.Fatalf("SetStatus #%d: %v", i+1, err)
		}
		onlyChanged(t, site, "h1", before, func(d *intent.Device) { d.Status = intent.StatusActive })
	}
	err := h.Client.SetStatus(ctx, id, intent.Status("bogus"))
	if !errors.Is(err, hostforge.ErrInvalid) {
		t.Errorf("SetStatus(bogus) = %v, want ErrInvalid", err)
	}
	onlyChanged(t, site, "h1", before, func(d *intent.Device) { d.Status = intent.StatusActive })
	got, err := h.Client.Device(ctx, "h1")
	if err != nil || got.Status != intent.StatusActive {
		t.Errorf("read back status %q, %v; want active", got.Status, err)
	}
}

func testAddTags(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		d := st.DeviceByName("h1")
		d.TagIDs = append(d.TagIDs, st.EnsureTag("keep-me").ID)
		st.EnsureTag(intent.TagIPMIExporter) // exists, not on the device
		return nil
	})
	h := newHarness(t, site)
	ctx := context.Background()
	id := deviceID(t, site, "h1")
	before := want(t, site, "h1")
	wantTags := []string{intent.TagIPMIExporter, intent.DefaultIronicTag, "keep-me"} // sorted
	for i := 0; i < 2; i++ {
		if err := h.Client.AddTags(ctx, id, intent.TagIPMIExporter, intent.DefaultIronicTag); err != nil {
			t.Fatalf("AddTags #%d: %v", i+1, err)
		}
		onlyChanged(t, site, "h1", before, func(d *intent.Device) { d.Tags = wantTags })
	}
	var ironicTags int
	site.NetBox.View(func(st *fakes.NetBoxState) {
		for _, tg := range st.Tags {
			if tg.Slug == intent.DefaultIronicTag {
				ironicTags++
			}
		}
	})
	if ironicTags != 1 {
		t.Errorf("%d tag objects with slug %q, want exactly one (created once)", ironicTags, intent.DefaultIronicTag)
	}
	if err := h.Client.AddTags(ctx, id, ""); !errors.Is(err, hostforge.ErrInvalid) {
		t.Errorf("AddTags(\"\") = %v, want ErrInvalid", err)
	}
	onlyChanged(t, site, "h1", before, func(d *intent.Device) { d.Tags = wantTags })
}

func testSetPlatformClass(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(gpuHost("h1"))
	site.AddHost(fakes.HostSpec{Name: "nofield-1"})
	_ = site.NetBox.Update(func(st *fakes.NetBoxState) error {
		st.DeviceByName("h1").CustomFields["owner"] = "team-a"
		delete(st.DeviceByName("nofield-1").CustomFields, "platform_class")
		return nil
	})
	h := newHarness(t, site)
	ctx := context.Background()
	id := deviceID(t, site, "h1")
	before := want(t, site, "h1")
	const key = "GB300_LENOVOHG635NV2_IB_01"
	for i := 0; i < 2; i++ {
		if err := h.Client.SetPlatformClass(ctx, id, key); err != nil {
			t.Fatalf("SetPlatformClass #%d: %v", i+1, err)
		}
		onlyChanged(t, site, "h1", before, func(d *intent.Device) { d.PlatformClass = key })
	}
	var owner any
	site.NetBox.View(func(st *fakes.NetBoxState) { owner = st.DeviceByName("h1").CustomFields["owner"] })
	if owner != "team-a" {
		t.Errorf("custom field owner = %v after the write, want team-a kept", owner)
	}

	// A site without the custom field refuses the write and changes nothing.
	site.RemovePlatformClassField()
	nf := deviceID(t, site, "nofield-1")
	nfBefore := want(t, site, "nofield-1")
	if err := h.Client.SetPlatformClass(ctx, nf, key); !errors.Is(err, hostforge.ErrInvalid) {
		t.Errorf("SetPlatformClass without the field = %v, want ErrInvalid", err)
	}
	onlyChanged(t, site, "nofield-1", nfBefore, func(*intent.Device) {})
}

func testDeviceNames(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	var wantNames []string
	for i := 12; i >= 1; i-- {
		name := fmt.Sprintf("host-%02d", i)
		site.AddHost(fakes.HostSpec{Name: name})
		wantNames = append(wantNames, name)
	}
	wantNames = append(wantNames, site.SwitchNames()...)
	sort.Strings(wantNames)
	h := newHarness(t, site)
	got, err := h.Client.DeviceNames(context.Background())
	if err != nil {
		t.Fatalf("DeviceNames: %v", err)
	}
	if d := cmp.Diff(wantNames, got); d != "" {
		t.Errorf("DeviceNames (-want +got):\n%s", d)
	}
}

func testUnavailable(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	h := newHarness(t, site)
	ctx := context.Background()
	id := deviceID(t, site, "h1")
	before := want(t, site, "h1")
	site.Inject(fakes.SysNetBox, "*", 1000, fmt.Errorf("injected 5xx burst: %w", hostforge.ErrUnavailable))
	_, err := h.Client.Device(ctx, "h1")
	if !errors.Is(err, hostforge.ErrUnavailable) {
		t.Errorf("Device during an outage = %v, want ErrUnavailable", err)
	}
	if err := h.Client.SetStatus(ctx, id, intent.StatusActive); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Errorf("SetStatus during an outage = %v, want ErrUnavailable", err)
	}
	if _, err := h.Client.DeviceNames(ctx); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Errorf("DeviceNames during an outage = %v, want ErrUnavailable", err)
	}
	site.Inject(fakes.SysNetBox, "*", 0, nil) // outage over
	onlyChanged(t, site, "h1", before, func(*intent.Device) {})
	if _, err := h.Client.Device(ctx, "h1"); err != nil {
		t.Errorf("Device after the outage: %v", err)
	}
}

func testUnauthorized(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	h := newHarness(t, site)
	ctx := context.Background()
	id := deviceID(t, site, "h1")
	site.Inject(fakes.SysNetBox, "*", 1000, fmt.Errorf("injected 403: %w", hostforge.ErrUnauthorized))
	defer site.Inject(fakes.SysNetBox, "*", 0, nil)
	if _, err := h.Client.Device(ctx, "h1"); !errors.Is(err, hostforge.ErrUnauthorized) {
		t.Errorf("Device with a refused token = %v, want ErrUnauthorized", err)
	}
	if err := h.Client.AddTags(ctx, id, "ironic"); !errors.Is(err, hostforge.ErrUnauthorized) {
		t.Errorf("AddTags with a refused token = %v, want ErrUnauthorized", err)
	}
}

func testCanceled(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(fakes.HostSpec{Name: "h1"})
	h := newHarness(t, site)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	before := want(t, site, "h1")
	if _, err := h.Client.Device(ctx, "h1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Device(canceled) = %v, want context.Canceled", err)
	}
	if err := h.Client.SetStatus(ctx, before.ID, intent.StatusActive); !errors.Is(err, context.Canceled) {
		t.Errorf("SetStatus(canceled) = %v, want context.Canceled", err)
	}
	onlyChanged(t, site, "h1", before, func(*intent.Device) {})
}

// Writers of different fields must not clobber one another.
func testConcurrentWriters(t *testing.T, newHarness func(*testing.T, *fakes.Site) Harness) {
	site := fakes.NewSite()
	site.AddHost(gpuHost("h1"))
	h := newHarness(t, site)
	ctx := context.Background()
	id := deviceID(t, site, "h1")
	before := want(t, site, "h1")
	const rounds = 5
	var wg sync.WaitGroup
	errs := make(chan error, 3*rounds)
	for i := 0; i < rounds; i++ {
		wg.Add(3)
		go func() { defer wg.Done(); errs <- h.Client.SetStatus(ctx, id, intent.StatusActive) }()
		go func() { defer wg.Done(); errs <- h.Client.SetPlatformClass(ctx, id, "GB300_LENOVOHG635NV2_IB_01") }()
		go func() { defer wg.Done(); errs <- h.Client.AddTags(ctx, id, intent.DefaultIronicTag) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent write: %v", err)
		}
	}
	onlyChanged(t, site, "h1", before, func(d *intent.Device) {
		d.Status = intent.StatusActive
		d.PlatformClass = "GB300_LENOVOHG635NV2_IB_01"
		d.Tags = []string{intent.DefaultIronicTag}
	})
}
