package firmware_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

func ip(n int) *int { return &n }

func TestCeiling(t *testing.T) {
	cases := []struct {
		name              string
		absolute, percent *int
		fleet             firmware.Fleet
		want              int
	}{
		{"neither set: nothing starts", nil, nil, firmware.Fleet{Total: 1000, Unhealthy: 0}, 0},
		{"absolute only", ip(7), nil, firmware.Fleet{Total: 1000, Unhealthy: 500}, 7},
		// 20% of 100 is 20, minus 10 unhealthy: 10. Swapped (total 10,
		// unhealthy 100) it would be ceil(2) − 100 → 0.
		{"percent of total minus unhealthy, arguments in order", nil, ip(20), firmware.Fleet{Total: 100, Unhealthy: 10}, 10},
		{"percent rounds up", nil, ip(1), firmware.Fleet{Total: 150, Unhealthy: 0}, 2},
		{"percent floored at 0", nil, ip(5), firmware.Fleet{Total: 100, Unhealthy: 9}, 0},
		{"absolute caps percent", ip(4), ip(20), firmware.Fleet{Total: 100, Unhealthy: 10}, 4},
		{"percent below absolute", ip(40), ip(20), firmware.Fleet{Total: 100, Unhealthy: 10}, 10},
		{"absolute 0 with percent: 0", ip(0), ip(50), firmware.Fleet{Total: 100}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := firmware.Ceiling(c.absolute, c.percent, c.fleet); got != c.want {
				t.Fatalf("Ceiling = %d, want %d", got, c.want)
			}
		})
	}
}

// pass builds a manager over a world whose hosts were observed drifted.
type passWorld struct {
	*world
	mgr *firmware.Manager
}

func newPassWorld(t *testing.T, s firmware.Settings) *passWorld {
	w := newWorld(t, s)
	return &passWorld{world: w, mgr: &firmware.Manager{Store: w.store, Hosts: w.hosts, Catalog: w.cat, Settings: s, Clock: w.clk}}
}

// observe records the machine's inventory as the workflow would.
func (p *passWorld) observe(machine string) {
	p.t.Helper()
	ctx := context.Background()
	inv, err := p.bmcs.Inventory(ctx, machine)
	if err != nil {
		p.t.Fatal(err)
	}
	rep := firmware.Reported{}
	if m, ok := p.cat.ForHost(inv.Identity); ok {
		rep = m.Readings(inv.Entries)
	}
	if err := p.store.PutObserved(ctx, firmware.Observed{MachineID: machine, Identity: inv.Identity, Reported: rep, At: p.clk.Now()}); err != nil {
		p.t.Fatal(err)
	}
}

func (p *passWorld) pass() firmware.PassReport {
	p.t.Helper()
	r, err := p.mgr.Pass(context.Background())
	if err != nil {
		p.t.Fatal(err)
	}
	return r
}

