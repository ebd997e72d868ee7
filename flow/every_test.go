package flow_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/flow"
)

// TestEvery: runs start on the interval's ticks counted from the first;
// a run that outlasts the interval skips the ticks it covered instead of
// running late ones back to back; the context ends it.
func TestEvery(t *testing.T) {
	clk := clock.NewFake(clock.Epoch)
	ctx, cancel := context.WithCancel(context.Background())
	var starts []time.Duration
	took := map[int]time.Duration{1: 25 * time.Second} // the second run takes 2.5 intervals
	err := flow.Every(ctx, clk, 10*time.Second, func(context.Context) {
		starts = append(starts, clk.Now().Sub(clock.Epoch))
		clk.Advance(took[len(starts)-1])
		if len(starts) == 4 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Every = %v, want the context's error", err)
	}
	if want := []time.Duration{0, 10 * time.Second, 40 * time.Second, 50 * time.Second}; !slices.Equal(starts, want) {
		t.Fatalf("runs started at %v, want %v", starts, want)
	}
}
