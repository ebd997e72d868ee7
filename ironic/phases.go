package ironic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/link"
)

// Verifier checks a node's inspection inventory (as Ironic returns it)
// against the expectations the workflow computed, which this package
// carries opaquely. It returns nil, a *hostforge.Failure naming every
// mismatch, or a plain error when the inventory cannot be read. verify.Verifier
// is the production one.
type Verifier interface {
	VerifyInventory(inventory []byte, expect json.RawMessage) error
}

// LinkReader reads the BMC-reported link state of a host's frontend ports,
// keyed by MAC. The BMC package implements it over Redfish (even for
// ipmi-driver nodes); the fakes over the fake hosts. An error means the BMC
// cannot observe links (unsupported or failing), which fails the attempt;
// a link it cannot judge is link.Unknown, which fails open.
type LinkReader interface {
	FrontendLinks(ctx context.Context, bmcAddress, credentialItem string, macs []string) (map[string]link.State, error)
}

// Timing holds the phases' waits and deadlines. Zero fields take the defaults.
//
// Every wait on Ironic is paced by one policy, NextPoll: the first look
// comes soon after hostforge's action (or after any change it saw), and
// the looks spread out only while the node stays unmoved — each pause is
// the time the node has been quiet plus the kind's first poll — up to a
// cap. The cap bounds how late a finished transition is seen. It is
// StatePollMax while the conductor works (verifying, a power change, the
// cleaning or inspecting before the ramdisk runs: BMC calls, seconds to a
// minute on real hardware), and the kind's own cap while Ironic waits for
// the ramdisk (clean wait, inspect wait: minutes to hours, every clean
// step moving the node and so bringing the polls back to the first):
//
//	kind       waits for                          first poll       cap (conductor / ramdisk)
//	verify     manage from enroll (verifying)     StatePoll        StatePollMax
//	power      a power change hostforge asked for StatePoll        StatePollMax
//	inspect    an inspection                      InspectionPoll   StatePollMax / InspectionPollMax
//	clean      cleaning after provide             CleanPollMin     StatePollMax / CleanPollMax
//	settle     a transition someone else started  StatePoll        StatePollMax / CleanPollMax
//
// While the frontend-link guard samples the BMC, the pause is also at most
// InspectionPoll.
//
// With a Pace (Phases.Pace), the waits hostforge requested whose end Ironic
// dates (verify, inspect, clean, and a retirement's erase) get one more
// look when nine in ten of the same transitions on this Ironic's nodes of
// the same class were over, the policy's own looks unmoved (Paced).
type Timing struct {
	// StatePoll is the first poll after manage or power on, and of a node
	// found in someone else's transition (10 s).
	StatePoll time.Duration
	// StatePollMax caps the polls while the conductor works: verification,
	// a power change, cleaning or inspecting before the ramdisk (30 s).
	StatePollMax time.Duration
	// LockRetry is the After of a node_locked wait (10 s); the workflow
	// applies its own 10 s → 60 s backoff on top.
	LockRetry time.Duration
	// InspectionPoll is the first poll after inspect, and the pause between
	// link samples while the link guard runs (20 s).
	InspectionPoll time.Duration
	// InspectionPollMax caps the polls in inspect wait (30 s).
	InspectionPollMax time.Duration
	// InspectionTimeout bounds one inspection from the inspect request (1 h).
	InspectionTimeout time.Duration
	// PowerOnTimeout bounds the wait for Ironic to report power on (10 min).
	PowerOnTimeout time.Duration
	// LinkBudget is the frontend-link guard's budget from power on (5 min).
	LinkBudget time.Duration
	// CleanPollMin is the first poll after provide, and CleanPollMax caps
	// the polls in clean wait (15 s, 2 min).
	CleanPollMin, CleanPollMax time.Duration
	// InventoryGrace is how long a missing inventory is retried after
	// inspection lands in manageable (Ironic writes it a moment later; 1 min).
	InventoryGrace time.Duration
	// FreshLook is how old the previous step's last look at the node (a
	// Sighting) may be and still stand in for the read that guards the
	// next step's first write (2 s: the steps run back to back, and on a
	// loaded Ironic a read's own answer is about that old when it is used).
	FreshLook time.Duration
}

