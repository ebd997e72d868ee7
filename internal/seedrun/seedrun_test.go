package seedrun_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/internal/seedrun"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every seed of the range runs exactly once.
func TestParallelRunsEachSeedOnce(t *testing.T) {
	var mu sync.Mutex
	var got []uint64
	seedrun.Parallel(seedrun.Range(5, 100), func(seed uint64) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seed)
	})
	slices.Sort(got)
	if len(got) != 100 || got[0] != 5 || got[99] != 104 || len(slices.Compact(slices.Clone(got))) != 100 {
		t.Fatalf("ran %d seeds, %v…", len(got), got[:min(len(got), 5)])
	}
}

// Only the first n problems are reported, then a count of the rest.
func TestReportFirst(t *testing.T) {
	rec := &recorder{TB: t}
	seedrun.ReportFirst(rec, []string{"a", "b", "c", "d"}, 2)
	if want := []string{"a", "b", "… 2 more"}; !slices.Equal(rec.errs, want) {
		t.Fatalf("reported %q, want %q", rec.errs, want)
	}
	rec.errs = nil
	seedrun.ReportFirst(rec, []string{"a"}, 2)
	if want := []string{"a"}; !slices.Equal(rec.errs, want) {
		t.Fatalf("reported %q, want %q", rec.errs, want)
	}
}

type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Error(args ...any) { r.errs = append(r.errs, args[0].(string)) }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
