package extevents

import (
	"context"
	"log/slog"
	"sync"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/extensions"
)

// DefaultQueue is how many occurrences Local holds waiting.
const DefaultQueue = 256

// Local is the in-process extensions.Submitter of 'hostforge extensions
// listen': occurrences are dispatched one at a time, in the order they
// were taken, by extensions.FireEvents on the dispatcher's local runtime
// (its records in the dispatcher's store). An occurrence already queued or
// running is taken without queueing it again. An occurrence taken but not
// yet dispatched when the process stops is lost: its source sends it
// again (NetBox's job is requeued; the next projection pass sees the
// node's phase again), and its event IDs are the same.
type Local struct {
	d     *extensions.Dispatcher
	clock clock.Clock
	log   *slog.Logger

	mu      sync.Mutex
	pending map[string]bool
	closed  bool
	queue   chan extensions.Events
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewLocal starts dispatching on d; depth is the queue's length
// (DefaultQueue when 0). Close it to stop.
func NewLocal(d *extensions.Dispatcher, clk clock.Clock, log *slog.Logger, depth int) *Local {
	if depth <= 0 {
		depth = DefaultQueue
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Local{d: d, clock: clk, log: log, pending: map[string]bool{}, queue: make(chan extensions.Events, depth), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go l.run()
	return l
}

// Submit queues an occurrence.
func (l *Local) Submit(_ context.Context, evs extensions.Events) error {
	if evs.Key == "" || len(evs.Events) == 0 {
		return extensions.EventInvalid.New("an occurrence without a key or without events")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return Busy.New("the dispatcher is stopping: %s was not taken", evs.Key)
	case l.pending[evs.Key]:
		return nil
	}
	select {
	case l.queue <- evs:
		l.pending[evs.Key] = true
		return nil
	default:
		return Busy.New("%d occurrences are waiting: %s was not taken", cap(l.queue), evs.Key)
	}
}

func (l *Local) run() {
	defer close(l.done)
	rt := l.d.Local(l.clock)
	for evs := range l.queue {
		rep, err := extensions.FireEvents(l.ctx, rt, evs)
		if err != nil {
			_, f, _ := hostforge.Classify(err)
			l.log.Error("extension dispatch stopped", "phase", extensions.Phase, "key", evs.Key, "code", f.Code, "error", f.Error())
		} else {
			l.log.Info("extension events dispatched", "phase", extensions.Phase, "key", evs.Key, "deliveries", len(rep.Deliveries), "failed", rep.Failed())
		}
		l.mu.Lock()
		delete(l.pending, evs.Key)
		l.mu.Unlock()
	}
}

// Close stops taking occurrences and waits for the queued ones to be
// dispatched until ctx ends; then the dispatch running is cancelled (its
// SSH or Ansible task, if started, ends interrupted) and the rest are
// dropped.
func (l *Local) Close(ctx context.Context) {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.queue)
	}
	l.mu.Unlock()
	select {
	case <-l.done:
	case <-ctx.Done():
		l.cancel()
		<-l.done
	}
	l.cancel()
}