// DefaultTiming is the Timing a zero Timing stands for: the production
// waits, meant for real hardware whose transitions take minutes.
func DefaultTiming() Timing { return Timing{}.withDefaults() }

func (t Timing) withDefaults() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.StatePoll, 10*time.Second)
	def(&t.StatePollMax, 30*time.Second)
	def(&t.LockRetry, 10*time.Second)
	def(&t.InspectionPoll, 20*time.Second)
	def(&t.InspectionPollMax, 30*time.Second)
	def(&t.InspectionTimeout, time.Hour)
	def(&t.PowerOnTimeout, 10*time.Minute)
	def(&t.LinkBudget, 5*time.Minute)
	def(&t.CleanPollMin, 15*time.Second)
	def(&t.CleanPollMax, 2*time.Minute)
	def(&t.InventoryGrace, time.Minute)
	def(&t.FreshLook, 2*time.Second)
	return t
}

// Policy is the pacing of one kind of wait (see Timing). An unknown kind
// is paced as settle.
func (t Timing) Policy(k PollKind) PollPolicy {
	t = t.withDefaults()
	switch k {
	case PollVerify, PollPower:
		return PollPolicy{First: t.StatePoll, Max: t.StatePollMax}
	case PollInspect:
		return PollPolicy{First: t.InspectionPoll, Max: t.StatePollMax, WaitMax: t.InspectionPollMax}
	case PollClean:
		return PollPolicy{First: t.CleanPollMin, Max: t.StatePollMax, WaitMax: t.CleanPollMax}
	}
	return PollPolicy{First: t.StatePoll, Max: t.StatePollMax, WaitMax: t.CleanPollMax}
}

// Phases runs the Ironic phases against one Ironic instance. It is safe for
// concurrent use by many enrollments: it keeps no per-node state, every call
// reads the node live, acts at most a little and returns.
type Phases struct {
	Client      Client
	Credentials Credentials
	// Links reads BMC link state for the frontend-link guard. nil fails the
	// guard (IRONIC_LINK_GUARD_UNWIRED) unless NoLinkGuard opts out: an
	// unwired guard must never pass silently.
	Links LinkReader
	// NoLinkGuard explicitly turns the frontend-link guard off (logged at
	// every use), for deployments whose BMCs cannot report links at all.
	NoLinkGuard bool
	// Verifier checks inspection data against NetBox's intent (phase 5).
	// nil fails every inspection that has to verify.
	Verifier Verifier
	Clock    clock.Clock
	Log      *slog.Logger
	Timing   Timing
	// Pace, when set, learns how long this Ironic's transitions take and
	// adds one look to a wait when its siblings' were over (see Pace); one
	// per instance, for the worker's life. nil: the policy alone.
	Pace *Pace
}

func (p *Phases) now() time.Time {
	if p.Clock == nil {
		return clock.Real{}.Now()
	}
	return p.Clock.Now()
}

func (p *Phases) timing() Timing { return p.Timing.withDefaults() }

// look records a look at node in a wait of kind k and returns the pause
// before the next one (NextPoll). A history of another kind is dropped: the
// node is now in a wait hostforge did not ask for.
func (p *Phases) look(polls *Polls, k PollKind, node Node, now time.Time) time.Duration {
	if polls.Kind != k {
		*polls = Polls{Kind: k}
	}
	polls.Add(Observe(node, now))
	return p.next(polls, now)
}

// begin starts a wait of kind k on the action hostforge sent at asked and
// Ironic answered by now, for the node of spec, and returns the pause
// before its first look.
func (p *Phases) begin(polls *Polls, k PollKind, action string, spec NodeSpec, asked, now time.Time) time.Duration {
	polls.Start(k, action, asked)
	polls.Since, polls.Class = now, PaceClass(spec)
	return p.next(polls, now)
}

