package firmware

import (
	"context"
	"log/slog"
)

// Cycle is one site's periodic firmware work, in one place: whatever
// schedules it — a Temporal Schedule per site (overlapping runs
// skipped), or an in-process ticker ('hostforge firmware run') — calls
// Run every Settings.RunInterval. Under the pass lock (one holder across
// every worker sharing the store), Run
//
//  1. reads the inventories that got older than the explorer's MaxAge
//     (NICo's Site Explorer), within a budget of half the pass lease;
//  2. runs the update manager's pass (which re-reads changed catalog
//     files and creates the reprovisioning requests);
//  3. stores the pass's figures (PassStore) and removes finished updates
//     past their retention (Settings.HistoryRetention);
//
// and, holding the lock or not, publishes the gauges: a worker whose
// Run found the lock taken publishes the last pass's stored figures, not
// zeros. Starting the update workflows of the requests is not part of
// it: that runs on its own tick (temporal.StartFirmwareUpdates, or the
// local runner), so that a long exploration never delays it.
type Cycle struct {
	Manager *Manager
	// Explorer, when set, reads the inventories under the lock.
	Explorer *Explorer
	// Metrics receives the gauges (nil: none); a CatalogMetrics among
	// them also counts the catalog's reloads.
	Metrics Metrics
	Log     *slog.Logger
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

// Run runs one cycle. It fails only when the store or the host list does
// not answer; an exploration that could not read some BMCs is reported
// and logged.
func (c *Cycle) Run(ctx context.Context) (CycleReport, error) {
	m := c.Manager
	s := m.Settings.WithDefaults()
	now := m.Clock.Now()
	var out CycleReport
	if cf, ok := m.Catalog.(*CatalogFiles); ok {
		if cm, ok := c.Metrics.(CatalogMetrics); ok {
			cf.countWith(cm)
		}
	}
	out.Pass = PassReport{At: now}
	release, ok, err := m.Store.LockPass(ctx, m.Holder, now, s.PassLease)
	if err != nil {
		return out, err
	}
	if !ok {
		out.Pass.Locked = true
	} else {
		err := func() error {
			defer release()
			if x := c.Explorer; x != nil {
				if x.Budget <= 0 {
					budgeted := *x
					budgeted.Budget = s.PassLease / 2
					x = &budgeted
				}
				rep, err := x.Explore(ctx)
				out.Explore = rep
				switch {
				case err != nil && ctx.Err() == nil:
					c.log().Error("reading the managed hosts' firmware inventories", "err", err)
				case len(rep.Failed) > 0:
					c.log().Warn("some hosts' firmware inventories could not be read", "failed", rep.Failed)
				}
			}
			rep, err := m.pass(ctx, PassReport{At: now, Skipped: map[string]int{}}, s, now)
			if err != nil {
				return err
			}
			out.Pass = rep
			if err := m.Store.PutPassFigures(ctx, FiguresOf(rep, m.Holder)); err != nil {
				return err
			}
			n, err := m.Store.PruneHistory(ctx, now.Add(-s.HistoryRetention))
			if err != nil {
				return err
			}
			out.Pruned = n
			return nil
		}()
		if err != nil {
			return out, err
		}
		c.log().Info("firmware update manager pass", "hosts", out.Pass.Total, "pending", out.Pass.Pending, "ceiling", out.Pass.Ceiling,
			"in_maintenance", out.Pass.InMaintenance, "started", out.Pass.Started, "skipped", out.Pass.Skipped, "unmatched", len(out.Pass.Unmatched),
			"explored", len(out.Explore.Observed), "pruned", out.Pruned)
	}
	g, err := GaugesOf(ctx, m.Store, s, out.Pass)
	if err != nil {
		return out, err
	}
	out.Gauges = g
	if c.Metrics != nil {
		c.Metrics.Gauges(g)
	}
	return out, nil
}
