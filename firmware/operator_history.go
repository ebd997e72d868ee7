package firmware

import (
	"context"
	"sort"
	"time"
)

// Outcomes of an update that has not ended, as History lists it.
const (
	// OutcomeWaiting: requested, not started (the start gate).
	OutcomeWaiting = "waiting"
	// OutcomeInProgress: started and not ended.
	OutcomeInProgress = "in_progress"
)

// SubstateAt is one substate an update entered, and when.
type SubstateAt struct {
	Substate Substate  `json:"substate"`
	At       time.Time `json:"at"`
}

// HistoryEntry is one of a host's updates as 'hostforge firmware history'
// shows it: when it started and finished (null while it has not), how it
// ended (OutcomeDone, OutcomeCancelled, OutcomeExhausted, or for the
// update under way OutcomeWaiting, OutcomeInProgress), the substates it
// went through, the components it brought to their target and its last
// failure (null without one).
type HistoryEntry struct {
	StartedAt  *time.Time        `json:"started_at"`
	FinishedAt *time.Time        `json:"finished_at"`
	Outcome    string            `json:"outcome"`
	Substates  []SubstateAt      `json:"substates"`
	Components []ComponentChange `json:"components"`
	Failure    *FailureInfo      `json:"failure"`
	// CancelledBy is who cancelled the update (OutcomeCancelled, or an
	// update whose cancellation is under way).
	CancelledBy string `json:"cancelled_by,omitempty"`
}

func entryOf(r HostUpdate, started, finished time.Time, outcome string) HistoryEntry {
	e := HistoryEntry{Outcome: outcome, Substates: []SubstateAt{}, Components: []ComponentChange{}, Failure: r.Failure}
	if !started.IsZero() {
		t := started
		e.StartedAt = &t
	}
	if !finished.IsZero() {
		t := finished
		e.FinishedAt = &t
	}
	for _, t := range r.History {
		e.Substates = append(e.Substates, SubstateAt{Substate: t.To, At: t.At})
	}
	e.Components = append(e.Components, r.Changes...)
	if r.Cancel != nil {
		e.CancelledBy = r.Cancel.By
	}
	return e
}

// History lists the machine's updates, oldest first: the finished ones
// the store keeps (see Settings.HistoryRetention), then the one under way.
func (o *Operator) History(ctx context.Context, machine string) ([]HistoryEntry, error) {
	hs, err := o.Store.History(ctx, machine)
	if err != nil {
		return nil, err
	}
	out := make([]HistoryEntry, 0, len(hs)+1)
	for _, h := range hs {
		out = append(out, entryOf(h.Record, h.StartedAt, h.FinishedAt, h.Outcome))
	}
	req, hasReq, err := o.Store.Request(ctx, machine)
	if err != nil {
		return nil, err
	}
	u, hasRec, err := o.Store.Update(ctx, machine)
	if err != nil {
		return nil, err
	}
	switch {
	case hasRec:
		outcome := OutcomeInProgress
		switch {
		case u.Exhausted(o.Settings.WithDefaults().MaxRetries):
			outcome = OutcomeExhausted
		case !req.Started():
			outcome = OutcomeWaiting
		}
		out = append(out, entryOf(u, req.StartedAt, time.Time{}, outcome))
	case hasReq:
		out = append(out, entryOf(HostUpdate{}, time.Time{}, time.Time{}, OutcomeWaiting))
	}
	return out, nil
}

// Cancel stops a machine's update, started or exhausted, at its next step
// boundary: nothing it sent is cut — a push, its BMC task, an agent run
// or a reset under way is waited out — and the host is then handed back
// (lockdown as it was, power as it was, out of maintenance) and the
// update kept in the history as cancelled, by whom. An exhausted update's
// workflow has ended: the worker starts it again to hand the host back.
// A request whose workflow has not picked it up yet is cleared instead
// ('reprovision clear').
func (o *Operator) Cancel(ctx context.Context, machine, by string) (HostUpdate, error) {
	if by == "" {
		by = "operator"
	}
	for range 5 {
		u, ok, err := o.Store.Update(ctx, machine)
		if err != nil {
			return HostUpdate{}, err
		}
		if !ok {
			if _, hasReq, err := o.Store.Request(ctx, machine); err != nil {
				return HostUpdate{}, err
			} else if hasReq {
				return HostUpdate{}, RequestRefused.New("the update of machine %s has not been picked up yet: clear its request ('hostforge firmware reprovision clear')", machine)
			}
			return HostUpdate{}, RequestRefused.New("machine %s has no update to cancel", machine)
		}
		if u.Cancel != nil {
			return u, nil // cancelled already: the first word stands
		}
		now := o.Clock.Now()
		u.Cancel = &CancelMark{By: by, At: now}
		if !inFlight(u) {
			// A body that reads the record next acts on it at once.
			u.NotBefore = now
		}
		saved, err := o.Store.PutUpdate(ctx, u)
		if StateConflict.Is(err) {
			continue
		}
		return saved, err
	}
	return HostUpdate{}, StateConflict.New("machine %s: the update record kept changing; try again", machine)
}

