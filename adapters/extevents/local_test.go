package extevents_test

import (
	"context"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/extevents"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// blockingRunner holds every run until released.
type blockingRunner struct {
	started chan string
	release chan struct{}
}

func (b *blockingRunner) Run(ctx context.Context, req extensions.Request) (extensions.Result, error) {
	b.started <- req.EventID
	select {
	case <-b.release:
		return extensions.Result{Message: "ok"}, nil
	case <-ctx.Done():
		return extensions.Result{}, hostforge.Classified(ctx.Err())
	}
}

// The in-process queue: an occurrence queued or running is not queued
// twice, a full queue answers EXTENSION_EVENTS_BUSY, and a closed one
// takes nothing; Close waits for what is queued.
func TestLocalQueue(t *testing.T) {
	x, ps := extensions.Parse([]byte(decomDef), "retire.json")
	if x == nil {
		t.Fatal(ps)
	}
	reg, _ := extensions.NewRegistry(x)
	run := &blockingRunner{started: make(chan string, 8), release: make(chan struct{})}
	store := extensionsfake.NewStore()
	d := extensions.NewDispatcher(reg, map[extensions.TaskType]extensions.Runner{extensions.TaskWebhook: run}, store)
	l := extevents.NewLocal(d, clock.Real{}, nil, 1)
	occ := func(key string) extensions.Events {
		ev, _, err := extensions.NewEvent(key+"/serverDecommissioned", extensions.ServerDecommissioned, []byte(`{"server": {"serverId": 1}}`))
		if err != nil {
			t.Fatal(err)
		}
		return extensions.Events{Key: key, Events: []extensions.Event{ev}}
	}
	ctx := context.Background()
	if err := l.Submit(ctx, occ("a")); err != nil {
		t.Fatal(err)
	}
	if got := <-run.started; got != "a/serverDecommissioned" {
		t.Fatalf("started %s", got)
	}
	if err := l.Submit(ctx, occ("a")); err != nil {
		t.Fatalf("an occurrence already running: %v, want it taken without a second dispatch", err)
	}
	if err := l.Submit(ctx, occ("b")); err != nil {
		t.Fatal(err)
	}
	if err := l.Submit(ctx, occ("c")); !extevents.Busy.Is(err) {
		t.Fatalf("a full queue: %v, want %s", err, extevents.Busy.Code)
	}
	close(run.release)
	l.Close(ctx)
	if err := l.Submit(ctx, occ("d")); !extevents.Busy.Is(err) {
		t.Fatalf("a closed queue: %v, want %s", err, extevents.Busy.Code)
	}
	recs, _ := store.Executions(ctx, extensions.Query{Stage: extensions.ServerDecommissioned})
	if len(recs) != 2 || recs[0].EventID == recs[1].EventID {
		t.Fatalf("records %+v: want a's and b's, once each", recs)
	}
	for _, r := range recs {
		if r.Status != extensions.StatusSucceeded {
			t.Errorf("record %s %s", r.EventID, r.Status)
		}
	}
}
