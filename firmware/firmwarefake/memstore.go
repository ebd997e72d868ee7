package firmwarefake

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/hostforge/hostforge/firmware"
)

// MemStore is an in-memory firmware.Store. It passes the same contract
// suite as the SQL store; values are copied in and out, so a caller never
// shares memory with it.
type MemStore struct {
	mu        sync.Mutex
	requests  map[string]firmware.Request
	updates   map[string]firmware.HostUpdate
	auto      map[string]bool
	windows   map[string]firmware.Window
	observed  map[string]firmware.Observed
	obsOrder  []string // sorted keys of observed; nil when stale
	overrides map[overrideKey]firmware.Override
	results   map[[2]string]firmware.Result
	pushes    map[string][]firmware.Push // machine → in recorded order
	scout     map[string]firmware.ScoutTask
	slots     map[string]time.Time // holder → lease expiry
	history   map[string][]firmware.UpdateHistory
	figures   *firmware.PassFigures
	fail      func(op string) error
}

type overrideKey struct {
	family, model string
	c             firmware.ComponentType
	version       string
}

var _ firmware.Store = (*MemStore)(nil)

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{
		requests:  map[string]firmware.Request{},
		updates:   map[string]firmware.HostUpdate{},
		auto:      map[string]bool{},
		windows:   map[string]firmware.Window{},
		observed:  map[string]firmware.Observed{},
		overrides: map[overrideKey]firmware.Override{},
		results:   map[[2]string]firmware.Result{},
		pushes:    map[string][]firmware.Push{},
		scout:     map[string]firmware.ScoutTask{},
		slots:     map[string]time.Time{},
		history:   map[string][]firmware.UpdateHistory{},
	}
}

// FailWith makes every operation call fn first (op is the method name)
// and return its error when non-nil: an outage or a flaky database. nil
// removes it.
func (s *MemStore) FailWith(fn func(op string) error) {
	s.mu.Lock()
	s.fail = fn
	s.mu.Unlock()
}

