package fwsim_test

import (
	"context"
	"flag"
	"runtime"
	"testing"

	"github.com/hostforge/hostforge/internal/fwsim"
)

// Run one at a time with -benchtime=1x: each iteration is a whole fleet.
//
//	go test ./internal/fwsim -run '^$' -bench Fleet -benchtime=1x -fwsim.hosts 10000

var benchHosts = flag.Int("fwsim.hosts", 10000, "hosts of BenchmarkFleet")

// BenchmarkFleet simulates the default fleet (fwsim.DefaultConfig) and
// reports wall time, peak heap, step calls and virtual time.
func BenchmarkFleet(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s, err := fwsim.Build(fwsim.DefaultConfig(*benchHosts, 1))
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		b.StartTimer()
		rep := s.Run(context.Background())
		b.StopTimer()
		if len(rep.Violations) > 0 {
			b.Fatalf("invariants broken: %v", rep.Violations)
		}
		b.ReportMetric(float64(rep.PeakHeap)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(rep.Wall.Seconds(), "wall-s")
		b.ReportMetric(float64(rep.Steps), "steps")
		b.ReportMetric(rep.Virtual.Hours(), "virtual-h")
	}
}

var benchSchedules = flag.Int("fwsim.bench-schedules", 10000, "fault schedules of BenchmarkFaultSchedules")

// BenchmarkFaultSchedules runs the fault-schedule suite over 10,000 seeds
// and reports broken promises (violations), failures without a declared
// code (unclassified), and what the schedules did:
//
//	go test ./internal/fwsim -run '^$' -bench FaultSchedules -benchtime=1x
func BenchmarkFaultSchedules(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var tot fwsim.ScheduleResult
		violations := 0
		for seed := uint64(1); seed <= uint64(*benchSchedules); seed++ {
			s := fwsim.Generate(seed)
			r := fwsim.CheckSchedule(context.Background(), s, fwsim.SuiteOptions{})
			if len(r.Violations) > 0 {
				violations += len(r.Violations)
				b.Errorf("%s\n  violations: %v", s, r.Violations)
			}
			tot.Done += r.Done
			tot.Exhausted += r.Exhausted
			tot.Pushes += r.Pushes
			tot.Resets += r.Resets
			tot.LostAnswers += r.LostAnswers
			tot.Crashes += r.Crashes
			tot.Struck += r.Struck
			tot.Unclassified += r.Unclassified
		}
		b.ReportMetric(float64(*benchSchedules), "schedules")
		b.ReportMetric(float64(violations), "violations")
		b.ReportMetric(float64(tot.Unclassified), "unclassified")
		b.ReportMetric(float64(tot.Done), "done")
		b.ReportMetric(float64(tot.Exhausted), "exhausted")
		b.ReportMetric(float64(tot.Pushes), "pushes")
		b.ReportMetric(float64(tot.Resets), "resets")
		b.ReportMetric(float64(tot.Struck), "struck")
		b.ReportMetric(float64(tot.LostAnswers), "lost-answers")
		b.ReportMetric(float64(tot.Crashes), "crashes")
	}
}
