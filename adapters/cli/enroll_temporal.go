package cli

import (
	"context"
	"sync"

	"github.com/spf13/cobra"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
)

// enrollTemporal submits every device to Temporal and follows each run.
func (a *app) enrollTemporal(cmd *cobra.Command, o enrollOpts, devices []string) error {
	s, done, err := a.openTemporalSubmit(cmd, o.config, o.temporal)
	if err != nil {
		return err
	}
	defer done()
	ctx, ws, sub := cmd.Context(), s.ws, s.sub
	// With an extensions: section, each successful enrollment fires
	// serverRegistered through the workers' extension dispatch.
	sub.Proofs, sub.Events = ws.Proofs, s.cfg.Extensions != nil
	rep := a.startReport(cmd, *o.output, devices, clock.Real{}, false)
	results := make([]hostResult, len(devices))
	var wg sync.WaitGroup
	for i, d := range devices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = followOne(ctx, sub, ws, d, o.params(), rep.prog)
			rep.host(results[i])
		}()
	}
	wg.Wait()
	return rep.end(results)
}

// followOne submits one device, reports its run's events as they are
// recorded, and returns its outcome once the run closes. With a proof
// store configured, the completion proof is settled too.
func followOne(ctx context.Context, sub *temporal.Submitter, ws *wiring.Systems, device string, p enrollment.Params, prog *progress) hostResult {
	clk := clock.Real{}
	start := clk.Now()
	if prog != nil {
		prog.begin(device, start)
	}
	r := hostResult{Result: enrollment.Result{Device: device}}
	defer func() {
		r.Elapsed = clk.Now().Sub(start)
		if prog != nil {
			prog.finish(device, r)
		}
	}()
	if ws.Ledger != nil {
		// A device it enrols is one the fleet manager knows: recorded with
		// an identity before submission, so the run settles its proof.
		if _, err := ws.Ledger.Register(ctx, device); err != nil {
			r.Failure = enrollment.FleetManagerUnavailable.At("submit").Wrap(err, "recording %s in the ledger", device)
			r.Result.Failure = r.Failure
			return r
		}
	}
	run, err := sub.Submit(ctx, temporal.Submission{Device: device, Site: ws.Site, Config: ws.SiteConfig, PlatformClassReady: ws.PlatformClassReady, Params: p})
	if err != nil {
		_, r.Failure, _ = hostforge.Classify(err)
		r.Result.Failure = r.Failure
		return r
	}
	r.WorkflowID = run.WorkflowID
	if prog != nil {
		// The history shows what the worker did; a failure to read it only
		// costs the progress lines, Wait still gives the outcome.
		_ = sub.Follow(ctx, run, prog.event)
	}
	if ctx.Err() != nil {
		r.Failure = hostforge.Cancelled.Wrap(ctx.Err(), "stopped following %s; the enrollment keeps running on Temporal", run.WorkflowID)
		r.Result.Failure = r.Failure
		return r
	}
	r.Result, r.Failure = sub.Wait(ctx, run)
	if r.Failure != nil && ctx.Err() != nil {
		r.Failure = hostforge.Cancelled.Wrap(ctx.Err(), "stopped following %s; the enrollment keeps running on Temporal", run.WorkflowID)
		r.Result.Failure = r.Failure
	}
	if ws.Proofs != nil && ctx.Err() == nil {
		out, err := sub.Settle(ctx, run)
		if err != nil {
			ws.Log.Warn("settling the completion proof failed", "device", device, "workflow_id", run.WorkflowID, "code", hostforge.CodeOf(err))
		}
		r.setProof(out, err)
	}
	return r
}
