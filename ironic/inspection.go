package ironic

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hostforge/hostforge"
)

// InspectionIn is one call of the inspection half. The workflow calls it
// repeatedly, passing back the Progress of the previous call, and sleeps
// Next between calls, until Done.
type InspectionIn struct {
	Spec NodeSpec `json:"spec"`
	// Inspect is run_inspection (default on): inspection and verification.
	Inspect bool `json:"inspect"`
	// Force is force_inspection: inspect even when the inventory verifies.
	Force bool `json:"force,omitempty"`
	// Expect is what verification checks the inventory against, opaque to
	// this package: the Phases' Verifier reads it (verify.Expectations as
	// JSON in production).
	Expect   json.RawMessage    `json:"expect,omitempty"`
	Progress InspectionProgress `json:"progress"`
}

// InspectionProgress carries what one attempt has done so far.
type InspectionProgress struct {
	PreludeDone bool          `json:"prelude_done,omitempty"`
	Prelude     PreludeResult `json:"prelude"`
	// ManageRequested is set once manage was requested from enroll.
	ManageRequested bool `json:"manage_requested,omitempty"`
	// ManageRequestedAt is when manage was requested.
	ManageRequestedAt time.Time `json:"manage_requested_at,omitzero"`
	// Repaired is set once the MANAGEABLE link repair ran.
	Repaired    bool `json:"repaired,omitempty"`
	RAIDApplied bool `json:"raid_applied,omitempty"`
	// InspectedAt is when this attempt requested inspection (zero: not yet).
	InspectedAt time.Time `json:"inspected_at,omitzero"`
	// ManageableAt is when the node was first seen manageable after inspection.
	ManageableAt time.Time `json:"manageable_at,omitzero"`
	Verified     bool      `json:"verified,omitempty"`
	// Reused is true when an existing inventory passed verification.
	Reused bool `json:"reused,omitempty"`
	// PowerOnAt is when power on was requested to leave the node on.
	PowerOnAt time.Time `json:"power_on_at,omitzero"`
	Link      LinkGuard `json:"link"`
	// Polls is the current wait's observation history: NextPoll paces the
	// next call from it.
	Polls Polls `json:"polls"`
}

// InspectionOut is the result of one call.
type InspectionOut struct {
	Node     NodeStatus         `json:"node"`
	Progress InspectionProgress `json:"progress"`
	// Done: the node is MANAGEABLE, verified (when inspecting) and powered
	// on — or enrolment-satisfied and left alone.
	Done bool `json:"done"`
	// Next is how long to wait before the next call.
	Next time.Duration `json:"next,omitempty"`
	// Note says what this call did, for the step timeline.
	Note string `json:"note,omitempty"`
	// Seen is the look that found the node done, for the cleaning half's
	// start.
	Seen *Sighting `json:"seen,omitempty"`
}

// Inspection runs one call of the inspection half (phase 5): prelude,
// networking objects, manage, RAID config, inspection (or reuse of a
// verifying inventory), the frontend-link guard, verification, and leaving
// the node MANAGEABLE and powered on. Every error is a Failure or a Wait.
func (p *Phases) Inspection(ctx context.Context, in InspectionIn) (InspectionOut, error) {
	out, err := p.inspection(ctx, in)
	return out, hostforge.Classified(err)
}

