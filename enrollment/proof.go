package enrollment

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
)

// Completion proof.
//
// After an enrollment run closes, the workflow agent settles the device's
// identity-scoped Enrollment proof in the fleet manager ([ProofAgent.Settle]):
//
//   - A well-formed qualifying completion (the run completed, enrolled the
//     device and names the Ironic instance and node it resolved) establishes
//     proof with a compare-and-set: the fleet manager records it only while its
//     projected Ironic reference equals the resolved one. The projection is
//     eventually consistent, so the agent retries the compare-and-set until
//     close time + [ProofAgent.Window], then fails proof closed with
//     ENROLLMENT_COMPLETION_PROOF_REJECTED. A compare-and-set is never tried
//     after that deadline: an old validation must not become proof of a
//     reference that has moved and come back since.
//   - The fleet manager clears proof atomically on every later reference
//     change, so A → B → A cannot resurrect the validation made against A.
//   - A failed, cancelled, terminated or timed-out run, and a completed run
//     whose qualifying output is malformed, submit an identity-guarded failure
//     write: proof that matches the device's current identity and reference is
//     preserved, stale proof metadata is cleared when the operated identity is
//     still the device's identity, and a replacement identity is untouched.
//   - A diagnostic completion, and a completion too malformed to classify
//     (no device, no identity, unknown status, undecodable output), preserve
//     existing proof without any write.

// ProofStore is what the completion-proof agent needs from the fleet
// manager. Implementations return hostforge.ErrNotFound, ErrConflict,
// ErrUnavailable, ... (wrapped) for what the fleet manager said.
type ProofStore interface {
	// Identity returns the device's current identity (the fleet manager's
	// per-lifecycle device identity; a hardware replacement gets a new one).
	// Submitters snapshot it into the run as the operated identity.
	Identity(ctx context.Context, device string) (string, error)
	// ProveEnrollment is the compare-and-set: it records proof of run for
	// the device if, atomically, identity is the device's current identity
	// and reference (see [IronicRef.String]) is its projected Ironic
	// reference. It returns ErrConflict when the projected reference differs,
	// and ErrNotFound when the device or that identity of it does not exist.
	ProveEnrollment(ctx context.Context, device, identity, reference, run string) error
	// FailEnrollment is the identity-guarded failure write of run. When
	// identity is no longer the device's identity it changes nothing; when
	// the device's proof matches its current identity and reference it is
	// preserved; otherwise stale proof metadata is cleared. It reports
	// whether anything was cleared.
	FailEnrollment(ctx context.Context, device, identity, run string) (cleared bool, err error)
}

// ProofRejected is raised when a qualifying completion could not establish
// proof within its window.
var ProofRejected = hostforge.Declare(hostforge.Spec{
	Code:      "ENROLLMENT_COMPLETION_PROOF_REJECTED",
	Phase:     "completion_proof",
	Owner:     hostforge.OwnerFleetManager,
	Retryable: false,
	Action:    "The fleet manager's projected Ironic reference did not match the node this enrollment resolved within the proof window, or the device's identity changed (the message names both): check the fleet manager's Ironic projection for the device, then rerun the enrollment to establish proof. No proof was recorded.",
})

// IronicRef is the Ironic node a device resolves to.
type IronicRef struct {
	// Instance is the Ironic instance the device was routed to.
	Instance string `json:"instance"`
	// Node is the Ironic node UUID.
	Node string `json:"node"`
}

// String renders "instance/node", the form the fleet manager compares.
func (r IronicRef) String() string { return r.Instance + "/" + r.Node }

// Complete reports whether both parts are set.
func (r IronicRef) Complete() bool { return r.Instance != "" && r.Node != "" }

// CompletionStatus is how an orchestrator says a run closed.
type CompletionStatus string

// Run close statuses.
const (
	CompletionCompleted  CompletionStatus = "completed"
	CompletionFailed     CompletionStatus = "failed"
	CompletionCanceled   CompletionStatus = "canceled"
	CompletionTerminated CompletionStatus = "terminated"
	CompletionTimedOut   CompletionStatus = "timed_out"
)

// Completion is one closed enrollment run, as the orchestrator recorded it.
type Completion struct {
	// Device is the NetBox device name the run enrolled.
	Device string `json:"device"`
	// Identity is the operated identity: the device's fleet-manager identity
	// snapshotted when the run was submitted.
	Identity string `json:"identity"`
	// Run identifies the run (e.g. a Temporal workflow and run ID).
	Run string `json:"run"`
	// Status is how the run closed.
	Status CompletionStatus `json:"status"`
	// ClosedAt is the orchestrator's close time; it bounds the proof window.
	ClosedAt time.Time `json:"closed_at"`
	// Diagnostic marks a run submitted for diagnosis only (a dry run): it
	// never claims or withdraws proof.
	Diagnostic bool `json:"diagnostic,omitempty"`
	// Output is the run's recorded Result as JSON, nil when it recorded none.
	Output json.RawMessage `json:"output,omitempty"`
}

