package fakes

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Every fake of a Site fails the way real systems do, in three kinds:
//
//   - before the effect (Site.Inject): the call fails and changes nothing —
//     a 5xx, a refused connection, a 401;
//   - after the effect (Site.InjectLost): the system applies the write, then
//     the caller sees an error — the connection dropped or the client timed
//     out after the server committed, so the answer was lost. On a read
//     nothing was changed, so it is the same as before the effect;
//   - a crash (WithCrash): the worker running a step attempt dies after a
//     number of its writes took effect; nothing of the attempt after that
//     reaches any system, and the runtime abandons the attempt.
//
// Every fake enters each call through Site.enter (the crash, the call count,
// the before-effect fault) and ends each write through Site.answer (the
// crash's write count, the lost answer).

// faults holds injected failures: the next N calls of system/op fail,
// before their effect or after it.
type faults struct {
	mu     sync.Mutex
	before map[string]*fault
	lost   map[string]*fault
	// armed counts the injections in before and lost, so a call with none
	// injected (the common case) takes no lock.
	armed atomic.Int64
}

type fault struct {
	n   int
	err error
}

func (f *faults) set(m *map[string]*fault, system, op string, n int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *m == nil {
		*m = map[string]*fault{}
	}
	key := system + "/" + op
	if _, ok := (*m)[key]; ok {
		f.armed.Add(-1)
	}
	if n <= 0 {
		delete(*m, key)
		return
	}
	(*m)[key] = &fault{n: n, err: err}
	f.armed.Add(1)
}

func (f *faults) inject(system, op string, n int, err error) { f.set(&f.before, system, op, n, err) }

func (f *faults) injectLost(system, op string, n int, err error) {
	f.set(&f.lost, system, op, n, err)
}

func (f *faults) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before, f.lost = nil, nil
	f.armed.Store(0)
}

// take returns the before-effect error for this call, consuming one
// injection. An op of "*" matches every operation of the system.
func (f *faults) take(system, op string) error { return f.from(false, system, op) }

// takeLost returns the lost-answer error for this call, consuming one.
func (f *faults) takeLost(system, op string) error { return f.from(true, system, op) }

func (f *faults) from(lost bool, system, op string) error {
	if f.armed.Load() == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.before
	if lost {
		m = f.lost
	}
	if len(m) == 0 {
		return nil // the common case: nothing injected, no key to build
	}
	for _, key := range []string{system + "/" + op, system + "/*"} {
		if ft := m[key]; ft != nil && ft.n > 0 {
			ft.n--
			if ft.n == 0 {
				delete(m, key)
				f.armed.Add(-1)
			}
			return ft.err
		}
	}
	return nil
}

// InjectLost makes the next n calls of system's op ("*": every op) take
// effect and then fail with err, as when the connection drops or the
// client times out after the system committed a write: the caller cannot
// tell whether it happened. A read has no effect, so on a read it is the
// same as Inject. Typical errors: hostforge.ErrUnavailable wrapped with
// "connection reset" or "no answer within the client's timeout".
func (s *Site) InjectLost(system, op string, n int, err error) {
	s.faults.injectLost(system, op, n, err)
}

// ClearFaults withdraws every injected fault, before and after the effect.
func (s *Site) ClearFaults() { s.faults.clear() }

// enter starts one call of a fake system: a call of a crashed attempt
// never reaches the system; otherwise the call is counted and the
// before-effect fault (and, on a read, the lost-answer fault) is taken.
func (s *Site) enter(ctx context.Context, system, op string, write bool) error {
	if c := crashOf(ctx); c != nil {
		if err := c.refuse(system, op, write); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.calls.add(system, op, write)
	if err := s.faults.take(system, op); err != nil {
		return err
	}
	if !write {
		return s.faults.takeLost(system, op)
	}
	return nil
}

// answer ends a write; *err is what the call is about to return. A write
// that took effect (*err == nil) counts against the attempt's crash, which
// may kill the worker before the answer arrives, and takes a lost-answer
// fault. Call it deferred, after the fake's own locks are released.
func (s *Site) answer(ctx context.Context, system, op string, err *error) {
	if *err != nil {
		return
	}
	if c := crashOf(ctx); c != nil {
		if cerr := c.wrote(system, op); cerr != nil {
			*err = cerr
			return
		}
	}
	if lerr := s.faults.takeLost(system, op); lerr != nil {
		*err = lerr
	}
}

// ErrCrashed is what a call of a crashed attempt returns: the worker running
// it died, so the call never reached the system (or its answer never
// arrived). A runtime abandons such an attempt whatever it returned.
var ErrCrashed = errors.New("the worker running this attempt died")

// Crash is one step attempt's worker dying after a number of its writes
// took effect (see WithCrash).
type Crash struct {
	mu      sync.Mutex
	after   int
	writes  int
	tripped bool
	last    string
	cancel  context.CancelCauseFunc
}

type crashKey struct{}

// WithCrash returns a context for one step attempt whose worker dies once
// afterWrites writes of the attempt have taken effect (at once, before any
// write, when afterWrites is 0): the answer to the last of them never
// arrives, the context is cancelled, and every later call made with it — or
// with a context derived from it, even one detached from its cancellation
// (context.WithoutCancel), as cleanup code uses — fails with ErrCrashed
// without reaching its system. Every fake of every Site honours it.
func WithCrash(ctx context.Context, afterWrites int) (context.Context, *Crash) {
	cctx, cancel := context.WithCancelCause(ctx)
	c := &Crash{after: afterWrites, cancel: cancel}
	return context.WithValue(cctx, crashKey{}, c), c
}

func crashOf(ctx context.Context) *Crash {
	c, _ := ctx.Value(crashKey{}).(*Crash)
	return c
}

// Tripped reports whether the worker died.
func (c *Crash) Tripped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tripped
}

// Writes is the number of the attempt's writes that took effect.
func (c *Crash) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// Where says where the worker died: "after 2 write(s), the last ironic/provision".
func (c *Crash) Where() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.tripped {
		return "not crashed"
	}
	if c.last == "" {
		return "before any write"
	}
	return fmt.Sprintf("after %d write(s), the last %s", c.writes, c.last)
}

// Release ends the attempt's context (the attempt is over, crashed or not).
func (c *Crash) Release() { c.cancel(context.Canceled) }

// refuse fails a call once the worker is dead, and kills it at the first
// write when it may make none.
func (c *Crash) refuse(system, op string, write bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.tripped && write && c.after <= 0 {
		c.tripLocked()
	}
	if c.tripped {
		return fmt.Errorf("%s %s: %w", system, op, ErrCrashed)
	}
	return nil
}

// wrote counts a write that took effect; the write that reaches the limit
// kills the worker before its answer arrives.
func (c *Crash) wrote(system, op string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tripped {
		return fmt.Errorf("%s %s: %w", system, op, ErrCrashed)
	}
	c.writes++
	c.last = system + "/" + op
	if c.writes >= c.after {
		c.tripLocked()
		return fmt.Errorf("%s %s: the answer never arrived: %w", system, op, ErrCrashed)
	}
	return nil
}

func (c *Crash) tripLocked() {
	c.tripped = true
	c.cancel(ErrCrashed)
}
