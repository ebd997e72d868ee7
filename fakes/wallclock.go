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

// WallClockBMCTiming is the fake BMCs' timing for a site on the wall clock:
// seconds where real BMCs take minutes, so a run's iDRAC job and
// cold-reset waits stay short.
var WallClockBMCTiming = BMCTiming{JobSchedule: time.Second, JobRun: 2 * time.Second, ResetDowntime: 2 * time.Second}

// OnWallClock runs the site in real time for a program or test whose
// runtime sleeps on the wall clock (the BMC phase's waits are the
// runtime's): the BMCs take WallClockBMCTiming, and the site's clock
// follows the wall clock every 20 ms until stop is called.
func (s *Site) OnWallClock() (stop func()) {
	s.BMCs.SetTiming(WallClockBMCTiming)
	return s.FollowWallClock(20 * time.Millisecond)
}
