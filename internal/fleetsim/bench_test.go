package fleetsim_test

import (
	"context"
	"flag"
	"runtime"
	"testing"

	"github.com/hostforge/hostforge/internal/fleetsim"
)

// Benchmarks of the engine against the limit. Run them one at a time with
// -benchtime=1x: each iteration is a whole fleet.
//
//	go test ./internal/fleetsim -run '^$' -bench 'Engine|StraightLine' -benchtime=1x
//	go test ./internal/fleetsim -run '^$' -bench 'CallEconomy' -benchtime=1x

var benchHosts = flag.Int("fleetsim.benchhosts", 10000, "hosts of the Engine and StraightLine benchmarks")

func benchFleet() fleetsim.Config { return fleetsim.Config{Hosts: *benchHosts, Seed: 1} }

// BenchmarkEngine enrols 10,000 healthy hosts (-fleetsim.benchhosts) through the whole workflow
// (flow.Local on virtual time, zero-latency fakes).
func BenchmarkEngine(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f, err := fleetsim.Build(benchFleet())
		if err != nil {
			b.Fatal(err)
		}
		opts := f.Prepare(fleetsim.Options{})
		runtime.GC()
		b.StartTimer()
		st := f.Run(context.Background(), opts)
		b.StopTimer()
		report(b, f, st)
	}
}

// BenchmarkStraightLine makes the same calls as BenchmarkEngine (the
// engine's recorded script) from a plain loop per host, with no engine.
func BenchmarkStraightLine(b *testing.B) {
	rec, _ := fleetsim.Build(benchFleet())
	_, script := rec.Record(context.Background(), fleetsim.Options{})
	rec = nil
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f, _ := fleetsim.Build(benchFleet())
		exec := f.Executor(nil)
		runtime.GC()
		b.StartTimer()
		if err := f.StraightLine(context.Background(), exec, script); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		b.ReportMetric(float64(len(f.Names))/b.Elapsed().Seconds()*float64(b.N), "hosts/s")
	}
}

// BenchmarkCallEconomy reports calls per host by system for the fresh run
// and writes of the converged rerun (goal 0 on every system).
func BenchmarkCallEconomy(b *testing.B) {
	for i := 0; i < b.N; i++ {
		f, _ := fleetsim.Build(fleetsim.Config{Hosts: 1000, Seed: 1})
		rep := f.Simulate(context.Background(), fleetsim.Options{})
		for sys, c := range rep.Fresh.CallsPerHost {
			b.ReportMetric(c.Reads, sys+"-reads/host")
			b.ReportMetric(c.Writes, sys+"-writes/host")
		}
		b.ReportMetric(float64(rep.Rerun.Writes), "rerun-writes")
	}
}

func report(b *testing.B, f *fleetsim.Fleet, st fleetsim.RunStats) {
	ended := 0
	for _, o := range st.Outcomes {
		if fleetsim.EndedOK(o, st.Config.IronicEnrol) {
			ended++
		}
	}
	if ended != len(f.Names) {
		b.Fatalf("%d of %d healthy hosts reached the end state", ended, len(f.Names))
	}
	b.ReportMetric(float64(len(f.Names))/b.Elapsed().Seconds()*float64(b.N), "hosts/s")
	b.ReportMetric(float64(st.PeakHeap)/(1<<20), "peak-heap-MiB")
}
