package ironic

import (
	"slices"
	"sync"
	"time"
)

// Pace learns how long the transitions hostforge requests take on one
// Ironic — a manage's verification, a provide's cleaning, an inspection, a
// retirement's erase — per kind of wait, request and class of node (driver
// and resource class: the same hardware), so that a wait on a node also
// looks when its siblings' transitions were over, not only on the policy's
// growing grid. Hi is the 90th percentile (nearest rank) of the last
// PaceWindow transitions of a key, reckoned from the moment Ironic answered
// the request (Polls.Since); a key needs PaceMinSamples of them first.
//
// It adds one look per wait and moves none of the policy's:
//
//	looks the policy makes before Hi          made as they are
//	the policy's next look would come after Hi  one more look at Hi (when that
//	                                          is at least half a first poll
//	                                          sooner); if the node has not
//	                                          moved, the policy's look comes
//	                                          as it would have (Polls.Planned)
//	after Hi                                  the policy alone
//
// So a node is never seen later than the policy alone would see it, and a
// node as fast as nine in ten of its siblings is seen at Hi — on real
// hardware up to a cap (30 s while the conductor works, 2 min in clean
// wait) sooner — for at most one read more per wait.
//
// Only transitions Ironic dates are learned: provision_updated_at says when
// the change that ended the wait happened, and it is used when it falls
// between hostforge's two looks around the change (Polls.Took). A power
// change is not dated by any field a read can select (Ironic refuses
// updated_at in ?fields=), and a span taken from hostforge's own looks only
// measures its own grid, so a power wait is paced by the policy alone.
//
// What it changes: never a state, a request or a failure — only when the
// next read comes. Pace is a hint kept in memory, one per Ironic instance
// for the worker's life: a restart empties it and costs only the looks it
// would have saved until it has learned again. A nil *Pace learns nothing
// and places nothing. It is safe for concurrent use.
type Pace struct {
	mu   sync.Mutex
	keys map[paceKey]*paceRing
	// order is the keys by first use, for dropping the oldest past
	// paceMaxKeys.
	order []paceKey
}

// PaceWindow is how many recent transitions of a key Pace keeps, and
// PaceMinSamples how many it needs before it places a look.
const (
	PaceWindow     = 16
	PaceMinSamples = 4
	paceMaxKeys    = 256
)

type paceKey struct {
	kind   PollKind
	action string
	class  string
}

type paceRing struct {
	d    [PaceWindow]time.Duration
	n    int // samples held, at most PaceWindow
	next int // where the next sample goes
}

// Span is how long a key's recent transitions took from the request's
// answer: Lo the 10th percentile (for reports), Hi the 90th (where Paced
// adds its look). The zero Span places nothing.
type Span struct {
	Lo time.Duration `json:"lo"`
	Hi time.Duration `json:"hi"`
}

// NewPace is an empty Pace.
func NewPace() *Pace { return &Pace{keys: map[paceKey]*paceRing{}} }

// PaceClass is the class of node a spec's transitions are learned under:
// its driver and resource class.
func PaceClass(s NodeSpec) string { return s.Driver + "/" + s.ResourceClass }

// Learn records that a wait of kind k after request action on a node of
// class was over d after Ironic answered the request. A non-positive d is
// ignored.
func (p *Pace) Learn(k PollKind, action, class string, d time.Duration) {
	if p == nil || d <= 0 || action == "" {
		return
	}
	key := paceKey{k, action, class}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keys == nil {
		p.keys = map[paceKey]*paceRing{}
	}
	r := p.keys[key]
	if r == nil {
		if len(p.order) >= paceMaxKeys {
			delete(p.keys, p.order[0])
			p.order = p.order[1:]
		}
		r = &paceRing{}
		p.keys[key] = r
		p.order = append(p.order, key)
	}
	r.d[r.next] = d
	r.next = (r.next + 1) % PaceWindow
	r.n = min(r.n+1, PaceWindow)
}

// Span is the learned span of a key, and whether it has enough samples.
func (p *Pace) Span(k PollKind, action, class string) (Span, bool) {
	if p == nil || action == "" {
		return Span{}, false
	}
	var d []time.Duration
	p.mu.Lock()
	if r := p.keys[paceKey{k, action, class}]; r != nil {
		d = slices.Clone(r.d[:r.n])
	}
	p.mu.Unlock()
	if len(d) < PaceMinSamples {
		return Span{}, false
	}
	slices.Sort(d)
	return Span{Lo: d[rank(len(d), 10)], Hi: d[rank(len(d), 90)]}, true
}

// rank is the index of the q-th percentile of n sorted values, nearest
// rank: the smallest value with at least q % of the values at or below it.
func rank(n, q int) int {
	return max((q*n+99)/100-1, 0)
}

// Took is how long after Ironic answered the request (Since) the change
// the wait's latest look found happened, by Ironic's own date of it, and
// whether it can tell: it needs the request, a latest look that shows the
// node moved since the look (or the request) before it, and a
// provision_updated_at that moved and lies between those two looks on
// hostforge's clock and after Since. An undated change (a power change), or
// one a skewed Ironic clock dates outside the gap, teaches nothing.
func (p Polls) Took() (time.Duration, bool) {
	n := len(p.History)
	if p.Action == "" || p.Since.IsZero() || n < 2 {
		return 0, false
	}
	last, prev := p.History[n-1], p.History[n-2]
	pua := last.ProvisionUpdatedAt
	if last.Action != "" || last.same(prev) || pua.IsZero() || (prev.Action == "" && pua.Equal(prev.ProvisionUpdatedAt)) ||
		!pua.After(prev.At) || pua.After(last.At) || !pua.After(p.Since) {
		return 0, false
	}
	return pua.Sub(p.Since), true
}

// Paced is the pause before the next look in a wait, and the policy's own
// next look when this one is the extra look at Hi that stands in front of
// it (to be kept in Polls.Planned). It is NextPoll's pause, except that
//
//   - while Polls.Planned is ahead, the look comes no later than it: the
//     extra look at Hi did not find the node moved, and the policy's grid
//     goes on as if it had not been made;
//   - before Hi, when NextPoll's look would come after Hi by at least
//     First/2, the look comes at Hi instead, and NextPoll's look is
//     returned as the one planned.
//
// With a zero span, or for a wait hostforge did not request, it is
// NextPoll's. It is a pure function of its arguments.
func Paced(pol PollPolicy, polls Polls, span Span, now time.Time) (time.Duration, time.Time) {
	d := NextPoll(pol, polls.History, now)
	if p := polls.Planned; p.After(now) {
		return min(d, p.Sub(now)), time.Time{}
	}
	if span.Hi <= 0 || polls.Action == "" || polls.Since.IsZero() || d <= 0 || now.Before(polls.Since) {
		return d, time.Time{}
	}
	late, at := polls.Since.Add(span.Hi), now.Add(d)
	if now.Before(late) && at.Sub(late) >= pol.First/2 {
		return late.Sub(now), at
	}
	return d, time.Time{}
}
