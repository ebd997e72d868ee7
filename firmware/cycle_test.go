package firmware_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

type gaugeSink struct{ last *firmware.Gauges }

func (g *gaugeSink) Gauges(x firmware.Gauges)    { g.last = &x }
func (g *gaugeSink) UpdateStarted(string)        {}
func (g *gaugeSink) UpdateCompleted(string)      {}
func (g *gaugeSink) UpdateFailed(string, string) {}
func (g *gaugeSink) ReprovisionRetry()           {}
func (g *gaugeSink) CatalogReload(bool)          {}

var _ firmware.CatalogMetrics = (*gaugeSink)(nil)

// A cycle explores, passes, stores the pass's figures and publishes the
// gauges under the pass lock; a worker whose cycle finds the lock taken
// explores nothing and publishes the last pass's figures from the store,
// not zeros. Finished updates past the retention are removed.
func TestCycleUnderThePassLock(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	ctx := context.Background()
	for _, m := range []string{"d1", "d2", "d3"} {
		w.dell(m, firmware.HostReady)
	}
	abs := 2
	s := firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: &abs}
	cycle := func(holder string, sink *gaugeSink) *firmware.Cycle {
		m := &firmware.Manager{Store: w.store, Hosts: w.hosts, Catalog: w.cat, Settings: s, Clock: w.clk, Holder: holder}
		x := &firmware.Explorer{Store: w.store, Hosts: w.hosts, BMC: w.bmcs, Catalog: w.cat, Clock: w.clk}
		return &firmware.Cycle{Manager: m, Explorer: x, Metrics: sink}
	}
	// A finished update older than the retention, and a recent one.
	for i, age := range []time.Duration{91 * 24 * time.Hour, time.Hour} {
		h := firmware.UpdateHistory{MachineID: "d3", Generation: int64(i + 1), FinishedAt: t0.Add(-age), Outcome: firmware.OutcomeDone}
		if err := w.store.Complete(ctx, "d3", &h); err != nil {
			t.Fatal(err)
		}
	}
	one, two := &gaugeSink{}, &gaugeSink{}
	rep, err := cycle("w1", one).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Explore.Observed) != 3 || len(rep.Pass.Started) != 2 || rep.Pass.Pending != 3 || rep.Pruned != 1 {
		t.Fatalf("the cycle %+v", rep)
	}
	if one.last == nil || one.last.Pending != 3 || one.last.Ceiling != 2 || one.last.Started != 2 {
		t.Fatalf("gauges %+v", one.last)
	}
	if hs, _ := w.store.History(ctx, "d3"); len(hs) != 1 || hs[0].Generation != 2 {
		t.Errorf("history after the retention: %+v", hs)
	}

	// Another worker holds the lock: this one publishes the stored figures.
	release, ok, err := w.store.LockPass(ctx, "w1", w.clk.Now(), time.Hour)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	defer release()
	calls := w.bmcs.Of("d1").State().Calls["inventory"]
	rep, err = cycle("w2", two).Run(ctx)
	if err != nil || !rep.Pass.Locked {
		t.Fatalf("a cycle without the lock: %+v, %v", rep, err)
	}
	if got := w.bmcs.Of("d1").State().Calls["inventory"]; got != calls {
		t.Errorf("a worker without the pass lock read inventories (%d reads)", got-calls)
	}
	if two.last == nil || two.last.Pending != 3 || two.last.Ceiling != 2 || two.last.InMaintenance != one.last.InMaintenance {
		t.Errorf("a worker without the lock published %+v; want the last pass's %+v", two.last, one.last)
	}
}