// next is the pause before the next look of the wait polls holds: the
// policy of its kind (NextPoll), with one more look when its siblings'
// transitions were over (Paced); it keeps the policy's own look in
// polls.Planned when it adds one.
func (p *Phases) next(polls *Polls, now time.Time) time.Duration {
	span, _ := p.Pace.Span(polls.Kind, polls.Action, polls.Class)
	d, planned := Paced(p.timing().Policy(polls.Kind), *polls, span, now)
	polls.Planned = planned
	return d
}

// ended records the look at node that found the wait polls holds over,
// teaches Pace how long its transition took, and empties polls, so that
// a call that ends the same wait again teaches nothing twice.
func (p *Phases) ended(polls *Polls, node Node, now time.Time) {
	if polls.Action != "" {
		polls.Add(Observe(node, now))
		if d, ok := polls.Took(); ok {
			p.Pace.Learn(polls.Kind, polls.Action, polls.Class, d)
		}
	}
	*polls = Polls{}
}

// settle is the pause before looking again at a node found in a
// transition hostforge did not start, from this one look: Ironic's
// provision_updated_at says how long the node has been in it.
func (p *Phases) settle(node Node) time.Duration {
	now := p.now()
	return NextPoll(p.timing().Policy(PollSettle), []Observation{Observe(node, now)}, now)
}

var discard = slog.New(slog.DiscardHandler)

func (p *Phases) log(node, phase string) *slog.Logger {
	l := p.Log
	if l == nil || l.Handler() == slog.DiscardHandler {
		return discard // nothing to bind where nothing is written
	}
	return l.With("device", node, "phase", phase)
}

// NodeStatus is a node's state as a step reports it.
type NodeStatus struct {
	UUID                 string `json:"uuid,omitempty"`
	Driver               string `json:"driver,omitempty"`
	ProvisionState       string `json:"provision_state,omitempty"`
	TargetProvisionState string `json:"target_provision_state,omitempty"`
	PowerState           string `json:"power_state,omitempty"`
	TargetPowerState     string `json:"target_power_state,omitempty"`
	InstanceUUID         string `json:"instance_uuid,omitempty"`
	Maintenance          bool   `json:"maintenance,omitempty"`
}

func status(n Node) NodeStatus {
	return NodeStatus{
		UUID: n.UUID, Driver: n.Driver, ProvisionState: n.ProvisionState, TargetProvisionState: n.TargetProvisionState,
		PowerState: n.PowerState, TargetPowerState: n.TargetPowerState, InstanceUUID: n.InstanceUUID, Maintenance: n.Maintenance,
	}
}

// Satisfied reports whether a node is enrolment-satisfied: active,
// available, or manageable with an instance_uuid. Such a node is never
// mutated by the Ironic phases.
func Satisfied(n Node) bool {
	switch n.ProvisionState {
	case StateActive, StateAvailable:
		return true
	case StateManageable:
		return n.InstanceUUID != ""
	}
	return false
}

// stable lists the provision states a node rests in.
var stable = map[string]bool{
	StateEnroll: true, StateManageable: true, StateAvailable: true, StateActive: true,
	StateInspectFailed: true, StateCleanFailed: true, StateDeployFailed: true, StateError: true,
	"rescue": true, "rescue failed": true, "unrescue failed": true, "adopt failed": true, "service failed": true,
}

// Stable reports whether the node rests in its provision state (no
// transition in flight). A failed state is stable whatever its target: a
// real Ironic leaves clean failed with target "manageable".
func Stable(n Node) bool {
	if !stable[n.ProvisionState] {
		return false
	}
	return n.TargetProvisionState == "" || strings.HasSuffix(n.ProvisionState, "failed") || n.ProvisionState == StateError
}

// PreludeResult says what the shared prelude found and did.
type PreludeResult struct {
	Node NodeStatus `json:"node"`
	// Created is true when the node was created by this prelude.
	Created bool `json:"created,omitempty"`
	// Satisfied is true for an enrolment-satisfied node: nothing was changed.
	Satisfied bool `json:"satisfied,omitempty"`
	// Recovered is the failed state the node was recovered from via manage.
	Recovered string `json:"recovered,omitempty"`
	// Changes lists what convergence rewrote.
	Changes []string `json:"changes,omitempty"`
}

