// Package clock is the injected source of time. Engine code never calls
// time.Now or time.Sleep; it asks a Clock, so that tests and the fleet
// simulator run a 15-minute lock budget in microseconds.
package clock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the time and sleeps.
type Clock interface {
	Now() time.Time
	// Sleep blocks for d or until ctx is done, whichever is first.
	Sleep(ctx context.Context, d time.Duration) error
}

// Real is the wall clock.
type Real struct{}

// Now returns the wall-clock time.
func (Real) Now() time.Time { return time.Now() }

// Sleep waits for d on the wall clock.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Fake is virtual time: Sleep returns at once after moving the clock forward.
// It is safe for concurrent use; concurrent sleepers each move the shared
// clock, so time only ever goes forward.
//
// Now is a plain atomic load: a fleet of workflows reads the clock on
// every step and every fake call, and a lock there made them queue.
type Fake struct {
	mu  sync.Mutex // serialises Advance
	now atomic.Pointer[time.Time]
}

// NewFake returns a fake clock set to start.
func NewFake(start time.Time) *Fake {
	f := &Fake{}
	f.now.Store(&start)
	return f
}

// Epoch is the default start of fake clocks: a fixed instant, so runs repeat.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Now returns the virtual time.
func (f *Fake) Now() time.Time {
	if t := f.now.Load(); t != nil {
		return *t
	}
	return time.Time{} // a zero Fake
}

// Advance moves the clock forward by d.
func (f *Fake) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	f.mu.Lock()
	next := f.Now().Add(d)
	f.now.Store(&next)
	f.mu.Unlock()
}

// Sleep advances the clock by d and returns, unless ctx is already done.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.Advance(d)
	return nil
}
