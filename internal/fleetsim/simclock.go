package fleetsim

import (
	"container/heap"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostforge/hostforge/clock"
)

// SimClock is virtual time shared by many concurrent workflows, as wall time
// is: a sleeper blocks until every participant is asleep, and then the
// clock jumps to the earliest wake-up and wakes whoever is due. A hundred
// hosts that each sleep ten seconds at once therefore see ten seconds pass,
// not a thousand — which a clock.Fake, where every sleeper moves the clock,
// would show them, exhausting their poll budgets long before the fake
// systems' transitions (which run on the same base clock) are due.
//
// Participants announce themselves with Enter and Leave; a goroutine that
// sleeps must have entered. The base clock is what the fakes read; SimClock
// only ever moves it forward.
type SimClock struct {
	base *clock.Fake

	mu       sync.Mutex
	running  int
	sleepers wakeHeap
	seq      uint64
}

var _ clock.Clock = (*SimClock)(nil)

// NewSimClock returns a SimClock driving base.
func NewSimClock(base *clock.Fake) *SimClock { return &SimClock{base: base} }

// Now reads the base clock.
func (c *SimClock) Now() time.Time { return c.base.Now() }

// Enter registers a running participant.
func (c *SimClock) Enter() {
	c.mu.Lock()
	c.running++
	c.mu.Unlock()
}

// Leave unregisters a participant that will not sleep again.
func (c *SimClock) Leave() {
	c.mu.Lock()
	c.running--
	c.advanceLocked()
	c.mu.Unlock()
}

// Sleep blocks until the virtual time has moved d forward, or ctx is done.
func (c *SimClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	w := wakers.Get().(*waker)
	c.mu.Lock()
	c.seq++
	w.at, w.seq = c.base.Now().Add(d), c.seq
	heap.Push(&c.sleepers, w)
	c.running--
	c.advanceLocked()
	c.mu.Unlock()
	select {
	case <-w.ch:
		wakers.Put(w)
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		select {
		case <-w.ch: // woken meanwhile: running was already counted for us
		default:
			heap.Remove(&c.sleepers, w.index)
			c.running++
		}
		wakers.Put(w) // its one wake-up, if any, was taken above
		return ctx.Err()
	}
}

// wakers are reused: a fleet sleeps millions of times. A waker's channel
// holds at most the one wake-up of its sleep.
var wakers = sync.Pool{New: func() any { return &waker{ch: make(chan struct{}, 1)} }}

// advanceLocked moves time to the earliest wake-up once nobody is running,
// and wakes every sleeper that is due then.
func (c *SimClock) advanceLocked() {
	if c.running > 0 || c.sleepers.Len() == 0 {
		return
	}
	next := c.sleepers[0].at
	if d := next.Sub(c.base.Now()); d > 0 {
		c.base.Advance(d)
	}
	now := c.base.Now()
	for c.sleepers.Len() > 0 && !c.sleepers[0].at.After(now) {
		w := heap.Pop(&c.sleepers).(*waker)
		c.running++
		w.ch <- struct{}{}
	}
}

type waker struct {
	at    time.Time
	seq   uint64
	ch    chan struct{}
	index int
}

// wakeHeap orders sleepers by wake time, then by arrival, so runs repeat.
type wakeHeap []*waker

func (h wakeHeap) Len() int { return len(h) }
func (h wakeHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h wakeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *wakeHeap) Push(x any) {
	w := x.(*waker)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *wakeHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return w
}

// Each calls do(i) for every i from 0 to n-1 as participants of the clock,
// at most workers at a time (0: all at once). Every participant enters
// before any starts, so the clock cannot move on while hosts are still being
// started (a host that reached its first sleep before the next was admitted
// would otherwise move the clock alone), and a participant takes its next i
// without leaving: the virtual times a run sees do not depend on how the
// machine scheduled its goroutines.
func (c *SimClock) Each(n, workers int, do func(i int)) {
	if workers <= 0 || workers > n {
		workers = n
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		c.Enter()
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Leave()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				do(i)
			}
		}()
	}
	wg.Wait()
}
