package firmware

import (
	"context"
	"sort"
	"time"

	"github.com/hostforge/hostforge/clock"
)

// Manager is the update manager: its Pass decides which drifted hosts may
// start an update now and creates their reprovisioning requests. Run Pass
// every Settings.RunInterval, one pass at a time per site (see doc.go): a
// Temporal schedule with overlap policy skip, or one process's ticker.
type Manager struct {
	Store Store
	Hosts Hosts
	// Catalog is the catalog of files (a *Catalog, or CatalogFiles re-read
	// when the files change); the store's overrides are applied on top at
	// every pass.
	Catalog CatalogSource
	// Settings are the site's; a zero duration takes its default.
	Settings Settings
	Clock    clock.Clock
}

// Skip reasons of a pass: why a host that is not compliant was not
// selected.
const (
	SkipNoObservation  = "no_observation"  // its inventory was never read
	SkipNotInCatalog   = "not_in_catalog"  // its model has no catalog entry
	SkipRequestExists  = "request_exists"  // it already has a request
	SkipState          = "state"           // neither Ready nor Assigned
	SkipManualTagging  = "manual_tagging"  // assigned, and manual tagging limits selection to Ready
	SkipAutoupdateOff  = "autoupdate_off"  // autoupdate disabled (site default or its override)
	SkipLegacyDisabled = "legacy_disabled" // listed in host_disable_autoupdate
	SkipOutsideWindow  = "outside_window"  // explicit start needed and now is not inside its window
	SkipCeiling        = "ceiling"         // eligible, but the ceiling was reached
	SkipInMaintenance  = "in_maintenance"  // in maintenance for another reason
	SkipUnmatchedOnly  = "unmatched_only"  // only unmatched components: flagged, never started
)

// PassReport is what one pass saw and did: the figures the metrics
// export.
type PassReport struct {
	At time.Time `json:"at"`
	// Total managed hosts, and how many are unhealthy.
	Total     int `json:"total"`
	Unhealthy int `json:"unhealthy"`
	// InMaintenance counts hosts in maintenance or an update (they consume
	// the ceiling), before this pass started any.
	InMaintenance int `json:"in_maintenance"`
	Ceiling       int `json:"ceiling"`
	// Available is what was left of the ceiling after this pass.
	Available int `json:"available"`
	// Pending counts drifted hosts without a request (selected or not).
	Pending int `json:"pending"`
	// Started lists the machines whose requests this pass created, in
	// selection order.
	Started []string `json:"started,omitempty"`
	// Cleared lists hosts whose leftover update health report was removed.
	Cleared []string `json:"cleared,omitempty"`
	// Unmatched lists hosts with a component whose matcher finds nothing:
	// flagged for the operator.
	Unmatched []string `json:"unmatched,omitempty"`
	// Skipped counts drifted hosts not selected, by reason.
	Skipped map[string]int `json:"skipped,omitempty"`
}

type candidate struct {
	machine  string
	assigned bool
}

// Pass runs one pass of the update manager. One pass runs at a time per
// site: the site's Temporal Schedule skips a run while the last one is
// still going, and 'hostforge firmware run' is one process. It does:
//
//  1. re-read the catalog files if they changed;
//  2. clear completed requests: remove the update health report of hosts
//     that carry it without a request (an update that ended without its
//     restore, or a report left by hand);
//  3. count the hosts in maintenance or in an update (a request) against
//     the budget;
//  4. compute the ceiling (see Ceiling) from every managed host and the
//     unhealthy ones;
//  5. select drifted hosts through the gates (see doc.go), unassigned
//     first, and create a request (initiator "automated") for as many as
//     the ceiling leaves room for.
func (m *Manager) Pass(ctx context.Context) (PassReport, error) {
	s := m.Settings.WithDefaults()
	now := m.Clock.Now()
	return m.pass(ctx, PassReport{At: now, Skipped: map[string]int{}}, s, now)
}

