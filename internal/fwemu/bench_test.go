package fwemu_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostforge/hostforge/internal/fwemu"
)

// BenchmarkFleet brings 100 drifted hosts to compliance through the Redfish
// emulator with max_uploads = 4, each push held 200 ms by its BMC, and
// reports the time against the limit of 4 pushes back to back and the
// peak of pushes in flight seen at the emulators.
func BenchmarkFleet(b *testing.B) {
	for range b.N {
		rep, err := fwemu.Run(context.Background(), fwemu.Config{Hosts: 100, MaxUploads: 4, UploadHold: 200 * time.Millisecond, Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Peak > 4 || rep.Compliant != 100 {
			b.Fatalf("peak %d, compliant %d", rep.Peak, rep.Compliant)
		}
		b.ReportMetric(rep.Took.Seconds(), "s-to-compliance")
		b.ReportMetric(rep.Limit.Seconds(), "s-limit")
		b.ReportMetric(float64(rep.Took)/float64(rep.Limit), "x-limit")
		b.ReportMetric(float64(rep.Peak), "peak-uploads")
	}
}
