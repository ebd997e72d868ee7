package extensions_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// BenchmarkFire dispatches one serverRegistered event per iteration (the
// specification's server payload, a new event ID each time) through Fire
// on flow.Local over the in-memory store and the recording runner: three
// extensions, four tasks (two webhooks, an SSH command, an Ansible
// playbook), each planned, recorded running, rendered, run and recorded.
// Run it with -benchtime 10000x for 10,000 events; it reports events/s and
// the peak heap in use (sampled every 100 events).
func BenchmarkFire(b *testing.B) {
	reg, err := extensions.NewRegistry(
		mustExt(b, def("cmdb", "", "notify:webhook", "audit:webhook")),
		mustExt(b, def("dns", "", "register:ansible")),
		mustExt(b, def("power", "", "check:ssh")),
	)
	if err != nil {
		b.Fatal(err)
	}
	payload, err := os.ReadFile(filepath.Join("testdata", "payloads", "server.json"))
	if err != nil {
		b.Fatal(err)
	}
	runner := extensions.RunnerFunc(func(context.Context, extensions.Request) (extensions.Result, error) {
		return extensions.Result{Message: "ok"}, nil
	})
	store := extensionsfake.NewStore()
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{
		extensions.TaskWebhook: runner, extensions.TaskSSH: runner, extensions.TaskAnsible: runner}, store)
	rt := d.Local(clock.NewFake(clock.Epoch))
	ctx := context.Background()
	var ms runtime.MemStats
	var peak uint64
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ev, _, err := extensions.NewEvent(fmt.Sprintf("evt-%d", i), extensions.ServerRegisteredStage, payload)
		if err != nil {
			b.Fatal(err)
		}
		rep, err := extensions.Fire(ctx, rt, ev)
		if err != nil || len(rep.Deliveries) != 4 || rep.Failed() {
			b.Fatalf("fire: %v %+v", err, rep)
		}
		if i%100 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	if recs, _ := store.Executions(ctx, extensions.Query{Limit: 1}); len(recs) == 0 {
		b.Fatal("no execution recorded")
	}
}

func mustExt(b *testing.B, def []byte) *extensions.Extension {
	x, ps := extensions.Parse(def, "bench")
	if x == nil {
		b.Fatal(ps)
	}
	return x
}
