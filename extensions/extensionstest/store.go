// Package extensionstest is the contract suite every extensions.Store
// passes: the in-memory fake, the SQL store on SQLite and PostgreSQL, and a
// user's own store. It checks what dispatch relies on: records keyed by
// delivery ID and replaced in place, queries and their order, outputs
// replaced whole, refusal of incomplete records with nothing written,
// the history's filters and order (since, newest first), attempts kept,
// concurrent writers, and the write-ahead of a delivery's effect, which
// at most one of two concurrent attempts wins.
package extensionstest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/extensions"
)

// Run runs the suite; newStore returns an empty store per subtest.
func Run(t *testing.T, newStore func(t *testing.T) extensions.Store) {
	t.Run("put and get", func(t *testing.T) { testPutGet(t, newStore(t)) })
	t.Run("replace by delivery ID", func(t *testing.T) { testReplace(t, newStore(t)) })
	t.Run("query and order", func(t *testing.T) { testQuery(t, newStore(t)) })
	t.Run("history: since and newest first", func(t *testing.T) { testHistory(t, newStore(t)) })
	t.Run("attempts", func(t *testing.T) { testAttempts(t, newStore(t)) })
	t.Run("outputs replaced whole", func(t *testing.T) { testOutputs(t, newStore(t)) })
	t.Run("invalid records change nothing", func(t *testing.T) { testInvalid(t, newStore(t)) })
	t.Run("concurrent writers", func(t *testing.T) { testConcurrent(t, newStore(t)) })
	t.Run("write-ahead of a delivery", func(t *testing.T) { testStartDelivery(t, newStore(t)) })
	t.Run("write-ahead raced by two attempts", func(t *testing.T) { testStartRace(t, newStore(t)) })
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

func record(id string, at time.Time) extensions.Execution {
	return extensions.Execution{DeliveryID: id, EventID: "evt-1", Stage: extensions.ServerRegisteredStage,
		Extension: "ext-a", Task: "notify", TaskType: extensions.TaskWebhook, Status: extensions.StatusRunning, StartedAt: at}
}

func same(t *testing.T, got, want extensions.Execution) {
	t.Helper()
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !got.StartedAt.Equal(want.StartedAt) || !got.FinishedAt.Equal(want.FinishedAt) || string(normal(got)) != string(normal(want)) {
		t.Fatalf("record differs:\n got %s\nwant %s", gj, wj)
	}
}

// normal encodes a record with times as instants and outputs as values.
func normal(e extensions.Execution) []byte {
	var outputs any
	if len(e.Outputs) > 0 {
		_ = json.Unmarshal(e.Outputs, &outputs)
	}
	e.Outputs = nil
	st, fi := e.StartedAt.UnixNano(), int64(0)
	if !e.FinishedAt.IsZero() {
		fi = e.FinishedAt.UnixNano()
	}
	e.StartedAt, e.FinishedAt = time.Time{}, time.Time{}
	b, _ := json.Marshal(struct {
		E       extensions.Execution
		S, F    int64
		Outputs any
	}{e, st, fi, outputs})
	return b
}

func testPutGet(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	if _, ok, err := s.Execution(ctx, "missing"); err != nil || ok {
		t.Fatalf("Execution(missing) = %v, %v; want not found", ok, err)
	}
	r := record("d-1", t0)
	r.Status, r.Message, r.FinishedAt = extensions.StatusSucceeded, "HTTP 204 — ünïcode ✓", t0.Add(1500*time.Millisecond)
	r.Outputs = json.RawMessage(`{"ip":"10.0.0.4","n":[1,2]}`)
	if err := s.PutExecution(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Execution(ctx, "d-1")
	if err != nil || !ok {
		t.Fatalf("Execution(d-1) = %v, %v", ok, err)
	}
	same(t, got, r)
	if got.StartedAt.Location() != time.UTC {
		t.Errorf("times come back in %v, want UTC", got.StartedAt.Location())
	}
	running := record("d-2", t0)
	if err := s.PutExecution(ctx, running); err != nil {
		t.Fatal(err)
	}
	got, _, _ = s.Execution(ctx, "d-2")
	if !got.FinishedAt.IsZero() || got.Outputs != nil {
		t.Fatalf("a running record came back finished %v with outputs %s", got.FinishedAt, got.Outputs)
	}
}

func testReplace(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	r := record("d-1", t0)
	if err := s.PutExecution(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status, r.Message, r.FinishedAt = extensions.StatusFailed, "EXTENSION_TASK_FAILED: 500", t0.Add(time.Second)
	if err := s.PutExecution(ctx, r); err != nil {
		t.Fatal(err)
	}
	all, err := s.Executions(ctx, extensions.Query{})
	if err != nil || len(all) != 1 {
		t.Fatalf("after replacing, %d records (%v), want 1", len(all), err)
	}
	same(t, all[0], r)
}

func testQuery(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	for i, spec := range []struct {
		id, event, ext string
		stage          extensions.Stage
		at             time.Duration
	}{
		{"c", "evt-1", "ext-a", extensions.ServerRegisteredStage, 2},
		{"a", "evt-1", "ext-b", extensions.ServerRegisteredStage, 1},
		{"b", "evt-1", "ext-a", extensions.ServerRegisteredStage, 1},
		{"d", "evt-2", "ext-a", extensions.ServerCreateDNS, 0},
	} {
		r := record(spec.id, t0.Add(spec.at*time.Second))
		r.EventID, r.Extension, r.Stage, r.Task = spec.event, spec.ext, spec.stage, fmt.Sprintf("task-%d", i)
		if err := s.PutExecution(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		q    extensions.Query
		want string
	}{
		"all, oldest first then by delivery ID": {extensions.Query{}, "dabc"},
		"by event":                              {extensions.Query{EventID: "evt-1"}, "abc"},
		"by extension":                          {extensions.Query{Extension: "ext-a"}, "dbc"},
		"by stage":                              {extensions.Query{Stage: extensions.ServerCreateDNS}, "d"},
		"combined":                              {extensions.Query{EventID: "evt-1", Extension: "ext-a"}, "bc"},
		"limit":                                 {extensions.Query{Limit: 2}, "da"},
		"no match":                              {extensions.Query{EventID: "nope"}, ""},
	}
	for name, c := range cases {
		if got := deliveryIDs(t, s, c.q); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

// deliveryIDs is the delivery IDs of the records q finds, in the order
// they come, one after the other.
func deliveryIDs(t *testing.T, s extensions.Store, q extensions.Query) string {
	t.Helper()
	rs, err := s.Executions(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, r := range rs {
		out += r.DeliveryID
	}
	return out
}

func testOutputs(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	if _, ok, err := s.Outputs(ctx, "ext-a"); err != nil || ok {
		t.Fatalf("Outputs before any = %v, %v", ok, err)
	}
	first := extensions.Outputs{Extension: "ext-a", Values: json.RawMessage(`{"a":1,"b":2}`), DeliveryID: "d-1", UpdatedAt: t0}
	if err := s.PutOutputs(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := extensions.Outputs{Extension: "ext-a", Values: json.RawMessage(`{}`), DeliveryID: "d-2", UpdatedAt: t0.Add(time.Minute)}
	if err := s.PutOutputs(ctx, second); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Outputs(ctx, "ext-a")
	if err != nil || !ok {
		t.Fatalf("Outputs = %v, %v", ok, err)
	}
	var v map[string]any
	if err := json.Unmarshal(got.Values, &v); err != nil || len(v) != 0 || got.DeliveryID != "d-2" || !got.UpdatedAt.Equal(second.UpdatedAt) {
		t.Fatalf("outputs %s from %s at %v: a run writing none must wipe the previous ones", got.Values, got.DeliveryID, got.UpdatedAt)
	}
	if _, ok, _ := s.Outputs(ctx, "ext-b"); ok {
		t.Fatal("outputs of one extension leaked to another")
	}
}

func testInvalid(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	bad := map[string]extensions.Execution{
		"no delivery ID":    func() extensions.Execution { r := record("", t0); return r }(),
		"no extension":      func() extensions.Execution { r := record("x1", t0); r.Extension = ""; return r }(),
		"no task":           func() extensions.Execution { r := record("x2", t0); r.Task = ""; return r }(),
		"unknown status":    func() extensions.Execution { r := record("x3", t0); r.Status = "done"; return r }(),
		"no start time":     func() extensions.Execution { r := record("x4", time.Time{}); return r }(),
		"negative attempts": func() extensions.Execution { r := record("x6", t0); r.Attempts = -1; return r }(),
		"outputs not JSON": func() extensions.Execution {
			r := record("x5", t0)
			r.Outputs = json.RawMessage(`{"a":`)
			return r
		}(),
	}
	for name, r := range bad {
		err := s.PutExecution(ctx, r)
		if !extensions.RecordInvalid.Is(err) {
			t.Errorf("%s: PutExecution = %v, want %s", name, err, extensions.RecordInvalid.Code)
		}
	}
	for name, o := range map[string]extensions.Outputs{
		"no extension": {Values: json.RawMessage(`{}`), DeliveryID: "d", UpdatedAt: t0},
		"not JSON":     {Extension: "e", Values: json.RawMessage(`{`), DeliveryID: "d", UpdatedAt: t0},
		"no delivery":  {Extension: "e", Values: json.RawMessage(`{}`), UpdatedAt: t0},
	} {
		if err := s.PutOutputs(ctx, o); !extensions.RecordInvalid.Is(err) {
			t.Errorf("outputs %s: %v, want %s", name, err, extensions.RecordInvalid.Code)
		}
	}
	all, err := s.Executions(ctx, extensions.Query{})
	if err != nil || len(all) != 0 {
		t.Fatalf("after refused writes, %d records (%v), want none", len(all), err)
	}
	if _, ok, _ := s.Outputs(ctx, "e"); ok {
		t.Fatal("refused outputs were stored")
	}
	var f *hostforge.Failure
	if err := s.PutExecution(ctx, bad["no delivery ID"]); err != nil {
		var ok bool
		if f, ok = hostforge.AsFailure(err); !ok || f.Retryable {
			t.Fatalf("refusal %v must be a non-retryable failure", err)
		}
	}
}

func testConcurrent(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := record(fmt.Sprintf("w%d-%d", w, i), t0.Add(time.Duration(i)*time.Millisecond))
				if err := s.PutExecution(ctx, r); err != nil {
					errs <- err
					return
				}
				r.Status, r.FinishedAt = extensions.StatusSucceeded, r.StartedAt.Add(time.Second)
				if err := s.PutExecution(ctx, r); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := s.Executions(ctx, extensions.Query{})
	if err != nil || len(all) != writers*each {
		t.Fatalf("%d records (%v), want %d", len(all), err, writers*each)
	}
	for _, r := range all {
		if r.Status != extensions.StatusSucceeded {
			t.Fatalf("record %s is %s after its final write", r.DeliveryID, r.Status)
		}
	}
}

func started(id string, at time.Time) extensions.Execution {
	r := record(id, at)
	r.TaskType, r.Status, r.Message = extensions.TaskSSH, extensions.StatusStarted, "the command may have begun"
	return r
}

// StartDelivery writes the write-ahead record over nothing or a running
// record only; anything else is returned untouched.
func testStartDelivery(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	fresh := started("fresh", t0)
	if _, ok, err := s.StartDelivery(ctx, fresh); err != nil || !ok {
		t.Fatalf("StartDelivery over no record = %v, %v; want started", ok, err)
	}
	got, _, _ := s.Execution(ctx, "fresh")
	same(t, got, fresh)
	if prior, ok, err := s.StartDelivery(ctx, started("fresh", t0.Add(time.Minute))); err != nil || ok {
		t.Fatalf("a second StartDelivery of one delivery = %v, %v; want refused", ok, err)
	} else {
		same(t, prior, fresh)
	}

	running := record("running", t0)
	if err := s.PutExecution(ctx, running); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.StartDelivery(ctx, started("running", t0)); err != nil || !ok {
		t.Fatalf("StartDelivery over a running record = %v, %v; want started", ok, err)
	}
	if got, _, _ := s.Execution(ctx, "running"); got.Status != extensions.StatusStarted {
		t.Fatalf("status %s after the write-ahead", got.Status)
	}

	for _, st := range []extensions.ExecStatus{extensions.StatusSucceeded, extensions.StatusFailed, extensions.StatusSkipped} {
		r := record("done-"+string(st), t0)
		r.Status, r.Message, r.FinishedAt = st, "over", t0.Add(time.Second)
		if err := s.PutExecution(ctx, r); err != nil {
			t.Fatal(err)
		}
		prior, ok, err := s.StartDelivery(ctx, started(r.DeliveryID, t0.Add(time.Minute)))
		if err != nil || ok {
			t.Fatalf("StartDelivery over a %s record = %v, %v; want refused", st, ok, err)
		}
		same(t, prior, r)
		got, _, _ := s.Execution(ctx, r.DeliveryID)
		same(t, got, r)
	}

	notStarted := record("bad", t0)
	if _, _, err := s.StartDelivery(ctx, notStarted); !extensions.RecordInvalid.Is(err) {
		t.Fatalf("StartDelivery of a running record = %v, want %s", err, extensions.RecordInvalid.Code)
	}
	noID := started("", t0)
	if _, _, err := s.StartDelivery(ctx, noID); !extensions.RecordInvalid.Is(err) {
		t.Fatalf("StartDelivery without a delivery ID = %v, want %s", err, extensions.RecordInvalid.Code)
	}
	if _, ok, _ := s.Execution(ctx, "bad"); ok {
		t.Fatal("a refused write-ahead was written")
	}
}

// Two attempts of one delivery race to start it: exactly one wins, every
// time.
func testStartRace(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	const rounds, racers = 20, 4
	for i := 0; i < rounds; i++ {
		id := fmt.Sprintf("race-%d", i)
		if err := s.PutExecution(ctx, record(id, t0)); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wins := make(chan int, racers)
		errs := make(chan error, racers)
		for r := 0; r < racers; r++ {
			wg.Add(1)
			go func(r int) {
				defer wg.Done()
				e := started(id, t0)
				e.Message = fmt.Sprintf("attempt %d", r)
				_, ok, err := s.StartDelivery(ctx, e)
				if err != nil {
					errs <- err
				} else if ok {
					wins <- r
				}
			}(r)
		}
		wg.Wait()
		close(wins)
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		var won []int
		for r := range wins {
			won = append(won, r)
		}
		if len(won) != 1 {
			t.Fatalf("round %d: attempts %v started the delivery, want exactly one", i, won)
		}
		got, _, _ := s.Execution(ctx, id)
		if got.Message != fmt.Sprintf("attempt %d", won[0]) {
			t.Fatalf("round %d: the record says %q, but attempt %d won", i, got.Message, won[0])
		}
	}
}

// testHistory: Since keeps what started at or after it; NewestFirst
// reverses the order (ties by delivery ID, descending), and Limit then
// keeps the newest.
func testHistory(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	for _, spec := range []struct {
		id string
		at time.Duration
	}{{"a", 0}, {"b", time.Second}, {"c", time.Second}, {"d", 3 * time.Second}, {"e", 2 * time.Second}} {
		if err := s.PutExecution(ctx, record(spec.id, t0.Add(spec.at))); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]struct {
		q    extensions.Query
		want string
	}{
		"newest first":                    {extensions.Query{NewestFirst: true}, "decba"},
		"newest first, limited":           {extensions.Query{NewestFirst: true, Limit: 2}, "de"},
		"since, inclusive":                {extensions.Query{Since: t0.Add(time.Second)}, "bced"},
		"since, newest first":             {extensions.Query{Since: t0.Add(2 * time.Second), NewestFirst: true}, "de"},
		"since, nanosecond past a record": {extensions.Query{Since: t0.Add(time.Second + 1)}, "ed"},
		"since, after every record":       {extensions.Query{Since: t0.Add(time.Hour)}, ""},
		"since and event":                 {extensions.Query{Since: t0.Add(time.Second), EventID: "evt-1", NewestFirst: true}, "decb"},
	} {
		if got := deliveryIDs(t, s, c.q); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

// testAttempts: a record keeps its attempts, a replacement replaces them,
// and the write-ahead carries them.
func testAttempts(t *testing.T, s extensions.Store) {
	ctx := context.Background()
	r := record("d-1", t0)
	r.Attempts = 1
	if err := s.PutExecution(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status, r.FinishedAt, r.Message, r.Attempts = extensions.StatusFailed, t0.Add(time.Second), "EXTENSION_TASK_FAILED: 503", 2
	if err := s.PutExecution(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, _, _ := s.Execution(ctx, "d-1")
	if got.Attempts != 2 {
		t.Fatalf("attempts %d after a record of 2 replaced one of 1", got.Attempts)
	}
	same(t, got, r)
	w := started("ssh-1", t0)
	w.Attempts = 1
	if _, ok, err := s.StartDelivery(ctx, w); err != nil || !ok {
		t.Fatalf("StartDelivery = %v, %v", ok, err)
	}
	all, err := s.Executions(ctx, extensions.Query{Extension: "ext-a", NewestFirst: true})
	if err != nil || len(all) != 2 {
		t.Fatalf("%d records (%v)", len(all), err)
	}
	for _, e := range all {
		if e.Attempts == 0 {
			t.Errorf("record %s lost its attempts in a query", e.DeliveryID)
		}
	}
}
