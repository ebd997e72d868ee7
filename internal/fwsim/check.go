package fwsim

import (
	"context"
	"fmt"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

// checker holds the invariants of the specification and reports every one
// that did not hold, once, with the virtual time it was first seen.
type checker struct {
	s        *Sim
	problems []string
	seen     map[string]bool
	cache    map[string]driftMemo
}

func (c *checker) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if c.seen[msg] || len(c.problems) >= 50 {
		return
	}
	c.seen[msg] = true
	c.problems = append(c.problems, fmt.Sprintf("t+%s: %s", c.s.clk.Now().Sub(c.s.start), msg))
}

// drifted reports whether an observation shows drift, by the checker's
// own reading of the catalog (cached per observation).
func (c *checker) drifted(o *firmware.Observed) bool {
	if c.cache == nil {
		c.cache = map[string]driftMemo{}
	}
	if m, ok := c.cache[o.MachineID]; ok && m.at.Equal(o.At) {
		return m.drifted
	}
	d := false
	if m, ok := c.s.eff.ForHost(o.Identity); ok {
		for _, line := range m.Evaluate(o.Reported) {
			d = d || line.Status == firmware.StatusDrifted
		}
	}
	c.cache[o.MachineID] = driftMemo{at: o.At, drifted: d}
	return d
}

type driftMemo struct {
	at      time.Time
	drifted bool
}

type passBefore struct {
	inUse int
	reqs  map[string]bool
}

func (c *checker) beforePass(ctx context.Context) passBefore {
	b := passBefore{reqs: map[string]bool{}}
	reqs, _ := c.s.store.Store.Requests(ctx)
	for _, r := range reqs {
		b.reqs[r.MachineID] = true
	}
	hosts, _ := c.s.hosts.List(ctx)
	for _, h := range hosts {
		if h.InMaintenance || b.reqs[h.MachineID] {
			b.inUse++
		}
	}
	return b
}

// afterPass checks one pass against an independent reading of the fleet:
//
//   - the concurrent updates plus the hosts in maintenance never exceed
//     the ceiling (a pass that starts anything stays within it);
//   - the ceiling is ceil(percent × total / 100) − unhealthy;
//   - unassigned hosts are selected first: an assigned host started only
//     if no eligible Ready host was left behind;
//   - no host starts outside its explicit window, or while its autoupdate
//     is disabled.
func (c *checker) afterPass(ctx context.Context, b passBefore, rep firmware.PassReport) {
	s := c.s
	hosts, _ := s.hosts.List(ctx)
	unhealthy := 0
	for _, h := range hosts {
		if h.Unhealthy {
			unhealthy++
		}
	}
	want := firmware.Ceiling(nil, s.settings.MaxConcurrentPercent, firmware.Fleet{Total: len(hosts), Unhealthy: unhealthy})
	if rep.Ceiling != want {
		c.fail("pass ceiling %d, want %d", rep.Ceiling, want)
	}
	if len(rep.Started) > 0 && b.inUse+len(rep.Started) > rep.Ceiling {
		c.fail("a pass started %d hosts with %d in maintenance or updating, past the ceiling %d", len(rep.Started), b.inUse, rep.Ceiling)
	}
	after := c.beforePass(ctx)
	if after.inUse > max(rep.Ceiling, b.inUse) {
		c.fail("%d hosts in maintenance or updating after a pass, ceiling %d", after.inUse, rep.Ceiling)
	}
	windows, _ := s.store.Store.Windows(ctx)
	now := s.clk.Now()
	started := map[string]bool{}
	assignedStarted := false
	for _, m := range rep.Started {
		started[m] = true
		h := s.byName[m]
		if h.Profile == ProfileSupermicro {
			if w, ok := windows[m]; !ok || !w.Contains(now) {
				c.fail("%s (explicit start) started outside its window", m)
			}
		}
		if h.PolicyOff {
			c.fail("%s started while its autoupdate was disabled", m)
		}
		if b.reqs[m] {
			c.fail("%s started again while it had a request", m)
		}
		assignedStarted = assignedStarted || h.Assigned
	}
	if !assignedStarted {
		return
	}
	all, _ := s.store.Store.AllObserved(ctx)
	observed := make(map[string]*firmware.Observed, len(all))
	for i := range all {
		observed[all[i].MachineID] = &all[i]
	}
	for _, h := range hosts {
		if h.State != firmware.HostReady || h.InMaintenance || b.reqs[h.MachineID] || started[h.MachineID] {
			continue
		}
		sh := s.byName[h.MachineID]
		if sh.PolicyOff {
			continue
		}
		if sh.Profile == ProfileSupermicro {
			if w, ok := windows[h.MachineID]; !ok || !w.Contains(now) {
				continue
			}
		}
		o := observed[h.MachineID]
		if o == nil {
			continue
		}
		if c.drifted(o) {
			c.fail("an assigned host started while Ready host %s, eligible, was left behind", h.MachineID)
			return
		}
	}
}

