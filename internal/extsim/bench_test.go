package extsim_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/hostforge/hostforge/internal/extsim"
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
		seeds := make(chan uint64)
		go func() {
			defer close(seeds)
			for k := 0; k < *benchSchedules; k++ {
				seeds <- uint64(1 + k)
			}
		}()
		var mu sync.Mutex
		var tot extsim.Verdict
		var broken []string
		var wg sync.WaitGroup
		for w := 0; w < runtime.GOMAXPROCS(0); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seed := range seeds {
					s := extsim.Generate(seed)
					v := extsim.Check(context.Background(), s, extsim.CheckOptions{})
					mu.Lock()
					tot.Firings += v.Firings
					tot.Effects += v.Effects
					tot.Crashes += v.Crashes
					tot.Failed += v.Failed
					tot.Interrupted += v.Interrupted
					tot.Unclassified += v.Unclassified
					if len(v.Problems) > 0 {
						broken = append(broken, fmt.Sprintf("%s\n  %s\nreplay: %s", s, strings.Join(v.Problems, "\n  "), replay(s)))
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(*benchSchedules), "schedules")
		b.ReportMetric(float64(len(broken)), "violations")
		b.ReportMetric(float64(tot.Unclassified), "unclassified")
		b.ReportMetric(float64(tot.Firings), "firings")
		b.ReportMetric(float64(tot.Effects), "effects")
		b.ReportMetric(float64(tot.Crashes), "crashes")
		b.ReportMetric(float64(tot.Failed), "faulted-failures")
		b.ReportMetric(float64(tot.Interrupted), "interrupted")
		for k, p := range broken {
			if k == 5 {
				b.Errorf("… %d more", len(broken)-5)
				break
			}
			b.Error(p)
		}
	}
}
