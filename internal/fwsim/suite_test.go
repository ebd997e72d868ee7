package fwsim_test

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/internal/fwsim"
)

var (
	suiteSchedules = flag.Int("fwsim.schedules", 500, "fault schedules of TestFaultScheduleSuite")
	suiteSeed      = flag.Uint64("fwsim.seed", 0, "replay this schedule's seed only")
)

// The fault-schedule suite: every promise of the update workflow holds
// under every schedule. Replay a failing one with -fwsim.seed=S.
func TestFaultScheduleSuite(t *testing.T) {
	first, last := uint64(1), uint64(*suiteSchedules)
	if *suiteSeed != 0 {
		first, last = *suiteSeed, *suiteSeed
	}
	var tot fwsim.ScheduleResult
	where := map[string]int{}
	for seed := first; seed <= last; seed++ {
		s := fwsim.Generate(seed)
		o := fwsim.SuiteOptions{}
		if *suiteSeed != 0 && testing.Verbose() {
			o.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		r := fwsim.CheckSchedule(context.Background(), s, o)
		if len(r.Violations) > 0 {
			t.Errorf("%s\n  violations:\n    %s", s, strings.Join(r.Violations, "\n    "))
		}
		tot.Done += r.Done
		tot.Exhausted += r.Exhausted
		tot.Pushes += r.Pushes
		tot.Resets += r.Resets
		tot.Struck += r.Struck
		tot.LostAnswers += r.LostAnswers
		tot.Crashes += r.Crashes
		tot.Steps += r.Steps
		for k, n := range r.Where {
			where[k] += n
		}
	}
	t.Logf("%d schedules: %d hosts done, %d exhausted; %d pushes, %d resets; %d calls struck (%d answers lost), %d workers crashed; %d steps",
		last-first+1, tot.Done, tot.Exhausted, tot.Pushes, tot.Resets, tot.Struck, tot.LostAnswers, tot.Crashes, tot.Steps)
	if *suiteSeed != 0 {
		return
	}
	// Every step of the workflow met every kind of fault.
	for _, step := range fwsim.WritingSteps {
		for _, kind := range []string{"before", "lost", "crash"} {
			if where[step+" "+kind] == 0 {
				t.Errorf("no schedule struck %s with a fault %s", step, kind)
			}
		}
	}
	if tot.Exhausted == 0 {
		t.Error("no schedule exhausted a host")
	}
	t.Logf("faults by step: %v", where)
}

// A schedule is its seed: the same seed draws the same schedule.
func TestScheduleReplaysBySeed(t *testing.T) {
	a, b := fwsim.Generate(42), fwsim.Generate(42)
	if a.String() != b.String() {
		t.Fatalf("seed 42 drew\n%s\nthen\n%s", a, b)
	}
	if fwsim.Generate(43).String() == a.String() {
		t.Fatal("seeds 42 and 43 drew the same schedule")
	}
}

// blind is a BMC client that shows no task, no staged image and no reset:
// a worker trusting it repeats what it cannot see.
type blind struct{ firmware.BMCClient }

func (blind) Tasks(context.Context, string) (firmware.TaskList, error) {
	return firmware.TaskList{}, nil
}

func (b blind) Inventory(ctx context.Context, m string) (firmware.Inventory, error) {
	inv, err := b.BMCClient.Inventory(ctx, m)
	if err != nil {
		return inv, err
	}
	// The inventory as it was before any push.
	for i := range inv.Entries {
		inv.Entries[i].Version = "0.0.0"
	}
	return inv, nil
}

func (blind) ResetStatus(context.Context, string) (firmware.ResetStatus, error) {
	return firmware.ResetStatus{Power: firmware.PowerOn, SystemLastReset: "2026-01-01T00:00:00Z", ManagerLastReset: "2026-01-01T00:00:00Z"}, nil
}

// The checker catches the promises a worker that cannot see the BMC
// breaks: an image pushed twice after its answer was lost, a reset sent
// twice.
func TestSuiteCatchesRepeatedSideEffects(t *testing.T) {
	lost := func(op string) fwsim.ScheduleFault {
		var f fwsim.ScheduleFault
		f.System, f.Op, f.N, f.Kind = fwsim.SysBMC, op, 1, fleetsim.FaultLost
		return f
	}
	cases := []struct {
		name  string
		fault fwsim.ScheduleFault
		want  string
	}{
		{"a lost push's answer", lost("upload"), "pushed 2 times"},
		{"a lost reset's answer", lost("reset"), "took effect 2 times"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := fwsim.Schedule{Seed: 1, MaxUploads: 1, Hosts: []fwsim.ScheduleHost{{Machine: "fw-0", Profile: fwsim.ProfileDell}}, Faults: []fwsim.ScheduleFault{c.fault}}
			if r := fwsim.CheckSchedule(context.Background(), s, fwsim.SuiteOptions{}); len(r.Violations) > 0 || r.LostAnswers != 1 {
				t.Fatalf("the real worker: %d lost answers, violations %v", r.LostAnswers, r.Violations)
			}
			r := fwsim.CheckSchedule(context.Background(), s, fwsim.SuiteOptions{WrapBMC: func(b firmware.BMCClient) firmware.BMCClient { return blind{b} }})
			for _, v := range r.Violations {
				if strings.Contains(v, c.want) {
					return
				}
			}
			t.Fatalf("no violation %q among %q", c.want, r.Violations)
		})
	}
}

// Every code of the outcome table is a declared failure code.
func TestSuiteOutcomesAreDeclaredCodes(t *testing.T) {
	for _, sys := range []string{fwsim.SysBMC, fwsim.SysStore, fwsim.SysHosts} {
		for _, k := range fleetsim.FaultKinds {
			var f fwsim.ScheduleFault
			f.System, f.Kind = sys, k
			for _, code := range fwsim.Outcomes(f) {
				if _, ok := hostforge.Lookup(code); !ok {
					t.Errorf("%s %s: %s is no declared code", sys, k, code)
				}
			}
		}
	}
}
