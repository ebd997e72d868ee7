package fakes

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
)

// FleetProofs is the fake fleet manager's per-device Enrollment proof: the
// device's current identity, the Ironic reference the fleet manager projects
// from Ironic with its revision and history, and the identity-scoped proof a
// completed enrollment established. It implements enrollment.ProofStore and
// enrollment.ReferenceLedger and passes enrollment/ledgertest.
//
// Semantics, each operation atomic under one lock:
//   - A projection change (ProjectReference, or SetReference in tests)
//     bumps the reference revision, appends to the history and clears proof:
//     A → B → A leaves no proof.
//   - ProveEnrollment is a compare-and-set on the operated identity, the
//     projected reference and its history since the caller's revision, with
//     the caller's deadline checked against the fake's clock. The first
//     writer of a revision holds its proof; later writers learn the holder.
//   - FailEnrollment is identity-guarded: a replaced identity is untouched,
//     proof matching the current identity, reference and revision is kept,
//     anything else (stale metadata) is cleared.
//   - ReplaceIdentity (a hardware replacement) keeps the old identity's
//     proof as stale metadata: it proves nothing for the new identity.
type FleetProofs struct {
	site    *Site
	mu      sync.Mutex
	clk     clock.Clock
	devices map[string]*ProofRecord
}

// ProofRecord is one device's proof state.
type ProofRecord struct {
	Identity  string
	Reference string
	// Revision counts reference changes.
	Revision int64
	// History is the reference at each revision: History[r] was projected
	// at revision r (History[0] is "", the unprojected device).
	History []string
	// Version counts every change to the record.
	Version int64
	// Proof is nil when the device has none.
	Proof *Proof
}

// Proof is an established Enrollment proof.
type Proof struct {
	Identity  string
	Reference string
	// Revision is the reference revision it was established against.
	Revision int64
	// Run is the completion that established it.
	Run string
	// At is when it was established (the fake's clock).
	At time.Time
}

// Valid reports whether the record's proof holds for its current identity
// and reference.
func (r ProofRecord) Valid() bool {
	p := r.Proof
	return p != nil && p.Identity == r.Identity && p.Reference == r.Reference && p.Revision == r.Revision
}

func newFleetProofs(s *Site) *FleetProofs {
	return &FleetProofs{site: s, devices: map[string]*ProofRecord{}}
}

// UseClock makes the fake judge proof deadlines on c instead of the site's
// clock (a test whose agent runs on a clock of its own).
func (f *FleetProofs) UseClock(c clock.Clock) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clk = c
}

func (f *FleetProofs) now() time.Time {
	if f.clk != nil {
		return f.clk.Now()
	}
	return f.site.Clock.Now()
}

func (f *FleetProofs) enter(ctx context.Context, op string, write bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.site.calls.add(SysFleetManager, op, write)
	return f.site.faults.take(SysFleetManager, op)
}

// record returns the device's record, creating it when create is set.
// Callers hold f.mu.
func (f *FleetProofs) record(device string, create bool) *ProofRecord {
	r := f.devices[device]
	if r == nil && create {
		r = &ProofRecord{History: []string{""}}
		f.devices[device] = r
	}
	return r
}

// Register seeds a device with an identity and no reference, without
// counting a call. Registering a known device replaces its identity.
func (f *FleetProofs) Register(device, identity string) { f.ReplaceIdentity(device, identity) }

// ReplaceIdentity gives the device a new identity (a hardware or record
// replacement). Existing proof stays as stale metadata of the old identity.
func (f *FleetProofs) ReplaceIdentity(device, identity string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.record(device, true)
	if r.Identity != identity {
		r.Identity = identity
		r.Version++
	}
}

// SetReference is the fleet manager's projection of the device's Ironic
// reference changing ("" when the device has no node), without counting a
// call. Any change clears proof in the same step.
func (f *FleetProofs) SetReference(device, reference string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.project(f.record(device, true), reference)
}

// project applies a reference change; callers hold f.mu.
func (f *FleetProofs) project(r *ProofRecord, reference string) bool {
	if r.Reference == reference {
		return false
	}
	r.Reference = reference
	r.Revision++
	r.History = append(r.History, reference)
	r.Proof = nil
	r.Version++
	return true
}

// Record returns a copy of the device's record.
func (f *FleetProofs) Record(device string) (ProofRecord, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	if r == nil {
		return ProofRecord{}, false
	}
	return r.copy(), true
}

