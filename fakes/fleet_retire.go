package fakes

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge"
)

// The fleet manager's side of a retirement (retirement.Ledger): the
// device's Enrollment proof and its platform-class record are cleared in
// one step, guarded by the identity the retirement operates on.

// RetireState reads the device's identity, whether it holds proof (valid
// or stale) and its platform class.
func (f *FleetProofs) RetireState(ctx context.Context, device string) (identity string, proof bool, platformClass string, err error) {
	if err := f.enter(ctx, "retire_state", false); err != nil {
		return "", false, "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	if r == nil || r.Identity == "" {
		return "", false, "", fmt.Errorf("fleet manager: device %q: %w", device, hostforge.ErrNotFound)
	}
	return r.Identity, r.Proof != nil, f.site.FleetManager.Get(device), nil
}

// RetireEnrollment clears the device's proof and platform class while
// identity is its identity; a replacement identity, or a record with
// nothing to clear, is left as it is.
func (f *FleetProofs) RetireEnrollment(ctx context.Context, device, identity, run string) (cleared bool, err error) {
	if err := f.enter(ctx, "retire_enrollment", true); err != nil {
		return false, err
	}
	defer f.site.answer(ctx, SysFleetManager, "retire_enrollment", &err)
	if identity == "" || run == "" {
		return false, fmt.Errorf("fleet manager: the retirement of %q needs an identity and a run: %w", device, hostforge.ErrInvalid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.devices[device]
	if r == nil {
		return false, fmt.Errorf("fleet manager: device %q: %w", device, hostforge.ErrNotFound)
	}
	if r.Identity != identity {
		return false, nil
	}
	fm := f.site.FleetManager
	fm.mu.Lock()
	defer fm.mu.Unlock()
	class := fm.devices[device]
	if r.Proof == nil && class == "" {
		return false, nil
	}
	if r.Proof != nil {
		r.Proof = nil
		r.Version++
	}
	if class != "" {
		delete(fm.devices, device)
		fm.changes[device]++
	}
	return true, nil
}
