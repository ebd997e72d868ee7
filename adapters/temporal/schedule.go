package temporal

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// scheduledStartKey is the search attribute a Temporal Schedule sets on
// every workflow it starts: the time the schedule's spec meant it to start.
var scheduledStartKey = temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")

// ScheduledStart is the time the Temporal Schedule that started this
// workflow meant it to start; false for a workflow no schedule started.
// A scheduled body reports its run with it:
//
//	at, _ := temporal.ScheduledStart(ctx)
//	flow.ObserveScheduleRun(context.Background(), rt, "ironic_projection", at)
//
// so that the lag (how late the run began: no worker free, the previous
// run still going) is measured from the schedule's own clock.
func ScheduledStart(ctx workflow.Context) (time.Time, bool) {
	return workflow.GetTypedSearchAttributes(ctx).GetTime(scheduledStartKey)
}