// afterWake checks a host's start: an assigned host starts only with its
// tenant's approval or inside the autoreboot period.
func (c *checker) afterWake(ctx context.Context, machine string) {
	s := c.s
	if s.started[machine] {
		return
	}
	r, ok, _ := s.store.Store.Request(ctx, machine)
	if !ok || !r.Started() {
		return
	}
	s.started[machine] = true
	if !s.byName[machine].Assigned {
		return
	}
	approved := !r.ApprovedAt.IsZero() && !r.ApprovedAt.After(r.StartedAt)
	if !approved && !s.settings.InstanceAutorebootPeriod.Contains(r.StartedAt) {
		c.fail("assigned host %s started at %s without approval, outside the autoreboot period", machine, r.StartedAt.Sub(s.start))
	}
}

// afterEnd checks an update that ended: its host handed back (no request,
// no record, no update report), the update kept in the history; one an
// operator cancelled says so, and by whom.
func (c *checker) afterEnd(ctx context.Context, machine string) {
	s := c.s
	_, hasReq, _ := s.store.Store.Request(ctx, machine)
	_, hasRec, _ := s.store.Store.Update(ctx, machine)
	h, _, _ := s.hosts.Get(ctx, machine)
	if hasReq || hasRec || h.UpdateReport {
		c.fail("%s: an ended update left its request (%v), record (%v) or update report (%v)", machine, hasReq, hasRec, h.UpdateReport)
	}
	hs, err := s.store.Store.History(ctx, machine)
	if err != nil {
		return // a store fault: nothing to conclude
	}
	if len(hs) == 0 {
		c.fail("%s: an ended update was not kept in the history", machine)
		return
	}
	last := hs[len(hs)-1]
	if last.Outcome == firmware.OutcomeCancelled && last.CancelledBy != "operator fwsim" {
		c.fail("%s: a cancelled update does not say who cancelled it: %q", machine, last.CancelledBy)
	}
	if _, planned := s.cancelAt[machine]; last.Outcome == firmware.OutcomeCancelled && !planned {
		c.fail("%s: an update no operator cancelled ended cancelled", machine)
	}
}

// tick checks what must hold at every moment: upload slots within
// max_uploads.
func (c *checker) tick(ctx context.Context, _ *event) {
	if n, err := c.s.store.Store.UploadSlots(ctx, c.s.clk.Now()); err == nil && n > c.s.settings.MaxUploads {
		c.fail("%d upload slots held, max_uploads %d", n, c.s.settings.MaxUploads)
	}
}

// end checks the fleet's final state: every host compliant, or failed
// with its retry budget spent (exactly the faulty ones), or flagged
// unmatched; none left in maintenance; the store holds nothing but the
// exhausted hosts' requests.
func (c *checker) end(ctx context.Context) {
	s := c.s
	rep := s.rep
	for _, name := range s.machines() {
		h := s.byName[name]
		fh, _, _ := s.hosts.Get(ctx, name)
		if fh.InMaintenance {
			c.fail("%s left in maintenance", name)
		}
		inv, err := s.bmcs.Inventory(ctx, name)
		for try := 0; err != nil && try < 5; try++ {
			inv, err = s.bmcs.Inventory(ctx, name) // an injected blip is used up
		}
		if err != nil {
			c.fail("%s: reading its inventory at the end: %v", name, err)
			continue
		}
		d := firmware.Drift(s.eff, inv)
		if len(d.Unmatched()) > 0 {
			rep.Unmatched++
			if !h.NoCX7 {
				c.fail("%s flagged unmatched (%v) without a reason", name, d.Unmatched())
			}
		}
		u, hasRecord, _ := s.store.Store.Update(ctx, name)
		_, hasReq, _ := s.store.Store.Request(ctx, name)
		switch {
		case h.ExpectExhausted():
			rep.Exhausted++
			if !hasRecord || !u.Exhausted(s.settings.MaxRetries) || !hasReq {
				c.fail("%s (fault %s) did not end failed with its budget spent: record %v %s retry %d", name, h.Fault, hasRecord, u.Substate, u.RetryCount)
			}
			if !fh.UpdateReport {
				c.fail("%s failed but lost its update report (it could be allocated)", name)
			}
		default:
			if d.Drifted {
				c.fail("%s (fault %q, drifted %v) ends drifted: %v", name, h.Fault, h.Drifted, d.Components)
				continue
			}
			rep.Compliant++
			if hasRecord || hasReq {
				c.fail("%s is compliant but keeps a request (%v) or record (%v, %s)", name, hasReq, hasRecord, u.Substate)
			}
			if fh.UpdateReport {
				c.fail("%s is compliant but left in maintenance (update report)", name)
			}
		}
	}
}
