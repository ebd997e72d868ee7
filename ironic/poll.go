package ironic

import (
	"time"
)

// PollKind is what a wait on Ironic waits for. Each kind has its own first
// poll and cap, from Timing (see Timing.Policy): a power change is over in
// seconds to a minute on real hardware, a cleaning in minutes to hours.
type PollKind string

// The kinds of wait the phases have.
const (
	// PollVerify waits for manage from enroll: verifying → manageable.
	PollVerify PollKind = "verify"
	// PollPower waits for a power change hostforge requested.
	PollPower PollKind = "power"
	// PollInspect waits for an inspection: inspecting → inspect wait →
	// manageable.
	PollInspect PollKind = "inspect"
	// PollClean waits for cleaning after provide: cleaning ⇄ clean wait →
	// available.
	PollClean PollKind = "clean"
	// PollSettle waits for a transition hostforge did not start (the
	// prelude finds a node in flight, or someone else's inspection).
	PollSettle PollKind = "settle"
)

// PollPolicy is one kind's pacing: the first poll after an action or an
// observed change comes First after it, and while nothing changes the pause
// grows with the time the node has been quiet, never above Max — or, while
// the latest look shows Ironic waiting for the ramdisk (RamdiskWait), never
// above WaitMax when that is set.
type PollPolicy struct {
	First   time.Duration
	Max     time.Duration
	WaitMax time.Duration
}

// RamdiskWait reports whether a provision state is Ironic waiting for the
// ramdisk on the host (clean wait, inspect wait, wait call-back, rescue
// wait) rather than the conductor working: such a state lasts minutes to
// hours.
func RamdiskWait(state string) bool {
	switch state {
	case StateCleanWait, StateInspectWait, StateDeployWait, "rescue wait":
		return true
	}
	return false
}

// Observation is one look at a node as the poll policy keeps it: the fields
// whose change means the node moved, Ironic's own time of its last
// provision-state change, and when hostforge looked (its clock). An entry
// with Action set is not a read: it records that hostforge requested that
// action (manage, power on, inspect, provide) at At.
type Observation struct {
	At                   time.Time `json:"at"`
	Action               string    `json:"action,omitempty"`
	ProvisionState       string    `json:"provision_state,omitempty"`
	TargetProvisionState string    `json:"target_provision_state,omitempty"`
	PowerState           string    `json:"power_state,omitempty"`
	TargetPowerState     string    `json:"target_power_state,omitempty"`
	// ProvisionUpdatedAt is Ironic's provision_updated_at, on Ironic's
	// clock; zero when Ironic did not say.
	ProvisionUpdatedAt time.Time `json:"provision_updated_at,omitzero"`
}

// Observe is the observation of node n read at at.
func Observe(n Node, at time.Time) Observation {
	return Observation{
		At: at, ProvisionState: n.ProvisionState, TargetProvisionState: n.TargetProvisionState,
		PowerState: n.PowerState, TargetPowerState: n.TargetPowerState, ProvisionUpdatedAt: n.ProvisionUpdatedAt,
	}
}

// same reports whether two reads show the node unmoved. An action entry
// is never the same as anything: it is a change hostforge made.
func (o Observation) same(p Observation) bool {
	if o.Action != "" || p.Action != "" {
		return false
	}
	if o.ProvisionState != p.ProvisionState || o.TargetProvisionState != p.TargetProvisionState ||
		o.PowerState != p.PowerState || o.TargetPowerState != p.TargetPowerState {
		return false
	}
	if o.ProvisionUpdatedAt.IsZero() || p.ProvisionUpdatedAt.IsZero() {
		return true // Ironic did not say; the states alone decide
	}
	return o.ProvisionUpdatedAt.Equal(p.ProvisionUpdatedAt)
}

