//go:build integration

package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The SDK keeps process-wide helpers alive (as in adapters/temporal).
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("go.temporal.io/sdk/internal.(*sharedWorkerStopChannel)"),
	)
}
