package fakes

import (
	"sync"
	"time"
)

// FollowWallClock moves the site's fake clock forward with the wall clock,
// every tick, until the returned stop is called (stop waits for it to end).
// Programs that run the fakes against real orchestrators — a Temporal
// worker, a demo — use it so that the fakes' transitions happen in real time.
func (s *Site) FollowWallClock(tick time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := time.Now()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				s.Clock.Advance(now.Sub(last))
				last = now
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}
