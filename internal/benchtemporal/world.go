// Package benchtemporal measures the enrollment on the real engine: N hosts
// of a fake fleet (fakes behind every activity, so the engine and Temporal
// are what is measured) enrolled through a Temporal server by one or more
// workers, and the same hosts through flow.Local as the limit. The command
// is internal/cmd/benchtemporal; the figures are in BENCHMARKS.md.
//
// The fleet runs on the wall clock with the fast timing of a lab (World):
// Ironic's fake-hardware transitions take a fraction of a second and are
// polled every second, BMC resets and iDRAC jobs take seconds. The same
// timing on virtual time is what adapters/temporal's history test holds to
// temporal.EnrollmentHistoryBudget.
package benchtemporal

import (
	"fmt"
	"time"

	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/enrolltest"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/ironic"
)

// Site is the fleet's site slug.
const Site = fleetsim.SiteSlug

// World is a fleet of n healthy hosts (fleetsim's mix of vendors, GPU and
// CPU hosts, bonds), its executor and the site's configuration, on the
// fast timing (FastTiming).
func World(n int, seed uint64) (*fleetsim.Fleet, *enrollment.Executor, enrollment.SiteConfig, error) {
	f, err := fleetsim.Build(fleetsim.Config{Hosts: n, Seed: seed})
	if err != nil {
		return nil, nil, enrollment.SiteConfig{}, err
	}
	if len(f.Broken) != 0 {
		return nil, nil, enrollment.SiteConfig{}, fmt.Errorf("benchtemporal: the fleet has %d broken hosts", len(f.Broken))
	}
	exec := enrolltest.Executor(f.Site, nil)
	FastTiming(f.Site, exec)
	return f, exec, fleetsim.Gate(fleetsim.SiteConfig(), exec), nil
}

// FastTiming gives a site and its executor a lab's timing: fake Ironic
// transitions of 0.2–2 s polled every second (cleaning backs off to 2 s),
// BMC resets and iDRAC jobs of seconds (fakes.WallClockBMCTiming).
func FastTiming(site *fakes.Site, exec *enrollment.Executor) {
	for _, ir := range site.Ironic {
		ir.Timing = fakes.IronicTiming{Verify: 200 * time.Millisecond, Inspecting: 300 * time.Millisecond, InspectWait: 2 * time.Second,
			Cleaning: 300 * time.Millisecond, CleanWait: 2 * time.Second, Power: 200 * time.Millisecond, Deploy: time.Second}
	}
	for _, p := range exec.Ironic {
		if ph, ok := p.(*ironic.Phases); ok {
			ph.Timing = ironic.Timing{StatePoll: time.Second, LockRetry: time.Second, InspectionPoll: time.Second,
				CleanPollMin: time.Second, CleanPollMax: 2 * time.Second}
		}
	}
	site.BMCs.SetTiming(fakes.WallClockBMCTiming)
}

// Request is the request a submitter makes for one host of the fleet.
func Request(f *fleetsim.Fleet, name string, cfg enrollment.SiteConfig) enrollment.Request {
	class := ""
	if h, ok := f.Site.Host(name); ok {
		class = h.Spec.Class
	}
	return enrollment.NewRequest(name, class, Site, cfg, true, enrollment.Params{})
}