// CompletionKind is what a completion means for proof.
type CompletionKind string

// Completion kinds.
const (
	// KindQualifying: a completed, well-formed enrollment claiming a reference.
	KindQualifying CompletionKind = "qualifying"
	// KindMalformedQualifying: a completed run whose output claims
	// enrollment but is not well formed.
	KindMalformedQualifying CompletionKind = "malformed_qualifying"
	// KindUnsuccessful: failed, cancelled, terminated or timed out.
	KindUnsuccessful CompletionKind = "unsuccessful"
	// KindDiagnostic: a run that claims nothing about the Ironic reference.
	KindDiagnostic CompletionKind = "diagnostic"
	// KindUnclassifiable: too malformed to say whom or what it concerns.
	KindUnclassifiable CompletionKind = "unclassifiable"
)

// ResolvedReference returns the Ironic reference a run's result claims: the
// routed instance and the node the Ironic phases ended on.
func ResolvedReference(res Result) IronicRef {
	return IronicRef{Instance: res.Instance, Node: res.Node}
}

// Classify says what the completion means for proof, and for a qualifying
// completion the reference it resolved. It never fails: what cannot be
// classified is KindUnclassifiable.
func (c Completion) Classify() (CompletionKind, IronicRef) {
	if c.Device == "" || c.Identity == "" {
		return KindUnclassifiable, IronicRef{}
	}
	switch c.Status {
	case CompletionCompleted:
	case CompletionFailed, CompletionCanceled, CompletionTerminated, CompletionTimedOut:
		if c.Diagnostic {
			return KindDiagnostic, IronicRef{}
		}
		return KindUnsuccessful, IronicRef{}
	default:
		return KindUnclassifiable, IronicRef{}
	}
	if c.Diagnostic {
		return KindDiagnostic, IronicRef{}
	}
	out := bytes.TrimSpace(c.Output)
	if len(out) == 0 || bytes.Equal(out, []byte("null")) || out[0] != '{' {
		return KindUnclassifiable, IronicRef{}
	}
	var res Result
	if err := json.Unmarshal(out, &res); err != nil {
		return KindUnclassifiable, IronicRef{}
	}
	ironic, ran := "", false
	for _, p := range res.Phases {
		if p.Phase == PhaseIronic {
			ironic, ran = p.Status, true
		}
	}
	if res.Enrolled && ran && ironic == "skipped" {
		// The Ironic phases were gated off: the run says nothing about the
		// Ironic reference, so it can neither prove nor withdraw.
		return KindDiagnostic, IronicRef{}
	}
	ref := ResolvedReference(res)
	if !res.Enrolled || res.Failure != nil || res.Device != c.Device || ironic != "done" || !ref.Complete() {
		return KindMalformedQualifying, IronicRef{}
	}
	return KindQualifying, ref
}

// Proof agent defaults.
const (
	// DefaultProofWindow is how long after close the compare-and-set is retried.
	DefaultProofWindow = 10 * time.Minute
	// DefaultProofInterval is the pause between compare-and-set attempts.
	DefaultProofInterval = 15 * time.Second
)

// ProofAgent settles completion proof for closed runs. It holds no state of
// its own; one agent serves any number of concurrent completions.
type ProofAgent struct {
	Store ProofStore
	// Clock paces the retries; the deadline is read from it.
	Clock clock.Clock
	// Window bounds retries after the completion's close time (default
	// DefaultProofWindow).
	Window time.Duration
	// Interval is the pause between attempts (default DefaultProofInterval).
	Interval time.Duration
	Log      *slog.Logger
}

// ProofOutcome says what settling a completion did.
type ProofOutcome struct {
	Kind CompletionKind `json:"kind"`
	// Action is "established", "failure_write", "rejected" or "none".
	Action string `json:"action"`
	// Reference is the resolved reference of a qualifying completion.
	Reference string `json:"reference,omitempty"`
	// Cleared is true when a failure write cleared stale metadata.
	Cleared bool `json:"cleared,omitempty"`
	// Attempts counts calls to the fleet manager.
	Attempts int `json:"attempts"`
}

// Proof actions.
const (
	ProofEstablished  = "established"
	ProofFailureWrite = "failure_write"
	ProofRejectedAct  = "rejected"
	ProofNoAction     = "none"
)

const phaseProof = "completion_proof"