// pass is Pass with its settings and time.
func (m *Manager) pass(ctx context.Context, rep PassReport, s Settings, now time.Time) (PassReport, error) {
	if r, ok := m.Catalog.(catalogRefresher); ok {
		// Files that changed since the last pass take effect in this one;
		// files refused leave the last good catalog (the source logs and
		// counts them).
		_, _ = r.Refresh()
	}
	hosts, err := m.Hosts.List(ctx)
	if err != nil {
		return rep, err
	}
	reqs, err := m.Store.Requests(ctx)
	if err != nil {
		return rep, err
	}
	auto, err := m.Store.AutoUpdates(ctx)
	if err != nil {
		return rep, err
	}
	windows, err := m.Store.Windows(ctx)
	if err != nil {
		return rep, err
	}
	observed, err := m.Store.AllObserved(ctx)
	if err != nil {
		return rep, err
	}
	ovs, err := m.Store.Overrides(ctx)
	if err != nil {
		return rep, err
	}
	cat, err := currentOf(m.Catalog).WithOverrides(ovs)
	if err != nil {
		return rep, err
	}
	hasReq := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		hasReq[r.MachineID] = true
	}
	obs := make(map[string]*Observed, len(observed))
	for i := range observed {
		obs[observed[i].MachineID] = &observed[i]
	}
	legacy := make(map[string]bool, len(s.HostDisableAutoupdate))
	for _, id := range s.HostDisableAutoupdate {
		legacy[id] = true
	}

	// 1. Clear completed requests.
	for _, h := range hosts {
		if h.UpdateReport && !hasReq[h.MachineID] {
			if err := m.Hosts.ClearUpdateReport(ctx, h.MachineID); err != nil {
				return rep, err
			}
			rep.Cleared = append(rep.Cleared, h.MachineID)
		}
	}

	// 2. and 3. The budget and the ceiling.
	rep.Total = len(hosts)
	for _, h := range hosts {
		if h.Unhealthy {
			rep.Unhealthy++
		}
		if h.InMaintenance || hasReq[h.MachineID] {
			rep.InMaintenance++
		}
	}
	rep.Ceiling = Ceiling(s.MaxConcurrentAbsolute, s.MaxConcurrentPercent, Fleet{Total: rep.Total, Unhealthy: rep.Unhealthy})
	available := max(rep.Ceiling-rep.InMaintenance, 0)

	// 4. Selection. A fleet has few distinct models: their lookups and
	// desired versions are computed once per pass.
	models := map[Identity]*Model{}
	desired := map[*Model][]wanted{}
	var cands []candidate
	for _, h := range hosts {
		o := obs[h.MachineID]
		if o == nil {
			rep.Skipped[SkipNoObservation]++
			continue
		}
		model, seen := models[o.Identity]
		if !seen {
			model, _ = cat.ForHost(o.Identity)
			models[o.Identity] = model
		}
		if model == nil {
			rep.Skipped[SkipNotInCatalog]++
			continue
		}
		want, seen := desired[model]
		if !seen {
			want = model.wanted()
			desired[model] = want
		}
		drifted, unmatched := summary(want, o.Reported)
		if unmatched {
			rep.Unmatched = append(rep.Unmatched, h.MachineID)
		}
		if !drifted {
			if unmatched {
				rep.Skipped[SkipUnmatchedOnly]++
			}
			continue
		}
		if hasReq[h.MachineID] {
			rep.Skipped[SkipRequestExists]++
			continue
		}
		rep.Pending++
		if reason := m.gate(s, h, model, auto, legacy, windows, now); reason != "" {
			rep.Skipped[reason]++
			continue
		}
		cands = append(cands, candidate{machine: h.MachineID, assigned: h.State == HostAssigned})
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].assigned != cands[j].assigned {
			return !cands[i].assigned
		}
		return cands[i].machine < cands[j].machine
	})
	var batch []Request
	for _, c := range cands {
		if len(batch) == available {
			rep.Skipped[SkipCeiling]++
			continue
		}
		batch = append(batch, Request{MachineID: c.machine, Initiator: InitiatorAutomated, Message: "firmware drift", CreatedAt: now})
	}
	if len(batch) > 0 {
		created, err := m.Store.CreateRequests(ctx, batch)
		if err != nil {
			return rep, err
		}
		rep.Started = created
	}
	rep.Available = available - len(rep.Started)
	if len(rep.Skipped) == 0 {
		rep.Skipped = nil
	}
	return rep, nil
}

// catalogRefresher is a catalog source that can check its files now
// (CatalogFiles).
type catalogRefresher interface {
	Refresh() (changed bool, err error)
}

// gate returns why a drifted host without a request may not be selected
// now, or "" when it may.
func (m *Manager) gate(s Settings, h Host, model *Model, auto, legacy map[string]bool, windows map[string]Window, now time.Time) string {
	switch h.State {
	case HostReady:
	case HostAssigned:
		if s.InstanceUpdatesManualTagging {
			return SkipManualTagging
		}
	default:
		return SkipState
	}
	if h.InMaintenance {
		return SkipInMaintenance
	}
	if on, ok := auto[h.MachineID]; ok {
		if !on {
			return SkipAutoupdateOff
		}
	} else if legacy[h.MachineID] {
		return SkipLegacyDisabled
	} else if !s.AutoUpdate {
		return SkipAutoupdateOff
	}
	if model.ExplicitStartNeeded {
		w, ok := windows[h.MachineID]
		if !ok || !w.Contains(now) {
			return SkipOutsideWindow
		}
	}
	return ""
}
