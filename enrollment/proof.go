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
	"github.com/hostforge/hostforge/flow"
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
// manager's ledger. Implementations return hostforge.ErrNotFound,
// ErrConflict, ErrUnavailable or ErrInvalid (wrapped) for what the ledger
// said; the agent classifies them. A contract suite (enrollment/ledgertest)
// states the semantics every implementation must have.
type ProofStore interface {
	// Snapshot returns the device's current identity (the fleet manager's
	// per-lifecycle device identity; a hardware replacement gets a new one)
	// and the revision of its projected Ironic reference. Submitters
	// snapshot both into the run: the identity is the operated identity,
	// the revision bounds which reference changes the run may be proven
	// across. ErrNotFound when the ledger has no identity for the device.
	Snapshot(ctx context.Context, device string) (identity string, revision int64, err error)
	// ProveEnrollment is the compare-and-set that establishes proof of run.
	// Atomically, and only while the ledger's own clock is not past
	// deadline (the window travels with the call: a request that arrives
	// late is refused by the store, not only by the caller), it requires:
	//   - identity is the device's current identity (else ErrNotFound);
	//   - reference (see [IronicRef.String]) is its projected reference, and
	//     that reference became current at most once since revision since —
	//     a reference that was projected, left and came back (A → B → A)
	//     cannot be proven across (else ErrConflict);
	//   - no other run holds proof at the current revision: the first
	//     writer wins, and every later or concurrent writer of the same
	//     revision learns who holds it.
	// It returns the run that holds proof at the current revision: run
	// itself when this call (or an earlier call with the same run) wrote
	// it. A deadline passed is ErrConflict; a zero deadline, an empty
	// identity or reference, or a since from the future is ErrInvalid.
	ProveEnrollment(ctx context.Context, device, identity, reference string, since int64, run string, deadline time.Time) (holder string, err error)
	// FailEnrollment is the identity-guarded failure write of run. When
	// identity is no longer the device's identity it changes nothing; when
	// the device's proof matches its current identity, reference and
	// revision it is preserved; otherwise stale proof metadata is cleared.
	// It reports whether anything was cleared.
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
	// Since is the revision of the device's projected Ironic reference
	// snapshotted when the run was submitted (see [ProofStore.Snapshot]):
	// proof is refused when the resolved reference was projected, left and
	// came back since then.
	Since int64 `json:"since,omitempty"`
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

// ProofAgent settles completion proof for closed runs inline, on a clock:
// the CLI runs it after each local enrollment. Under Temporal the same
// body ([SettleProof]) runs as a workflow of its own, so settlement
// survives the submitter. The agent holds no state of its own; one agent
// serves any number of concurrent completions.
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
	// Holder is the run holding proof once it is established: the run
	// itself, or the run that proved the same revision first.
	Holder string `json:"holder,omitempty"`
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

// PhaseProof is the phase completion-proof failures are recorded against.
const PhaseProof = "completion_proof"

// Settle applies the completion to the device's proof on the agent's clock
// ([SettleProof] on a flow.Local). The error is nil or a
// *hostforge.Failure: ENROLLMENT_COMPLETION_PROOF_REJECTED when a
// qualifying completion could not establish proof, FLEET_MANAGER_UNAVAILABLE
// when a failure write could not be delivered within the window, CANCELLED
// when ctx ended first.
func (a *ProofAgent) Settle(ctx context.Context, c Completion) (ProofOutcome, error) {
	if a.Store == nil || a.Clock == nil {
		kind, _ := c.Classify()
		return ProofOutcome{Kind: kind, Action: ProofNoAction}, NotImplemented.New("completion proof: the agent has no fleet manager proof store or clock")
	}
	rt := &flow.Local{Steps: ProofSteps(a.Store), Clock: a.Clock, Log: a.log(), Subject: c.Device, SubjectKey: "device"}
	out, err := SettleProof(ctx, rt, SettleRequest{Completion: c, Window: a.Window, Interval: a.Interval})
	LogProofOutcome(a.log(), c, out, err)
	return out, err
}

// LogProofOutcome writes the one log line a settlement deserves.
func LogProofOutcome(log *slog.Logger, c Completion, out ProofOutcome, err error) {
	log = log.With("device", c.Device, "phase", PhaseProof, "run", c.Run, "kind", string(out.Kind))
	if err != nil {
		_, f, _ := hostforge.Classify(err)
		if out.Action == ProofRejectedAct {
			log.Warn("completion proof rejected", "code", f.Code, "reference", out.Reference, "attempts", out.Attempts, "error", f.Error())
			return
		}
		log.Error("completion settlement failed", "code", f.Code, "attempts", out.Attempts, "error", f.Error())
		return
	}
	switch out.Action {
	case ProofEstablished:
		log.Info("completion proof established", "reference", out.Reference, "holder", out.Holder, "attempts", out.Attempts)
	case ProofFailureWrite:
		log.Info("completion failure write submitted", "cleared", out.Cleared, "status", string(c.Status))
	default:
		log.Info("completion preserves existing proof; nothing written", "status", string(c.Status))
	}
}

// SettleRequest is one completion to settle and the window it is settled in.
type SettleRequest struct {
	Completion Completion `json:"completion"`
	// Window bounds retries after the completion's close time
	// (DefaultProofWindow when zero).
	Window time.Duration `json:"window,omitempty"`
	// Interval is the pause between attempts (DefaultProofInterval when zero).
	Interval time.Duration `json:"interval,omitempty"`
}

func (r SettleRequest) window() time.Duration {
	if r.Window <= 0 {
		return DefaultProofWindow
	}
	return r.Window
}

func (r SettleRequest) interval() time.Duration {
	if r.Interval <= 0 {
		return DefaultProofInterval
	}
	return r.Interval
}

// Steps of the settlement body.
const (
	// StepProve is one compare-and-set attempt.
	StepProve = "proof.prove"
	// StepFailWrite is one identity-guarded failure write attempt.
	StepFailWrite = "proof.fail_write"
)

// proofAttempt bounds one attempt of a proof step: a single ledger call
// (a transaction of a few statements; SQLite's busy timeout is 10 s, a
// PostgreSQL statement is bounded by the server) — one minute.
const proofAttempt = time.Minute

// Wait reasons of the proof steps.
const (
	// WaitProjection: the projected reference does not match (yet).
	WaitProjection = "projection_mismatch"
	// WaitFleetManager: the fleet manager's ledger did not answer.
	WaitFleetManager = "fleet_manager_unavailable"
)

// ProveIn is the input of one compare-and-set attempt.
type ProveIn struct {
	Device    string    `json:"device"`
	Identity  string    `json:"identity"`
	Reference string    `json:"reference"`
	Since     int64     `json:"since"`
	Run       string    `json:"run"`
	Deadline  time.Time `json:"deadline"`
	// Interval is the After of the wait a mismatch returns.
	Interval time.Duration `json:"interval"`
}

// ProveOut is the run holding proof after a successful attempt.
type ProveOut struct {
	Holder string `json:"holder"`
}

// FailWriteIn is the input of one failure write attempt.
type FailWriteIn struct {
	Device   string        `json:"device"`
	Identity string        `json:"identity"`
	Run      string        `json:"run"`
	Interval time.Duration `json:"interval"`
}

// FailWriteOut says whether the failure write cleared stale metadata.
type FailWriteOut struct {
	Cleared bool `json:"cleared"`
}

// ProofSteps are the settlement's steps against a proof store: register
// them with the runtime that runs [SettleProof] (flow.Local, or a Temporal
// worker beside the settlement workflow).
func ProofSteps(store ProofStore) *flow.Table {
	return flow.MustTable(
		flow.Bind(StepProve, proofAttempt, func(ctx context.Context, in ProveIn) (ProveOut, error) {
			holder, err := store.ProveEnrollment(ctx, in.Device, in.Identity, in.Reference, in.Since, in.Run, in.Deadline)
			switch {
			case err == nil:
				return ProveOut{Holder: holder}, nil
			case hostforge.Settled(err):
				return ProveOut{}, err
			case errors.Is(err, hostforge.ErrConflict):
				return ProveOut{}, hostforge.RetryAfter(in.Interval, WaitProjection, "%v", err)
			case errors.Is(err, hostforge.ErrUnavailable):
				return ProveOut{}, hostforge.RetryAfter(in.Interval, WaitFleetManager, "%v", err)
			}
			// The device or its operated identity is gone, or the ledger
			// refused the write: retrying cannot help.
			return ProveOut{}, ProofRejected.Wrap(err, "device %s: the fleet manager refused proof of %s for identity %s (run %s)", in.Device, in.Reference, in.Identity, in.Run)
		}),
		flow.Bind(StepFailWrite, proofAttempt, func(ctx context.Context, in FailWriteIn) (FailWriteOut, error) {
			cleared, err := store.FailEnrollment(ctx, in.Device, in.Identity, in.Run)
			switch {
			case err == nil:
				return FailWriteOut{Cleared: cleared}, nil
			case hostforge.Settled(err):
				return FailWriteOut{}, err
			case errors.Is(err, hostforge.ErrNotFound):
				// No record of the device: there is no proof to withdraw.
				return FailWriteOut{}, nil
			case errors.Is(err, hostforge.ErrUnavailable):
				return FailWriteOut{}, hostforge.RetryAfter(in.Interval, WaitFleetManager, "%v", err)
			}
			return FailWriteOut{}, FleetManagerUnavailable.At(PhaseProof).Wrap(err, "device %s: the fleet manager refused the failure write of run %s", in.Device, in.Run)
		}),
	)
}

// SettleProof is the settlement body, written once for every runtime: it
// classifies the completion and establishes proof, submits the failure
// write, or writes nothing. Each attempt is one step ([ProofSteps]); the
// pauses are the runtime's sleeps (durable timers under Temporal), and the
// window is the completion's close time plus the request's window, read
// from the runtime's clock. The error is nil or a *hostforge.Failure (see
// [ProofAgent.Settle]).
func SettleProof(ctx context.Context, rt flow.Runtime, req SettleRequest) (ProofOutcome, error) {
	c := req.Completion
	kind, ref := c.Classify()
	out := ProofOutcome{Kind: kind, Action: ProofNoAction}
	deadline := c.ClosedAt.Add(req.window())
	switch kind {
	case KindQualifying:
		out.Reference = ref.String()
		holder, err := prove(ctx, rt, req, ref, deadline, &out)
		if err != nil {
			_, f, _ := hostforge.Classify(err)
			out.Action = ProofRejectedAct
			return out, f
		}
		out.Action, out.Holder = ProofEstablished, holder
		return out, nil
	case KindUnsuccessful, KindMalformedQualifying:
		cleared, err := failureWrite(ctx, rt, req, deadline, &out)
		if err != nil {
			_, f, _ := hostforge.Classify(err)
			return out, f
		}
		out.Action, out.Cleared = ProofFailureWrite, cleared
		return out, nil
	}
	return out, nil
}

// prove retries the compare-and-set until the deadline.
func prove(ctx context.Context, rt flow.Runtime, req SettleRequest, ref IronicRef, deadline time.Time, out *ProofOutcome) (string, error) {
	c := req.Completion
	in := ProveIn{Device: c.Device, Identity: c.Identity, Reference: ref.String(), Since: c.Since, Run: c.Run, Deadline: deadline, Interval: req.interval()}
	var last error
	for {
		if rt.Now(ctx).After(deadline) {
			if last == nil {
				return "", ProofRejected.New("device %s: the proof window closed at %s, before any compare-and-set of %s (run %s)", c.Device, deadline.Format(time.RFC3339), ref, c.Run)
			}
			return "", ProofRejected.Wrap(last, "device %s: the fleet manager's projected Ironic reference did not match %s within %s of the run's close (run %s)", c.Device, ref, req.window(), c.Run)
		}
		out.Attempts++
		var res ProveOut
		err := rt.Do(ctx, StepProve, in, &res)
		if err == nil {
			return res.Holder, nil
		}
		w, waiting := hostforge.AsWait(err)
		if !waiting {
			return "", err
		}
		last = w
		if err := rt.Sleep(ctx, w.After); err != nil {
			return "", err
		}
	}
}

// failureWrite delivers the identity-guarded failure write, retrying while
// the fleet manager is unavailable; it is always tried at least once.
func failureWrite(ctx context.Context, rt flow.Runtime, req SettleRequest, deadline time.Time, out *ProofOutcome) (bool, error) {
	c := req.Completion
	in := FailWriteIn{Device: c.Device, Identity: c.Identity, Run: c.Run, Interval: req.interval()}
	for {
		out.Attempts++
		var res FailWriteOut
		err := rt.Do(ctx, StepFailWrite, in, &res)
		if err == nil {
			return res.Cleared, nil
		}
		w, waiting := hostforge.AsWait(err)
		if !waiting {
			return false, err
		}
		if !rt.Now(ctx).Add(w.After).Before(deadline) {
			return false, FleetManagerUnavailable.At(PhaseProof).Wrap(w, "device %s: the failure write of run %s was not delivered within %s of the run's close", c.Device, c.Run, req.window())
		}
		if err := rt.Sleep(ctx, w.After); err != nil {
			return false, err
		}
	}
}

func (a *ProofAgent) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}
