package sqlstore

import (
	"context"
	"fmt"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/retirement"
)

var _ retirement.Ledger = (*Ledger)(nil)

// RetireState reads the device's identity, whether its record holds proof
// (valid or stale), and its platform_class (see retirement.Ledger).
func (l *Ledger) RetireState(ctx context.Context, device string) (string, bool, string, error) {
	r, err := l.Record(ctx, device)
	if err != nil {
		return "", false, "", err
	}
	return r.Identity, r.Proof != nil, r.PlatformClass, nil
}

// RetireEnrollment clears the device's proof and platform_class in one
// transaction on its locked row, while identity is its identity (see
// retirement.Ledger). A replacement identity, or a row with nothing to
// clear, is not written.
func (l *Ledger) RetireEnrollment(ctx context.Context, device, identity, run string) (bool, error) {
	if identity == "" || run == "" {
		return false, fmt.Errorf("ledger: the retirement of %q needs an identity and a run: %w", device, hostforge.ErrInvalid)
	}
	var cleared bool
	err := l.db.InTx(ctx, func(tx *Tx) error {
		r, err := l.lockKnown(ctx, tx, device)
		switch {
		case err != nil:
			return err
		case r.Identity != identity, r.Proof == nil && r.PlatformClass == "":
			return nil
		}
		if err := execOne(ctx, tx, device, `UPDATE ledger_devices SET proof_identity = '', proof_reference = '', proof_revision = 0, proof_run = '', proof_at = 0,
			platform_class = '', version = version + 1, updated_at = ? WHERE device = ? AND version = ?`, Nanos(l.now()), device, r.Version); err != nil {
			return err
		}
		cleared = true
		return nil
	})
	return cleared, ledgerErr(err, "retiring %s (run %s)", device, run)
}
