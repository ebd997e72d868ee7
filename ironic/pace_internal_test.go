package ironic

import (
	"testing"
	"time"

	"github.com/hostforge/hostforge"
)

func TestPollAfter(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	b := hostforge.Backoff{First: time.Second, Max: 4 * time.Second} // points 1, 3, 7, 11, 15, …
	for _, tt := range []struct {
		name    string
		b       hostforge.Backoff
		start   time.Time
		elapsed time.Duration
		want    time.Duration
	}{
		{"right after the request", b, start, 0, time.Second},
		{"unknown start", b, time.Time{}, time.Hour, time.Second},
		{"clock went backwards", b, start, -time.Minute, time.Second},
		{"zero schedule", hostforge.Backoff{}, start, 5 * time.Second, 0},
		{"call took 400ms: the pause shrinks, the point holds", b, start, 1400 * time.Millisecond, 1600 * time.Millisecond},
		{"exactly on a point: the next one", b, start, 3 * time.Second, 4 * time.Second},
		{"doubling", b, start, 4 * time.Second, 3 * time.Second},
		{"capped: points Max apart", b, start, 12 * time.Second, 3 * time.Second},
		{"capped, far out", b, start, time.Hour + 500*time.Millisecond, 2500 * time.Millisecond},
		{"a call longer than the gap skips a point", b, start, 7*time.Second + 4*time.Second + 100*time.Millisecond, 3900 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := pollAfter(tt.b, tt.start, tt.start.Add(tt.elapsed)); got != tt.want {
				t.Fatalf("pollAfter(%+v, +%s) = %s, want %s", tt.b, tt.elapsed, got, tt.want)
			}
		})
	}
}

// Polling a transition of length d along pollAfter sees it done at most
// max(First, d) late (at most Max once capped), with about log2(d/First)
// polls while uncapped and one per Max after: the bound the benchmarks
// rely on. Each poll itself takes 150 ms, which the schedule absorbs.
func TestPollAfterBounds(t *testing.T) {
	b := hostforge.Backoff{First: time.Second, Max: time.Minute} // points 1, 3, 7, 15, 31, 63, 123, 183, …
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		d     time.Duration
		polls int
	}{
		{300 * time.Millisecond, 1}, {time.Second, 1}, {2500 * time.Millisecond, 2}, {6 * time.Second, 3},
		{45 * time.Second, 6}, {10 * time.Minute, 15},
	} {
		now, polls := start, 0
		for {
			now = now.Add(pollAfter(b, start, now))
			polls++
			if now.Sub(start) >= tt.d {
				break
			}
			now = now.Add(150 * time.Millisecond)
		}
		late := now.Sub(start) - tt.d
		if bound := min(max(b.First, tt.d), b.Max); late > bound {
			t.Errorf("transition of %s seen %s late, bound %s", tt.d, late, bound)
		}
		if polls != tt.polls {
			t.Errorf("transition of %s took %d polls, want %d", tt.d, polls, tt.polls)
		}
	}
}
