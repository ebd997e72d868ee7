package enrollment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/flow"
	"github.com/hostforge/hostforge/ironic"
)

// The Ironic projection.
//
// The fleet manager projects each device's Ironic reference (instance and
// node) from Ironic itself, independently of any workflow: completion proof
// compares a run's resolved reference against this projection, so the
// projection must never be fed from the result it is compared with.
// [Projector.Project] is one pass: list every node of every Ironic
// instance, map each node to its device by node name (enrollment names the
// node after the NetBox device), and record every difference in the ledger.
// A change bumps the device's reference revision and clears its proof in
// the same write (see [ReferenceLedger]).
//
// A pass is conservative where Ironic cannot be read: a device whose
// projected node lives on an instance that could not be listed keeps its
// reference; a device whose node is gone from an instance that was listed
// is projected "" (no node); a device name found on two instances is
// ambiguous and left as it is, and the pass reports it.

// PhaseProjection is the phase projection failures are recorded against.
const PhaseProjection = "ironic_projection"

// ProjectionListFailed is raised when an Ironic instance's nodes could not
// be listed during a projection pass.
var ProjectionListFailed = hostforge.Declare(hostforge.Spec{
	Code:      "IRONIC_PROJECTION_LIST_FAILED",
	Phase:     "ironic_projection",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: true,
	Action:    "An Ironic instance did not list its nodes (the message names it and what Ironic said); its devices kept their projected references. Check that Ironic API and the credentials, then let the next pass (or hostforge ledger project) run.",
})

// NodeLister lists the nodes of one Ironic instance (the Ironic adapter's
// client is one).
type NodeLister interface {
	ListNodes(ctx context.Context) ([]ironic.Node, error)
}

// ReferenceLedger is what the projector needs from the fleet manager's
// ledger. Implementations return hostforge.ErrUnavailable (wrapped) when the
// ledger does not answer.
type ReferenceLedger interface {
	// ProjectedReferences returns every device's projected Ironic
	// reference ("" for a device without a node).
	ProjectedReferences(ctx context.Context) (map[string]string, error)
	// ProjectReference records the device's projected reference. A change
	// bumps the reference revision and clears proof atomically; an equal
	// reference writes nothing. A device the ledger does not know yet is
	// recorded with a new identity. It reports whether anything changed.
	ProjectReference(ctx context.Context, device, reference string) (changed bool, err error)
}

// NodeObserver is shown each Ironic instance's nodes as a projection pass
// listed them (the extensions' Ironic source watches deploys in them).
// It must return promptly: the pass waits for it.
type NodeObserver interface {
	ObserveNodes(ctx context.Context, instance string, nodes []ironic.Node)
}

// Projector projects devices' Ironic references into the ledger.
type Projector struct {
	// Instances are the Ironic instances by name (the names the routing
	// uses, so references read "instance/node-uuid").
	Instances map[string]NodeLister
	Ledger    ReferenceLedger
	Log       *slog.Logger
	// Observer, when set, is shown every listed instance's nodes.
	Observer NodeObserver
}

