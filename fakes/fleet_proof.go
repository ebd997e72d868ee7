package fakes

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/hostforge/hostforge"
)

// FleetProofs is the fake fleet manager's per-device Enrollment proof: the
// device's current identity, the Ironic reference the fleet manager projects
// from Ironic, and the identity-scoped proof a completed enrollment
// established. It implements enrollment.ProofStore.
//
// Semantics, each operation atomic under one lock:
//   - SetReference (the projection moving) clears proof whenever the
//     reference changes, and bumps the reference revision: A → B → A leaves
//     no proof.
//   - ProveEnrollment is a compare-and-set on the operated identity and the
//     projected reference: ErrConflict when the reference differs,
//     ErrNotFound when the device or that identity of it is unknown.
//   - FailEnrollment is identity-guarded: a replaced identity is untouched,
//     proof matching the current identity, reference and revision is kept,
//     anything else (stale metadata) is cleared.
//   - ReplaceIdentity (a hardware replacement) keeps the old identity's
//     proof as stale metadata: it proves nothing for the new identity.
type FleetProofs struct {
	site    *Site
	mu      sync.Mutex
	devices map[string]*ProofRecord
}

// ProofRecord is one device's proof state.
type ProofRecord struct {
	Identity  string
	Reference string
	// Revision counts reference changes.
	Revision int
	// Proof is nil when the device has none.
	Proof *Proof
}

// Proof is an established Enrollment proof.
type Proof struct {
	Identity  string
	Reference string
	// Revision is the reference revision it was established against.
	Revision int
	// Run is the completion that established it.
	Run string
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

func (f *FleetProofs) enter(ctx context.Context, op string, write bool) error {
	return f.site.enter(ctx, SysFleetManager, op, write)
}

// Register seeds a device with an identity and no reference, without
// counting a call. Registering a known device replaces its identity.
func (f *FleetProofs) Register(device, identity string) { f.ReplaceIdentity(device, identity) }

// ReplaceIdentity gives the device a new identity (a hardware or record
// replacement). Existing proof stays as stale metadata of the old identity.
func (f *FleetProofs) ReplaceIdentity(device, identity string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	if r == nil {
		r = &ProofRecord{}
		f.devices[device] = r
	}
	r.Identity = identity
}

// SetReference is the fleet manager's projection of the device's Ironic
// reference changing ("" when the device has no node). Any change clears
// proof in the same step.
func (f *FleetProofs) SetReference(device, reference string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	if r == nil {
		r = &ProofRecord{}
		f.devices[device] = r
	}
	if r.Reference == reference {
		return
	}
	r.Reference = reference
	r.Revision++
	r.Proof = nil
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
	if r.Proof != nil {
		p := *r.Proof
		c.Proof = &p
	}
	return c
}

// Identity returns the device's current identity.
func (f *FleetProofs) Identity(ctx context.Context, device string) (string, error) {
	if err := f.enter(ctx, "identity", false); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	if r == nil || r.Identity == "" {
		return "", fmt.Errorf("fleet manager: device %q: %w", device, hostforge.ErrNotFound)
	}
	return r.Identity, nil
}

// ProveEnrollment is the compare-and-set that establishes proof.
func (f *FleetProofs) ProveEnrollment(ctx context.Context, device, identity, reference, run string) (err error) {
	if err := f.enter(ctx, "prove_enrollment", true); err != nil {
		return err
	}
	defer f.site.answer(ctx, SysFleetManager, "prove_enrollment", &err)
	if identity == "" || reference == "" {
		return fmt.Errorf("fleet manager: proof of %q needs an identity and a reference: %w", device, hostforge.ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	switch {
	case r == nil:
		return fmt.Errorf("fleet manager: device %q: %w", device, hostforge.ErrNotFound)
	case r.Identity != identity:
		return fmt.Errorf("fleet manager: device %q has no identity %q (it is %q now): %w", device, identity, r.Identity, hostforge.ErrNotFound)
	case r.Reference != reference:
		return fmt.Errorf("fleet manager: device %q projects Ironic reference %q, not %q: %w", device, r.Reference, reference, hostforge.ErrConflict)
	}
	r.Proof = &Proof{Identity: identity, Reference: reference, Revision: r.Revision, Run: run}
	return nil
}

// FailEnrollment is the identity-guarded failure write.
func (f *FleetProofs) FailEnrollment(ctx context.Context, device, identity, run string) (cleared bool, err error) {
	if err := f.enter(ctx, "fail_enrollment", true); err != nil {
		return false, err
	}
	defer f.site.answer(ctx, SysFleetManager, "fail_enrollment", &err)
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
	return true, nil
}
