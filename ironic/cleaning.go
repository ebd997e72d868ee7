package ironic

import (
	"context"
	"time"

	"github.com/hostforge/hostforge"
)

// CleaningIn is one call of the cleaning half (phase 7). The workflow calls
// it repeatedly with the Progress of the previous call until Done, sleeping
// Next between calls. A fresh Progress starts the cleaning (the start step:
// prelude, RAID config, clear maintenance, provide); later calls poll.
type CleaningIn struct {
	Spec NodeSpec `json:"spec"`
	// Deadline is the overall cleaning deadline (across reruns of the start).
	Deadline time.Time        `json:"deadline"`
	Progress CleaningProgress `json:"progress"`
	// Seen is the inspection half's last look at the node: fresh, it
	// stands in for the start's guard read (see Sighting).
	Seen *Sighting `json:"seen,omitempty"`
}

// CleaningProgress carries what one cleaning attempt has done so far.
type CleaningProgress struct {
	Started bool          `json:"started,omitempty"`
	Prelude PreludeResult `json:"prelude"`
	// Skipped is set when the node was found available or deployed (or
	// enrolment-satisfied): nothing to clean, straight to finalize.
	Skipped bool `json:"skipped,omitempty"`
	// ProvidedAt is when provide was requested; the polls are paced from it.
	ProvidedAt time.Time `json:"provided_at,omitzero"`
	// Probes counts polls.
	Probes int       `json:"probes,omitempty"`
	Link   LinkGuard `json:"link"`
	// Polls is the cleaning's observation history: NextPoll paces the
	// next call from it.
	Polls Polls `json:"polls"`
}

// CleaningOut is the result of one call.
type CleaningOut struct {
	Node     NodeStatus       `json:"node"`
	Progress CleaningProgress `json:"progress"`
	// Done: the node is available (or was skipped); finalize next.
	Done bool          `json:"done"`
	Next time.Duration `json:"next,omitempty"`
	Note string        `json:"note,omitempty"`
	// Seen is the look that found the node done, for finalize.
	Seen *Sighting `json:"seen,omitempty"`
}

// Cleaning runs one call of the cleaning half. clean failed is
// IRONIC_CLEANING_FAILED (the workflow reruns the start within its attempt
// budget; the rerun's prelude recovers the node); any other unexpected state
// fails at once.
func (p *Phases) Cleaning(ctx context.Context, in CleaningIn) (CleaningOut, error) {
	out, err := p.cleaning(ctx, in)
	return out, hostforge.Classified(err)
}

