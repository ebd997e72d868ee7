package fleetsim_test

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/hostforge/hostforge/adapters/netbox"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/fakes/netboxhttp"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/internal/seedrun"
)

// Benchmarks of the engine against the limit. Run them one at a time with
// -benchtime=1x: each iteration is a whole fleet.
//
//	go test ./internal/fleetsim -run '^$' -bench 'Engine|StraightLine' -benchtime=1x
//	go test ./internal/fleetsim -run '^$' -bench 'CallEconomy' -benchtime=1x
//	go test ./internal/fleetsim -run '^$' -bench 'CallEconomyNetBoxHTTP' -benchtime=1x
//	go test ./internal/fleetsim -run '^$' -bench 'FaultSchedules' -benchtime=1x

var (
	benchHosts     = flag.Int("fleetsim.benchhosts", 10000, "hosts of the Engine and StraightLine benchmarks")
	benchSchedules = flag.Int("fleetsim.benchschedules", 10000, "schedules of BenchmarkFaultSchedules")
)

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

// BenchmarkCallEconomyNetBoxHTTP runs BenchmarkCallEconomy's fleet with
// the real NetBox adapter over the REST emulator, and reports NetBox's HTTP
// requests per host: as NetBox serves GraphQL (graphql) and as one with
// GraphQL off serves it (rest).
func BenchmarkCallEconomyNetBoxHTTP(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, mode := range []string{"graphql", "rest"} {
			f, _ := fleetsim.Build(fleetsim.Config{Hosts: 1000, Seed: 1})
			srv := httptest.NewServer(netboxhttp.New(f.Site.NetBox, netboxhttp.Options{NoGraphQL: mode == "rest"}))
			c, err := netbox.New(netbox.Config{URL: srv.URL, Token: "fleetsim-token-0000000000000000000000000"})
			if err != nil {
				b.Fatal(err)
			}
			exec := f.Executor(nil)
			exec.NetBox = c
			rep := f.Simulate(context.Background(), fleetsim.Options{Exec: exec})
			srv.Close()
			if len(rep.Violations) > 0 {
				b.Fatalf("%s: violations: %v", mode, rep.Violations)
			}
			nb := rep.Fresh.CallsPerHost[fakes.SysNetBox]
			b.ReportMetric(nb.Reads, "netbox-"+mode+"-reads/host")
			b.ReportMetric(nb.Writes, "netbox-"+mode+"-writes/host")
			b.ReportMetric(float64(rep.Rerun.Writes), mode+"-rerun-writes")
		}
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

// BenchmarkFaultSchedules runs 10,000 seeded fault schedules
// (-fleetsim.benchschedules; seeds from 1) with every fault kind — call
// faults, lost answers, crashes — factory-reset BMCs and host events, one
// schedule per core at a time, and reports the schedules that broke a
// promise (goal 0), the UNCLASSIFIED failures and panics (goal 0), and the
// share of hosts that ended as the outcome table says once the faults
// cleared (goal 100 %). ns/op is the wall time of the whole run.
func BenchmarkFaultSchedules(b *testing.B) {
	g := generator(b)
	for i := 0; i < b.N; i++ {
		var mu sync.Mutex
		var tot fleetsim.Verdict
		var broken []string
		seedrun.Parallel(seedrun.Range(1, *benchSchedules), func(seed uint64) {
			s := g.Generate(seed)
			v := fleetsim.CheckSchedule(context.Background(), s, fleetsim.CheckOptions{})
			mu.Lock()
			defer mu.Unlock()
			tot.Hosts += v.Hosts
			tot.FailedFaulted += v.FailedFaulted
			tot.Unclassified += v.Unclassified
			tot.Unexpected += v.Unexpected
			tot.RerunAsExpected += v.RerunAsExpected
			tot.Crashes += v.Crashes
			tot.Rotations += v.Rotations
			if len(v.Problems) > 0 {
				broken = append(broken, fmt.Sprintf("%s\n  %s\nreplay: %s", s, strings.Join(v.Problems, "\n  "), replay(s)))
			}
		})
		b.ReportMetric(float64(*benchSchedules), "schedules")
		b.ReportMetric(float64(len(broken)), "violations")
		b.ReportMetric(float64(tot.Unclassified), "unclassified")
		b.ReportMetric(float64(tot.Unexpected), "unexplained")
		b.ReportMetric(100*float64(tot.RerunAsExpected)/float64(max(tot.Hosts, 1)), "%rerun-as-table")
		b.ReportMetric(float64(tot.Hosts), "hosts")
		b.ReportMetric(float64(tot.FailedFaulted), "faulted-failures")
		b.ReportMetric(float64(tot.Crashes), "crashes")
		b.ReportMetric(float64(tot.Rotations), "rotations")
		seedrun.ReportFirst(b, broken, 5)
	}
}
