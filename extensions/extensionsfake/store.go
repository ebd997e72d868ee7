package extensionsfake

import (
	"context"
	"encoding/json"
	"sort"
	"sync"

	"github.com/hostforge/hostforge/extensions"
)

// Store is an in-memory extensions.Store.
type Store struct {
	mu    sync.Mutex
	execs map[string]extensions.Execution
	// byEvent indexes the delivery IDs by event, as the SQL store's index
	// does: every dispatch queries its event's records.
	byEvent map[string]map[string]struct{}
	outputs map[string]extensions.Outputs
	// Writes counts successful writes.
	Writes int
	// Fail, when set, is returned by every call (an unavailable database).
	Fail error
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{execs: map[string]extensions.Execution{}, byEvent: map[string]map[string]struct{}{}, outputs: map[string]extensions.Outputs{}}
}

// put stores a copy of e; the lock is held.
func (s *Store) put(e extensions.Execution) {
	e.StartedAt, e.FinishedAt = e.StartedAt.UTC(), e.FinishedAt.UTC()
	e.Outputs = clone(e.Outputs)
	if prior, ok := s.execs[e.DeliveryID]; ok && prior.EventID != e.EventID {
		delete(s.byEvent[prior.EventID], e.DeliveryID)
	}
	ids := s.byEvent[e.EventID]
	if ids == nil {
		ids = map[string]struct{}{}
		s.byEvent[e.EventID] = ids
	}
	ids[e.DeliveryID] = struct{}{}
	s.execs[e.DeliveryID] = e
	s.Writes++
}

var _ extensions.Store = (*Store)(nil)

func clone(b json.RawMessage) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// PutExecution stores a copy of the record.
func (s *Store) PutExecution(_ context.Context, e extensions.Execution) error {
	if err := e.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return s.Fail
	}
	s.put(e)
	return nil
}

// StartDelivery writes the write-ahead record when the delivery has none
// or a running one, under the store's lock.
func (s *Store) StartDelivery(_ context.Context, e extensions.Execution) (extensions.Execution, bool, error) {
	if err := e.ValidateStart(); err != nil {
		return extensions.Execution{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return extensions.Execution{}, false, s.Fail
	}
	if prior, ok := s.execs[e.DeliveryID]; ok && prior.Status != extensions.StatusRunning {
		prior.Outputs = clone(prior.Outputs)
		return prior, false, nil
	}
	s.put(e)
	return s.execs[e.DeliveryID], true, nil
}

// Execution returns a copy of a record.
func (s *Store) Execution(_ context.Context, id string) (extensions.Execution, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return extensions.Execution{}, false, s.Fail
	}
	e, ok := s.execs[id]
	e.Outputs = clone(e.Outputs)
	return e, ok, nil
}

// Executions returns the matching records, oldest first (newest first
// with Query.NewestFirst).
func (s *Store) Executions(_ context.Context, q extensions.Query) ([]extensions.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return nil, s.Fail
	}
	out := []extensions.Execution{}
	match := func(e extensions.Execution) {
		if (q.EventID == "" || e.EventID == q.EventID) && (q.Extension == "" || e.Extension == q.Extension) && (q.Stage == "" || e.Stage == q.Stage) &&
			(q.Since.IsZero() || !e.StartedAt.Before(q.Since)) {
			e.Outputs = clone(e.Outputs)
			out = append(out, e)
		}
	}
	if q.EventID != "" {
		for id := range s.byEvent[q.EventID] {
			match(s.execs[id])
		}
	} else {
		for _, e := range s.execs {
			match(e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if q.NewestFirst {
			a, b = b, a
		}
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		return a.DeliveryID < b.DeliveryID
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// PutOutputs replaces an extension's outputs.
func (s *Store) PutOutputs(_ context.Context, o extensions.Outputs) error {
	if err := o.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return s.Fail
	}
	o.Values, o.UpdatedAt = clone(o.Values), o.UpdatedAt.UTC()
	s.outputs[o.Extension] = o
	s.Writes++
	return nil
}

// Outputs returns an extension's outputs.
func (s *Store) Outputs(_ context.Context, ext string) (extensions.Outputs, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Fail != nil {
		return extensions.Outputs{}, false, s.Fail
	}
	o, ok := s.outputs[ext]
	o.Values = clone(o.Values)
	return o, ok, nil
}
