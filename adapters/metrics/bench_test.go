package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/metrics"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/flow"
)

// BenchmarkObserve is the cost one observation adds to a step: the
// Prometheus update behind Observe.
func BenchmarkObserve(b *testing.B) {
	ex, err := metrics.NewExporters(metrics.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	o := flow.StepAttempt{Step: enrollment.StepConfigureDHCP, Outcome: hostforge.Done, Took: 3 * time.Second}
	b.ReportAllocs()
	for b.Loop() {
		ex.Workflows.Observe(o)
	}
}

// BenchmarkRerunConverged is a rerun of a converged demo host through
// flow.Local, without an observer and with the workflow metrics: what
// metrics cost a run.
func BenchmarkRerunConverged(b *testing.B) {
	ex, err := metrics.NewExporters(metrics.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		obs  flow.Observer
	}{{"none", nil}, {"metrics", ex.Workflows}} {
		b.Run(bc.name, func(b *testing.B) {
			site := enrolltest.DemoRack()
			exec := enrolltest.Executor(site, nil)
			ctx := context.Background()
			req, err := enrollment.Submit(ctx, site.NetBox, "cpu-r1-u10", enrollment.SubmitOptions{Site: enrolltest.DemoSite, Config: enrolltest.DemoSiteConfig(), PlatformClassReady: true})
			if err != nil {
				b.Fatal(err)
			}
			rt := exec.Local(site.Clock)
			rt.Observer = bc.obs
			if _, err := enrollment.Enroll(ctx, rt, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := enrollment.Enroll(ctx, rt, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