// Settle applies the completion to the device's proof. The error is nil or
// a *hostforge.Failure: ENROLLMENT_COMPLETION_PROOF_REJECTED when a
// qualifying completion could not establish proof, FLEET_MANAGER_UNAVAILABLE
// when a failure write could not be delivered within the window, CANCELLED
// when ctx ended first.
func (a *ProofAgent) Settle(ctx context.Context, c Completion) (ProofOutcome, error) {
	kind, ref := c.Classify()
	out := ProofOutcome{Kind: kind, Action: ProofNoAction}
	log := a.log().With("device", c.Device, "phase", phaseProof, "run", c.Run, "kind", string(kind))
	if a.Store == nil || a.Clock == nil {
		return out, NotImplemented.New("completion proof: the agent has no fleet manager proof store or clock")
	}
	deadline := c.ClosedAt.Add(a.window())
	switch kind {
	case KindQualifying:
		out.Reference = ref.String()
		err := a.prove(ctx, c, ref, deadline, &out)
		if err != nil {
			_, f, _ := hostforge.Classify(err)
			out.Action = ProofRejectedAct
			if f.Code == ProofRejected.Code {
				log.Warn("completion proof rejected", "code", f.Code, "reference", out.Reference, "attempts", out.Attempts, "error", f.Error())
			}
			return out, f
		}
		out.Action = ProofEstablished
		log.Info("completion proof established", "reference", out.Reference, "attempts", out.Attempts)
		return out, nil
	case KindUnsuccessful, KindMalformedQualifying:
		cleared, err := a.failureWrite(ctx, c, deadline, &out)
		if err != nil {
			_, f, _ := hostforge.Classify(err)
			log.Error("completion failure write not delivered", "code", f.Code, "attempts", out.Attempts, "error", f.Error())
			return out, f
		}
		out.Action, out.Cleared = ProofFailureWrite, cleared
		log.Info("completion failure write submitted", "cleared", cleared, "status", string(c.Status))
		return out, nil
	default:
		log.Info("completion preserves existing proof; nothing written", "status", string(c.Status))
		return out, nil
	}
}

// prove retries the compare-and-set until the deadline.
func (a *ProofAgent) prove(ctx context.Context, c Completion, ref IronicRef, deadline time.Time, out *ProofOutcome) error {
	var last error
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if a.Clock.Now().After(deadline) {
			if last == nil {
				return ProofRejected.New("device %s: the proof window closed at %s, before any compare-and-set of %s (run %s)", c.Device, deadline.Format(time.RFC3339), ref, c.Run)
			}
			return ProofRejected.Wrap(last, "device %s: the fleet manager's projected Ironic reference did not match %s within %s of the run's close (run %s)", c.Device, ref, a.window(), c.Run)
		}
		out.Attempts++
		err := a.Store.ProveEnrollment(ctx, c.Device, c.Identity, ref.String(), c.Run)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return err
		case errors.Is(err, hostforge.ErrConflict), errors.Is(err, hostforge.ErrUnavailable):
			last = err
		default:
			// The device or its operated identity is gone, or the fleet
			// manager refused the write: retrying cannot help.
			return ProofRejected.Wrap(err, "device %s: the fleet manager refused proof of %s for identity %s (run %s)", c.Device, ref, c.Identity, c.Run)
		}
		if err := a.Clock.Sleep(ctx, a.interval()); err != nil {
			return err
		}
	}
}

// failureWrite delivers the identity-guarded failure write, retrying while
// the fleet manager is unavailable; it is always tried at least once.
func (a *ProofAgent) failureWrite(ctx context.Context, c Completion, deadline time.Time, out *ProofOutcome) (bool, error) {
	for {
		out.Attempts++
		cleared, err := a.Store.FailEnrollment(ctx, c.Device, c.Identity, c.Run)
		switch {
		case err == nil:
			return cleared, nil
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return false, err
		case errors.Is(err, hostforge.ErrNotFound):
			// No record of the device: there is no proof to withdraw.
			return false, nil
		case !errors.Is(err, hostforge.ErrUnavailable):
			f := FleetManagerUnavailable.At(phaseProof).Wrap(err, "device %s: the fleet manager refused the failure write of run %s", c.Device, c.Run)
			return false, f
		}
		if !a.Clock.Now().Add(a.interval()).Before(deadline) {
			f := FleetManagerUnavailable.At(phaseProof).Wrap(err, "device %s: the failure write of run %s was not delivered within %s of the run's close", c.Device, c.Run, a.window())
			return false, f
		}
		if err := a.Clock.Sleep(ctx, a.interval()); err != nil {
			return false, err
		}
	}
}

func (a *ProofAgent) window() time.Duration {
	if a.Window <= 0 {
		return DefaultProofWindow
	}
	return a.Window
}

func (a *ProofAgent) interval() time.Duration {
	if a.Interval <= 0 {
		return DefaultProofInterval
	}
	return a.Interval
}

func (a *ProofAgent) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}
