package ironic

import (
	"time"
)

// Sighting is a step's last look at its node, handed to the step the
// workflow runs next. The Ironic steps run back to back — the inspection
// half ends on the read that found the node manageable and powered on, the
// cleaning half on the one that found it available — and the next step's
// first act was to read the node again to guard its first write. A
// sighting taken moments ago answers that guard as well as a new read
// would (whose answer is itself as old as its round trip by the time it is
// used), so the next step acts on it and saves a round trip on Ironic on
// every host's critical path. One older than Timing.FreshLook — a step
// rerun after a wait, a worker that died, a workflow resumed later — is
// not used: the step reads the node as before. A write made on a sighting
// names the node by its name, as the read it stands in for would have
// found it, never by the UUID the sighting carries.
type Sighting struct {
	// At is when the read that saw the node was sent, on the phases' clock.
	At   time.Time  `json:"at"`
	Node NodeStatus `json:"node"`
}

// sight is the sighting of node n read at at.
func sight(n Node, at time.Time) *Sighting { return &Sighting{At: at, Node: status(n)} }

// fresh returns the node a sighting saw when it is recent enough to stand
// in for a read: taken no longer than FreshLook ago and not in the future
// (a clock that disagrees with the one that took it proves nothing). The
// node has the states, ownership and maintenance flag a poll reads
// (statusFields), nothing else.
func (p *Phases) fresh(s *Sighting) (Node, bool) {
	if s == nil || s.Node.UUID == "" || s.At.IsZero() {
		return Node{}, false
	}
	age := p.now().Sub(s.At)
	if age < 0 || age > p.timing().FreshLook {
		return Node{}, false
	}
	n := s.Node
	return Node{
		UUID: n.UUID, Driver: n.Driver, ProvisionState: n.ProvisionState, TargetProvisionState: n.TargetProvisionState,
		PowerState: n.PowerState, TargetPowerState: n.TargetPowerState, InstanceUUID: n.InstanceUUID, Maintenance: n.Maintenance,
	}, true
}
