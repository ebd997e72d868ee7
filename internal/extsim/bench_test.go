package extsim_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hostforge/hostforge/internal/extsim"
	"github.com/hostforge/hostforge/internal/seedrun"
)

// The benchmark's figure, in BENCHMARKS.md:
//
//	go test ./internal/extsim -run '^$' -bench 'FaultSchedules$' -benchtime=1x

var benchSchedules = flag.Int("extsim.benchschedules", 10000, "schedules of BenchmarkFaultSchedules")

// BenchmarkFaultSchedules runs 10,000 seeded fault schedules of extension
// dispatch (-extsim.benchschedules; seeds from 1) with every fault kind —
// call faults before the effect, lost answers after it, crashes after N
// writes on both runtimes — one schedule per core at a time, and reports
// the schedules that broke a promise (goal 0) and the unclassified
// failures (goal 0). ns/op is the wall time of the whole run.
func BenchmarkFaultSchedules(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var mu sync.Mutex
		var tot extsim.Verdict
		var broken []string
		seedrun.Parallel(seedrun.Range(1, *benchSchedules), func(seed uint64) {
			s := extsim.Generate(seed)
			v := extsim.Check(context.Background(), s, extsim.CheckOptions{})
			mu.Lock()
			defer mu.Unlock()
			tot.Firings += v.Firings
			tot.Effects += v.Effects
			tot.Crashes += v.Crashes
			tot.Failed += v.Failed
			tot.Interrupted += v.Interrupted
			tot.Unclassified += v.Unclassified
			if len(v.Problems) > 0 {
				broken = append(broken, fmt.Sprintf("%s\n  %s\nreplay: %s", s, strings.Join(v.Problems, "\n  "), replay(s)))
			}
		})
		b.ReportMetric(float64(*benchSchedules), "schedules")
		b.ReportMetric(float64(len(broken)), "violations")
		b.ReportMetric(float64(tot.Unclassified), "unclassified")
		b.ReportMetric(float64(tot.Firings), "firings")
		b.ReportMetric(float64(tot.Effects), "effects")
		b.ReportMetric(float64(tot.Crashes), "crashes")
		b.ReportMetric(float64(tot.Failed), "faulted-failures")
		b.ReportMetric(float64(tot.Interrupted), "interrupted")
		seedrun.ReportFirst(b, broken, 5)
	}
}
