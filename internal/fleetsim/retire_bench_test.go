package fleetsim_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/internal/fleetsim"
)

// BenchmarkRetirePass runs the enroll → retire (half) → retire again →
// re-enroll pass over 10,000 hosts (-fleetsim.benchhosts) and reports, per
// pass, its wall time and peak heap, and for the retirement its calls per
// retired host by system (and the rerun's reads); the retirement's rerun
// must write nothing.
//
//	go test ./internal/fleetsim -run '^$' -bench 'RetirePass' -benchtime=1x
func BenchmarkRetirePass(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f, err := fleetsim.Build(benchFleet())
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		b.StartTimer()
		rep := f.RetirePass(context.Background(), fleetsim.RetireOptions{Wall: clock.Real{}})
		b.StopTimer()
		if len(rep.Violations) > 0 {
			b.Fatalf("%d violations, the first:\n%s", len(rep.Violations), strings.Join(rep.Violations[:min(5, len(rep.Violations))], "\n"))
		}
		b.ReportMetric(float64(rep.Retiring), "retiring")
		b.ReportMetric(float64(rep.InUse), "in-use")
		for name, p := range map[string]fleetsim.PassFigures{"enroll": rep.Enroll, "retire": rep.Retire, "rerun": rep.Rerun, "reenroll": rep.Reenroll} {
			b.ReportMetric(p.WallSeconds, name+"-s")
			b.ReportMetric(p.PeakHeapMiB, name+"-heap-MiB")
		}
		for sys, c := range rep.Retire.CallsPerHost {
			b.ReportMetric(c.Reads, "retire-"+sys+"-reads/host")
			b.ReportMetric(c.Writes, "retire-"+sys+"-writes/host")
		}
		for sys, c := range rep.Rerun.CallsPerHost {
			b.ReportMetric(c.Reads, "rerun-"+sys+"-reads/host")
		}
		b.ReportMetric(float64(rep.Rerun.Writes), "rerun-writes")
	}
}