// Prelude runs the shared prelude on its own: get-or-create the node, the
// Nova guard, the stable-state wait, recovery and convergence.
func (p *Phases) Prelude(ctx context.Context, spec NodeSpec) (PreludeResult, error) {
	_, res, err := p.prelude(ctx, spec, PhasePrelude, nil)
	return res, hostforge.Classified(err)
}

// prelude is the shared prelude. A fresh sighting from the previous step
// stands in for its read (see Sighting) unless the node needs recovery or
// review, which read what a sighting lacks (the maintenance reason, the
// last error); convergence then learns the node's hint and interfaces from
// its own PATCH's answer.
func (p *Phases) prelude(ctx context.Context, spec NodeSpec, phase string, seen *Sighting) (Node, PreludeResult, error) {
	var res PreludeResult
	if err := spec.Validate(); err != nil {
		return Node{}, res, err
	}
	log := p.log(spec.Name, phase)
	node, known := p.fresh(seen)
	var err error
	if known && (strings.HasSuffix(node.ProvisionState, "failed") || node.ProvisionState == StateError) {
		known = false
	}
	if !known {
		node, err = p.Client.GetNode(ctx, spec.Name, preludeFields...)
	}
	if errors.Is(err, hostforge.ErrNotFound) {
		cred, err := p.credential(ctx, spec)
		if err != nil {
			return Node{}, res, err
		}
		node, err = p.Client.CreateNode(ctx, spec.create(cred))
		if err != nil {
			if errors.Is(err, hostforge.ErrConflict) && !IsNodeLocked(err) {
				// Another run created it between our read and our write.
				return Node{}, res, hostforge.RetryAfter(NextPoll(p.timing().Policy(PollSettle), nil, p.now()), WaitStateUnstable, "node %s was created concurrently", spec.Name)
			}
			return Node{}, res, p.classify(ctx, phase, spec.Name, err, "creating node %s", spec.Name)
		}
		if spec.Project != "" {
			n, err := p.Client.UpdateNode(ctx, node.UUID, []PatchOp{Add("/owner", spec.Project), Add("/lessee", spec.Project)})
			if err != nil {
				return node, res, p.classify(ctx, phase, spec.Name, err, "setting owner and lessee of node %s", spec.Name)
			}
			node = n
		}
		log.Info("ironic node created", "step", "prelude", "uuid", node.UUID, "driver", node.Driver)
		res.Created = true
		res.Node = status(node)
		return node, res, nil
	}
	if err != nil {
		return Node{}, res, p.classify(ctx, phase, spec.Name, err, "reading node %s", spec.Name)
	}
	res.Node = status(node)

	// Nova guard: never mutate a node the scheduler may own.
	if Satisfied(node) {
		res.Satisfied = true
		log.Info("node is enrolment-satisfied; no mutation", "step", "prelude", "provision_state", node.ProvisionState, "instance_uuid", node.InstanceUUID)
		return node, res, nil
	}
	if node.InstanceUUID != "" {
		f := NodeOwned.At(phase).New("node %s holds instance %s in provision state %q", spec.Name, node.InstanceUUID, node.ProvisionState)
		return node, res, f
	}
	if !Stable(node) {
		return node, res, hostforge.RetryAfter(p.settle(node), WaitStateUnstable,
			"node %s is in %q (target %q)", spec.Name, node.ProvisionState, node.TargetProvisionState)
	}

	switch node.ProvisionState {
	case StateEnroll, StateManageable:
	case StateInspectFailed, StateCleanFailed:
		if node, err = p.recover(ctx, spec, node, phase); err != nil {
			return node, res, err
		}
		res.Recovered = res.Node.ProvisionState
		res.Node = status(node)
		if !Stable(node) {
			return node, res, hostforge.RetryAfter(p.settle(node), WaitStateUnstable,
				"node %s recovered from %s, now %q", spec.Name, res.Recovered, node.ProvisionState)
		}
	case StateDeployFailed, StateError:
		f := NeedsReview.At(phase).New("node %s is in %q (last_error: %s); it is never recovered automatically", spec.Name, node.ProvisionState, node.LastError)
		return node, res, f
	default:
		f := UnexpectedState.At(phase).New("node %s is in %q, which the prelude does not handle", spec.Name, node.ProvisionState)
		return node, res, f
	}

	node, changes, err := p.converge(ctx, spec, node, phase, !known)
	res.Changes = changes
	res.Node = status(node)
	return node, res, err
}