// lock takes the mutex and runs the fault hook.
func (s *MemStore) lock(op string) error {
	s.mu.Lock()
	if s.fail != nil {
		if err := s.fail(op); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	return nil
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

func copyRequest(r firmware.Request) firmware.Request {
	r.CreatedAt, r.StartedAt, r.ApprovedAt, r.ManualUpgradeCompletedAt = utc(r.CreatedAt), utc(r.StartedAt), utc(r.ApprovedAt), utc(r.ManualUpgradeCompletedAt)
	return r
}

func copyUpdate(u firmware.HostUpdate) firmware.HostUpdate {
	u.EnteredAt, u.NotBefore, u.Deadline = utc(u.EnteredAt), utc(u.NotBefore), utc(u.Deadline)
	if u.Failure != nil {
		f := *u.Failure
		f.At = utc(f.At)
		u.Failure = &f
	}
	if u.History != nil {
		h := make([]firmware.Transition, len(u.History))
		for i, t := range u.History {
			t.At = utc(t.At)
			h[i] = t
		}
		u.History = h
	}
	if u.ResetSent != nil {
		m := *u.ResetSent
		m.At = utc(m.At)
		u.ResetSent = &m
	}
	if u.Cancel != nil {
		c := *u.Cancel
		c.At = utc(c.At)
		u.Cancel = &c
	}
	u.Changes = append([]firmware.ComponentChange(nil), u.Changes...)
	if len(u.Changes) == 0 {
		u.Changes = nil
	}
	return u
}

func copyObserved(o firmware.Observed) firmware.Observed {
	o.At = utc(o.At)
	if o.Reported != nil {
		n := 0
		for _, v := range o.Reported {
			n += len(v)
		}
		all := make([]firmware.Reading, 0, n) // one backing array for every component
		r := make(firmware.Reported, len(o.Reported))
		for k, v := range o.Reported {
			start := len(all)
			all = append(all, v...)
			r[k] = all[start:len(all):len(all)]
		}
		o.Reported = r
	}
	return o
}

func copyOverride(o firmware.Override) firmware.Override {
	o.UpdatedAt = utc(o.UpdatedAt)
	o.Entry.Artifacts = append([]firmware.Artifact(nil), o.Entry.Artifacts...)
	return o
}

// CreateRequest stores r unless the machine has a request.
func (s *MemStore) CreateRequest(_ context.Context, r firmware.Request) (bool, error) {
	if err := s.lock("CreateRequest"); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	if _, ok := s.requests[r.MachineID]; ok {
		return false, nil
	}
	s.requests[r.MachineID] = copyRequest(r)
	return true, nil
}

// CreateRequests stores each request whose machine has none.
func (s *MemStore) CreateRequests(_ context.Context, rs []firmware.Request) ([]string, error) {
	if err := s.lock("CreateRequests"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var created []string
	for _, r := range rs {
		if _, ok := s.requests[r.MachineID]; ok {
			continue
		}
		s.requests[r.MachineID] = copyRequest(r)
		created = append(created, r.MachineID)
	}
	return created, nil
}

// Request returns the machine's request.
func (s *MemStore) Request(_ context.Context, machine string) (firmware.Request, bool, error) {
	if err := s.lock("Request"); err != nil {
		return firmware.Request{}, false, err
	}
	defer s.mu.Unlock()
	r, ok := s.requests[machine]
	return r, ok, nil
}

// Requests lists every request by machine.
func (s *MemStore) Requests(context.Context) ([]firmware.Request, error) {
	if err := s.lock("Requests"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]firmware.Request, 0, len(s.requests))
	for _, r := range s.requests {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MachineID < out[j].MachineID })
	return out, nil
}

// PatchRequest sets the patch's times where they are unset.
func (s *MemStore) PatchRequest(_ context.Context, machine string, p firmware.RequestPatch) (firmware.Request, error) {
	if err := s.lock("PatchRequest"); err != nil {
		return firmware.Request{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.requests[machine]
	if !ok {
		return firmware.Request{}, firmware.RequestRefused.New("machine %s has no reprovisioning request", machine)
	}
	set := func(dst *time.Time, v time.Time) {
		if dst.IsZero() && !v.IsZero() {
			*dst = v.UTC()
		}
	}
	set(&r.StartedAt, p.StartedAt)
	set(&r.ApprovedAt, p.ApprovedAt)
	set(&r.ManualUpgradeCompletedAt, p.ManualUpgradeCompletedAt)
	s.requests[machine] = r
	return r, nil
}

// DeleteRequest removes the machine's request.
func (s *MemStore) DeleteRequest(_ context.Context, machine string, unstartedOnly bool) (bool, error) {
	if err := s.lock("DeleteRequest"); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	r, ok := s.requests[machine]
	if !ok {
		return false, nil
	}
	if unstartedOnly && r.Started() {
		return false, firmware.RequestRefused.New("the update of machine %s started at %s; its request can no longer be cleared", machine, r.StartedAt.Format(time.RFC3339))
	}
	delete(s.requests, machine)
	return true, nil
}

// Complete keeps h (with the machine's results) in the history and
// removes the machine's request, update record, results, pushes and agent
// task.
func (s *MemStore) Complete(_ context.Context, machine string, h *firmware.UpdateHistory) error {
	if err := s.lock("Complete"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if h != nil {
		kept := copyHistory(*h)
		kept.Results = nil
		for k, r := range s.results {
			if k[0] == machine {
				kept.Results = append(kept.Results, r)
			}
		}
		sortResults(kept.Results)
		list := s.history[machine]
		replaced := false
		for i := range list {
			if list[i].Generation == kept.Generation {
				list[i], replaced = kept, true
			}
		}
		if !replaced {
			list = append(list, kept)
		}
		s.history[machine] = list
	}
	delete(s.requests, machine)
	delete(s.updates, machine)
	delete(s.scout, machine)
	delete(s.pushes, machine)
	for k := range s.results {
		if k[0] == machine {
			delete(s.results, k)
		}
	}
	return nil
}

// Update returns the machine's update record.
func (s *MemStore) Update(_ context.Context, machine string) (firmware.HostUpdate, bool, error) {
	if err := s.lock("Update"); err != nil {
		return firmware.HostUpdate{}, false, err
	}
	defer s.mu.Unlock()
	u, ok := s.updates[machine]
	return copyUpdate(u), ok, nil
}

// Updates lists every update record by machine.
func (s *MemStore) Updates(context.Context) ([]firmware.HostUpdate, error) {
	if err := s.lock("Updates"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]firmware.HostUpdate, 0, len(s.updates))
	for _, u := range s.updates {
		out = append(out, copyUpdate(u))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MachineID < out[j].MachineID })
	return out, nil
}

// PutUpdate writes u by compare-and-set on its revision.
func (s *MemStore) PutUpdate(_ context.Context, u firmware.HostUpdate) (firmware.HostUpdate, error) {
	if err := s.lock("PutUpdate"); err != nil {
		return firmware.HostUpdate{}, err
	}
	defer s.mu.Unlock()
	cur, ok := s.updates[u.MachineID]
	switch {
	case !ok && u.Revision != 0, ok && cur.Revision != u.Revision:
		return firmware.HostUpdate{}, firmware.StateConflict.New("update record of %s: revision %d is stale (stored: %d)", u.MachineID, u.Revision, cur.Revision)
	}
	u = copyUpdate(u)
	u.Revision++
	s.updates[u.MachineID] = u
	return copyUpdate(u), nil
}

// SetAutoUpdate sets or clears the machine's override.
func (s *MemStore) SetAutoUpdate(_ context.Context, machine string, enabled *bool) error {
	if err := s.lock("SetAutoUpdate"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if enabled == nil {
		delete(s.auto, machine)
	} else {
		s.auto[machine] = *enabled
	}
	return nil
}

// AutoUpdates returns every override.
func (s *MemStore) AutoUpdates(context.Context) (map[string]bool, error) {
	if err := s.lock("AutoUpdates"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make(map[string]bool, len(s.auto))
	for k, v := range s.auto {
		out[k] = v
	}
	return out, nil
}

// SetWindow sets the machine's window.
func (s *MemStore) SetWindow(_ context.Context, w firmware.Window) error {
	if err := s.lock("SetWindow"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	w.Start, w.End = utc(w.Start), utc(w.End)
	s.windows[w.MachineID] = w
	return nil
}

// DeleteWindow removes the machine's window.
func (s *MemStore) DeleteWindow(_ context.Context, machine string) (bool, error) {
	if err := s.lock("DeleteWindow"); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	_, ok := s.windows[machine]
	delete(s.windows, machine)
	return ok, nil
}

// Windows returns every window.
func (s *MemStore) Windows(context.Context) (map[string]firmware.Window, error) {
	if err := s.lock("Windows"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make(map[string]firmware.Window, len(s.windows))
	for k, v := range s.windows {
		out[k] = v
	}
	return out, nil
}

// PutObserved replaces the machine's observation.
func (s *MemStore) PutObserved(_ context.Context, o firmware.Observed) error {
	if err := s.lock("PutObserved"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if _, ok := s.observed[o.MachineID]; !ok {
		s.obsOrder = nil
	}
	s.observed[o.MachineID] = copyObserved(o)
	return nil
}

// Observed returns the machine's observation.
func (s *MemStore) Observed(_ context.Context, machine string) (firmware.Observed, bool, error) {
	if err := s.lock("Observed"); err != nil {
		return firmware.Observed{}, false, err
	}
	defer s.mu.Unlock()
	o, ok := s.observed[machine]
	return copyObserved(o), ok, nil
}

// AllObserved lists every observation by machine. The observations'
// Reported maps are shared with the store, which never changes them (a
// put replaces the whole observation): callers must not change them
// either (see firmware.ObservationStore).
func (s *MemStore) AllObserved(context.Context) ([]firmware.Observed, error) {
	if err := s.lock("AllObserved"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if s.obsOrder == nil {
		s.obsOrder = make([]string, 0, len(s.observed))
		for k := range s.observed {
			s.obsOrder = append(s.obsOrder, k)
		}
		sort.Strings(s.obsOrder)
	}
	out := make([]firmware.Observed, len(s.obsOrder))
	for i, k := range s.obsOrder {
		out[i] = s.observed[k]
	}
	return out, nil
}

func keyOfOverride(vendor, model string, c firmware.ComponentType, version string) overrideKey {
	return overrideKey{family: firmware.Family(vendor), model: lower(model), c: c, version: version}
}

// PutOverride upserts an override.
func (s *MemStore) PutOverride(_ context.Context, o firmware.Override) error {
	if err := s.lock("PutOverride"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.overrides[keyOfOverride(o.Vendor, o.Model, o.Component, o.Entry.Version)] = copyOverride(o)
	return nil
}

// SwapOverride writes next (nil: deletes) if the stored override of its
// key is old (nil: none).
func (s *MemStore) SwapOverride(_ context.Context, old, next *firmware.Override) error {
	if err := s.lock("SwapOverride"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	var key overrideKey
	switch {
	case old == nil && next == nil:
		return firmware.RequestRefused.New("an override swap needs the old override or the new one")
	case next != nil:
		key = keyOfOverride(next.Vendor, next.Model, next.Component, next.Entry.Version)
		if old != nil && !firmware.SameOverrideKey(*old, *next) {
			return firmware.RequestRefused.New("an override swap changes one override: %s / %s %s %s is not %s / %s %s %s",
				old.Vendor, old.Model, old.Component, old.Entry.Version, next.Vendor, next.Model, next.Component, next.Entry.Version)
		}
	default:
		key = keyOfOverride(old.Vendor, old.Model, old.Component, old.Entry.Version)
	}
	cur, ok := s.overrides[key]
	switch {
	case old == nil && ok, old != nil && !ok, old != nil && cur.UpdatedAt.UnixNano() != old.UpdatedAt.UnixNano():
		return firmware.StateConflict.New("override %s / %s %s %s changed since it was read", key.family, key.model, key.c, key.version)
	}
	if next == nil {
		delete(s.overrides, key)
	} else {
		s.overrides[key] = copyOverride(*next)
	}
	return nil
}

// DeleteOverride removes an override.
func (s *MemStore) DeleteOverride(_ context.Context, vendor, model string, c firmware.ComponentType, version string) (bool, error) {
	if err := s.lock("DeleteOverride"); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	k := keyOfOverride(vendor, model, c, version)
	_, ok := s.overrides[k]
	delete(s.overrides, k)
	return ok, nil
}

// Overrides lists overrides, oldest first.
func (s *MemStore) Overrides(context.Context) ([]firmware.Override, error) {
	if err := s.lock("Overrides"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]firmware.Override, 0, len(s.overrides))
	for _, o := range s.overrides {
		out = append(out, copyOverride(o))
	}
	sortOverrides(out)
	return out, nil
}

// PutResult stores r unless one with its ID exists.
func (s *MemStore) PutResult(_ context.Context, r firmware.Result) (firmware.Result, error) {
	if err := s.lock("PutResult"); err != nil {
		return firmware.Result{}, err
	}
	defer s.mu.Unlock()
	k := [2]string{r.MachineID, r.ID}
	if cur, ok := s.results[k]; ok {
		return cur, nil
	}
	r.At = utc(r.At)
	s.results[k] = r
	return r, nil
}

// Result returns a stored result.
func (s *MemStore) Result(_ context.Context, machine, id string) (firmware.Result, bool, error) {
	if err := s.lock("Result"); err != nil {
		return firmware.Result{}, false, err
	}
	defer s.mu.Unlock()
	r, ok := s.results[[2]string{machine, id}]
	return r, ok, nil
}

func copyPush(p firmware.Push) firmware.Push {
	p.At = utc(p.At)
	p.Targets = append([]string(nil), p.Targets...)
	if p.Seen != nil {
		seen := make([]firmware.SeenTask, len(p.Seen))
		for i, t := range p.Seen {
			t.Start = utc(t.Start)
			seen[i] = t
		}
		p.Seen = seen
	}
	return p
}

// PutPush stores p unless the machine has a push with its ID.
func (s *MemStore) PutPush(_ context.Context, p firmware.Push) (firmware.Push, error) {
	if err := s.lock("PutPush"); err != nil {
		return firmware.Push{}, err
	}
	defer s.mu.Unlock()
	for _, cur := range s.pushes[p.MachineID] {
		if cur.ID == p.ID {
			return copyPush(cur), nil
		}
	}
	p = copyPush(p)
	s.pushes[p.MachineID] = append(s.pushes[p.MachineID], p)
	return copyPush(p), nil
}

// Pushes lists the machine's pushes by time, then ID.
func (s *MemStore) Pushes(_ context.Context, machine string) ([]firmware.Push, error) {
	if err := s.lock("Pushes"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]firmware.Push, len(s.pushes[machine]))
	for i, p := range s.pushes[machine] {
		out[i] = copyPush(p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

func copyScoutTask(t firmware.ScoutTask) firmware.ScoutTask {
	t.Deadline = utc(t.Deadline)
	t.Artifacts = append([]firmware.Artifact(nil), t.Artifacts...)
	return t
}

// PutScoutTask stores t as its machine's agent task.
func (s *MemStore) PutScoutTask(_ context.Context, t firmware.ScoutTask) error {
	if err := s.lock("PutScoutTask"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.scout[t.MachineID] = copyScoutTask(t)
	return nil
}

// ScoutTask returns the machine's agent task.
func (s *MemStore) ScoutTask(_ context.Context, machine string) (firmware.ScoutTask, bool, error) {
	if err := s.lock("ScoutTask"); err != nil {
		return firmware.ScoutTask{}, false, err
	}
	defer s.mu.Unlock()
	t, ok := s.scout[machine]
	return copyScoutTask(t), ok, nil
}

// AcquireUploadSlot takes a slot when fewer than max are held.
func (s *MemStore) AcquireUploadSlot(_ context.Context, holder string, max int, now time.Time, lease time.Duration) (bool, error) {
	if err := s.lock("AcquireUploadSlot"); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	for h, exp := range s.slots {
		if !exp.After(now) {
			delete(s.slots, h)
		}
	}
	if _, ok := s.slots[holder]; ok || len(s.slots) < max {
		s.slots[holder] = now.Add(lease)
		return true, nil
	}
	return false, nil
}

// ReleaseUploadSlot frees holder's slot.
func (s *MemStore) ReleaseUploadSlot(_ context.Context, holder string) error {
	if err := s.lock("ReleaseUploadSlot"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.slots, holder)
	return nil
}

// UploadSlots counts the slots held at now.
func (s *MemStore) UploadSlots(_ context.Context, now time.Time) (int, error) {
	if err := s.lock("UploadSlots"); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for _, exp := range s.slots {
		if exp.After(now) {
			n++
		}
	}
	return n, nil
}

func copyHistory(h firmware.UpdateHistory) firmware.UpdateHistory {
	h.CreatedAt, h.StartedAt, h.FinishedAt = utc(h.CreatedAt), utc(h.StartedAt), utc(h.FinishedAt)
	h.Record = copyUpdate(h.Record)
	h.Results = append([]firmware.Result(nil), h.Results...)
	for i := range h.Results {
		h.Results[i].At = utc(h.Results[i].At)
	}
	return h
}

func sortResults(rs []firmware.Result) {
	sort.Slice(rs, func(i, j int) bool {
		if !rs[i].At.Equal(rs[j].At) {
			return rs[i].At.Before(rs[j].At)
		}
		return rs[i].ID < rs[j].ID
	})
}

// History lists the machine's finished updates, oldest first.
func (s *MemStore) History(_ context.Context, machine string) ([]firmware.UpdateHistory, error) {
	if err := s.lock("History"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := make([]firmware.UpdateHistory, 0, len(s.history[machine]))
	for _, h := range s.history[machine] {
		out = append(out, copyHistory(h))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].FinishedAt.Equal(out[j].FinishedAt) {
			return out[i].FinishedAt.Before(out[j].FinishedAt)
		}
		return out[i].Generation < out[j].Generation
	})
	return out, nil
}

// PruneHistory removes the finished updates that finished before before.
func (s *MemStore) PruneHistory(_ context.Context, before time.Time) (int, error) {
	if err := s.lock("PruneHistory"); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for m, list := range s.history {
		keep := list[:0]
		for _, h := range list {
			if h.FinishedAt.Before(before) {
				n++
				continue
			}
			keep = append(keep, h)
		}
		if len(keep) == 0 {
			delete(s.history, m)
		} else {
			s.history[m] = keep
		}
	}
	return n, nil
}

// PutPassFigures replaces the stored figures of the last pass.
func (s *MemStore) PutPassFigures(_ context.Context, f firmware.PassFigures) error {
	if err := s.lock("PutPassFigures"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	f.At = utc(f.At)
	if f.Skipped != nil {
		sk := make(map[string]int, len(f.Skipped))
		for k, v := range f.Skipped {
			sk[k] = v
		}
		f.Skipped = sk
	}
	s.figures = &f
	return nil
}

// PassFigures returns the figures of the last pass.
func (s *MemStore) PassFigures(context.Context) (firmware.PassFigures, bool, error) {
	if err := s.lock("PassFigures"); err != nil {
		return firmware.PassFigures{}, false, err
	}
	defer s.mu.Unlock()
	if s.figures == nil {
		return firmware.PassFigures{}, false, nil
	}
	f := *s.figures
	if f.Skipped != nil {
		sk := make(map[string]int, len(f.Skipped))
		for k, v := range f.Skipped {
			sk[k] = v
		}
		f.Skipped = sk
	}
	return f, true, nil
}
