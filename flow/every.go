package flow

import (
	"context"
	"time"

	"github.com/hostforge/hostforge/clock"
)

// Every runs fn at once, then at every interval counted from the first run
// on clk, until ctx ends, and returns ctx's error. Runs never overlap: a
// run that outlasts the interval skips the ticks it covered, and the next
// one starts at the next tick (Temporal's overlap policy skip, in one
// process).
//
// It is the local runtime's periodic work — the Ironic projection, the
// firmware update manager's pass, a listener's housekeeping — for a site
// without Temporal, where one process runs it. Under Temporal the same
// work is a schedule per site (adapters/temporal), which runs it once per
// interval however many workers there are; two processes each running
// Every on one site would each run it.
func Every(ctx context.Context, clk clock.Clock, interval time.Duration, fn func(context.Context)) error {
	if interval <= 0 {
		interval = time.Minute
	}
	next := clk.Now()
	for {
		fn(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		now := clk.Now()
		for next = next.Add(interval); !next.After(now); next = next.Add(interval) {
		}
		if err := clk.Sleep(ctx, next.Sub(now)); err != nil {
			return err
		}
	}
}
