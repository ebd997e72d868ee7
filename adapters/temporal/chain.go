package temporal

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
)

// maxChain bounds the runs followed along one continue-as-new chain.
const maxChain = 10000

// describeChain describes the run that carries run's continue-as-new chain
// on: run itself unless it continued as new, then the chain's current (or
// last) run. The latest run of the workflow ID is that run when it belongs
// to the chain (its first run is the chain's); otherwise (the chain closed
// and the ID was reused) the chain is walked run by run.
func describeChain(ctx context.Context, c client.Client, workflowID, runID string) (*workflowpb.WorkflowExecutionInfo, error) {
	desc, err := c.DescribeWorkflowExecution(ctx, workflowID, runID)
	if err != nil {
		return nil, err
	}
	info := desc.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
		return info, nil
	}
	first := info.GetFirstRunId()
	if first == "" {
		first = runID
	}
	if latest, err := c.DescribeWorkflowExecution(ctx, workflowID, ""); err == nil && latest.GetWorkflowExecutionInfo().GetFirstRunId() == first {
		return latest.GetWorkflowExecutionInfo(), nil
	}
	for hops := 0; hops < maxChain; hops++ {
		next, err := continuedAs(ctx, c, workflowID, runID)
		if err != nil {
			return nil, err
		}
		desc, err := c.DescribeWorkflowExecution(ctx, workflowID, next)
		if err != nil {
			return nil, err
		}
		if info = desc.GetWorkflowExecutionInfo(); info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			return info, nil
		}
		runID = next
	}
	return nil, fmt.Errorf("%s continued as new more than %d times", workflowID, maxChain)
}

// continuedAs is the run a run continued as, from its close event.
func continuedAs(ctx context.Context, c client.Client, workflowID, runID string) (string, error) {
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return "", err
		}
		if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil && a.GetNewExecutionRunId() != "" {
			return a.GetNewExecutionRunId(), nil
		}
	}
	return "", fmt.Errorf("run %s of %s has no continue-as-new close event", runID, workflowID)
}