// ReferenceChange is one device's projected reference moving.
type ReferenceChange struct {
	Device string `json:"device"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// InstanceReport is one Ironic instance in a projection pass.
type InstanceReport struct {
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	// Failure is set when the instance could not be listed; Code and Error
	// render it.
	Failure *hostforge.Failure `json:"-"`
	Code    string             `json:"code,omitempty"`
	Error   string             `json:"error,omitempty"`
}

// ProjectionReport says what a pass saw and changed.
type ProjectionReport struct {
	Instances []InstanceReport  `json:"instances"`
	Changes   []ReferenceChange `json:"changes"`
	// Unchanged counts devices whose projection already matched.
	Unchanged int `json:"unchanged"`
	// Ambiguous lists device names found on more than one instance.
	Ambiguous []string `json:"ambiguous,omitempty"`
	// Unnamed counts nodes without a name (no device to map them to).
	Unnamed int `json:"unnamed"`
}

// Project runs one pass. The report lists what it did even when it fails;
// the error is nil or a *hostforge.Failure: FLEET_MANAGER_UNAVAILABLE when
// the ledger could not be read or written (the pass stops at that device),
// IRONIC_PROJECTION_LIST_FAILED when an instance could not be listed (every
// other instance is still projected), CANCELLED when ctx ended.
func (p *Projector) Project(ctx context.Context) (ProjectionReport, error) {
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var rep ProjectionReport
	if p.Ledger == nil {
		return rep, NotImplemented.At(PhaseProjection).New("the projector has no ledger")
	}
	names := make([]string, 0, len(p.Instances))
	for n := range p.Instances {
		names = append(names, n)
	}
	sort.Strings(names)

	listed := map[string]bool{}
	seen := map[string]string{} // device -> reference
	dup := map[string]bool{}
	var listErr error
	for _, inst := range names {
		ir := InstanceReport{Name: inst}
		nodes, err := p.Instances[inst].ListNodes(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return rep, hostforge.Classified(ctx.Err())
			}
			f := ProjectionListFailed.Wrap(err, "listing the nodes of Ironic instance %s", inst)
			ir.Failure, ir.Code, ir.Error = f, f.Code, f.Error()
			if listErr == nil {
				listErr = f
			}
			log.Warn("ironic projection: instance not listed; its devices keep their references", "phase", PhaseProjection, "instance", inst, "code", f.Code, "error", f.Error())
			rep.Instances = append(rep.Instances, ir)
			continue
		}
		listed[inst] = true
		ir.Nodes = len(nodes)
		if p.Observer != nil {
			p.Observer.ObserveNodes(ctx, inst, nodes)
		}
		for _, n := range nodes {
			name := strings.TrimSpace(n.Name)
			if name == "" || n.UUID == "" {
				rep.Unnamed++
				continue
			}
			ref := IronicRef{Instance: inst, Node: n.UUID}.String()
			if prev, ok := seen[name]; ok && prev != ref {
				dup[name] = true
				continue
			}
			seen[name] = ref
		}
		rep.Instances = append(rep.Instances, ir)
	}

	current, err := p.Ledger.ProjectedReferences(ctx)
	if err != nil {
		return rep, ledgerErr(err, "reading the projected references")
	}
	for d := range dup {
		rep.Ambiguous = append(rep.Ambiguous, d)
		delete(seen, d)
		log.Warn("ironic projection: device name found on more than one Ironic instance; its reference is left as it is", "phase", PhaseProjection, "device", d)
	}
	sort.Strings(rep.Ambiguous)

	// Every device Ironic names, and every device the ledger projects on a
	// listed instance whose node is gone.
	want := map[string]string{}
	for d, ref := range seen {
		want[d] = ref
	}
	for d, ref := range current {
		if _, ok := want[d]; ok || ref == "" || dup[d] {
			continue
		}
		inst, _, _ := strings.Cut(ref, "/")
		if listed[inst] {
			want[d] = ""
		}
	}
	devices := make([]string, 0, len(want))
	for d := range want {
		devices = append(devices, d)
	}
	sort.Strings(devices)
	for _, d := range devices {
		to, from := want[d], current[d]
		if to == from {
			rep.Unchanged++
			continue
		}
		changed, err := p.Ledger.ProjectReference(ctx, d, to)
		if err != nil {
			return rep, ledgerErr(err, "projecting %s for device %s", orNone(to), d)
		}
		if !changed {
			rep.Unchanged++
			continue
		}
		rep.Changes = append(rep.Changes, ReferenceChange{Device: d, From: from, To: to})
		log.Info("ironic projection: reference changed; proof cleared", "phase", PhaseProjection, "device", d, "from", orNone(from), "to", orNone(to))
	}
	return rep, listErr
}

func orNone(ref string) string {
	if ref == "" {
		return "(no node)"
	}
	return ref
}

// ledgerErr classifies a ledger error of the projection.
func ledgerErr(err error, format string, args ...any) error {
	if hostforge.Settled(err) {
		return hostforge.Classified(err)
	}
	msg := fmt.Sprintf(format, args...)
	if errors.Is(err, hostforge.ErrUnavailable) {
		return FleetManagerUnavailable.At(PhaseProjection).Wrap(err, "%s", msg)
	}
	return FleetManagerUnavailable.At(PhaseProjection).Wrap(err, "the ledger refused %s", msg)
}

// DefaultProjectionInterval is the pause between projection passes of a
// long-running process (hostforge worker).
const DefaultProjectionInterval = time.Minute

// RunEvery runs a pass, then one every interval on clk
// (DefaultProjectionInterval when zero), until ctx ends: the projection of
// a process that runs it alone (flow.Every). A failed pass is logged and
// the next one runs on schedule: the projection only ever converges. It
// returns ctx's error. Under Temporal a site's projection is a schedule
// instead, run once per interval however many workers there are.
func (p *Projector) RunEvery(ctx context.Context, clk clock.Clock, interval time.Duration) error {
	if interval <= 0 {
		interval = DefaultProjectionInterval
	}
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return flow.Every(ctx, clk, interval, func(ctx context.Context) {
		rep, err := p.Project(ctx)
		if err != nil && ctx.Err() == nil {
			_, f, _ := hostforge.Classify(err)
			log.Warn("ironic projection pass failed; the next one runs on schedule", "phase", PhaseProjection, "code", f.Code, "error", f.Error(), "changes", len(rep.Changes))
		}
	})
}
