package fleetsim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/internal/fleetsim"
)

// TestSimulateFleet: healthy hosts reach the end state, each breakage ends in
// its own environmental code, and the converged rerun writes nothing.
func TestSimulateFleet(t *testing.T) {
	f, err := fleetsim.Build(fleetsim.Config{Hosts: 120, Broken: 0.25, Seed: 3, Divergent: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	rep := f.Simulate(context.Background(), fleetsim.Options{Wall: clock.Real{}})
	if len(rep.Violations) > 0 {
		t.Fatalf("violations:\n%s", strings.Join(rep.Violations, "\n"))
	}
	if rep.Fresh.Ended != rep.Hosts-rep.Broken || rep.Fresh.Failed != rep.Broken {
		t.Errorf("fresh run: %d ended, %d failed; want %d healthy hosts ended and %d broken failed", rep.Fresh.Ended, rep.Fresh.Failed, rep.Hosts-rep.Broken, rep.Broken)
	}
	if rep.Rerun.Writes != 0 {
		t.Errorf("converged rerun wrote %d times: %+v", rep.Rerun.Writes, rep.Rerun.CallsPerHost)
	}
	if rep.Rerun.Ended != rep.Fresh.Ended {
		t.Errorf("converged rerun: %d of %d hosts stayed in the end state", rep.Rerun.Ended, rep.Fresh.Ended)
	}
	if rep.Fresh.VirtualToEnd.N != rep.Fresh.Ended || rep.Fresh.VirtualToEnd.P50 <= 0 {
		t.Errorf("virtual time to the end state: %+v", rep.Fresh.VirtualToEnd)
	}
	if rep.Phases.Ironic {
		want := map[fleetsim.Breakage]string{
			fleetsim.Miscabled: "INSPECTION_CABLING_MISMATCH", fleetsim.DeadOptic: "INSPECTION_CABLING_MISMATCH",
			fleetsim.WrongDIMMs: "INSPECTION_HARDWARE_MISMATCH", fleetsim.BlockedBIOS: "INSPECTION_HARDWARE_MISMATCH",
			fleetsim.NoGPUType: "PLATFORM_CLASS_UNRESOLVABLE", fleetsim.BadZTP: "PLATFORM_CLASS_UNRESOLVABLE",
		}
		for b, codes := range rep.Fresh.BreakageCodes {
			for code, n := range codes {
				if code != want[fleetsim.Breakage(b)] {
					t.Errorf("%d %s host(s) ended with %q, want %s", n, b, code, want[fleetsim.Breakage(b)])
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("-o json is not one JSON document: %v", err)
	}
	for _, k := range []string{"fresh", "converged_rerun", "failed_rerun", "violations", "phases"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON report has no %q", k)
		}
	}
	buf.Reset()
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hosts/s", "peak heap", "calls/host netbox", "p99", "failures by code", "violations: none"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, buf.String())
		}
	}
}

// TestBuildIsDeterministic: a seed is a fleet.
func TestBuildIsDeterministic(t *testing.T) {
	a, _ := fleetsim.Build(fleetsim.Config{Hosts: 64, Broken: 0.3, Seed: 9})
	b, _ := fleetsim.Build(fleetsim.Config{Hosts: 64, Broken: 0.3, Seed: 9})
	if strings.Join(a.BrokenNames(), ",") != strings.Join(b.BrokenNames(), ",") {
		t.Fatal("one seed built two fleets")
	}
	if d := fleetsim.DiffNetBox(fleetsim.SnapshotNetBox(a.Site.NetBox), fleetsim.SnapshotNetBox(b.Site.NetBox)); len(d) > 0 {
		t.Fatalf("one seed built two NetBoxes: %v", d)
	}
	if _, err := fleetsim.Build(fleetsim.Config{Broken: 2}); err == nil {
		t.Error("a broken share of 2 was accepted")
	}
}

// TestStraightLineMakesTheSameCalls: the no-engine baseline the benchmark
// compares against makes exactly the engine's calls, system by system.
func TestStraightLineMakesTheSameCalls(t *testing.T) {
	cfg := fleetsim.Config{Hosts: 40, Broken: 0.2, Seed: 4}
	a, _ := fleetsim.Build(cfg)
	st, script := a.Record(context.Background(), fleetsim.Options{})
	b, _ := fleetsim.Build(cfg)
	if err := b.StraightLine(context.Background(), b.Executor(nil), script); err != nil {
		t.Fatal(err)
	}
	if got, want := b.Site.Calls(), st.Calls; !sameCalls(got, want) {
		t.Fatalf("straight line made\n  %v\nthe engine made\n  %v", got, want)
	}
}

func sameCalls(a, b fakes.Calls) bool {
	if len(a) != len(b) {
		return false
	}
	for sys, t := range a {
		u := b[sys]
		if t.Reads != u.Reads || t.Writes != u.Writes {
			return false
		}
	}
	return true
}

// TestSimClockOverlapsSleeps: concurrent sleepers share virtual time.
func TestSimClockOverlapsSleeps(t *testing.T) {
	base := clock.NewFake(clock.Epoch)
	c := fleetsim.NewSimClock(base)
	done := make(chan struct{})
	const n = 50
	for i := 0; i < n; i++ {
		c.Enter()
	}
	for i := 0; i < n; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			defer c.Leave()
			_ = c.Sleep(context.Background(), 10e9)
			_ = c.Sleep(context.Background(), 5e9)
		}()
	}
	for i := 0; i < n; i++ {
		<-done
	}
	if got := base.Now().Sub(clock.Epoch); got != 15e9 {
		t.Fatalf("%d hosts sleeping 10s then 5s at once took %s of virtual time, want 15s", n, got)
	}
}

// TestSimClockEachStartsEveryoneFirst: a participant that sleeps at once
// does not move the clock before the others have started, and a bounded
// pool takes its next host without letting the clock run ahead.
func TestSimClockEachStartsEveryoneFirst(t *testing.T) {
	base := clock.NewFake(clock.Epoch)
	c := fleetsim.NewSimClock(base)
	const n = 200
	started := make([]time.Time, n)
	c.Each(n, 0, func(i int) {
		started[i] = c.Now()
		if i == 0 {
			_ = c.Sleep(context.Background(), time.Hour)
			return
		}
		runtime.Gosched()
		_ = c.Sleep(context.Background(), time.Second)
	})
	for i, at := range started {
		if !at.Equal(clock.Epoch) {
			t.Fatalf("participant %d started %s after the first, which had only gone to sleep", i, at.Sub(clock.Epoch))
		}
	}
	if got := base.Now().Sub(clock.Epoch); got != time.Hour {
		t.Errorf("the run took %s of virtual time, want the longest sleep, 1h", got)
	}

	base = clock.NewFake(clock.Epoch)
	c = fleetsim.NewSimClock(base)
	var mu sync.Mutex
	at := map[time.Duration]int{}
	c.Each(7, 2, func(int) {
		mu.Lock()
		at[c.Now().Sub(clock.Epoch)]++
		mu.Unlock()
		_ = c.Sleep(context.Background(), 10*time.Second)
	})
	want := map[time.Duration]int{0: 2, 10 * time.Second: 2, 20 * time.Second: 2, 30 * time.Second: 1}
	if !reflect.DeepEqual(at, want) {
		t.Errorf("7 hosts of 10 s on 2 workers started at %v, want %v", at, want)
	}
}
