package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/webhook"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// countingReceiver verifies every delivery's signature and counts, per
// webhook-id, the attempts it saw and the ones it accepted. The first
// attempt of every hundredth delivery (by ID) is answered 503 with
// Retry-After: 0, so retries are part of the run.
type countingReceiver struct {
	key      []byte
	mu       sync.Mutex
	attempts map[string]int
	accepted map[string]int
	badSig   atomic.Int64
}

func (c *countingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	id := r.Header.Get("webhook-id")
	mac := hmac.New(sha256.New, c.key)
	fmt.Fprintf(mac, "%s.%s.%s", id, r.Header.Get("webhook-timestamp"), b)
	if r.Header.Get("webhook-signature") != "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
		c.badSig.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	c.mu.Lock()
	c.attempts[id]++
	first := c.attempts[id] == 1
	if first && h.Sum32()%100 == 0 {
		c.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	c.accepted[id]++
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// BenchmarkDeliveries fires 10,000 serverRegistered events, each with one
// signed webhook task (retries: 2), through extension dispatch (Fire on
// flow.Local, the in-memory store), 8 in flight, to a local receiver that
// verifies every signature. It reports deliveries per second, the p50 and
// p99 of one event's dispatch, and what the receiver saw: deliveries lost
// (an ID never accepted), duplicates (an ID accepted more than once) and
// retried attempts. Run it once:
//
//	go test -run '^$' -bench BenchmarkDeliveries -benchtime 1x ./adapters/webhook/
func BenchmarkDeliveries(b *testing.B) {
	const events, inFlight = 10000, 8
	key, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	for range b.N {
		recv := &countingReceiver{key: key, attempts: map[string]int{}, accepted: map[string]int{}}
		srv := httptest.NewServer(recv)
		r, err := webhook.New(webhook.Config{Vault: memVault{"hook-signing": {"password": whsec}}, MaxConnsPerHost: inFlight})
		if err != nil {
			b.Fatal(err)
		}
		x, ps := extensions.Parse([]byte(`{"kind": "ExtensionDefinition", "schemaVersion": "1.1", "name": "notify", "label": "notify", "extensionType": "workflow",
 "vendor": "v", "extensionVersion": "1", "icon": "i", "dependencies": {}, "inputs": [], "outputs": [], "assets": [],
 "onAssetChange": [{"stage": "serverRegistered", "tasks": [{"label": "hook", "taskType": "ExtensionTaskWebhook",
   "options": {"endpoint": "`+srv.URL+`/enrolled", "method": "POST", "signingSecret": "hook-signing", "retries": 2,
     "requestTemplate": "{\"serial\": {{ server.serialNumber | dump }}, \"model\": {{ server.model | dump }}}"}}]}]}`), "notify.json")
		if x == nil {
			b.Fatal(ps)
		}
		reg, _ := extensions.NewRegistry(x)
		d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: r}, extensionsfake.NewStore())
		evs := make([]extensions.Event, events)
		for i := range evs {
			evs[i], _, err = extensions.NewEvent(fmt.Sprintf("serverRegistered/host-%05d/node-%05d", i, i), extensions.ServerRegisteredStage,
				[]byte(fmt.Sprintf(`{"server": {"serialNumber": "SN%05d", "model": "PowerEdge R450"}}`, i)))
			if err != nil {
				b.Fatal(err)
			}
		}
		lat := make([]time.Duration, events)
		var failed atomic.Int64
		next := make(chan int)
		var wg sync.WaitGroup
		b.ResetTimer()
		start := time.Now()
		for range inFlight {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rt := d.Local(clock.Real{})
				for i := range next {
					t0 := time.Now()
					rep, err := extensions.Fire(context.Background(), rt, evs[i])
					lat[i] = time.Since(t0)
					if err != nil || rep.Failed() {
						failed.Add(1)
					}
				}
			}()
		}
		for i := range events {
			next <- i
		}
		close(next)
		wg.Wait()
		took := time.Since(start)
		b.StopTimer()
		srv.Close()
		r.Close()

		var lost, dup, retried int
		for _, ev := range evs {
			id := extensions.DeliveryID(ev.ID, "notify", "hook")
			switch n := recv.accepted[id]; {
			case n == 0:
				lost++
			case n > 1:
				dup++
			}
			retried += max(recv.attempts[id]-1, 0)
		}
		slices.Sort(lat)
		b.ReportMetric(float64(events)/took.Seconds(), "deliveries/s")
		b.ReportMetric(float64(lat[events/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[events*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lost), "lost")
		b.ReportMetric(float64(dup), "duplicates")
		b.ReportMetric(float64(retried), "retried")
		b.ReportMetric(float64(failed.Load()), "failed")
		if lost > 0 || dup > 0 || failed.Load() > 0 || recv.badSig.Load() > 0 {
			b.Errorf("%d lost, %d duplicates, %d failed, %d bad signatures", lost, dup, failed.Load(), recv.badSig.Load())
		}
	}
}