func (p *Phases) inspection(ctx context.Context, in InspectionIn) (out InspectionOut, err error) {
	const phase = PhaseInspection
	spec, t := in.Spec, p.timing()
	pr := in.Progress
	out.Next = t.StatePoll
	log := p.log(spec.Name, phase)
	var node Node
	readAt := p.now()
	if !pr.PreludeDone {
		n, res, err := p.prelude(ctx, spec, phase, nil)
		if err != nil {
			return out, err
		}
		node, pr.PreludeDone, pr.Prelude = n, true, res
		if res.Satisfied {
			out.Node, out.Progress, out.Done, out.Seen = status(node), pr, true, sight(node, readAt)
			if !in.Inspect {
				out.Note = "enrolment-satisfied; run_inspection off"
				return out, nil
			}
			if err := p.verifyInventory(ctx, spec.Name, node.UUID, in.Expect, phase); err != nil {
				return out, err
			}
			out.Progress.Verified = true
			out.Note = "enrolment-satisfied; cached inventory verified"
			return out, nil
		}
	} else {
		n, err := p.Client.GetNode(ctx, spec.Name, statusFields...)
		if err != nil {
			return out, p.classify(ctx, phase, spec.Name, err, "reading node %s", spec.Name)
		}
		node = n
		if node.InstanceUUID != "" {
			f := NodeOwned.At(phase).New("node %s was given instance %s during inspection (provision state %q)", spec.Name, node.InstanceUUID, node.ProvisionState)
			return out, f
		}
	}
	out.Node = status(node)
	defer func() { out.Progress = pr }()
	now := p.now()

	switch node.ProvisionState {
	case StateEnroll:
		if pr.ManageRequested {
			f := ManageFailed.New("node %s went back to enroll after manage (last_error: %s)", spec.Name, node.LastError)
			return out, f
		}
		changes, err := p.ensureNetworking(ctx, spec, node, phase, false, pr.Prelude.Created)
		if err != nil {
			return out, err
		}
		asked := p.now()
		if err := p.Client.ChangeProvisionState(ctx, node.UUID, ActionManage); err != nil {
			return out, p.classify(ctx, phase, spec.Name, err, "manage of node %s", spec.Name)
		}
		pr.ManageRequested, pr.ManageRequestedAt = true, asked
		log.Info("manage requested", "step", "manage", "networking", changes)
		out.Note = "networking ensured; manage requested"
		out.Next = p.begin(&pr.Polls, PollVerify, ActionManage, spec, asked, p.now())
		return out, nil

	case StateVerifying:
		out.Note = "verifying"
		kind := PollVerify
		if !pr.ManageRequested {
			kind = PollSettle
		}
		out.Next = p.look(&pr.Polls, kind, node, now)
		return out, nil

	case StateManageable:
		if pr.Polls.Kind == PollVerify || pr.Polls.Kind == PollInspect {
			p.ended(&pr.Polls, node, now) // verification or inspection over
		}
		out, err = p.inspectManageable(ctx, in, node, &pr, out, now)
		if err == nil && out.Done {
			out.Seen = sight(node, readAt)
		}
		return out, err

	case StateInspecting, StateInspectWait:
		if pr.InspectedAt.IsZero() {
			out.Note = "someone else's inspection is running; waiting"
			out.Next = p.look(&pr.Polls, PollSettle, node, now)
			return out, nil
		}
		out.Next = p.look(&pr.Polls, PollInspect, node, now)
		abort := func() {
			if node.ProvisionState == StateInspectWait {
				if err := p.Client.ChangeProvisionState(ctx, node.UUID, ActionAbort); err != nil {
					log.Warn("aborting inspection failed", "step", "inspect", "error", err)
				}
			}
		}
		if now.Sub(pr.InspectedAt) > t.InspectionTimeout {
			abort()
			return out, InspectionTimeout.New("node %s still in %q %s after the inspect request (limit %s); inspection aborted", spec.Name, node.ProvisionState, now.Sub(pr.InspectedAt), t.InspectionTimeout)
		}
		if node.PowerState != PowerOn && pr.Link.PoweredOnAt.IsZero() && now.Sub(pr.InspectedAt) > t.PowerOnTimeout {
			abort()
			return out, PowerOnTimeout.New("node %s not powered on %s after the inspect request (limit %s); inspection aborted", spec.Name, now.Sub(pr.InspectedAt), t.PowerOnTimeout)
		}
		if err := p.guardLinks(ctx, spec, node, &pr.Link, phase, now); err != nil {
			if hostforge.CodeOf(err) == LinkDown.Code {
				abort()
			}
			return out, err
		}
		out.Next = t.bounded(out.Next, now, pr.InspectedAt, t.InspectionTimeout, t.InspectionPoll)
		if node.PowerState != PowerOn && pr.Link.PoweredOnAt.IsZero() {
			out.Next = t.bounded(out.Next, now, pr.InspectedAt, t.PowerOnTimeout, t.InspectionPoll)
		}
		if !pr.Link.Passed && node.PowerState == PowerOn {
			out.Next = min(out.Next, t.InspectionPoll) // sample links often while the guard runs
		}
		out.Note = "inspecting"
		return out, nil

	case StateInspectFailed:
		if !pr.InspectedAt.IsZero() {
			return out, InspectionFailed.New("node %s: inspection failed: %s", spec.Name, node.LastError)
		}
	}
	if !Stable(node) {
		out.Note = "waiting for " + node.ProvisionState
		out.Next = p.look(&pr.Polls, PollSettle, node, now)
		return out, nil
	}
	return out, UnexpectedState.New("node %s is in %q during the inspection half", spec.Name, node.ProvisionState)
}

