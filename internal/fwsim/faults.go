package fwsim

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"

	"github.com/hostforge/hostforge/firmware"
)

// errCrash is the worker dying between an action and the write of its
// outcome.
var errCrash = errors.New("fwsim: the worker died before persisting")

// faultStore injects store faults: a write that loses its compare-and-set
// (another writer won), and the write after a crash point failing.
type faultStore struct {
	firmware.Store
	mu        sync.Mutex
	rng       *rand.Rand
	rate      float64
	crashNext bool
	conflicts int
}

func (f *faultStore) crash() {
	f.mu.Lock()
	f.crashNext = true
	f.mu.Unlock()
}

func (f *faultStore) write() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.crashNext {
		f.crashNext = false
		return errCrash
	}
	return nil
}

// PutUpdate sometimes loses to another writer.
func (f *faultStore) PutUpdate(ctx context.Context, u firmware.HostUpdate) (firmware.HostUpdate, error) {
	if err := f.write(); err != nil {
		return firmware.HostUpdate{}, err
	}
	f.mu.Lock()
	lose := f.rate > 0 && f.rng.Float64() < f.rate
	if lose {
		f.conflicts++
	}
	f.mu.Unlock()
	if lose {
		return firmware.HostUpdate{}, firmware.StateConflict.New("injected: another writer won")
	}
	return f.Store.PutUpdate(ctx, u)
}

// PutResult fails after a crash point.
func (f *faultStore) PutResult(ctx context.Context, r firmware.Result) (firmware.Result, error) {
	if err := f.write(); err != nil {
		return firmware.Result{}, err
	}
	return f.Store.PutResult(ctx, r)
}

// Complete fails after a crash point.
func (f *faultStore) Complete(ctx context.Context, m string, h *firmware.UpdateHistory) error {
	if err := f.write(); err != nil {
		return err
	}
	return f.Store.Complete(ctx, m, h)
}

// PatchRequest fails after a crash point.
func (f *faultStore) PatchRequest(ctx context.Context, m string, p firmware.RequestPatch) (firmware.Request, error) {
	if err := f.write(); err != nil {
		return firmware.Request{}, err
	}
	return f.Store.PatchRequest(ctx, m, p)
}

// crashBMC makes the worker die, now and then, right after a BMC action
// succeeded: the action happened, its outcome is never written.
type crashBMC struct {
	firmware.BMCClient
	s *Sim
}

func (c *crashBMC) maybe(err error) error {
	if err == nil && c.s.cfg.CrashRate > 0 && c.s.rng.Float64() < c.s.cfg.CrashRate {
		c.s.store.crash()
	}
	return err
}

// Upload uploads, and may crash after.
func (c *crashBMC) Upload(ctx context.Context, m string, u firmware.UploadRequest) (string, error) {
	id, err := c.BMCClient.Upload(ctx, m, u)
	return id, c.maybe(err)
}

// Reset resets, and may crash after.
func (c *crashBMC) Reset(ctx context.Context, m string, k firmware.ResetKind) error {
	return c.maybe(c.BMCClient.Reset(ctx, m, k))
}

// SetLockdown sets lockdown, and may crash after.
func (c *crashBMC) SetLockdown(ctx context.Context, m string, on bool) error {
	return c.maybe(c.BMCClient.SetLockdown(ctx, m, on))
}
