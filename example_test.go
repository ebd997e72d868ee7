package hostforge_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/hostforge/hostforge"
)

var cablingMismatch = hostforge.Spec{
	Code: "EXAMPLE_CABLING_MISMATCH", Phase: "inspection", Owner: hostforge.OwnerDCOps,
	Action: "Move the cable to the switch port NetBox records, then rerun.",
}

// Every step's error is one of three outcomes; anything else is a bug.
func ExampleClassify() {
	for _, err := range []error{
		nil,
		hostforge.RetryAfter(20*time.Second, "node_locked", "locked by %s", "conductor-2"),
		fmt.Errorf("inspection: %w", cablingMismatch.New("eth1 sees leaf-2 swp60, NetBox says swp12")),
		errors.New("index out of range"),
	} {
		outcome, failure, wait := hostforge.Classify(err)
		switch outcome {
		case hostforge.Done:
			fmt.Println("done")
		case hostforge.Waiting:
			fmt.Printf("wait %s (%s)\n", wait.After, wait.Reason)
		case hostforge.Failed:
			fmt.Printf("failed %s, owner %s, retryable %v\n", failure.Code, failure.Owner, failure.Retryable)
		}
	}
	// Output:
	// done
	// wait 20s (node_locked)
	// failed EXAMPLE_CABLING_MISMATCH, owner DC_OPS, retryable false
	// failed UNCLASSIFIED, owner SDK, retryable false
}