// recover moves an inspect failed / clean failed node back to manageable.
// For clean failed the maintenance flag is cleared first and restored if,
// and only if, the manage call fails.
func (p *Phases) recover(ctx context.Context, spec NodeSpec, node Node, phase string) (Node, error) {
	log := p.log(spec.Name, phase)
	cleared := false
	if node.ProvisionState == StateCleanFailed && node.Maintenance {
		if err := p.Client.SetMaintenance(ctx, node.UUID, false, ""); err != nil {
			return node, p.classify(ctx, phase, spec.Name, err, "clearing maintenance of clean failed node %s", spec.Name)
		}
		cleared = true
		log.Info("maintenance cleared for clean failed recovery", "step", "recover", "reason", node.MaintenanceReason)
	}
	if err := p.Client.ChangeProvisionState(ctx, node.UUID, ActionManage); err != nil {
		restoreNote := ""
		if cleared {
			if rerr := p.Client.SetMaintenance(ctx, node.UUID, true, node.MaintenanceReason); rerr != nil {
				restoreNote = fmt.Sprintf("; restoring maintenance ALSO failed (%v): set it back by hand", rerr)
				log.Error("restoring maintenance after a failed manage failed", "step", "recover", "error", rerr)
			} else {
				restoreNote = "; maintenance restored"
				log.Warn("manage failed; maintenance restored", "step", "recover")
			}
		}
		if IsNodeLocked(err) {
			return node, p.lockedWait(ctx, spec.Name, err)
		}
		if f, ok := p.classify(ctx, phase, spec.Name, err, "").(*hostforge.Failure); ok && (f.Code == Unauthorized.Code || f.Code == Unavailable.Code) {
			f.Message = fmt.Sprintf("recovering node %s from %s with manage%s", spec.Name, node.ProvisionState, restoreNote)
			return node, f
		}
		f := RecoveryFailed.At(phase).Wrap(err, "recovering node %s from %s with manage%s", spec.Name, node.ProvisionState, restoreNote)
		return node, f
	}
	log.Info("node recovered via manage", "step", "recover", "from", node.ProvisionState)
	n, err := p.Client.GetNode(ctx, node.UUID, preludeFields...)
	if err != nil {
		return node, p.classify(ctx, phase, spec.Name, err, "re-reading node %s after recovery", spec.Name)
	}
	return n, nil
}

// interfaceChangeStates are the provision states where Ironic accepts a
// hardware-interface change.
var interfaceChangeStates = map[string]bool{
	StateEnroll: true, StateManageable: true, StateAvailable: true, StateInspecting: true, StateInspectWait: true,
}

// converge rewrites what can drift on an existing node: the credentials
// always, the root-device hint and the RAID interface when they differ
// from the spec. With read set, node was read with preludeFields and the
// drift is known before the PATCH, which carries it; without, node is a
// sighting (states only), and the drift is judged on the node the
// credentials' PATCH answers — a second PATCH only when something drifted.
// That PATCH names the node by its name, as the read the sighting stands
// in for would have found it.
func (p *Phases) converge(ctx context.Context, spec NodeSpec, node Node, phase string, read bool) (Node, []string, error) {
	log := p.log(spec.Name, phase)
	cred, err := p.credential(ctx, spec)
	if err != nil {
		return node, nil, err
	}
	// Credentials keyed off the node's actual driver. Ironic masks stored
	// passwords, so the password is always rewritten.
	_, userKey, passKey := credentialKeys(node.Driver)
	ops := []PatchOp{Add("/driver_info/"+userKey, cred.Username), Add("/driver_info/"+passKey, cred.Password)}
	changes := []string{"credentials"}
	if read {
		more, what := p.drift(spec, node, log)
		ops, changes = append(ops, more...), append(changes, what...)
	}
	ident := node.UUID
	if !read {
		ident = spec.Name
	}
	n, err := p.Client.UpdateNode(ctx, ident, ops)
	if err != nil {
		return node, nil, p.classify(ctx, phase, spec.Name, err, "converging node %s", spec.Name)
	}
	node = n
	if !read {
		if more, what := p.drift(spec, node, log); len(more) > 0 {
			n, err := p.Client.UpdateNode(ctx, node.UUID, more)
			if err != nil {
				return node, changes, p.classify(ctx, phase, spec.Name, err, "converging node %s", spec.Name)
			}
			node, changes = n, append(changes, what...)
		}
	}
	if want := ArchTrait(spec.CPUArch); want != "" && !node.HasTrait(want) {
		traits := append(append([]string(nil), node.Traits...), want)
		if err := p.Client.SetTraits(ctx, node.UUID, traits); err != nil {
			return node, changes, p.classify(ctx, phase, spec.Name, err, "adding trait %s to node %s", want, spec.Name)
		}
		node.Traits = traits
		changes = append(changes, "trait "+want)
	}
	log.Info("node converged", "step", "converge", "changes", changes)
	return node, changes, nil
}

