package cli

import (
	"context"
	"sync"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
	"github.com/hostforge/hostforge/clock"
)

// settlementWorkflow is the durable settlement of completion proof
// (temporal.Settlement) on the wired ledger: an enrollment whose submitter
// snapshotted the device's identity starts it as a child that outlives the
// enrollment. Its close probe reads Temporal through the worker's own
// client. Without a ledger the worker has nothing to settle in and
// registers nothing: such settlements wait for a worker that has one.
func settlementWorkflow(s *wiring.Systems) (temporal.Workflow, error) {
	if s.Proofs == nil {
		return temporal.Workflow{}, nil
	}
	steps, err := temporal.SettleSteps(nil, s.Proofs)
	if err != nil {
		return temporal.Workflow{}, err
	}
	return temporal.Workflow{Name: "settlement", Steps: steps, Definitions: []temporal.Definition{temporal.Settlement}}, nil
}

// runProjection runs the ledger's projection of Ironic (a pass at once,
// then one every ledger.projection_interval) until ctx ends; wait returns
// once it has stopped. Without a projector (no ledger, or no Ironic
// instance) it runs nothing.
func runProjection(ctx context.Context, s *wiring.Systems) (wait func()) {
	if s.Projector == nil {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = s.Projector.RunEvery(ctx, clock.Real{}, s.Config.Ledger.ProjectionInterval.D())
	}()
	return wg.Wait
}