// inspectManageable is the inspection half on a MANAGEABLE node: link repair,
// RAID config, inspection or inventory reuse, verification, power on.
func (p *Phases) inspectManageable(ctx context.Context, in InspectionIn, node Node, pr *InspectionProgress, out InspectionOut, now time.Time) (InspectionOut, error) {
	const phase = PhaseInspection
	spec, t := in.Spec, p.timing()
	log := p.log(spec.Name, phase)
	if spec.SkipCableVerification && !pr.Repaired && pr.InspectedAt.IsZero() {
		if _, err := p.ensureNetworking(ctx, spec, node, phase, true, false); err != nil {
			return out, err
		}
		pr.Repaired = true
	}
	if spec.TargetRAIDConfig != nil && !pr.RAIDApplied {
		if err := p.Client.SetRAIDConfig(ctx, node.UUID, spec.TargetRAIDConfig); err != nil {
			return out, p.classify(ctx, phase, spec.Name, err, "setting the target RAID config of node %s", spec.Name)
		}
		pr.RAIDApplied = true
		log.Info("target RAID config applied", "step", "raid")
	}
	if in.Inspect && !pr.Verified {
		if pr.InspectedAt.IsZero() {
			if !in.Force {
				err := p.verifyInventory(ctx, spec.Name, node.UUID, in.Expect, phase)
				if err == nil {
					pr.Verified, pr.Reused = true, true
					log.Info("existing inventory verifies; inspection skipped", "step", "inspect")
				} else {
					log.Info("existing inventory not reused", "step", "inspect", "reason", err.Error())
				}
			}
			if !pr.Verified {
				if err := p.Client.ChangeProvisionState(ctx, node.UUID, ActionInspect); err != nil {
					return out, p.classify(ctx, phase, spec.Name, err, "inspect of node %s", spec.Name)
				}
				pr.InspectedAt = now
				pr.Link = LinkGuard{}
				log.Info("inspection requested", "step", "inspect", "forced", in.Force)
				out.Note, out.Next = "inspection requested", p.begin(&pr.Polls, PollInspect, ActionInspect, spec, now, now)
				return out, nil
			}
		} else {
			if pr.ManageableAt.IsZero() {
				pr.ManageableAt = now
			}
			err := p.verifyInventory(ctx, spec.Name, node.UUID, in.Expect, phase)
			if hostforge.CodeOf(err) == InventoryMissing.Code && isNotFound(err) && now.Sub(pr.ManageableAt) < t.InventoryGrace {
				out.Note = "inspected; inventory not written yet"
				return out, nil
			}
			if err != nil {
				return out, err
			}
			pr.Verified = true
			log.Info("inventory verified", "step", "verify")
		}
	}
	if node.PowerState == PowerOn {
		if pr.Polls.Kind == PollPower {
			p.ended(&pr.Polls, node, now)
		}
		out.Done = true
		out.Note = "manageable, verified and powered on"
		if !in.Inspect {
			out.Note = "manageable and powered on; run_inspection off"
		}
		return out, nil
	}
	if !pr.PowerOnAt.IsZero() {
		if now.Sub(pr.PowerOnAt) > t.PowerOnTimeout {
			return out, PowerOnTimeout.New("node %s not powered on %s after the power-on request (limit %s)", spec.Name, now.Sub(pr.PowerOnAt), t.PowerOnTimeout)
		}
		if node.TargetPowerState != "" {
			out.Note = "powering on"
			out.Next = t.bounded(p.look(&pr.Polls, PollPower, node, now), now, pr.PowerOnAt, t.PowerOnTimeout, t.StatePoll)
			return out, nil
		}
	}
	asked := p.now()
	if err := p.Client.ChangePowerState(ctx, node.UUID, PowerOn); err != nil {
		return out, p.classify(ctx, phase, spec.Name, err, "powering on node %s", spec.Name)
	}
	if pr.PowerOnAt.IsZero() {
		pr.PowerOnAt = asked
	}
	log.Info("power on requested", "step", "power")
	out.Note = "power on requested"
	at := p.now()
	out.Next = t.bounded(p.begin(&pr.Polls, PollPower, PowerOn, spec, asked, at), at, pr.PowerOnAt, t.PowerOnTimeout, t.StatePoll)
	return out, nil
}

// bounded shortens a pause so that the look that finds a limit of limit
// from start exceeded comes at most grace after it: a timeout fires within
// one first poll of its limit however long the pauses have grown. A zero
// start or limit leaves d as it is.
func (t Timing) bounded(d time.Duration, now, start time.Time, limit, grace time.Duration) time.Duration {
	if start.IsZero() || limit <= 0 {
		return d
	}
	late := start.Add(limit).Add(grace).Sub(now)
	if late <= 0 {
		return min(d, grace)
	}
	return min(d, late)
}

// verifyInventory reads the node's inventory and has the Verifier check it.
func (p *Phases) verifyInventory(ctx context.Context, name, uuid string, exp json.RawMessage, phase string) error {
	if p.Verifier == nil {
		return VerifierMissing.At(phase).New("node %s: inspection is on but the Ironic phases have no Verifier", name)
	}
	b, err := p.Client.Inventory(ctx, uuid)
	if err != nil {
		if isNotFound(err) {
			return InventoryMissing.At(phase).Wrap(err, "node %s has no inspection inventory", name)
		}
		return p.classify(ctx, phase, name, err, "reading the inventory of node %s", name)
	}
	if err := p.Verifier.VerifyInventory(b, exp); err != nil {
		if _, ok := hostforge.AsFailure(err); ok {
			return err
		}
		return InventoryMissing.At(phase).Wrap(err, "node %s: the inventory cannot be parsed or verified", name)
	}
	return nil
}

func isNotFound(err error) bool { return errors.Is(err, hostforge.ErrNotFound) }
