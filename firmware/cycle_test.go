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
// gauges; another worker, which ran no pass, publishes the last pass's
// figures from the store, not zeros, and reads no inventory. Finished
// updates past the retention are removed.
func TestCycleAndStoredGauges(t *testing.T) {
	w := newWorld(t, firmware.Settings{})
	ctx := context.Background()
	for _, m := range []string{"d1", "d2", "d3"} {
		w.dell(m, firmware.HostReady)
	}
	abs := 2
	s := firmware.Settings{AutoUpdate: true, MaxConcurrentAbsolute: &abs}
	cycle := func(holder string, sink *gaugeSink) *firmware.Cycle {
		m := &firmware.Manager{Store: w.store, Hosts: w.hosts, Catalog: w.cat, Settings: s, Clock: w.clk}
		x := &firmware.Explorer{Store: w.store, Hosts: w.hosts, BMC: w.bmcs, Catalog: w.cat, Clock: w.clk}
		return &firmware.Cycle{Manager: m, Explorer: x, Metrics: sink, Holder: holder}
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

	// Another worker, which ran no pass, publishes the stored figures.
	calls := w.bmcs.Of("d1").State().Calls["inventory"]
	g, err := cycle("w2", two).PublishStored(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.bmcs.Of("d1").State().Calls["inventory"]; got != calls {
		t.Errorf("publishing the stored gauges read inventories (%d reads)", got-calls)
	}
	if two.last == nil || *two.last != g || g.Pending != 3 || g.Ceiling != 2 || g.Started != 2 || g.InMaintenance != one.last.InMaintenance || g.Active != one.last.Active {
		t.Errorf("a worker that ran no pass published %+v; want the last pass's %+v", two.last, one.last)
	}
}