// drift is the patch that brings node's RAID interface and root-device
// hint to the spec, and what it changes.
func (p *Phases) drift(spec NodeSpec, node Node, log *slog.Logger) ([]PatchOp, []string) {
	var ops []PatchOp
	var changes []string
	if spec.TargetRAIDConfig != nil {
		if want := spec.Interfaces["raid"]; want != "" && node.Interfaces["raid"] != want {
			if interfaceChangeStates[node.ProvisionState] {
				ops = append(ops, Replace("/raid_interface", want))
				changes = append(changes, "raid_interface")
			} else {
				log.Warn("raid_interface differs but Ironic does not allow changing it in this state", "step", "converge", "provision_state", node.ProvisionState, "have", node.Interfaces["raid"], "want", want)
			}
		}
	}
	have, hasHint := node.Properties["root_device"]
	switch {
	case spec.RootDevice != nil && !sameJSON(have, spec.RootDevice):
		ops = append(ops, Add("/properties/root_device", spec.RootDevice))
		changes = append(changes, "root_device")
	case spec.RootDevice == nil && hasHint && have != nil:
		if spec.SoftwareRAID {
			ops = append(ops, Remove("/properties/root_device"))
			changes = append(changes, "root_device removed")
		} else {
			log.Warn("NetBox sets no root-device hint but the node has one; it is the OS-disk pin and is kept", "step", "converge", "root_device", have)
		}
	}
	return ops, changes
}

// classify turns a client error into a Failure of this phase, or a wait for
// a locked node. Failures, waits and context errors pass through; an error
// of no known kind is returned as is (the runtime reports it as a bug).
func (p *Phases) classify(ctx context.Context, phase, node string, err error, format string, args ...any) error {
	if hostforge.Settled(err) {
		return err
	}
	if IsNodeLocked(err) {
		return p.lockedWait(ctx, node, err)
	}
	return clientSpecs.Classify(err, phase, format, args...)
}

// clientSpecs maps what the Ironic client said to this package's codes.
var clientSpecs = hostforge.SystemSpecs{
	Unavailable:  Unavailable,
	Unauthorized: Unauthorized,
	NotFound:     Rejected,
	Invalid:      Rejected,
	Conflict:     Rejected,
}

// lockedWait is the wait for a NodeLocked answer. It reads the node (a read
// needs no lock) so the detail names the holder and the live provision state.
func (p *Phases) lockedWait(ctx context.Context, node string, cause error) error {
	holder, state := "unknown", "unknown"
	if n, err := p.Client.GetNode(ctx, node, statusFields...); err == nil {
		if n.Reservation != "" {
			holder = n.Reservation
		}
		state = n.ProvisionState
	}
	p.log(node, "ironic").Info("node locked; waiting", "step", "lock", "holder", holder, "provision_state", state)
	return hostforge.RetryAfter(p.timing().LockRetry, WaitNodeLocked,
		"node %s is locked by host %s (provision state %s): %v", node, holder, state, cause)
}
