package cli

import (
	"context"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/retirement"
)

// retireTemporal submits every device's retirement to Temporal and follows
// each run.
func (a *app) retireTemporal(cmd *cobra.Command, o retireOpts, devices []string) error {
	s, done, err := a.openTemporalSubmit(cmd, o.config, o.temporal)
	if err != nil {
		return err
	}
	defer done()
	ctx, ws, sub := cmd.Context(), s.ws, s.sub
	var prog *progress
	if *o.output == formatText {
		prog = a.runProgress(cmd.OutOrStdout(), devices, time.Now)
	}
	results := make([]retireResult, len(devices))
	var wg sync.WaitGroup
	for i, d := range devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = followRetirement(ctx, sub, ws, d, o.params(), prog)
		}()
	}
	wg.Wait()
	a.endProgress(prog)
	return printRetire(cmd.OutOrStdout(), *o.output, devices, results)
}

// followRetirement submits one device's retirement, reports its events as
// they are recorded, and returns its outcome once the run closes.
func followRetirement(ctx context.Context, sub *temporal.Submitter, ws *wiring.Systems, device string, p retirement.Params, prog *progress) retireResult {
	clk := clock.Real{}
	start := clk.Now()
	if prog != nil {
		prog.begin(device, start)
	}
	r := retireResult{Result: retirement.Result{Device: device}}
	defer func() {
		r.Elapsed = clk.Now().Sub(start)
		if prog != nil {
			prog.done(device, r.Elapsed, "retired (run "+r.Result.Run+")", r.Failure)
		}
	}()
	fail := func(err error) retireResult {
		_, r.Failure, _ = hostforge.Classify(err)
		r.Result.Failure = r.Failure
		return r
	}
	req, err := ws.RetireRequest(ctx, device, wiring.NewRunID(), p)
	if err != nil {
		return fail(err)
	}
	run, err := sub.SubmitRetirement(ctx, req)
	if err != nil {
		return fail(err)
	}
	r.WorkflowID = run.WorkflowID
	if prog != nil {
		_ = sub.Follow(ctx, run, prog.event)
	}
	if ctx.Err() == nil {
		r.Result, r.Failure = sub.WaitRetirement(ctx, run)
	}
	if ctx.Err() != nil {
		return fail(hostforge.Cancelled.Wrap(ctx.Err(), "stopped following %s; the retirement keeps running on Temporal", run.WorkflowID))
	}
	return r
}