func (p *Phases) cleaning(ctx context.Context, in CleaningIn) (out CleaningOut, err error) {
	const phase = PhaseCleaning
	spec, t := in.Spec, p.timing()
	pr := in.Progress
	log := p.log(spec.Name, phase)
	defer func() { out.Progress = pr }()
	now := p.now()
	out.Next = t.StatePoll

	if !pr.Started {
		readAt := p.now()
		node, res, err := p.prelude(ctx, spec, phase, in.Seen)
		if err != nil {
			return out, err
		}
		pr.Prelude = res
		out.Node = status(node)
		if res.Satisfied {
			pr.Started, pr.Skipped, out.Done = true, true, true
			out.Note = "found " + node.ProvisionState + "; nothing to clean"
			out.Seen = in.Seen
			if _, fresh := p.fresh(in.Seen); !fresh {
				out.Seen = sight(node, readAt)
			}
			return out, nil
		}
		if node.ProvisionState != StateManageable {
			f := CleaningUnexpected.New("node %s is in %q at the start of cleaning; the inspection half brings it to manageable", spec.Name, node.ProvisionState)
			return out, f
		}
		if spec.TargetRAIDConfig != nil {
			if err := p.Client.SetRAIDConfig(ctx, node.UUID, spec.TargetRAIDConfig); err != nil {
				return out, p.classify(ctx, phase, spec.Name, err, "setting the target RAID config of node %s", spec.Name)
			}
		}
		if node.Maintenance {
			// Ironic silently skips clean steps on a maintenance node: the
			// clean would hang. Not restored if provide fails.
			if err := p.Client.SetMaintenance(ctx, node.UUID, false, ""); err != nil {
				return out, p.classify(ctx, phase, spec.Name, err, "clearing maintenance of node %s before cleaning", spec.Name)
			}
			log.Info("maintenance cleared before cleaning", "step", "clean_start", "reason", node.MaintenanceReason)
		}
		asked := p.now()
		if err := p.Client.ChangeProvisionState(ctx, node.UUID, ActionProvide); err != nil {
			return out, p.classify(ctx, phase, spec.Name, err, "provide of node %s", spec.Name)
		}
		pr.Started, pr.ProvidedAt = true, asked
		log.Info("provide requested; cleaning", "step", "clean_start")
		out.Note = "provide requested"
		at := p.now()
		out.Next = beforeDeadline(p.begin(&pr.Polls, PollClean, ActionProvide, spec, asked, at), at, in.Deadline)
		return out, nil
	}

	node, err := p.Client.GetNode(ctx, spec.Name, statusFields...)
	if err != nil {
		return out, p.classify(ctx, phase, spec.Name, err, "reading node %s", spec.Name)
	}
	out.Node = status(node)
	pr.Probes++
	switch node.ProvisionState {
	case StateAvailable:
		p.ended(&pr.Polls, node, now)
		out.Done, out.Seen = true, sight(node, now)
		out.Note = "available"
		log.Info("cleaning done; node available", "step", "clean_poll", "took", now.Sub(pr.ProvidedAt))
		return out, nil
	case StateCleanFailed:
		return out, CleaningFailed.New("node %s: cleaning failed: %s", spec.Name, node.LastError)
	case StateCleaning, StateCleanWait:
	case StateManageable:
		if node.TargetProvisionState == StateAvailable {
			break // provide accepted, not yet moving
		}
		fallthrough
	default:
		return out, CleaningUnexpected.New("node %s went to %q while cleaning", spec.Name, node.ProvisionState)
	}
	if !in.Deadline.IsZero() && !now.Before(in.Deadline) {
		return out, CleaningTimeout.New("node %s still in %q at the cleaning deadline (%s since provide)", spec.Name, node.ProvisionState, now.Sub(pr.ProvidedAt))
	}
	abort := func() {
		if node.ProvisionState == StateCleanWait {
			if err := p.Client.ChangeProvisionState(ctx, node.UUID, ActionAbort); err != nil {
				log.Warn("aborting cleaning failed", "step", "clean_poll", "error", err)
			}
		}
	}
	if node.PowerState != PowerOn && pr.Link.PoweredOnAt.IsZero() && now.Sub(pr.ProvidedAt) > t.PowerOnTimeout {
		abort()
		f := PowerOnTimeout.At(phase).New("node %s not powered on %s after provide (limit %s); cleaning aborted", spec.Name, now.Sub(pr.ProvidedAt), t.PowerOnTimeout)
		return out, f
	}
	if err := p.guardLinks(ctx, spec, node, &pr.Link, phase, now); err != nil {
		if hostforge.CodeOf(err) == LinkDown.Code {
			abort()
		}
		return out, err
	}
	out.Next = p.look(&pr.Polls, PollClean, node, now)
	if node.PowerState != PowerOn && pr.Link.PoweredOnAt.IsZero() {
		out.Next = t.bounded(out.Next, now, pr.ProvidedAt, t.PowerOnTimeout, t.CleanPollMin)
	}
	if !pr.Link.Passed && node.PowerState == PowerOn && out.Next > t.InspectionPoll {
		out.Next = t.InspectionPoll // sample links often while the guard runs
	}
	out.Next = beforeDeadline(out.Next, now, in.Deadline)
	out.Note = node.ProvisionState
	return out, nil
}

// beforeDeadline shortens a pause so that the next look comes no later
// than the deadline (one second when it has passed: the look that finds it
// passed fails the cleaning).
func beforeDeadline(d time.Duration, now, deadline time.Time) time.Duration {
	if deadline.IsZero() {
		return d
	}
	if left := deadline.Sub(now); left < d {
		d = left
	}
	if d <= 0 {
		d = time.Second
	}
	return d
}

// FinalizeIn is finalize's input.
type FinalizeIn struct {
	Spec NodeSpec `json:"spec"`
	// Seen is the cleaning half's last look at the node: fresh, finalize
	// decides on it instead of reading the node again (see Sighting).
	Seen *Sighting `json:"seen,omitempty"`
}

// FinalizeOut is what finalize did.
type FinalizeOut struct {
	Node NodeStatus `json:"node"`
	// PoweredOn is true when power on was requested.
	PoweredOn bool `json:"powered_on,omitempty"`
}

// Finalize powers the node on, unless it is deployed or owned (no power
// churn on a node the scheduler may own). The NetBox tag is the workflow's.
func (p *Phases) Finalize(ctx context.Context, in FinalizeIn) (FinalizeOut, error) {
	out, err := p.finalize(ctx, in)
	return out, hostforge.Classified(err)
}

func (p *Phases) finalize(ctx context.Context, in FinalizeIn) (FinalizeOut, error) {
	const phase = PhaseCleaning
	spec := in.Spec
	// On a sighting the node is named as the read would have found it.
	node, fresh := p.fresh(in.Seen)
	ident := spec.Name
	if !fresh {
		var err error
		if node, err = p.Client.GetNode(ctx, spec.Name, statusFields...); err != nil {
			return FinalizeOut{}, p.classify(ctx, phase, spec.Name, err, "reading node %s", spec.Name)
		}
		ident = node.UUID
	}
	out := FinalizeOut{Node: status(node)}
	if node.ProvisionState == StateActive || node.InstanceUUID != "" || node.PowerState == PowerOn || node.TargetPowerState == PowerOn {
		return out, nil
	}
	if err := p.Client.ChangePowerState(ctx, ident, PowerOn); err != nil {
		return out, p.classify(ctx, phase, spec.Name, err, "powering on node %s", spec.Name)
	}
	p.log(spec.Name, phase).Info("power on requested", "step", "finalize")
	out.PoweredOn = true
	return out, nil
}
