package fleetsim_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/internal/fleetsim"
	"github.com/hostforge/hostforge/internal/seedrun"
)

var (
	schedules = flag.Int("fleetsim.schedules", 2000, "number of seeded fault schedules TestFaultSchedules runs")
	firstSeed = flag.Uint64("fleetsim.first", 1, "first seed of TestFaultSchedules")
	onlySeed  = flag.Uint64("fleetsim.seed", 0, "replay this one schedule seed (0: run the budget)")
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	catalogOnce sync.Once
	catalog     fleetsim.Catalog
	writes      fleetsim.Catalog
)

// generator targets faults at the operations a fault-free run of every
// profile actually calls, so the schedules follow the phases that are wired.
func generator(t testing.TB) fleetsim.Generator {
	catalogOnce.Do(func() {
		f, err := fleetsim.Build(fleetsim.Config{Hosts: 2 * len(fleetsim.Profiles), Seed: 7, FactoryReset: 1, ApplyOnReset: 0.5})
		if err != nil {
			panic(err)
		}
		st := f.Run(context.Background(), fleetsim.Options{})
		catalog, writes = fleetsim.CatalogOf(st.Calls), fleetsim.WritesOf(st.Calls)
	})
	if len(catalog) == 0 {
		t.Fatal("the calibration run called no system")
	}
	return fleetsim.Generator{Catalog: catalog, Writes: writes}
}

func replay(s fleetsim.Schedule) string {
	return fmt.Sprintf("go test ./internal/fleetsim -run 'TestFaultSchedules$' -fleetsim.seed=%d", s.Seed)
}

// TestFaultSchedules runs the CI budget of seeded fault schedules (see
// fleetsim.Check for what each asserts). A failing schedule prints itself
// and the command that replays it.
func TestFaultSchedules(t *testing.T) {
	g := generator(t)
	seeds := seedrun.Range(*firstSeed, *schedules)
	if *onlySeed != 0 {
		seeds = slices.Values([]uint64{*onlySeed})
	}
	var failed atomic.Int64
	var ran atomic.Int64
	seedrun.Parallel(seeds, func(seed uint64) {
		s := g.Generate(seed)
		problems := fleetsim.Check(context.Background(), s, fleetsim.CheckOptions{})
		ran.Add(1)
		if len(problems) == 0 {
			return
		}
		if failed.Add(1) <= 5 {
			t.Errorf("%s\nbroken promises:\n  %s\nreplay: %s", s, strings.Join(problems, "\n  "), replay(s))
		}
	})
	if n := failed.Load(); n > 5 {
		t.Errorf("%d of %d schedules failed (first 5 shown)", n, ran.Load())
	}
	t.Logf("%d schedules", ran.Load())
}

// TestGenerateIsDeterministic: a seed is the whole schedule.
func TestGenerateIsDeterministic(t *testing.T) {
	g := generator(t)
	for seed := uint64(1); seed < 50; seed++ {
		a, b := g.Generate(seed), g.Generate(seed)
		if a.String() != b.String() {
			t.Fatalf("seed %d drew two schedules:\n%s\n%s", seed, a, b)
		}
	}
	kinds := map[fleetsim.FaultKind]bool{}
	systems := map[string]bool{}
	events := map[string]bool{}
	resets, applyOnReset := 0, 0
	for seed := uint64(1); seed < 500; seed++ {
		s := g.Generate(seed)
		for _, f := range s.Faults {
			kinds[f.Kind] = true
			systems[f.System] = true
			if f.Kind.Lost() && !slices.Contains(writes[f.System], f.Op) {
				t.Errorf("seed %d: a lost answer on %s/%s, which is no write", seed, f.System, f.Op)
			}
		}
		for _, e := range s.Events {
			events[e.Kind] = true
		}
		if s.Fleet.FactoryReset > 0 {
			resets++
		}
		if s.Fleet.ApplyOnReset > 0 {
			applyOnReset++
		}
	}
	if len(events) != len(fleetsim.Outcomes.Events) {
		t.Errorf("500 schedules planted %d of %d kinds of host event", len(events), len(fleetsim.Outcomes.Events))
	}
	if resets < 100 || applyOnReset < 30 {
		t.Errorf("500 schedules: %d with factory-reset BMCs, %d of them applying passwords on reset", resets, applyOnReset)
	}
	if len(kinds) != len(fleetsim.AllFaultKinds) {
		t.Errorf("500 schedules drew %d of %d fault kinds", len(kinds), len(fleetsim.AllFaultKinds))
	}
	delete(systems, fleetsim.SysWorker)
	if len(systems) != len(catalog) {
		t.Errorf("500 schedules hit systems %v of %v", systems, catalog)
	}
}