func TestPassGates(t *testing.T) {
	on, off := true, false
	type setup func(p *passWorld)
	cases := []struct {
		name     string
		settings firmware.Settings
		setup    setup
		started  []string
		skipped  map[string]int
	}{
		{"autoupdate off by default: nothing", firmware.Settings{MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) { p.dell("m1", firmware.HostReady); p.observe("m1") },
			nil, map[string]int{firmware.SkipAutoupdateOff: 1}},
		{"per-host enable beats the default", firmware.Settings{MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.dell("m1", firmware.HostReady)
				p.dell("m2", firmware.HostReady)
				p.observe("m1")
				p.observe("m2")
				_ = p.store.SetAutoUpdate(context.Background(), "m2", &on)
			},
			[]string{"m2"}, map[string]int{firmware.SkipAutoupdateOff: 1}},
		{"per-host disable beats the default", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.dell("m1", firmware.HostReady)
				p.dell("m2", firmware.HostReady)
				p.observe("m1")
				p.observe("m2")
				_ = p.store.SetAutoUpdate(context.Background(), "m1", &off)
			},
			[]string{"m2"}, map[string]int{firmware.SkipAutoupdateOff: 1}},
		{"a cleared override returns to the default", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.dell("m1", firmware.HostReady)
				p.observe("m1")
				_ = p.store.SetAutoUpdate(context.Background(), "m1", &off)
				_ = p.store.SetAutoUpdate(context.Background(), "m1", nil)
			},
			[]string{"m1"}, nil},
		{"neither limit set: ceiling 0, nothing starts", firmware.Settings{AutoUpdate: true},
			func(p *passWorld) { p.dell("m1", firmware.HostReady); p.observe("m1") },
			nil, map[string]int{firmware.SkipCeiling: 1}},
		{"percent ceiling with the arguments in order", firmware.Settings{AutoUpdate: true, MaxConcurrentPercent: ip(50)},
			func(p *passWorld) {
				// 4 hosts, 1 unhealthy: ceil(50% of 4) − 1 = 1.
				for i := range 4 {
					p.dell(fmt.Sprintf("m%d", i), firmware.HostReady)
					p.observe(fmt.Sprintf("m%d", i))
				}
				p.hosts.Change("m3", func(h *firmware.Host) { h.Unhealthy = true })
			},
			[]string{"m0"}, map[string]int{firmware.SkipCeiling: 3}},
		{"manual tagging limits selection to Ready hosts", firmware.Settings{AutoUpdate: true, InstanceUpdatesManualTagging: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.dell("m1", firmware.HostAssigned)
				p.dell("m2", firmware.HostReady)
				p.observe("m1")
				p.observe("m2")
			},
			[]string{"m2"}, map[string]int{firmware.SkipManualTagging: 1}},
		{"without manual tagging assigned hosts are selected too", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.dell("m1", firmware.HostAssigned)
				p.dell("m2", firmware.HostReady)
				p.observe("m1")
				p.observe("m2")
			},
			[]string{"m2", "m1"}, nil},
		{"unassigned hosts go first", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(1)},
			func(p *passWorld) {
				p.dell("a-assigned", firmware.HostAssigned)
				p.dell("z-ready", firmware.HostReady)
				p.observe("a-assigned")
				p.observe("z-ready")
			},
			[]string{"z-ready"}, map[string]int{firmware.SkipCeiling: 1}},
		{"a host with a request is skipped, and counts against the budget", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(2)},
			func(p *passWorld) {
				for _, m := range []string{"m1", "m2", "m3"} {
					p.dell(m, firmware.HostReady)
					p.observe(m)
				}
				p.request("m1")
			},
			[]string{"m2"}, map[string]int{firmware.SkipRequestExists: 1, firmware.SkipCeiling: 1}},
		{"hosts in maintenance count against the budget", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(2)},
			func(p *passWorld) {
				for _, m := range []string{"m1", "m2", "m3"} {
					p.dell(m, firmware.HostReady)
					p.observe(m)
				}
				p.hosts.Change("m1", func(h *firmware.Host) { h.InMaintenance = true })
			},
			[]string{"m2"}, map[string]int{firmware.SkipInMaintenance: 1, firmware.SkipCeiling: 1}},
		{"explicit start: outside the window", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.explicit()
				p.dell("m1", firmware.HostReady)
				p.dell("m2", firmware.HostReady)
				p.observe("m1")
				p.observe("m2")
				_ = p.store.SetWindow(context.Background(), firmware.Window{MachineID: "m2", Start: t0.Add(time.Hour), End: t0.Add(2 * time.Hour)})
			},
			nil, map[string]int{firmware.SkipOutsideWindow: 2}},
		{"explicit start: now at the window's start is not inside", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.explicit()
				p.dell("m1", firmware.HostReady)
				p.observe("m1")
				_ = p.store.SetWindow(context.Background(), firmware.Window{MachineID: "m1", Start: t0, End: t0.Add(time.Hour)})
			},
			nil, map[string]int{firmware.SkipOutsideWindow: 1}},
		{"explicit start: inside the window", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.explicit()
				p.dell("m1", firmware.HostReady)
				p.observe("m1")
				_ = p.store.SetWindow(context.Background(), firmware.Window{MachineID: "m1", Start: t0.Add(-time.Minute), End: t0.Add(time.Hour)})
			},
			[]string{"m1"}, nil},
		{"the legacy disable list skips the host and the pass goes on", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5), HostDisableAutoupdate: []string{"m1", "nosuch"}},
			func(p *passWorld) {
				for _, m := range []string{"m1", "m2", "m3"} {
					p.dell(m, firmware.HostReady)
					p.observe(m)
				}
			},
			[]string{"m2", "m3"}, map[string]int{firmware.SkipLegacyDisabled: 1}},
		{"the legacy list matches machine IDs only", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5), HostDisableAutoupdate: []string{"PowerEdge R750", "inst-m1"}},
			func(p *passWorld) { p.dell("m1", firmware.HostAssigned); p.observe("m1") },
			[]string{"m1"}, nil},
		{"a per-host enable wins over the legacy list", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5), HostDisableAutoupdate: []string{"m1"}},
			func(p *passWorld) {
				p.dell("m1", firmware.HostReady)
				p.observe("m1")
				_ = p.store.SetAutoUpdate(context.Background(), "m1", &on)
			},
			[]string{"m1"}, nil},
		{"unmatched only: flagged, never started", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				fb := p.dgx("m1", firmware.HostReady)
				for _, id := range []string{"CX7_0", "CX7_1"} {
					fb.SetMember(fakesMember(id, ""))
				}
				p.bmcs.Of("m1").SetMember(fakesMember("HGX_FW_BMC_0", "HGX-23.04"))
				p.observeWithout("m1", "CX7_")
			},
			nil, map[string]int{firmware.SkipUnmatchedOnly: 1}},
		{"no observation, not in the catalog, not Ready or Assigned", firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(5)},
			func(p *passWorld) {
				p.dell("m1", firmware.HostReady)
				p.dell("m2", firmware.HostOther)
				p.observe("m2")
				p.hosts.Put(firmware.Host{MachineID: "m3", State: firmware.HostReady})
				_ = p.store.PutObserved(context.Background(), firmware.Observed{MachineID: "m3", Identity: firmware.Identity{Manufacturer: "HPE", Model: "DL380"}, At: t0})
			},
			nil, map[string]int{firmware.SkipNoObservation: 1, firmware.SkipState: 1, firmware.SkipNotInCatalog: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPassWorld(t, c.settings)
			c.setup(p)
			r := p.pass()
			if !reflect.DeepEqual(r.Started, c.started) {
				t.Errorf("started %v, want %v", r.Started, c.started)
			}
			if !reflect.DeepEqual(r.Skipped, c.skipped) {
				t.Errorf("skipped %v, want %v", r.Skipped, c.skipped)
			}
			for _, m := range r.Started {
				req, ok, _ := p.store.Request(context.Background(), m)
				if !ok || req.Initiator != firmware.InitiatorAutomated {
					t.Errorf("%s: request %+v", m, req)
				}
			}
		})
	}
}

