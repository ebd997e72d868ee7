package ironic

import (
	"context"
	"errors"
	"time"

	"github.com/hostforge/hostforge"
)

// The retire phases: a node leaves Ironic the way it came in, one
// idempotent call at a time. [Phases.RetireGate] reads the node and refuses
// one a tenant holds; [Phases.Erase] moves it to MANAGEABLE and runs the
// site's erase as a manual clean, polled like the cleaning half;
// [Phases.RemoveNode] deletes its ports, portgroups and the node (or keeps
// it MANAGEABLE in maintenance, reason [RetiredReason]). Each call reads the
// node live and acts at most once; a node that is already gone is done.

// Phase names of the retire phases.
const (
	PhaseRetireGate = "retire_gate"
	PhaseErase      = "retire_erase"
	PhaseRemoveNode = "retire_ironic"
)

// ActionClean is the provision action of a manual clean: "clean" with the
// steps to run, from MANAGEABLE back to MANAGEABLE.
const ActionClean = "clean"

// RetiredReason is the maintenance reason of a node kept in Ironic after
// retirement (retire.keep_node): it marks the node retired, so a rerun
// neither erases nor touches it again.
const RetiredReason = "retired"

// CleanStep is one step of a manual clean, as Ironic's API takes it.
type CleanStep struct {
	Interface string         `json:"interface"`
	Step      string         `json:"step"`
	Args      map[string]any `json:"args,omitempty"`
}

// String renders "interface.step".
func (s CleanStep) String() string { return s.Interface + "." + s.Step }

// The erase steps of the Ironic Python Agent's generic hardware manager: a
// metadata erase wipes partition tables and file-system signatures in
// seconds; a full erase overwrites (or securely erases) every disk and can
// take hours.
var (
	EraseMetadata = CleanStep{Interface: "deploy", Step: "erase_devices_metadata"}
	EraseFull     = CleanStep{Interface: "deploy", Step: "erase_devices"}
)

// Decommissioner is what the retire phases need of Ironic besides Client:
// a manual clean and the deletions. Implementations return Ironic's errors
// as Client's do (a deletion of what does not exist is hostforge.ErrNotFound).
type Decommissioner interface {
	Client
	// Clean starts a manual clean of a MANAGEABLE node with the steps (the
	// provision action "clean"); like every provision action it returns
	// once accepted. A node in maintenance is refused (400), as are steps
	// its interfaces do not have — the node then goes to clean failed.
	Clean(ctx context.Context, ident string, steps []CleanStep) error
	// DeletePort deletes a port.
	DeletePort(ctx context.Context, uuid string) error
	// DeletePortgroup deletes a portgroup that no port belongs to.
	DeletePortgroup(ctx context.Context, uuid string) error
	// DeleteNode deletes a node, and with it its ports and portgroups. Ironic
	// refuses (409) a node that holds an instance or is in a state other
	// than enroll, manageable, available or adopt failed, unless it is in
	// maintenance.
	DeleteNode(ctx context.Context, ident string) error
}

// Failure codes of the retire phases.
var (
	NodeInUse = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_NODE_IN_USE",
		Phase:     "retire_gate",
		Owner:     hostforge.OwnerTenant,
		Retryable: false,
		Action:    "The Ironic node holds an instance (or is deployed): a tenant's workload runs on it, and retirement never tears a host down under a tenant. The team owning the instance named in the message releases it (deletes the instance, or undeploys the node); then rerun the retirement. Nothing was changed.",
	})
	RetireNeedsReview = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_NODE_NEEDS_REVIEW",
		Phase:     "retire_erase",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The node is in a provision state retirement does not move it out of (deploy failed, error, rescue and the like; the message names it and its last_error): resolve it in Ironic and bring the node to manageable by hand, then rerun the retirement.",
	})
	EraseFailed = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_ERASE_FAILED",
		Phase:     "retire_erase",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: true,
		Action:    "The erase ran as a manual clean and ended in clean failed (Ironic's last_error is in the message); the workflow recovers the node and reruns the erase within its attempt budget. When the step is not supported, the node's deploy interface runs no agent that can erase (fake, or no ramdisk): erase the disks another way and rerun with --no-erase. Otherwise read the failed step in the conductor log, fix the hardware or the ramdisk, then rerun.",
	})
	EraseTimeout = hostforge.Declare(hostforge.Spec{
		Code:      "RETIRE_ERASE_TIMEOUT",
		Phase:     "retire_erase",
		Owner:     hostforge.OwnerInfraEng,
		Retryable: false,
		Action:    "The erase did not finish before the site's cleaning deadline and was aborted (a full erase of large disks can take hours: raise cleaning_deadline, or use retire.erase: metadata). Check the node's console and clean steps, then rerun.",
	})
)

