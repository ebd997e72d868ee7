package ledgertest

import (
	"errors"
	"testing"

	"github.com/hostforge/hostforge"
)

// The retirement's side of the ledger (retirement.Ledger, Ledger.Retire):
// a retiring device's proof and platform class are cleared in one
// compare-and-set guarded by the operated identity; nothing else changes.

func testRetire(t *testing.T, l Ledger) {
	if l.Retire == nil {
		t.Skip("the ledger has no retirement side (Ledger.Retire)")
	}
	f := fix(t, l)
	r := l.Retire
	if _, _, _, err := r.RetireState(f.ctx, "ghost"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("RetireState of an unknown device: %v, want ErrNotFound", err)
	}
	if _, err := r.RetireEnrollment(f.ctx, "ghost", "id1", "ret-1"); !errors.Is(err, hostforge.ErrNotFound) {
		t.Fatalf("RetireEnrollment of an unknown device: %v, want ErrNotFound", err)
	}
	f.identity("h1", "id1")
	_, since := f.snapshot("h1")
	f.project("h1", refA)
	if _, err := f.prove("h1", "id1", refA, since, "run-1"); err != nil {
		t.Fatal(err)
	}
	const key = "NOGPU_DELLR7615_NORDMA_01"
	if err := l.Fleet.SetPlatformClass(f.ctx, "h1", key); err != nil {
		t.Fatal(err)
	}
	id, proof, class, err := r.RetireState(f.ctx, "h1")
	if err != nil || id != "id1" || !proof || class != key {
		t.Fatalf("RetireState = %q, %v, %q, %v; want id1 with proof and %s", id, proof, class, err, key)
	}
	before := f.record("h1")
	if _, err := r.RetireEnrollment(f.ctx, "h1", "", "ret-1"); !errors.Is(err, hostforge.ErrInvalid) {
		t.Fatalf("RetireEnrollment without an identity: %v, want ErrInvalid", err)
	}
	// A replacement identity is untouched.
	if cleared, err := r.RetireEnrollment(f.ctx, "h1", "id0", "ret-1"); err != nil || cleared {
		t.Fatalf("RetireEnrollment for another identity = %v, %v; want nothing cleared", cleared, err)
	}
	if again := f.record("h1"); again.Version != before.Version || !again.Valid() {
		t.Fatalf("a retirement of another identity changed the record: %+v", again)
	}
	cleared, err := r.RetireEnrollment(f.ctx, "h1", "id1", "ret-1")
	if err != nil || !cleared {
		t.Fatalf("RetireEnrollment = %v, %v; want cleared", cleared, err)
	}
	after := f.record("h1")
	if after.Proof != nil || after.PlatformClass != "" || after.Identity != "id1" || after.Reference != refA || after.Revision != before.Revision || after.Version == before.Version {
		t.Fatalf("after the retirement: %+v; want proof and platform class gone, identity and projection kept", after)
	}
	if v, err := l.Fleet.PlatformClass(f.ctx, "h1"); err != nil || v != "" {
		t.Fatalf("PlatformClass after the retirement = %q, %v", v, err)
	}
	if _, proof, class, err := r.RetireState(f.ctx, "h1"); err != nil || proof || class != "" {
		t.Fatalf("RetireState after the retirement: proof %v class %q, %v", proof, class, err)
	}
	// Nothing left to clear: nothing written.
	if cleared, err := r.RetireEnrollment(f.ctx, "h1", "id1", "ret-1"); err != nil || cleared {
		t.Fatalf("a second retirement = %v, %v; want nothing cleared", cleared, err)
	}
	if again := f.record("h1"); again.Version != after.Version {
		t.Fatalf("a retirement with nothing to clear wrote: version %d -> %d", after.Version, again.Version)
	}

	// Stale proof of an old identity is cleared for the current one.
	f.identity("h2", "old")
	_, since = f.snapshot("h2")
	f.project("h2", refB)
	if _, err := f.prove("h2", "old", refB, since, "run-2"); err != nil {
		t.Fatal(err)
	}
	f.identity("h2", "new")
	if cleared, err := r.RetireEnrollment(f.ctx, "h2", "new", "ret-2"); err != nil || !cleared || f.record("h2").Proof != nil {
		t.Fatalf("retiring a device with stale proof = %v, %v; record %+v", cleared, err, f.record("h2"))
	}
}

func testRetireDown(t *testing.T, l Ledger) {
	if l.Retire == nil {
		t.Skip("the ledger has no retirement side (Ledger.Retire)")
	}
	f := fix(t, l)
	f.identity("h1", "id1")
	l.Down()
	if _, _, _, err := l.Retire.RetireState(f.ctx, "h1"); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("RetireState on a ledger that is down: %v, want ErrUnavailable", err)
	}
	if _, err := l.Retire.RetireEnrollment(f.ctx, "h1", "id1", "ret-1"); !errors.Is(err, hostforge.ErrUnavailable) {
		t.Fatalf("RetireEnrollment on a ledger that is down: %v, want ErrUnavailable", err)
	}
}