// explicit marks the R750 model explicit-start.
func (p *passWorld) explicit() {
	p.cat = firmware.Merge(p.cat, mustParse(p.t, "explicit.toml", "vendor = \"Dell\"\nmodel = \"PowerEdge R750\"\nexplicit_start_needed = true\n"))
	p.mgr.Catalog = p.cat
}

// observeWithout records the inventory minus members whose Id starts with prefix.
func (p *passWorld) observeWithout(machine, prefix string) {
	ctx := context.Background()
	inv, _ := p.bmcs.Inventory(ctx, machine)
	var keep []firmware.InventoryEntry
	for _, e := range inv.Entries {
		if len(e.ID) < len(prefix) || e.ID[:len(prefix)] != prefix {
			keep = append(keep, e)
		}
	}
	inv.Entries = keep
	m, _ := p.cat.ForHost(inv.Identity)
	_ = p.store.PutObserved(ctx, firmware.Observed{MachineID: machine, Identity: inv.Identity, Reported: m.Readings(inv.Entries), At: t0})
}

// The pass counts and clears: budget, pending, leftover reports, locks.
func TestPassBookkeeping(t *testing.T) {
	p := newPassWorld(t, firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: ip(3)})
	for i := range 5 {
		m := fmt.Sprintf("m%d", i)
		p.dell(m, firmware.HostReady)
		p.observe(m)
	}
	p.hosts.Change("m4", func(h *firmware.Host) { h.UpdateReport = true }) // left over, no request
	p.hosts.Change("m3", func(h *firmware.Host) { h.InMaintenance = true })
	r := p.pass()
	if r.Total != 5 || r.InMaintenance != 1 || r.Ceiling != 3 || r.Pending != 5 || len(r.Started) != 2 || r.Available != 0 {
		t.Fatalf("report %+v", r)
	}
	if !reflect.DeepEqual(r.Cleared, []string{"m4"}) {
		t.Fatalf("cleared %v", r.Cleared)
	}
	if h, _, _ := p.hosts.Get(context.Background(), "m4"); h.UpdateReport {
		t.Fatal("leftover report kept")
	}
	// A second pass starts nothing: the ceiling is full.
	if r2 := p.pass(); len(r2.Started) != 0 || r2.InMaintenance != 3 {
		t.Fatalf("second pass %+v", r2)
	}
}

