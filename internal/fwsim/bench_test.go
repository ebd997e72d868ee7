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
