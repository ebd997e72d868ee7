package extsim_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/internal/extsim"
)

var (
	schedules = flag.Int("extsim.schedules", 500, "number of seeded fault schedules TestFaultSchedules runs")
	firstSeed = flag.Uint64("extsim.first", 1, "first seed of TestFaultSchedules")
	onlySeed  = flag.Uint64("extsim.seed", 0, "replay this one schedule seed (0: run the budget)")
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func replay(s extsim.Schedule) string {
	return fmt.Sprintf("go test ./internal/extsim -run 'TestFaultSchedules$' -extsim.seed=%d", s.Seed)
}

// TestFaultSchedules runs the CI budget of seeded fault schedules (see
// extsim.Check for what each asserts). A failing schedule prints itself
// and the command that replays it.
func TestFaultSchedules(t *testing.T) {
	seeds := []uint64{*onlySeed}
	if *onlySeed == 0 {
		seeds = seeds[:0]
		for i := 0; i < *schedules; i++ {
			seeds = append(seeds, *firstSeed+uint64(i))
		}
	}
	var tot extsim.Verdict
	failed := 0
	for _, seed := range seeds {
		s := extsim.Generate(seed)
		v := extsim.Check(context.Background(), s, extsim.CheckOptions{})
		tot.Crashes += v.Crashes
		tot.Failed += v.Failed
		tot.Interrupted += v.Interrupted
		if len(v.Problems) == 0 {
			continue
		}
		failed++
		if failed <= 5 {
			t.Errorf("%s\n  %s\nreplay: %s", s, strings.Join(v.Problems, "\n  "), replay(s))
		}
	}
	if failed > 5 {
		t.Errorf("… %d schedules broke a promise in all", failed)
	}
	// The schedules must reach what they test: crashed attempts, failed
	// deliveries, and interrupted ones.
	if *onlySeed == 0 && (tot.Crashes == 0 || tot.Failed == 0 || tot.Interrupted == 0) {
		t.Errorf("%d schedules: %d crashes, %d failures, %d interrupted; the schedules miss what they are for", len(seeds), tot.Crashes, tot.Failed, tot.Interrupted)
	}
	t.Logf("%d schedules: %d crashed attempts, %d failed deliveries under faults, %d interrupted tasks", len(seeds), tot.Crashes, tot.Failed, tot.Interrupted)
}

// The same seed is the same schedule.
func TestScheduleReplaysBySeed(t *testing.T) {
	a, b := extsim.Generate(42), extsim.Generate(42)
	if a.String() != b.String() || a.String() == extsim.Generate(43).String() {
		t.Fatalf("seed 42 drew\n%s\nthen\n%s", a, b)
	}
}

// oneShotStore records a delivery started however it was left: the
// write-ahead without its compare-and-set.
type oneShotStore struct{ extensions.Store }

func (s oneShotStore) StartDelivery(ctx context.Context, e extensions.Execution) (extensions.Execution, bool, error) {
	return e, true, s.Store.PutExecution(ctx, e)
}

// rawErrorStore returns its failures unclassified.
type rawErrorStore struct{ extensions.Store }

func (s rawErrorStore) PutExecution(ctx context.Context, e extensions.Execution) error {
	if err := s.Store.PutExecution(ctx, e); err != nil {
		return errors.New("database said: " + err.Error())
	}
	return nil
}

// newIDPerRetry is a webhook runner that gives each retry of a delivery a
// webhook-id of its own.
func newIDPerRetry(tt extensions.TaskType, r extensions.Runner) extensions.Runner {
	if tt != extensions.TaskWebhook {
		return r
	}
	seen := map[string]int{}
	return extensions.RunnerFunc(func(ctx context.Context, req extensions.Request) (extensions.Result, error) {
		seen[req.DeliveryID]++
		if n := seen[req.DeliveryID]; n > 1 {
			req.DeliveryID = fmt.Sprintf("%s-retry-%d", req.DeliveryID, n)
		}
		return r.Run(ctx, req)
	})
}

// withPlan replaces the dispatcher's plan step.
func withPlan(plan func(d *extensions.Dispatcher) func(context.Context, extensions.PlanIn) (extensions.PlanOut, error)) func(flow.Steps) flow.Steps {
	return func(steps flow.Steps) flow.Steps {
		d := steps.(*extensions.Dispatcher)
		all := []flow.Step{flow.Bind(extensions.StepPlan, time.Minute, plan(d))}
		for _, n := range d.StepNames() {
			if n != extensions.StepPlan {
				st, _ := d.Step(n)
				all = append(all, st)
			}
		}
		return flow.MustTable(all...)
	}
}

// TestSuiteCatchesBrokenDispatch proves the suite has teeth: for each
// promise, a deliberately broken part, and the report that catches it
// within the schedules TestFaultSchedules runs.
func TestSuiteCatchesBrokenDispatch(t *testing.T) {
	cases := []struct {
		name string
		opts extsim.CheckOptions
		want string
	}{
		{"a write-ahead any attempt wins", extsim.CheckOptions{WrapStore: func(s extensions.Store) extensions.Store { return oneShotStore{s} }}, "ran twice with delivery ID"},
		{"a webhook runner that changes the webhook-id on a retry", extsim.CheckOptions{WrapRunner: newIDPerRetry}, "want its delivery ID"},
		{"a store whose errors are unclassified", extsim.CheckOptions{WrapStore: func(s extensions.Store) extensions.Store { return rawErrorStore{s} }}, "unclassified"},
		{"a plan that drops failurePolicy fail", extsim.CheckOptions{WrapSteps: withPlan(func(d *extensions.Dispatcher) func(context.Context, extensions.PlanIn) (extensions.PlanOut, error) {
			return func(ctx context.Context, in extensions.PlanIn) (extensions.PlanOut, error) {
				out, err := d.Plan(ctx, in)
				for i := range out.Tasks {
					out.Tasks[i].FailurePolicy = extensions.FailContinue
				}
				return out, err
			}
		})}, "failed with failurePolicy fail"},
		{"a re-fire that runs every task again", extsim.CheckOptions{WrapSteps: withPlan(func(d *extensions.Dispatcher) func(context.Context, extensions.PlanIn) (extensions.PlanOut, error) {
			return func(ctx context.Context, in extensions.PlanIn) (extensions.PlanOut, error) {
				out, err := d.Plan(ctx, in)
				for i, p := range out.Tasks {
					out.Tasks[i].Earlier, out.Tasks[i].Abandoned = nil, nil
					out.Tasks[i].DeliveryID = extensions.DeliveryID(in.EventID, p.Extension, p.Task)
				}
				return out, err
			}
		})}, "fired again contacted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= uint64(*schedules); seed++ {
				for _, p := range extsim.Check(context.Background(), extsim.Generate(seed), tc.opts).Problems {
					if strings.Contains(p, tc.want) {
						t.Logf("caught by schedule seed %d: %s", seed, p)
						return
					}
				}
			}
			t.Fatalf("%d schedules did not report %q", *schedules, tc.want)
		})
	}
}