// ModelReport is one model's line of the fleet's compliance report. Each
// host is counted once, under the first of: exhausted (its update failed
// and spent its retry budget), updating (it has a request), not_in_catalog
// (its model has no entry), drifted, unmatched (a component its matcher
// finds no entry for, nothing drifted), compliant. A host never read is
// counted in hosts only, under vendor and model "".
type ModelReport struct {
	Vendor       string `json:"vendor"`
	Model        string `json:"model"`
	Hosts        int    `json:"hosts"`
	Compliant    int    `json:"compliant"`
	Drifted      int    `json:"drifted"`
	Unmatched    int    `json:"unmatched"`
	NotInCatalog int    `json:"not_in_catalog"`
	Updating     int    `json:"updating"`
	Exhausted    int    `json:"exhausted"`
}

// UnmatchedHost is a host with components the catalog's matchers find no
// installed inventory entry for.
type UnmatchedHost struct {
	MachineID  string          `json:"machine_id"`
	Vendor     string          `json:"vendor"`
	Model      string          `json:"model"`
	Components []ComponentType `json:"components"`
}

// Report is the fleet's compliance per model, from the managed hosts, the
// stored inventory readings and update records and the effective catalog
// (files and overrides), and the hosts with unmatched components.
func (o *Operator) Report(ctx context.Context) ([]ModelReport, []UnmatchedHost, error) {
	hosts, err := o.Hosts.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	cat, _, err := o.EffectiveCatalog(ctx)
	if err != nil {
		return nil, nil, err
	}
	observed, err := o.Store.AllObserved(ctx)
	if err != nil {
		return nil, nil, err
	}
	reqs, err := o.Store.Requests(ctx)
	if err != nil {
		return nil, nil, err
	}
	ups, err := o.Store.Updates(ctx)
	if err != nil {
		return nil, nil, err
	}
	obs := make(map[string]*Observed, len(observed))
	for i := range observed {
		obs[observed[i].MachineID] = &observed[i]
	}
	hasReq := make(map[string]bool, len(reqs))
	for _, r := range reqs {
		hasReq[r.MachineID] = true
	}
	maxRetries := o.Settings.WithDefaults().MaxRetries
	exhausted := map[string]bool{}
	for _, u := range ups {
		if u.Exhausted(maxRetries) {
			exhausted[u.MachineID] = true
		}
	}
	lines := map[[2]string]*ModelReport{}
	line := func(vendor, model string) *ModelReport {
		k := [2]string{vendor, model}
		if lines[k] == nil {
			lines[k] = &ModelReport{Vendor: vendor, Model: model}
		}
		return lines[k]
	}
	var unmatched []UnmatchedHost
	for _, h := range hosts {
		ob := obs[h.MachineID]
		if ob == nil {
			l := line("", "")
			l.Hosts++
			switch {
			case exhausted[h.MachineID]:
				l.Exhausted++
			case hasReq[h.MachineID]:
				l.Updating++
			}
			continue
		}
		inv := Inventory{Identity: ob.Identity}
		d := Report{Vendor: inv.Identity.Manufacturer, Model: inv.Identity.Model}
		m, inCat := cat.ForHost(ob.Identity)
		if inCat {
			d = Report{Vendor: m.Vendor, Model: m.Model, InCatalog: true, Components: m.Evaluate(ob.Reported)}
			for _, c := range d.Components {
				d.Drifted = d.Drifted || c.Status == StatusDrifted
			}
		} else {
			d = Drift(cat, inv)
		}
		l := line(d.Vendor, d.Model)
		l.Hosts++
		un := d.Unmatched()
		if len(un) > 0 {
			unmatched = append(unmatched, UnmatchedHost{MachineID: h.MachineID, Vendor: d.Vendor, Model: d.Model, Components: un})
		}
		switch {
		case exhausted[h.MachineID]:
			l.Exhausted++
		case hasReq[h.MachineID]:
			l.Updating++
		case !d.InCatalog:
			l.NotInCatalog++
		case d.Drifted:
			l.Drifted++
		case len(un) > 0:
			l.Unmatched++
		default:
			l.Compliant++
		}
	}
	out := make([]ModelReport, 0, len(lines))
	for _, l := range lines {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Vendor != out[j].Vendor {
			return out[i].Vendor < out[j].Vendor
		}
		return out[i].Model < out[j].Model
	})
	sort.Slice(unmatched, func(i, j int) bool { return unmatched[i].MachineID < unmatched[j].MachineID })
	return out, unmatched, nil
}