// RetireIn names the node of a retiring host.
type RetireIn struct {
	// Name is the node name (the NetBox device name).
	Name string `json:"name"`
	// Inventory asks the gate to read the node's inspection inventory too
	// (for the events that announce the retirement); a node without one
	// is not an error.
	Inventory bool `json:"inventory,omitempty"`
}

// RetireGateOut is what the gate read.
type RetireGateOut struct {
	// Present is false when Ironic has no node of that name.
	Present bool       `json:"present"`
	Node    NodeStatus `json:"node"`
	// MaintenanceReason is the node's maintenance reason ("" when none).
	MaintenanceReason string `json:"maintenance_reason,omitempty"`
	// Inventory is the node's inspection data when asked for and present.
	Inventory []byte `json:"inventory,omitempty"`
}

// Retired reports whether the node was kept in Ironic by an earlier
// retirement: manageable, in maintenance for RetiredReason.
func (g RetireGateOut) Retired() bool {
	return g.Present && g.Node.ProvisionState == StateManageable && g.Node.Maintenance && g.MaintenanceReason == RetiredReason
}

// RetireGate reads the node and refuses one a tenant holds
// (RETIRE_NODE_IN_USE): an instance_uuid, or a deployed node. It writes
// nothing.
func (p *Phases) RetireGate(ctx context.Context, in RetireIn) (RetireGateOut, error) {
	out, err := p.retireGate(ctx, in)
	return out, hostforge.Classified(err)
}

func (p *Phases) retireGate(ctx context.Context, in RetireIn) (RetireGateOut, error) {
	const phase = PhaseRetireGate
	if in.Name == "" {
		return RetireGateOut{}, InputInvalid.At(phase).New("no node name")
	}
	node, err := p.Client.GetNode(ctx, in.Name)
	if errors.Is(err, hostforge.ErrNotFound) {
		return RetireGateOut{}, nil
	}
	if err != nil {
		return RetireGateOut{}, p.classify(ctx, phase, in.Name, err, "reading node %s", in.Name)
	}
	out := RetireGateOut{Present: true, Node: status(node), MaintenanceReason: node.MaintenanceReason}
	if err := inUse(node, phase); err != nil {
		return out, err
	}
	if in.Inventory {
		inv, err := p.Client.Inventory(ctx, node.UUID)
		switch {
		case err == nil:
			out.Inventory = inv
		case errors.Is(err, hostforge.ErrNotFound):
		default:
			return out, p.classify(ctx, phase, in.Name, err, "reading the inventory of node %s", in.Name)
		}
	}
	return out, nil
}

// inUse is RETIRE_NODE_IN_USE for a node a tenant holds.
func inUse(n Node, phase string) error {
	switch {
	case n.InstanceUUID != "":
		return NodeInUse.At(phase).New("node %s holds instance %s (provision state %q)", n.Name, n.InstanceUUID, n.ProvisionState)
	case n.ProvisionState == StateActive, n.ProvisionState == StateDeploying, n.ProvisionState == StateDeployWait:
		return NodeInUse.At(phase).New("node %s is %q: something is deployed on it", n.Name, n.ProvisionState)
	}
	return nil
}