func TestOperatorRefusals(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	w.dell("m1", firmware.HostReady)
	ctx := context.Background()
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk}
	cases := []struct {
		name string
		do   func() error
	}{
		{"request for an unknown machine", func() error { _, err := op.RequestUpdate(ctx, "nope", "op", ""); return err }},
		{"a second request", func() error {
			if _, err := op.RequestUpdate(ctx, "m1", "op", ""); err != nil {
				return nil
			}
			_, err := op.RequestUpdate(ctx, "m1", "op", "")
			return err
		}},
		{"clear without a request", func() error { return op.ClearRequest(ctx, "m2") }},
		{"mark without a request", func() error { _, err := op.MarkManualUpgradeComplete(ctx, "m2"); return err }},
		{"approve without a request", func() error { _, err := op.Approve(ctx, "m2"); return err }},
		{"reset before the start", func() error { _, err := op.Reset(ctx, "m1"); return err }},
		{"window ending before it starts", func() error { return op.StartUpdates(ctx, []string{"m1"}, t0, t0) }},
		{"window for an unknown machine", func() error { return op.StartUpdates(ctx, []string{"m1", "nope"}, t0, t0.Add(time.Hour)) }},
		{"autoupdate of an unknown machine", func() error { on := true; return op.SetAutoUpdate(ctx, "nope", &on) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.do(); !firmware.RequestRefused.Is(err) {
				t.Fatalf("err = %v, want FIRMWARE_REQUEST_REFUSED", err)
			}
		})
	}
	if ws, _ := w.store.Windows(ctx); len(ws) != 0 {
		t.Fatalf("a refused window changed the store: %v", ws)
	}
	// Clear after the start is refused; before it, it works.
	w.dell("m3", firmware.HostReady)
	if _, err := op.RequestUpdate(ctx, "m3", "op", ""); err != nil {
		t.Fatal(err)
	}
	if err := op.ClearRequest(ctx, "m3"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.update("m1"); err != nil {
		t.Fatal(err)
	}
	if _, err := op.RequestUpdate(ctx, "m1", "op", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.PatchRequest(ctx, "m1", firmware.RequestPatch{StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := op.ClearRequest(ctx, "m1"); !firmware.RequestRefused.Is(err) {
		t.Fatalf("clear after the start = %v", err)
	}
}

// Reset sends a failed update back to checking with the retry count
// cleared; a direct request of a compliant host hands it straight back.
func TestOperatorResetAndDirectRequest(t *testing.T) {
	w := newWorld(t, firmware.Settings{MaxRetries: 1})
	fb := w.dell("m1", firmware.HostReady)
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakesImage("Installed-159-1.8.2__BIOS.Setup.1-1", "1.13.2", "Exception"))
	w.request("m1")
	if _, err := w.update("m1"); !firmware.RetriesExhausted.Is(err) {
		t.Fatalf("first run = %v", err)
	}
	op := &firmware.Operator{Store: w.store, Hosts: w.hosts, Clock: w.clk, Settings: firmware.Settings{MaxRetries: 1}}
	list, err := op.List(context.Background())
	if err != nil || len(list) != 1 || !list[0].Exhausted || list[0].Update.RetryCount != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	fb.AddImage("/fw/r750-bios-1.13.2.exe", fakesImage("Installed-159-1.8.2__BIOS.Setup.1-1", "1.13.2", ""))
	u, err := op.Reset(context.Background(), "m1")
	if err != nil || u.Substate != firmware.CheckingFirmwareRepeat || u.RetryCount != 0 || u.Failure != nil {
		t.Fatalf("Reset = %+v, %v", u, err)
	}
	if res, err := w.update("m1"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("after reset = %+v, %v", res, err)
	}
	w.handedBack("m1")

	// Now compliant: a direct request (even of an assigned host) uploads
	// and restarts nothing.
	w.hosts.Change("m1", func(h *firmware.Host) { h.State = firmware.HostAssigned })
	before := fb.State()
	if _, err := op.RequestUpdate(context.Background(), "m1", "op", "CHG-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Approve(context.Background(), "m1"); err != nil {
		t.Fatal(err)
	}
	if res, err := w.update("m1"); err != nil || res.Outcome != firmware.OutcomeDone {
		t.Fatalf("direct request = %+v, %v", res, err)
	}
	after := fb.State()
	if after.Uploads != before.Uploads || len(after.Resets) != len(before.Resets) {
		t.Fatalf("a compliant host was touched: uploads %d→%d resets %v→%v", before.Uploads, after.Uploads, before.Resets, after.Resets)
	}
	w.handedBack("m1")
}
