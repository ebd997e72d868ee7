package cli

import (
	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/adapters/wiring"
)

// retirementWorkflow is the retirement on the wired systems. Its events
// are dispatched by the extension dispatch's steps, which
// extensionsWorkflow registers on every worker.
func retirementWorkflow(s *wiring.Systems) (temporal.Workflow, error) {
	rx := s.Retirement()
	if rx == nil {
		return temporal.Workflow{Name: "retirement"}, nil
	}
	return temporal.Workflow{Name: "retirement", Steps: rx, Definitions: []temporal.Definition{temporal.Retirement(wiring.AnnounceRetirement)}}, nil
}
