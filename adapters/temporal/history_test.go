package temporal_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/temporal"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/internal/benchtemporal"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/ironic"
)

// childStarts is what a submitter with a ledger and extensions adds to an
// enrollment's history: the settlement child started first and the
// serverRegistered dispatch started last, 5 events each (historyModel).
const childStarts = 2 * 5

// historyWorld is the fleet of the history tests on one timing: "lab"
// (the scale benchmark's: Ironic's fake-hardware transitions polled every
// second, BMC resets and iDRAC jobs of seconds) or "production" (the
// fakes' own: inspections and cleanings of minutes paced by
// ironic.NextPoll, iDRAC jobs scheduled in 30 s and applied in 3 min).
func historyWorld(tb testing.TB, timing string) (*fleetsim.Fleet, *enrollment.Executor, enrollment.SiteConfig) {
	tb.Helper()
	if timing == "lab" {
		f, exec, cfg, err := benchtemporal.World(24, 1)
		if err != nil {
			tb.Fatal(err)
		}
		return f, exec, cfg
	}
	f, err := fleetsim.Build(fleetsim.Config{Hosts: 24, Seed: 1})
	if err != nil {
		tb.Fatal(err)
	}
	if len(f.Broken) != 0 {
		tb.Fatalf("the fleet has %d broken hosts", len(f.Broken))
	}
	exec := enrolltest.Executor(f.Site, nil)
	return f, exec, fleetsim.Gate(fleetsim.SiteConfig(), exec)
}

// TestEnrollmentHistoryBudget enrols every profile of the benchmark's
// fleet (Lenovo, AMI and Dell GPU hosts, Dell and Supermicro CPU hosts, an
// active Dell hypervisor) under the SDK's test environment, on the lab's
// timing and on the fakes' production timing, and holds each history, as
// a server records it (historyModel, held to real histories by
// TestHistoryModelMatchesRecordedHistories), with the two children a
// ledger and extensions add, to EnrollmentHistoryBudget.
func TestEnrollmentHistoryBudget(t *testing.T) {
	for _, timing := range []string{"lab", "production"} {
		t.Run(timing, func(t *testing.T) {
			f, exec, cfg := historyWorld(t, timing)
			seen := map[string]int{}
			var worst []string
			for _, name := range f.Names {
				p := f.Profile[name]
				if _, ok := seen[p]; ok {
					continue
				}
				req := benchtemporal.Request(f, name, cfg)
				c := runChained(t, f.Site.Clock, exec, temporal.ActivityOptions{}, []temporal.Definition{temporal.Enrollment}, temporal.WorkflowName,
					temporal.Input{Request: req})
				if c.err != nil {
					t.Fatalf("%s (%s): %v", name, p, c.err)
				}
				var res enrollment.Result
				if err := c.result(&res); err != nil || !res.Enrolled || res.ProvisionState != ironic.StateAvailable {
					t.Fatalf("%s (%s) ended %+v, %v; want available", name, p, res, err)
				}
				if len(c.runs) != 1 {
					t.Fatalf("%s (%s) continued as new: runs %v", name, p, c.runs)
				}
				seen[p] = c.runs[0] + childStarts
				worst = append(worst, p)
			}
			if len(seen) < len(fleetsim.Profiles) {
				t.Fatalf("the fleet of 24 covers %d of the %d profiles", len(seen), len(fleetsim.Profiles))
			}
			sort.Slice(worst, func(i, j int) bool { return seen[worst[i]] > seen[worst[j]] })
			for _, p := range worst {
				if seen[p] > temporal.EnrollmentHistoryBudget {
					t.Errorf("%s: %d events, past the budget of %d", p, seen[p], temporal.EnrollmentHistoryBudget)
				}
				t.Logf("%-16s %3d events", p, seen[p])
			}
		})
	}
}

// BenchmarkEnrollmentHistory reports the history events of a fault-free
// enrollment of each profile of the fleet (with the two children a ledger
// and extensions add), on the lab's timing and on the fakes' production
// timing (historyWorld), under the SDK's test environment on virtual
// time: its events, its activities and its sleeps (timers, or sleeps a
// step carried).
//
//	go test ./adapters/temporal -run '^$' -bench EnrollmentHistory -benchtime 1x
func BenchmarkEnrollmentHistory(b *testing.B) {
	for _, timing := range []string{"lab", "production"} {
		f, exec, cfg := historyWorld(b, timing)
		done := map[string]bool{}
		for _, name := range f.Names {
			p := f.Profile[name]
			if done[p] {
				continue
			}
			done[p] = true
			b.Run(timing+"/"+p, func(b *testing.B) {
				var c chained
				for b.Loop() {
					c = runChained(b, f.Site.Clock, exec, temporal.ActivityOptions{}, []temporal.Definition{temporal.Enrollment}, temporal.WorkflowName,
						temporal.Input{Request: benchtemporal.Request(f, name, cfg)})
				}
				if c.err != nil {
					b.Fatal(c.err)
				}
				events, steps, sleeps := childStarts, 0, 0
				for _, n := range c.runs {
					events += n
				}
				for _, s := range c.trace {
					if strings.HasPrefix(s, "step ") {
						steps++
					} else {
						sleeps++
					}
				}
				b.ReportMetric(float64(events), "events/enrollment")
				b.ReportMetric(float64(steps), "activities/enrollment")
				b.ReportMetric(float64(sleeps), "sleeps/enrollment")
				b.ReportMetric(float64(len(c.runs)), "runs/enrollment")
			})
		}
	}
}
