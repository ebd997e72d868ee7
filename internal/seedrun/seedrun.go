// Package seedrun runs seeded fault schedules the way the simulators'
// suites and benchmarks do: each seed on its own, one per core at a time,
// and reports the broken ones without flooding the output.
package seedrun

import (
	"iter"
	"runtime"
	"sync"
	"testing"
)

// Range is the n seeds from first on.
func Range(first uint64, n int) iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for i := 0; i < n; i++ {
			if !yield(first + uint64(i)) {
				return
			}
		}
	}
}

// Parallel calls run for every seed, on GOMAXPROCS goroutines, and returns
// once every call has returned. run is called concurrently: what it
// gathers across seeds it guards itself.
func Parallel(seeds iter.Seq[uint64], run func(seed uint64)) {
	ch := make(chan uint64)
	go func() {
		defer close(ch)
		for s := range seeds {
			ch <- s
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range ch {
				run(seed)
			}
		}()
	}
	wg.Wait()
}

// ReportFirst fails tb with each of the first n problems, and with one
// line counting the rest when there are more.
func ReportFirst(tb testing.TB, problems []string, n int) {
	tb.Helper()
	for k, p := range problems {
		if k == n {
			tb.Errorf("… %d more", len(problems)-n)
			break
		}
		tb.Error(p)
	}
}
