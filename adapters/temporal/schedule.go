package temporal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/hostforge/hostforge"
)

// Schedule is one periodic workflow of a site: a Temporal schedule that
// starts Workflow every Every on the site's task queue.
type Schedule struct {
	// Purpose names the work in the schedule's ID (PurposeProjection, ...).
	Purpose string
	// Workflow is the workflow type the schedule starts.
	Workflow string
	Every    time.Duration
}

// Purposes of a site's schedules.
const (
	PurposeProjection = "ironic-projection"
	PurposeExplore    = "firmware-explore"
	PurposePass       = "firmware-pass"
)

// ScheduleID is the ID of a site's schedule for purpose, and the workflow
// ID prefix of the runs it starts (Temporal appends the start time):
// hostforge/<site>/<purpose>.
func ScheduleID(site, purpose string) string { return "hostforge/" + site + "/" + purpose }

// PeriodicRunTimeout bounds one run a schedule starts: a run stuck on a
// workflow no worker registers (a purpose dropped from the config) must
// not hold the schedule forever, as overlap policy skip would.
const PeriodicRunTimeout = 6 * time.Hour

// ScheduleInvalid is a schedule that cannot be made: no site, no purpose,
// an interval under a second.
var ScheduleInvalid = hostforge.Declare(hostforge.Spec{
	Code:      "TEMPORAL_SCHEDULE_INVALID",
	Phase:     "schedules",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: false,
	Action:    "A periodic schedule of the site cannot be made as configured (the message names it: the config's site, or an interval under a second such as ledger.projection_interval or firmware.settings.machine_update_run_interval); fix the config and start the worker again. No schedule was changed.",
})

// Schedule outcomes of EnsureSchedules.
const (
	ScheduleCreated   = "created"
	ScheduleUpdated   = "updated"
	ScheduleUnchanged = "unchanged"
)

// EnsureSchedules makes the site's schedules match scheds: each is created,
// or updated when it exists with another spec, and left alone when it
// already matches. Every worker calls it at start with the spec its config
// gives, so the same spec converges — however many workers start, or
// restart, the site has one schedule per purpose — and a changed interval
// or task queue is taken by the first worker that starts with it. A
// schedule an operator paused stays paused. It returns each schedule's
// outcome by ID. The error is TEMPORAL_SCHEDULE_INVALID or
// TEMPORAL_UNAVAILABLE.
func EnsureSchedules(ctx context.Context, c client.Client, site, queue string, scheds ...Schedule) (map[string]string, error) {
	out := map[string]string{}
	wants := make([]client.ScheduleOptions, 0, len(scheds))
	for _, s := range scheds {
		want, err := scheduleOptions(site, queue, s)
		if err != nil {
			return out, err
		}
		wants = append(wants, want)
	}
	sc := c.ScheduleClient()
	for _, want := range wants {
		_, err := sc.Create(ctx, want)
		switch {
		case err == nil:
			out[want.ID] = ScheduleCreated
			continue
		case !errors.Is(err, sdktemporal.ErrScheduleAlreadyRunning):
			return out, TemporalUnavailable.At("schedules").Wrap(err, "creating the schedule %s", want.ID)
		}
		// It exists: bring it to this spec. Two workers updating at once
		// meet the conflict token; the loser reads again.
		h := sc.GetHandle(ctx, want.ID)
		var outcome string
		for try := 0; ; try++ {
			outcome = ScheduleUnchanged
			err = h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
				cur := in.Description.Schedule
				if matches(cur, want) {
					return nil, sdktemporal.ErrSkipScheduleUpdate
				}
				outcome = ScheduleUpdated
				next := &client.Schedule{Action: want.Action, Spec: &want.Spec,
					Policy: &client.SchedulePolicies{Overlap: want.Overlap, CatchupWindow: want.CatchupWindow}, State: cur.State}
				return &client.ScheduleUpdate{Schedule: next}, nil
			}})
			if err == nil || try == 2 || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			return out, TemporalUnavailable.At("schedules").Wrap(err, "updating the schedule %s", want.ID)
		}
		out[want.ID] = outcome
	}
	return out, nil
}

// scheduleOptions is the schedule a site's purpose gets.
func scheduleOptions(site, queue string, s Schedule) (client.ScheduleOptions, error) {
	if site == "" || s.Purpose == "" || s.Workflow == "" {
		return client.ScheduleOptions{}, ScheduleInvalid.New("a schedule needs a site, a purpose and a workflow (site %q, purpose %q, workflow %q)", site, s.Purpose, s.Workflow)
	}
	if s.Every < time.Second {
		return client.ScheduleOptions{}, ScheduleInvalid.New("schedule %s: interval %s is under a second", ScheduleID(site, s.Purpose), s.Every)
	}
	if queue == "" {
		queue = DefaultTaskQueue
	}
	id := ScheduleID(site, s.Purpose)
	return client.ScheduleOptions{
		ID:   id,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: s.Every}}},
		Action: &client.ScheduleWorkflowAction{
			ID: id, Workflow: s.Workflow, Args: []any{PeriodicInput{Site: site}}, TaskQueue: queue,
			WorkflowRunTimeout: PeriodicRunTimeout,
		},
		// One run at a time; a run missed while the server was away is
		// taken late only within one interval.
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: max(s.Every, time.Minute),
		Note:          fmt.Sprintf("hostforge: the %s of site %s; every worker converges it at start", s.Purpose, site),
	}, nil
}

// matches says whether an existing schedule is the one wanted: its
// interval, workflow, ID, queue, run timeout, input and policies.
func matches(cur client.Schedule, want client.ScheduleOptions) bool {
	if cur.Spec == nil || len(cur.Spec.Intervals) != 1 || len(cur.Spec.Calendars) != 0 || len(cur.Spec.CronExpressions) != 0 ||
		cur.Spec.Intervals[0] != want.Spec.Intervals[0] {
		return false
	}
	if cur.Policy == nil || cur.Policy.Overlap != want.Overlap || cur.Policy.CatchupWindow != want.CatchupWindow {
		return false
	}
	a, ok := cur.Action.(*client.ScheduleWorkflowAction)
	w := want.Action.(*client.ScheduleWorkflowAction)
	if !ok || a.ID != w.ID || a.TaskQueue != w.TaskQueue || a.WorkflowRunTimeout != w.WorkflowRunTimeout || len(a.Args) != len(w.Args) {
		return false
	}
	if name, ok := a.Workflow.(string); !ok || name != w.Workflow {
		return false
	}
	for i := range w.Args {
		got, ok := a.Args[i].(*commonpb.Payload)
		wantP, err := converter.GetDefaultDataConverter().ToPayload(w.Args[i])
		if !ok || err != nil || !bytes.Equal(got.GetData(), wantP.GetData()) {
			return false
		}
	}
	return true
}

// scheduledStartKey is the search attribute a Temporal Schedule sets on
// every workflow it starts: the time the schedule's spec meant it to start.
var scheduledStartKey = sdktemporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")

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
