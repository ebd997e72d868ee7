package firmware

import (
	"context"
)

// TargetHost is the target label of host firmware updates (NICo also
// counts dpu_nic and super_nic updates under the same metric names).
const TargetHost = "host"

// Metrics receives what the update manager and the update workflow
// report. It is declared here so that the core does not depend on a
// metrics library; adapters/metrics implements it with Prometheus.
// Every method must be safe for concurrent use and must not block.
//
// Counters are counted once per persisted transition: a step that loses
// its compare-and-set or fails to write counts nothing, and a step rerun
// after a crash between its write and its return may count twice (at
// least once).
type Metrics interface {
	// Gauges sets the gauges after a pass of the update manager.
	Gauges(g Gauges)
	// UpdateStarted counts an update that passed its start gate (phase
	// "started" of firmware_updates_total).
	UpdateStarted(target string)
	// UpdateCompleted counts an update that handed its host back with
	// every component at its default (phase "completed").
	UpdateCompleted(target string)
	// UpdateFailed counts a failed attempt (FailedFirmwareUpgrade); cause
	// is its failure code.
	UpdateFailed(target, cause string)
	// ReprovisionRetry counts an automatic retry of a failed update.
	ReprovisionRetry()
}

// Gauges are the update manager's gauges, with NICo's names and the
// specification's meanings. Unlike NICo, Active and Exhausted count the
// updates of assigned hosts too: hostforge keeps one update record per
// machine whether or not it has an instance (NICo's queries read only the
// top-level HostReprovision state and so miss assigned hosts).
type Gauges struct {
	// Pending: drifted hosts without a request (pending_host_firmware_update_count).
	Pending int `json:"pending"`
	// Active: hosts whose update has started and not ended, assigned
	// hosts included (active_host_firmware_update_count).
	Active int `json:"active"`
	// Exhausted: hosts whose update failed and spent its retry budget,
	// assigned hosts included (exhausted_reprovision_retry_count).
	Exhausted int `json:"exhausted"`
	// InMaintenance: hosts consuming the shared update budget
	// (machines_in_maintenance_count).
	InMaintenance int `json:"in_maintenance"`
	// Started: requests the last pass created (machine_updates_started_count).
	Started int `json:"started"`
	// Ceiling: the calculated site-wide ceiling
	// (concurrent_machine_updates_available).
	Ceiling int `json:"ceiling"`
}

// GaugeStore is what the gauges are read from.
type GaugeStore interface {
	UpdateStore
	PassStore
}

// GaugesOf computes the gauges from a pass report and the store's update
// records: the pass's figures, and Active and Exhausted counted from the
// update records.
func GaugesOf(ctx context.Context, s GaugeStore, settings Settings, rep PassReport) (Gauges, error) {
	return gauges(ctx, s, settings, Gauges{Pending: rep.Pending, InMaintenance: rep.InMaintenance, Started: len(rep.Started), Ceiling: rep.Ceiling})
}

// StoredGauges computes the gauges as the store has them: the figures of
// the site's last pass (PassStore), whoever ran it, and Active and
// Exhausted counted from the update records. Before any pass the pass's
// figures are zero.
func StoredGauges(ctx context.Context, s GaugeStore, settings Settings) (Gauges, error) {
	var g Gauges
	f, ok, err := s.PassFigures(ctx)
	if err != nil {
		return Gauges{}, err
	}
	if ok {
		g = Gauges{Pending: f.Pending, InMaintenance: f.InMaintenance, Started: f.Started, Ceiling: f.Ceiling}
	}
	return gauges(ctx, s, settings, g)
}

// gauges adds Active and Exhausted, from the update records, to g.
func gauges(ctx context.Context, s GaugeStore, settings Settings, g Gauges) (Gauges, error) {
	ups, err := s.Updates(ctx)
	if err != nil {
		return Gauges{}, err
	}
	max := settings.WithDefaults().MaxRetries
	for _, u := range ups {
		if u.Substate == Pending {
			continue
		}
		g.Active++
		if u.Exhausted(max) {
			g.Exhausted++
		}
	}
	return g, nil
}

// countTransition reports to m what one persisted step changed.
func countTransition(m Metrics, before, after HostUpdate, completed bool) {
	if m == nil {
		return
	}
	switch {
	case completed:
		// A cancelled update handed its host back without bringing it to
		// its defaults: it is not a completed one.
		if before.Substate == Restore && before.Cancel == nil {
			m.UpdateCompleted(TargetHost)
		}
		return
	case before.Substate == Pending && after.Substate != Pending:
		m.UpdateStarted(TargetHost)
	case before.Substate == FailedFirmwareUpgrade && after.Substate != FailedFirmwareUpgrade && after.RetryCount > before.RetryCount:
		m.ReprovisionRetry()
	}
	if after.Substate == FailedFirmwareUpgrade && before.Substate != FailedFirmwareUpgrade && after.Failure != nil {
		m.UpdateFailed(TargetHost, after.Failure.Code)
	}
}