// decommissioner is the client's Decommissioner, or the failure saying the
// deployment wired a client without it.
func (p *Phases) decommissioner(phase string) (Decommissioner, error) {
	d, ok := p.Client.(Decommissioner)
	if !ok {
		return nil, RetireUnwired.At(phase).New("the Ironic client (%T) cannot clean or delete nodes", p.Client)
	}
	return d, nil
}

// retiringNode reads the node a retire phase that changes it works on,
// through the client's Decommissioner: found is false when Ironic has no
// node of that name. A node a tenant holds comes back found, with
// RETIRE_NODE_IN_USE.
func (p *Phases) retiringNode(ctx context.Context, phase, name string) (d Decommissioner, node Node, found bool, err error) {
	d, err = p.decommissioner(phase)
	if err != nil {
		return nil, Node{}, false, err
	}
	node, err = d.GetNode(ctx, name)
	if errors.Is(err, hostforge.ErrNotFound) {
		return d, Node{}, false, nil
	}
	if err != nil {
		return d, Node{}, false, p.classify(ctx, phase, name, err, "reading node %s", name)
	}
	return d, node, true, inUse(node, phase)
}

// manageBack requests manage of a node resting in a state manage leaves
// (available, enroll, inspect failed, clean failed), first clearing the
// maintenance a failed clean step set on a clean failed one.
func (p *Phases) manageBack(ctx context.Context, d Decommissioner, phase, name string, node Node) error {
	if node.Maintenance && node.ProvisionState == StateCleanFailed {
		if err := d.SetMaintenance(ctx, node.UUID, false, ""); err != nil {
			return p.classify(ctx, phase, name, err, "clearing maintenance of clean failed node %s", name)
		}
	}
	if err := d.ChangeProvisionState(ctx, node.UUID, ActionManage); err != nil {
		return p.classify(ctx, phase, name, err, "manage of node %s from %s", name, node.ProvisionState)
	}
	return nil
}

// RetireUnwired is raised when the Ironic phases' client has no manual
// clean and deletions.
var RetireUnwired = hostforge.Declare(hostforge.Spec{
	Code:      "RETIRE_IRONIC_UNWIRED",
	Phase:     "retire_ironic",
	Owner:     hostforge.OwnerSDK,
	Retryable: false,
	Action:    "The deployment built the Ironic phases with a client that cannot run a manual clean or delete nodes (ironic.Decommissioner): wire one (adapters/ironic and fakes.Ironic are), then rerun.",
})

// EraseIn is one call of the erase. The workflow calls it with the
// Progress of the previous call until Done, sleeping Next in between.
type EraseIn struct {
	Name  string      `json:"name"`
	Steps []CleanStep `json:"steps"`
	// Deadline bounds the erase (the site's cleaning deadline).
	Deadline time.Time     `json:"deadline"`
	Progress EraseProgress `json:"progress"`
}