// Devices lists the devices with a record, sorted.
func (f *FleetProofs) Devices() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.devices))
	for d := range f.devices {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func (r *ProofRecord) copy() ProofRecord {
	c := *r
	c.History = append([]string(nil), r.History...)
	if r.Proof != nil {
		p := *r.Proof
		c.Proof = &p
	}
	return c
}

// Snapshot returns the device's current identity and reference revision.
func (f *FleetProofs) Snapshot(ctx context.Context, device string) (string, int64, error) {
	if err := f.enter(ctx, "snapshot", false); err != nil {
		return "", 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	if r == nil || r.Identity == "" {
		return "", 0, fmt.Errorf("fleet manager: device %q: %w", device, hostforge.ErrNotFound)
	}
	return r.Identity, r.Revision, nil
}

// ProveEnrollment is the compare-and-set that establishes proof.
func (f *FleetProofs) ProveEnrollment(ctx context.Context, device, identity, reference string, since int64, run string, deadline time.Time) (string, error) {
	if err := f.enter(ctx, "prove_enrollment", true); err != nil {
		return "", err
	}
	if identity == "" || reference == "" || run == "" || deadline.IsZero() || since < 0 {
		return "", fmt.Errorf("fleet manager: proof of %q needs an identity, a reference, a run, a deadline and a revision >= 0: %w", device, hostforge.ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := f.now(); now.After(deadline) {
		return "", fmt.Errorf("fleet manager: proof of %q arrived at %s, after its window closed at %s: %w", device, now.Format(time.RFC3339Nano), deadline.Format(time.RFC3339Nano), hostforge.ErrConflict)
	}
	r := f.devices[device]
	switch {
	case r == nil:
		return "", fmt.Errorf("fleet manager: device %q: %w", device, hostforge.ErrNotFound)
	case r.Identity != identity:
		return "", fmt.Errorf("fleet manager: device %q has no identity %q (it is %q now): %w", device, identity, r.Identity, hostforge.ErrNotFound)
	case since > r.Revision:
		return "", fmt.Errorf("fleet manager: device %q is at reference revision %d, not %d: %w", device, r.Revision, since, hostforge.ErrInvalid)
	case r.Reference != reference:
		return "", fmt.Errorf("fleet manager: device %q projects Ironic reference %q, not %q: %w", device, r.Reference, reference, hostforge.ErrConflict)
	}
	for rev := since; rev < r.Revision; rev++ {
		if r.History[rev] == reference {
			return "", fmt.Errorf("fleet manager: device %q: reference %q was projected at revision %d, left and came back at %d: %w", device, reference, rev, r.Revision, hostforge.ErrConflict)
		}
	}
	if r.Valid() {
		return r.Proof.Run, nil
	}
	r.Proof = &Proof{Identity: identity, Reference: reference, Revision: r.Revision, Run: run, At: f.now()}
	r.Version++
	return run, nil
}

// FailEnrollment is the identity-guarded failure write.
func (f *FleetProofs) FailEnrollment(ctx context.Context, device, identity, run string) (bool, error) {
	if err := f.enter(ctx, "fail_enrollment", true); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	switch {
	case r == nil:
		return false, fmt.Errorf("fleet manager: device %q: %w", device, hostforge.ErrNotFound)
	case r.Identity != identity, r.Proof == nil, r.Valid():
		// A replacement identity is untouched; matching proof is preserved.
		return false, nil
	}
	r.Proof = nil
	r.Version++
	return true, nil
}

// ProjectedReferences returns every device's projected reference.
func (f *FleetProofs) ProjectedReferences(ctx context.Context) (map[string]string, error) {
	if err := f.enter(ctx, "projected_references", false); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string, len(f.devices))
	for d, r := range f.devices {
		out[d] = r.Reference
	}
	return out, nil
}

// ProjectReference is the projector's write: a change bumps the revision
// and clears proof; an unknown device is recorded with identity
// "fm-<device>".
func (f *FleetProofs) ProjectReference(ctx context.Context, device, reference string) (bool, error) {
	if err := f.enter(ctx, "project_reference", true); err != nil {
		return false, err
	}
	if device == "" || strings.ContainsAny(reference, " \t\n") {
		return false, fmt.Errorf("fleet manager: projection of %q to %q: %w", device, reference, hostforge.ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.record(device, true)
	if r.Identity == "" {
		r.Identity = "fm-" + device
		r.Version++
	}
	return f.project(r, reference), nil
}
