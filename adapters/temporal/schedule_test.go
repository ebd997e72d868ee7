package temporal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/temporal"
)

// schedules is a schedule client that keeps schedules as the server
// describes them: the action's workflow by type name, its arguments as
// payloads.
type schedules struct {
	client.Client
	byID            map[string]*client.Schedule
	creates, writes int
}

func (s *schedules) ScheduleClient() client.ScheduleClient { return s }

func (s *schedules) Create(_ context.Context, o client.ScheduleOptions) (client.ScheduleHandle, error) {
	s.creates++
	if _, ok := s.byID[o.ID]; ok {
		return nil, sdktemporal.ErrScheduleAlreadyRunning
	}
	a := *o.Action.(*client.ScheduleWorkflowAction)
	args := make([]any, len(a.Args))
	for i, v := range a.Args {
		p, err := converter.GetDefaultDataConverter().ToPayload(v)
		if err != nil {
			return nil, err
		}
		args[i] = p
	}
	a.Args = args
	spec := o.Spec
	s.byID[o.ID] = &client.Schedule{Action: &a, Spec: &spec,
		Policy: &client.SchedulePolicies{Overlap: o.Overlap, CatchupWindow: o.CatchupWindow}, State: &client.ScheduleState{Paused: o.Paused}}
	s.writes++
	return nil, nil
}

func (s *schedules) GetHandle(_ context.Context, id string) client.ScheduleHandle {
	return &handle{s: s, id: id}
}

func (s *schedules) List(context.Context, client.ScheduleListOptions) (client.ScheduleListIterator, error) {
	return nil, errors.New("not used")
}

type handle struct {
	client.ScheduleHandle
	s  *schedules
	id string
}

func (h *handle) Update(_ context.Context, o client.ScheduleUpdateOptions) error {
	cur := h.s.byID[h.id]
	u, err := o.DoUpdate(client.ScheduleUpdateInput{Description: client.ScheduleDescription{Schedule: *cur}})
	if errors.Is(err, sdktemporal.ErrSkipScheduleUpdate) {
		return nil
	}
	if err != nil {
		return err
	}
	next := *u.Schedule
	a := *next.Action.(*client.ScheduleWorkflowAction)
	for i, v := range a.Args {
		if _, ok := v.(*commonpb.Payload); !ok {
			p, _ := converter.GetDefaultDataConverter().ToPayload(v)
			a.Args[i] = p
		}
	}
	next.Action = &a
	h.s.byID[h.id] = &next
	h.s.writes++
	return nil
}

// TestEnsureSchedulesConverges: the first worker creates the site's
// schedules with overlap policy skip, the next ones leave them as they
// are, a changed interval or queue is written once, and a schedule an
// operator paused stays paused.
func TestEnsureSchedulesConverges(t *testing.T) {
	ctx := context.Background()
	s := &schedules{byID: map[string]*client.Schedule{}}
	scheds := []temporal.Schedule{
		{Purpose: temporal.PurposeProjection, Workflow: temporal.ProjectionWorkflowName, Every: time.Minute},
		{Purpose: temporal.PurposePass, Workflow: temporal.PassWorkflowName, Every: 5 * time.Minute},
	}
	proj, pass := temporal.ScheduleID("dc1", temporal.PurposeProjection), temporal.ScheduleID("dc1", temporal.PurposePass)
	got, err := temporal.EnsureSchedules(ctx, s, "dc1", "q1", scheds...)
	if err != nil || got[proj] != temporal.ScheduleCreated || got[pass] != temporal.ScheduleCreated {
		t.Fatalf("first worker: %v, %v", got, err)
	}
	sc := s.byID[pass]
	a := sc.Action.(*client.ScheduleWorkflowAction)
	if proj != "hostforge/dc1/ironic-projection" || sc.Policy.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP || a.TaskQueue != "q1" ||
		a.Workflow != temporal.PassWorkflowName || sc.Spec.Intervals[0].Every != 5*time.Minute || a.ID != pass {
		t.Fatalf("schedule %+v action %+v", sc, a)
	}
	for range 3 {
		writes := s.writes
		got, err = temporal.EnsureSchedules(ctx, s, "dc1", "q1", scheds...)
		if err != nil || got[proj] != temporal.ScheduleUnchanged || got[pass] != temporal.ScheduleUnchanged || s.writes != writes {
			t.Fatalf("a worker with the same spec: %v, %v (%d writes)", got, err, s.writes-writes)
		}
	}
	if len(s.byID) != 2 {
		t.Fatalf("%d schedules, want one per purpose", len(s.byID))
	}

	s.byID[proj].State.Paused = true
	scheds[0].Every = 2 * time.Minute
	got, err = temporal.EnsureSchedules(ctx, s, "dc1", "q2", scheds...)
	if err != nil || got[proj] != temporal.ScheduleUpdated || got[pass] != temporal.ScheduleUpdated {
		t.Fatalf("a changed spec: %v, %v", got, err)
	}
	sc = s.byID[proj]
	if sc.Spec.Intervals[0].Every != 2*time.Minute || sc.Action.(*client.ScheduleWorkflowAction).TaskQueue != "q2" || !sc.State.Paused {
		t.Fatalf("updated schedule %+v (paused %v)", sc, sc.State.Paused)
	}
	if got, _ := temporal.EnsureSchedules(ctx, s, "dc1", "q2", scheds...); got[proj] != temporal.ScheduleUnchanged {
		t.Fatalf("after the update: %v", got)
	}
	// Another site has schedules of its own.
	if got, _ := temporal.EnsureSchedules(ctx, s, "dc2", "q2", scheds...); got[temporal.ScheduleID("dc2", temporal.PurposeProjection)] != temporal.ScheduleCreated {
		t.Fatalf("another site: %v", got)
	}
}

func TestEnsureSchedulesRefusesBadSpecs(t *testing.T) {
	s := &schedules{byID: map[string]*client.Schedule{}}
	for _, tt := range []struct {
		site string
		s    temporal.Schedule
	}{
		{"", temporal.Schedule{Purpose: "p", Workflow: "w", Every: time.Minute}},
		{"dc1", temporal.Schedule{Workflow: "w", Every: time.Minute}},
		{"dc1", temporal.Schedule{Purpose: "p", Workflow: "w", Every: time.Millisecond}},
	} {
		if _, err := temporal.EnsureSchedules(context.Background(), s, tt.site, "q", tt.s); hostforge.CodeOf(err) != temporal.ScheduleInvalid.Code {
			t.Errorf("%q %+v: %v, want a classified refusal", tt.site, tt.s, err)
		}
	}
	if len(s.byID) != 0 {
		t.Fatalf("a refused spec created %d schedules", len(s.byID))
	}
}