// Polls is one wait's observation history, as it travels from call to call
// in a step's progress: steps are one attempt per call and keep nothing in
// memory, so whatever NextPoll needs is here, in the step's input and
// output, and survives a worker restart and a Temporal replay. It holds at
// most three entries — the last look before the latest change, the first
// look after it, the latest look — which is everything NextPoll reads.
type Polls struct {
	Kind    PollKind      `json:"kind,omitempty"`
	History []Observation `json:"history,omitempty"`
	// Action is the request that began the wait (empty for a wait
	// hostforge did not start) and Since when Ironic answered it: the
	// learned pace (Pace) is reckoned from them, after the history has
	// moved on past the request. Ironic starts the transition before it
	// answers, so its length from the answer does not carry the request's
	// own latency.
	Action string    `json:"action,omitempty"`
	Since  time.Time `json:"since,omitzero"`
	// Class is the node's class for Pace (PaceClass).
	Class string `json:"class,omitempty"`
	// Planned is the policy's own next look when the next one is Pace's
	// extra look at the siblings' Hi (Paced): it is made as planned if
	// the extra one finds the node unmoved.
	Planned time.Time `json:"planned,omitzero"`
}

// Start begins a wait of kind k with the action hostforge just requested.
func (p *Polls) Start(k PollKind, action string, at time.Time) {
	p.Kind, p.Action, p.Since, p.Class, p.Planned = k, action, at, "", time.Time{}
	p.History = []Observation{{At: at, Action: action}}
}

// Add records a look at the node, keeping the history to what NextPoll
// reads: a look that shows the node unmoved replaces the run's latest look
// (its first stays), a look that shows it moved starts a new run after the
// look before it. It never writes into the slice it was given (a step's
// input may be shared with a recorder): the history is built anew.
func (p *Polls) Add(o Observation) {
	h, n := p.History, len(p.History)
	switch {
	case n == 0:
		p.History = []Observation{o}
	case !o.same(h[n-1]):
		p.History = []Observation{h[n-1], o}
	case n >= 2 && h[n-2].same(o):
		p.History = append(append(make([]Observation, 0, n), h[:n-1]...), o)
	default:
		p.History = append(append(make([]Observation, 0, n+1), h...), o)
	}
}

// NextPoll is the pause before the next look at a node, given what the
// looks so far showed (oldest first) and the time now. It is a pure
// function of its arguments:
//
//   - nothing observed yet, or nothing since hostforge's action: First —
//     poll soon after an action, however long Ironic took to accept it (a
//     fast transition is over by then);
//   - the node's latest run — the looks since it last changed — began at
//     c, and the pause is the time it has been quiet plus First, so the
//     polls double their spacing while nothing changes (First, 3×First,
//     7×First, … after c), never longer than the cap — Max, or WaitMax
//     while the latest look shows a ramdisk wait — and never shorter than
//     First;
//   - c is the moment of the latest change. On the first look after an
//     action it is the action's time: when hostforge sent it, so that a
//     request Ironic took long to accept counts as time the transition has
//     been running. A change hostforge saw between two looks
//     happened at Ironic's provision_updated_at when that moved and lies
//     between the two looks, else at the later look (poll soon after any
//     observed change). On a first look, with no earlier one, it is
//     provision_updated_at when Ironic gives one (a node in clean wait for
//     an hour is not polled as if it had just started), else the look
//     itself.
//
// provision_updated_at is Ironic's clock: it is only ever used clamped
// between hostforge's own looks and never after now, so a skewed clock
// costs at most one gap of lateness, never a busy loop.
func NextPoll(pol PollPolicy, history []Observation, now time.Time) time.Duration {
	first, limit := pol.First, max(pol.Max, pol.First)
	if first <= 0 {
		return 0
	}
	n := len(history)
	if n == 0 {
		return first
	}
	last := history[n-1]
	if pol.WaitMax > 0 && RamdiskWait(last.ProvisionState) {
		limit = max(pol.WaitMax, first)
	}
	if last.Action != "" {
		return first
	}
	i := n - 1
	for i > 0 && history[i-1].same(last) {
		i--
	}
	run := history[i]
	c := run.At
	pua := last.ProvisionUpdatedAt
	switch {
	case i == 0:
		if !pua.IsZero() && pua.Before(c) {
			c = pua
		}
	case history[i-1].Action != "":
		// The first look after an action: the action moved the node.
		c = history[i-1].At
		if prev := history[i-1].At; !pua.IsZero() && pua.After(prev) && pua.Before(run.At) {
			c = pua
		}
	default:
		prev := history[i-1]
		if !pua.IsZero() && !pua.Equal(prev.ProvisionUpdatedAt) && pua.After(prev.At) && pua.Before(run.At) {
			c = pua
		}
	}
	if c.After(now) {
		c = now
	}
	d := now.Sub(c) + first
	return min(max(d, first), limit)
}
