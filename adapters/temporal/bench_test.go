package temporal_test

import (
	"testing"
)

// BenchmarkEnrollTemporalTestsuite is one fresh host's whole enrollment
// under the SDK's test environment (activities, timers, payload encoding).
func BenchmarkEnrollTemporalTestsuite(b *testing.B) {
	for b.Loop() {
		site, exec, req := world(b, "cpu-u10")
		if o := runTemporal(b, site, exec, req); o.err != nil {
			b.Fatal(o.err)
		}
	}
}

// BenchmarkEnrollLocal is the same enrollment inline, for comparison.
func BenchmarkEnrollLocal(b *testing.B) {
	for b.Loop() {
		site, exec, req := world(b, "cpu-u10")
		if o := runLocal(site, exec, req); o.err != nil {
			b.Fatal(o.err)
		}
	}
}
