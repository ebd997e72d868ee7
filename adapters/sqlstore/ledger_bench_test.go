package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
)

// timed records the latency of every compare-and-set the agent makes.
type timed struct {
	enrollment.ProofStore
	mu  sync.Mutex
	lat []time.Duration
}

func (s *timed) ProveEnrollment(ctx context.Context, device, identity, reference string, since int64, run string, deadline time.Time) (string, error) {
	start := time.Now()
	h, err := s.ProofStore.ProveEnrollment(ctx, device, identity, reference, since, run, deadline)
	d := time.Since(start)
	s.mu.Lock()
	s.lat = append(s.lat, d)
	s.mu.Unlock()
	return h, err
}

// BenchmarkLedgerSettlement settles the qualifying completions of N
// devices with 8 concurrent proof agents against the SQL ledger: each
// settlement is the agent's whole path (classify the completion, one
// compare-and-set through the proof step). Setup (registering and
// projecting N devices) is not timed. Reported: proofs/s and the p99 and
// p50 latency of one compare-and-set. PostgreSQL runs when
// HOSTFORGE_POSTGRES_DSN is set.
func BenchmarkLedgerSettlement(b *testing.B) {
	const writers = 8
	for _, e := range sqlstoretest.Engines(b) {
		for _, n := range []int{1000, 2500, 5000, 10000} {
			b.Run(fmt.Sprintf("%s/devices=%d", e.Name(), n), func(b *testing.B) {
				var total time.Duration
				var lat []time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					ctx := context.Background()
					l, err := sqlstore.NewLedger(ctx, e.Open(b))
					if err != nil {
						b.Fatal(err)
					}
					cs := make([]enrollment.Completion, n)
					for d := range n {
						dev := fmt.Sprintf("host-%05d", d)
						id, err := l.Register(ctx, dev)
						if err != nil {
							b.Fatal(err)
						}
						node := fmt.Sprintf("node-%05d", d)
						if _, err := l.ProjectReference(ctx, dev, "ironic-cpu/"+node); err != nil {
							b.Fatal(err)
						}
						out, _ := json.Marshal(enrollment.Result{Device: dev, Instance: "ironic-cpu", Node: node, Enrolled: true, ProvisionState: "available",
							Phases: []enrollment.PhaseRecord{{Phase: enrollment.PhaseIronic, Status: "done"}}})
						cs[d] = enrollment.Completion{Device: dev, Identity: id, Run: "enroll/" + dev + "/r1", Status: enrollment.CompletionCompleted,
							ClosedAt: time.Now(), Output: out}
					}
					store := &timed{ProofStore: l}
					agent := &enrollment.ProofAgent{Store: store, Clock: clock.Real{}, Window: time.Hour}
					next := make(chan enrollment.Completion)
					var wg sync.WaitGroup
					var failed sync.Once
					b.StartTimer()
					start := time.Now()
					for range writers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for c := range next {
								if out, err := agent.Settle(ctx, c); err != nil || out.Action != enrollment.ProofEstablished {
									failed.Do(func() { b.Errorf("%s: %+v %v", c.Device, out, err) })
								}
							}
						}()
					}
					for _, c := range cs {
						next <- c
					}
					close(next)
					wg.Wait()
					total += time.Since(start)
					b.StopTimer()
					lat = append(lat, store.lat...)
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(n*b.N)/total.Seconds(), "proofs/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(total.Seconds()/float64(b.N), "s/settle-all")
			})
		}
	}
}
