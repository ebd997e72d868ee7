package firmware

import (
	"context"
	"log/slog"
)

// Cycle is one site's periodic firmware work, in one place. Whatever
// schedules it calls it once per site every Settings.RunInterval, one run
// at a time: the site's Temporal Schedules (overlapping runs skipped; the
// exploration and the pass are two schedules, run by whichever worker
// takes them), or an in-process ticker ('hostforge firmware run'). A run
//
//  1. reads the inventories that got older than the explorer's MaxAge
//     (NICo's Site Explorer), within a budget of half the run interval
//     (Explore);
//  2. runs the update manager's pass (which re-reads changed catalog
//     files and creates the reprovisioning requests), stores the pass's
//     figures (PassStore), removes finished updates past their retention
//     (Settings.HistoryRetention) and publishes the gauges (Pass).
//
// Starting the update workflows of the requests is not part of it: that
// runs on its own tick (temporal.StartFirmwareUpdates, or the local
// runner), so that a long exploration never delays it. A worker that ran
// no pass publishes the site's gauges from the store (PublishStored), not
// zeros.
type Cycle struct {
	Manager *Manager
	// Explorer, when set, reads the inventories.
	Explorer *Explorer
	// Metrics receives the gauges (nil: none); a CatalogMetrics among
	// them also counts the catalog's reloads.
	Metrics Metrics
	// Holder names who ran a pass in its stored figures (a worker's
	// identity; "" is fine).
	Holder string
	Log    *slog.Logger
}

// CycleReport is what one Run did.
type CycleReport struct {
	Pass    PassReport    `json:"pass"`
	Explore ExploreReport `json:"explore"`
	Gauges  Gauges        `json:"gauges"`
	// Pruned counts the finished updates removed by the retention.
	Pruned int `json:"pruned,omitempty"`
}

func (c *Cycle) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// countReloads has the catalog files count their reloads on the metrics.
func (c *Cycle) countReloads() {
	if cf, ok := c.Manager.Catalog.(*CatalogFiles); ok {
		if cm, ok := c.Metrics.(CatalogMetrics); ok {
			cf.countWith(cm)
		}
	}
}

// Run runs one cycle: Explore, then Pass. It fails only when the store or
// the host list does not answer; an exploration that could not read some
// BMCs is reported and logged.
func (c *Cycle) Run(ctx context.Context) (CycleReport, error) {
	out := CycleReport{Explore: c.Explore(ctx)}
	rep, err := c.Pass(ctx)
	rep.Explore = out.Explore
	return rep, err
}

// Explore reads the inventories that got old, within half the run
// interval unless the explorer has a budget of its own. Failures to read
// are logged and reported, never returned: the next run tries again.
func (c *Cycle) Explore(ctx context.Context) ExploreReport {
	x := c.Explorer
	if x == nil {
		return ExploreReport{}
	}
	if x.Budget <= 0 {
		budgeted := *x
		budgeted.Budget = c.Manager.Settings.WithDefaults().RunInterval / 2
		x = &budgeted
	}
	rep, err := x.Explore(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		c.log().Error("reading the managed hosts' firmware inventories", "err", err)
	case len(rep.Failed) > 0:
		c.log().Warn("some hosts' firmware inventories could not be read", "failed", rep.Failed)
	}
	return rep
}

// Pass runs the update manager's pass, stores its figures, prunes the
// history past its retention and publishes the gauges.
func (c *Cycle) Pass(ctx context.Context) (CycleReport, error) {
	c.countReloads()
	m := c.Manager
	s := m.Settings.WithDefaults()
	now := m.Clock.Now()
	var out CycleReport
	rep, err := m.pass(ctx, PassReport{At: now, Skipped: map[string]int{}}, s, now)
	if err != nil {
		return out, err
	}
	out.Pass = rep
	if err := m.Store.PutPassFigures(ctx, FiguresOf(rep, c.Holder)); err != nil {
		return out, err
	}
	n, err := m.Store.PruneHistory(ctx, now.Add(-s.HistoryRetention))
	if err != nil {
		return out, err
	}
	out.Pruned = n
	c.log().Info("firmware update manager pass", "hosts", rep.Total, "pending", rep.Pending, "ceiling", rep.Ceiling,
		"in_maintenance", rep.InMaintenance, "started", rep.Started, "skipped", rep.Skipped, "unmatched", len(rep.Unmatched), "pruned", n)
	g, err := GaugesOf(ctx, m.Store, s, rep)
	if err != nil {
		return out, err
	}
	out.Gauges = g
	if c.Metrics != nil {
		c.Metrics.Gauges(g)
	}
	return out, nil
}

// PublishStored publishes the site's gauges as the store has them: the
// last pass's figures (whoever ran it) and the update records as they
// are now. A worker calls it when its metrics are read, so that every
// worker of a site shows the site's gauges, not zeros or its own last
// pass's.
func (c *Cycle) PublishStored(ctx context.Context) (Gauges, error) {
	c.countReloads()
	g, err := StoredGauges(ctx, c.Manager.Store, c.Manager.Settings)
	if err != nil {
		return g, err
	}
	if c.Metrics != nil {
		c.Metrics.Gauges(g)
	}
	return g, nil
}
