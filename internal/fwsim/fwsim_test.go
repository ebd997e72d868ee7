package fwsim_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/fwsim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func run(t *testing.T, c fwsim.Config) *fwsim.Report {
	t.Helper()
	s, err := fwsim.Build(c)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run(context.Background())
}

// The default fleet, small: every invariant holds on every tick, and the
// end states are what the faults make them.
func TestDefaultFleet(t *testing.T) {
	rep := run(t, fwsim.DefaultConfig(400, 1))
	for _, v := range rep.Violations {
		t.Error(v)
	}
	if rep.Compliant+rep.Exhausted != 400 || rep.Exhausted == 0 || rep.Unmatched == 0 || rep.Restarts != 3 {
		t.Fatalf("end states: %d compliant, %d exhausted, %d unmatched, %d restarts", rep.Compliant, rep.Exhausted, rep.Unmatched, rep.Restarts)
	}
}

// Seeded fault schedules: small fleets, many faulty hosts, frequent
// crashes between a BMC action and its write, lost compare-and-sets and
// worker restarts. Replay a failing schedule by its seed.
func TestFaultSchedules(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		c := fwsim.Config{Hosts: 60, Seed: seed, Drifted: 0.7, Assigned: 0.3, Maintenance: 0.1, Faulty: 0.4, PolicyOff: 0.05,
			CeilingPercent: 50, Restarts: 6, CrashRate: 0.05, StoreFaultRate: 0.03}
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			rep := run(t, c)
			for _, v := range rep.Violations {
				t.Errorf("seed %d: %s", seed, v)
			}
			if rep.Crashes == 0 && seed == 1 {
				t.Error("no crash was injected")
			}
		})
	}
}

// The checker catches the promises a broken worker breaks.
func TestCheckerCatchesBrokenWorkers(t *testing.T) {
	cases := []struct {
		name  string
		plant func(c *fwsim.Config)
		want  string
	}{
		{"a manager blind to maintenance exceeds the ceiling", func(c *fwsim.Config) {
			c.Maintenance = 0.5
			c.WrapHosts = func(h firmware.Hosts) firmware.Hosts { return lying{Hosts: h, noMaintenance: true} }
		}, "past the ceiling"},
		{"a worker that sees assigned hosts as ready starts them unapproved", func(c *fwsim.Config) {
			c.Assigned = 0.8
			c.WrapHosts = func(h firmware.Hosts) firmware.Hosts { return lying{Hosts: h, allReady: true} }
		}, "without approval"},
		{"a catalog without explicit start opens no window", func(c *fwsim.Config) {
			c.WrapCatalog = func(cat *firmware.Catalog) *firmware.Catalog {
				return firmware.Merge(firmware.NewCatalog(), mustCatalog(strings.Replace(fwsim.Catalog, "explicit_start_needed = true", "", 1)))
			}
		}, "outside its window"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fwsim.Config{Hosts: 120, Seed: 3, Drifted: 0.8, CeilingPercent: 10}
			tc.plant(&c)
			rep := run(t, c)
			for _, v := range rep.Violations {
				if strings.Contains(v, tc.want) {
					return
				}
			}
			t.Fatalf("no violation %q among %q", tc.want, rep.Violations)
		})
	}
}

func mustCatalog(doc string) *firmware.Catalog {
	c, err := firmware.ParseCatalog("x.toml", []byte(doc))
	if err != nil {
		panic(err)
	}
	return c
}

// lying is a view of the hosts that hides maintenance or assignment.
type lying struct {
	firmware.Hosts
	noMaintenance, allReady bool
}

func (l lying) fix(h firmware.Host) firmware.Host {
	if l.noMaintenance {
		h.InMaintenance = false
	}
	if l.allReady && h.State == firmware.HostAssigned {
		h.State = firmware.HostReady
	}
	return h
}

func (l lying) List(ctx context.Context) ([]firmware.Host, error) {
	hs, err := l.Hosts.List(ctx)
	for i := range hs {
		hs[i] = l.fix(hs[i])
	}
	return hs, err
}

func (l lying) Get(ctx context.Context, m string) (firmware.Host, bool, error) {
	h, ok, err := l.Hosts.Get(ctx, m)
	return l.fix(h), ok, err
}