// EraseProgress is what one erase attempt has done.
type EraseProgress struct {
	// Started is set once the manual clean was requested; StartedAt is when.
	Started   bool      `json:"started,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	// Recovered lists what the attempt moved the node out of before the
	// erase (available, clean failed, ...).
	Recovered []string `json:"recovered,omitempty"`
	Probes    int      `json:"probes,omitempty"`
	// Polls is the erase's observation history: NextPoll paces the looks
	// as it paces a cleaning's (PollClean).
	Polls Polls `json:"polls"`
}

// EraseOut is the outcome of one call.
type EraseOut struct {
	Node     NodeStatus    `json:"node"`
	Progress EraseProgress `json:"progress"`
	// Done: the erase finished and the node is manageable, or there was
	// nothing to erase (no node, or a node an earlier retirement kept).
	Done bool `json:"done"`
	// Erased is true when this attempt's clean ran to the end.
	Erased bool          `json:"erased,omitempty"`
	Next   time.Duration `json:"next,omitempty"`
	Note   string        `json:"note,omitempty"`
}

// Erase runs one call of the erase: it brings the node to MANAGEABLE
// (manage from available, enroll, inspect failed, clean failed — clearing
// the maintenance a failed clean step set), requests the manual clean with
// the steps, and polls it to MANAGEABLE. clean failed after the request is
// RETIRE_ERASE_FAILED (retryable: the workflow reruns the attempt, whose
// first call recovers the node); the deadline passed is
// RETIRE_ERASE_TIMEOUT (a clean wait is aborted first).
func (p *Phases) Erase(ctx context.Context, in EraseIn) (EraseOut, error) {
	out, err := p.erase(ctx, in)
	return out, hostforge.Classified(err)
}

func (p *Phases) erase(ctx context.Context, in EraseIn) (out EraseOut, err error) {
	const phase = PhaseErase
	pr := in.Progress
	defer func() { out.Progress = pr }()
	if in.Name == "" || len(in.Steps) == 0 {
		return out, InputInvalid.At(phase).New("node %q: an erase needs the node name and at least one clean step", in.Name)
	}
	d, node, found, err := p.retiringNode(ctx, phase, in.Name)
	if found {
		out.Node = status(node)
	}
	if err != nil {
		return out, err
	}
	if !found {
		out.Done, out.Note = true, "no node: nothing to erase"
		return out, nil
	}
	t := p.timing()
	log := p.log(in.Name, phase)
	now := p.now()
	// poll paces the next look at the erasing node by the poll policy of a
	// cleaning, with one more look when the same erase on this Ironic's
	// nodes was over lately (Pace), never past the deadline.
	poll := func(note string) (EraseOut, error) {
		out.Next, out.Note = beforeDeadline(p.next(&pr.Polls, now), now, in.Deadline), note
		return out, nil
	}
	settle := func(note string) (EraseOut, error) {
		out.Next, out.Note = t.StatePoll, note
		return out, nil
	}
	if pr.Started {
		pr.Probes++
		switch {
		case node.ProvisionState == StateManageable && Stable(node):
			p.ended(&pr.Polls, node, now)
			out.Done, out.Erased, out.Note = true, true, "erased: "+stepNames(in.Steps)
			log.Info("erase finished; node manageable", "step", "erase_poll", "took", now.Sub(pr.StartedAt))
			return out, nil
		case node.ProvisionState == StateCleanFailed:
			return out, EraseFailed.At(phase).New("node %s: the erase (%s) ended in clean failed: %s", in.Name, stepNames(in.Steps), node.LastError)
		case node.ProvisionState == StateCleaning, node.ProvisionState == StateCleanWait, node.ProvisionState == StateManageable:
		default:
			return out, RetireNeedsReview.At(phase).New("node %s went to %q while erasing (last_error: %s)", in.Name, node.ProvisionState, node.LastError)
		}
		if !in.Deadline.IsZero() && !now.Before(in.Deadline) {
			if node.ProvisionState == StateCleanWait {
				if err := d.ChangeProvisionState(ctx, node.UUID, ActionAbort); err != nil {
					log.Warn("aborting the erase failed", "step", "erase_poll", "error", err)
				}
			}
			return out, EraseTimeout.At(phase).New("node %s still %q at the cleaning deadline, %s after the erase was requested", in.Name, node.ProvisionState, now.Sub(pr.StartedAt))
		}
		pr.Polls.Add(Observe(node, now))
		return poll(node.ProvisionState)
	}

	// Not started: bring the node to manageable, out of maintenance, then clean.
	if !Stable(node) {
		return out, hostforge.RetryAfter(t.StatePoll, WaitStateUnstable, "node %s is in %q (target %q)", in.Name, node.ProvisionState, node.TargetProvisionState)
	}
	switch node.ProvisionState {
	case StateManageable:
		if node.Maintenance && node.MaintenanceReason == RetiredReason {
			out.Done, out.Note = true, "kept by an earlier retirement (maintenance: retired): not erased again"
			return out, nil
		}
	case StateAvailable, StateEnroll, StateInspectFailed, StateCleanFailed:
		// A failed clean step left maintenance on; manage works either
		// way, but a manual clean of a maintenance node is refused.
		if err := p.manageBack(ctx, d, phase, in.Name, node); err != nil {
			return out, err
		}
		pr.Recovered = append(pr.Recovered, node.ProvisionState)
		log.Info("manage requested before the erase", "step", "erase_start", "from", node.ProvisionState)
		return settle("manage requested from " + node.ProvisionState)
	default:
		return out, RetireNeedsReview.At(phase).New("node %s is in %q (last_error: %s); retirement does not move a node out of it", in.Name, node.ProvisionState, node.LastError)
	}
	if node.Maintenance {
		// Ironic refuses a manual clean of a node in maintenance.
		if err := d.SetMaintenance(ctx, node.UUID, false, ""); err != nil {
			return out, p.classify(ctx, phase, in.Name, err, "clearing maintenance of node %s before the erase", in.Name)
		}
		log.Info("maintenance cleared before the erase", "step", "erase_start", "reason", node.MaintenanceReason)
	}
	if err := d.Clean(ctx, node.UUID, in.Steps); err != nil {
		return out, p.classify(ctx, phase, in.Name, err, "manual clean %s of node %s", stepNames(in.Steps), in.Name)
	}
	pr.Started, pr.StartedAt = true, now
	pr.Polls.Start(PollClean, ActionClean, now)
	pr.Polls.Since, pr.Polls.Class = p.now(), "erase "+stepNames(in.Steps) // the same erase on this Ironic's nodes
	log.Info("erase requested as a manual clean", "step", "erase_start", "clean_steps", stepNames(in.Steps))
	return poll("manual clean requested: " + stepNames(in.Steps))
}

func stepNames(steps []CleanStep) string {
	s := ""
	for i, st := range steps {
		if i > 0 {
			s += ", "
		}
		s += st.String()
	}
	return s
}

// RemoveIn asks for a node to leave Ironic.
type RemoveIn struct {
	Name string `json:"name"`
	// KeepNode leaves the node MANAGEABLE in maintenance, reason
	// RetiredReason, instead of deleting it.
	KeepNode bool `json:"keep_node,omitempty"`
}

// RemoveOut says what the call found and did.
type RemoveOut struct {
	Node NodeStatus `json:"node"`
	// Done: the node is gone (or kept, retired).
	Done bool `json:"done"`
	// Deleted counts what this call deleted: ports, portgroups, the node.
	Ports      int  `json:"ports,omitempty"`
	Portgroups int  `json:"portgroups,omitempty"`
	Deleted    bool `json:"deleted,omitempty"`
	// Kept is true when the node stays, retired.
	Kept bool          `json:"kept,omitempty"`
	Next time.Duration `json:"next,omitempty"`
	Note string        `json:"note,omitempty"`
}

// deletable lists the states Ironic deletes a node in (outside maintenance).
var deletable = map[string]bool{StateManageable: true, StateEnroll: true, StateAvailable: true, "adopt failed": true}

// RemoveNode runs one call of the node's removal: its ports, then its
// portgroups, then the node are deleted (or, with KeepNode, it is left
// MANAGEABLE in maintenance for RetiredReason). A node in a failed state
// is first managed back to MANAGEABLE; one a tenant holds is refused.
func (p *Phases) RemoveNode(ctx context.Context, in RemoveIn) (RemoveOut, error) {
	out, err := p.removeNode(ctx, in)
	return out, hostforge.Classified(err)
}

func (p *Phases) removeNode(ctx context.Context, in RemoveIn) (RemoveOut, error) {
	const phase = PhaseRemoveNode
	var out RemoveOut
	if in.Name == "" {
		return out, InputInvalid.At(phase).New("no node name")
	}
	d, node, found, err := p.retiringNode(ctx, phase, in.Name)
	if found {
		out.Node = status(node)
	}
	if err != nil {
		return out, err
	}
	if !found {
		out.Done, out.Note = true, "no node"
		return out, nil
	}
	t := p.timing()
	log := p.log(in.Name, phase)
	if !Stable(node) {
		return out, hostforge.RetryAfter(t.StatePoll, WaitStateUnstable, "node %s is in %q (target %q)", in.Name, node.ProvisionState, node.TargetProvisionState)
	}
	switch node.ProvisionState {
	case StateCleanFailed, StateInspectFailed:
		if err := p.manageBack(ctx, d, phase, in.Name, node); err != nil {
			return out, err
		}
		out.Next, out.Note = t.StatePoll, "manage requested from "+node.ProvisionState
		return out, nil
	}
	if in.KeepNode {
		if node.ProvisionState != StateManageable {
			if node.ProvisionState != StateAvailable && node.ProvisionState != StateEnroll {
				return out, RetireNeedsReview.At(phase).New("node %s is in %q; a kept node is left manageable", in.Name, node.ProvisionState)
			}
			if err := p.manageBack(ctx, d, phase, in.Name, node); err != nil {
				return out, err
			}
			out.Next, out.Note = t.StatePoll, "manage requested from "+node.ProvisionState
			return out, nil
		}
		out.Done, out.Kept = true, true
		if node.Maintenance && node.MaintenanceReason == RetiredReason {
			out.Note = "kept: manageable, in maintenance (retired)"
			return out, nil
		}
		if err := d.SetMaintenance(ctx, node.UUID, true, RetiredReason); err != nil {
			return out, p.classify(ctx, phase, in.Name, err, "setting maintenance %q on node %s", RetiredReason, in.Name)
		}
		out.Node.Maintenance = true
		out.Note = "kept: maintenance set (retired)"
		log.Info("node kept in Ironic, retired", "step", "remove_node")
		return out, nil
	}
	if !deletable[node.ProvisionState] {
		return out, RetireNeedsReview.At(phase).New("node %s is in %q (last_error: %s); Ironic deletes nodes only in enroll, manageable or available", in.Name, node.ProvisionState, node.LastError)
	}
	ports, err := d.ListPorts(ctx, node.UUID)
	if err != nil {
		return out, p.classify(ctx, phase, in.Name, err, "listing the ports of node %s", in.Name)
	}
	for _, port := range ports {
		if err := d.DeletePort(ctx, port.UUID); err != nil && !errors.Is(err, hostforge.ErrNotFound) {
			return out, p.classify(ctx, phase, in.Name, err, "deleting port %s (%s) of node %s", port.UUID, port.Address, in.Name)
		}
		out.Ports++
	}
	pgs, err := d.ListPortgroups(ctx, node.UUID)
	if err != nil {
		return out, p.classify(ctx, phase, in.Name, err, "listing the portgroups of node %s", in.Name)
	}
	for _, pg := range pgs {
		if err := d.DeletePortgroup(ctx, pg.UUID); err != nil && !errors.Is(err, hostforge.ErrNotFound) {
			return out, p.classify(ctx, phase, in.Name, err, "deleting portgroup %s of node %s", pg.UUID, in.Name)
		}
		out.Portgroups++
	}
	if err := d.DeleteNode(ctx, node.UUID); err != nil && !errors.Is(err, hostforge.ErrNotFound) {
		return out, p.classify(ctx, phase, in.Name, err, "deleting node %s", in.Name)
	}
	out.Done, out.Deleted = true, true
	out.Note = "deleted"
	log.Info("node deleted", "step", "remove_node", "uuid", node.UUID, "ports", out.Ports, "portgroups", out.Portgroups)
	return out, nil
}
