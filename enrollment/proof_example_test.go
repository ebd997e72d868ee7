package enrollment_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
)

// fixedNodes is one Ironic instance's node listing.
type fixedNodes []ironic.Node

func (f fixedNodes) ListNodes(context.Context) ([]ironic.Node, error) { return f, nil }

// Project Ironic into the fleet manager's ledger, then settle a completed
// enrollment against that projection: proof is established. A new node
// UUID in the next pass clears it.
func ExampleProjector_Project() {
	ctx := context.Background()
	site := fakes.NewSite()
	site.Proofs.Register("cpu-r1-u10", "fm-1")
	id, since, _ := site.Proofs.Snapshot(ctx, "cpu-r1-u10") // at submission

	proj := &enrollment.Projector{
		Instances: map[string]enrollment.NodeLister{"ironic-cpu": fixedNodes{{Name: "cpu-r1-u10", UUID: "node-1"}}},
		Ledger:    site.Proofs,
	}
	rep, _ := proj.Project(ctx)
	fmt.Println("projected:", rep.Changes[0].To)

	res := enrollment.Result{Device: "cpu-r1-u10", Instance: "ironic-cpu", Node: "node-1", Enrolled: true,
		Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseIronic, Status: "done"}}}
	out, _ := json.Marshal(res)
	agent := &enrollment.ProofAgent{Store: site.Proofs, Clock: site.Clock}
	settled, err := agent.Settle(ctx, enrollment.Completion{Device: "cpu-r1-u10", Identity: id, Since: since, Run: "run-1",
		Status: enrollment.CompletionCompleted, ClosedAt: site.Clock.Now(), Output: out})
	fmt.Println("settled:", settled.Kind, settled.Action, err)

	proj.Instances["ironic-cpu"] = fixedNodes{{Name: "cpu-r1-u10", UUID: "node-2"}}
	_, _ = proj.Project(ctx)
	rec, _ := site.Proofs.Record("cpu-r1-u10")
	fmt.Println("after the node flip:", rec.Reference, "revision", rec.Revision, "proof", rec.Proof != nil)
	// Output:
	// projected: ironic-cpu/node-1
	// settled: qualifying established <nil>
	// after the node flip: ironic-cpu/node-2 revision 2 proof false
}
