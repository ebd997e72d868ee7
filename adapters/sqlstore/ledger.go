package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/clock"
	"github.com/hostforge/hostforge/enrollment"
	"github.com/hostforge/hostforge/platformclass"
)

// Ledger is the fleet manager's ledger on SQL: per device its identity,
// the Ironic reference projected from Ironic (with a revision and a
// history), the platform_class, and the Enrollment proof. It implements
// enrollment.ProofStore, enrollment.ReferenceLedger and
// enrollment.FleetManager, and passes enrollment/ledgertest on SQLite and
// PostgreSQL.
//
// Every write is one transaction that locks the device's row first
// (SELECT … FOR UPDATE on PostgreSQL; SQLite transactions begin IMMEDIATE
// and hold the database's write lock), re-reads it, decides, and updates
// it conditionally on the revision it read; so a compare-and-set and a
// projection change never interleave, and no update is lost between
// writers of several processes. A write that would change nothing writes
// nothing.
//
// Errors wrap hostforge.ErrNotFound, ErrConflict and ErrInvalid for what
// the ledger decided, and hostforge.ErrUnavailable when the database did
// not answer, so each consumer raises its own code (the platform-class
// phase PLATFORM_CLASS_RECORD_FAILED, completion proof its codes). They
// never carry the DSN.
type Ledger struct {
	db *DB
	// Clock is the ledger's own time: proof deadlines are judged by it,
	// and records are stamped with it. Default: the wall clock.
	Clock clock.Clock
}

var (
	_ enrollment.ProofStore      = (*Ledger)(nil)
	_ enrollment.ReferenceLedger = (*Ledger)(nil)
	_ enrollment.FleetManager    = (*Ledger)(nil)
)

// LedgerComponent is the ledger's migration component.
const LedgerComponent = "ledger"

// NewLedger migrates the ledger's schema and returns the ledger.
func NewLedger(ctx context.Context, db *DB) (*Ledger, error) {
	if err := db.Migrate(ctx, LedgerComponent); err != nil {
		return nil, err
	}
	return &Ledger{db: db, Clock: clock.Real{}}, nil
}

// LedgerRecord is one device's ledger record.
type LedgerRecord struct {
	Device    string `json:"device"`
	Identity  string `json:"identity"`
	Reference string `json:"reference"`
	// Revision counts the reference's changes.
	Revision      int64     `json:"revision"`
	ProjectedAt   time.Time `json:"projected_at,omitzero"`
	PlatformClass string    `json:"platform_class"`
	// Proof is nil when the device has none.
	Proof *LedgerProof `json:"proof,omitempty"`
	// Version counts the writes that changed the record.
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// LedgerProof is an established Enrollment proof.
type LedgerProof struct {
	Identity  string    `json:"identity"`
	Reference string    `json:"reference"`
	Revision  int64     `json:"revision"`
	Run       string    `json:"run"`
	At        time.Time `json:"at"`
}

// Proof states a record is in.
const (
	ProofStateNone  = "none"
	ProofStateValid = "valid"
	// ProofStateStale: proof of an identity the device no longer has.
	ProofStateStale = "stale"
)

// ProofState says whether the record's proof holds for its current
// identity, reference and revision.
func (r LedgerRecord) ProofState() string {
	p := r.Proof
	switch {
	case p == nil:
		return ProofStateNone
	case p.Identity == r.Identity && p.Reference == r.Reference && p.Revision == r.Revision:
		return ProofStateValid
	}
	return ProofStateStale
}

const ledgerColumns = `device, identity, reference, revision, projected_at, platform_class,
	proof_identity, proof_reference, proof_revision, proof_run, proof_at, version, updated_at`

type rowScanner interface{ Scan(dest ...any) error }

func scanRecord(s rowScanner) (LedgerRecord, error) {
	var r LedgerRecord
	var p LedgerProof
	var projected, proofAt, updated int64
	err := s.Scan(&r.Device, &r.Identity, &r.Reference, &r.Revision, &projected, &r.PlatformClass,
		&p.Identity, &p.Reference, &p.Revision, &p.Run, &proofAt, &r.Version, &updated)
	if err != nil {
		return r, err
	}
	r.ProjectedAt, r.UpdatedAt = Time(projected), Time(updated)
	if p.Run != "" {
		p.At = Time(proofAt)
		r.Proof = &p
	}
	return r, nil
}

func (l *Ledger) now() time.Time {
	if l.Clock == nil {
		return time.Now()
	}
	return l.Clock.Now()
}

// ledgerErr passes the ledger's own decisions and context errors through
// and classifies every other error (the database's) as unavailable.
func ledgerErr(err error, op string, args ...any) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, hostforge.ErrNotFound), errors.Is(err, hostforge.ErrConflict), errors.Is(err, hostforge.ErrInvalid),
		errors.Is(err, hostforge.ErrUnavailable):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("ledger: %s: %w", fmt.Sprintf(op, args...), err)
	}
	return fmt.Errorf("ledger: %s: %v: %w", fmt.Sprintf(op, args...), err, hostforge.ErrUnavailable)
}

// newIdentity is a fresh per-lifecycle device identity.
func newIdentity() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "fm-" + hex.EncodeToString(b[:])
}

// lock ensures the device's row exists when create is set (with a new
// identity), then locks and reads it. sql.ErrNoRows when it does not exist.
func (l *Ledger) lock(ctx context.Context, tx *Tx, device string, create bool) (LedgerRecord, error) {
	if create {
		now := Nanos(l.now())
		if _, err := tx.Exec(ctx, `INSERT INTO ledger_devices (device, identity, updated_at) VALUES (?, ?, ?) ON CONFLICT (device) DO NOTHING`,
			device, newIdentity(), now); err != nil {
			return LedgerRecord{}, err
		}
	}
	q := `SELECT ` + ledgerColumns + ` FROM ledger_devices WHERE device = ?`
	if tx.Driver() == Postgres {
		q += ` FOR UPDATE`
	}
	return scanRecord(tx.QueryRow(ctx, q, device))
}

// lockKnown is lock of a device the ledger must know already:
// hostforge.ErrNotFound when it does not.
func (l *Ledger) lockKnown(ctx context.Context, tx *Tx, device string) (LedgerRecord, error) {
	r, err := l.lock(ctx, tx, device, false)
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound(device)
	}
	return r, err
}

// execOne runs a write of the device's locked row that must change exactly
// that row: any other count means the row changed under the lock
// (hostforge.ErrConflict).
func execOne(ctx context.Context, tx *Tx, device, query string, args ...any) error {
	res, err := tx.Exec(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("ledger: device %q changed under its lock (%d rows, %v): %w", device, n, err, hostforge.ErrConflict)
	}
	return nil
}

func notFound(device string) error {
	return fmt.Errorf("ledger: device %q: %w", device, hostforge.ErrNotFound)
}

// Register records the device with a new identity unless the ledger knows
// it, and returns its identity.
func (l *Ledger) Register(ctx context.Context, device string) (string, error) {
	if err := checkDevice(device); err != nil {
		return "", err
	}
	var id string
	err := l.db.InTx(ctx, func(tx *Tx) error {
		r, err := l.lock(ctx, tx, device, true)
		id = r.Identity
		return err
	})
	return id, ledgerErr(err, "registering %s", device)
}

// SetIdentity gives the device an identity (a hardware replacement gets a
// new one), recording the device if it is new. Its proof stays, as stale
// metadata of the old identity.
func (l *Ledger) SetIdentity(ctx context.Context, device, identity string) error {
	if err := checkDevice(device); err != nil {
		return err
	}
	if strings.TrimSpace(identity) == "" {
		return fmt.Errorf("ledger: an empty identity for %q: %w", device, hostforge.ErrInvalid)
	}
	err := l.db.InTx(ctx, func(tx *Tx) error {
		if _, err := l.lock(ctx, tx, device, true); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE ledger_devices SET identity = ?, version = version + 1, updated_at = ? WHERE device = ? AND identity <> ?`,
			identity, Nanos(l.now()), device, identity)
		return err
	})
	return ledgerErr(err, "setting the identity of %s", device)
}

// NewIdentity replaces the device's identity with a fresh one (a hardware
// replacement) and returns it.
func (l *Ledger) NewIdentity(ctx context.Context, device string) (string, error) {
	id := newIdentity()
	return id, l.SetIdentity(ctx, device, id)
}

func checkDevice(device string) error {
	if strings.TrimSpace(device) == "" || len(device) > 255 {
		return fmt.Errorf("ledger: device name %q: %w", device, hostforge.ErrInvalid)
	}
	return nil
}

// Record reads the device's record; hostforge.ErrNotFound when the ledger
// does not know it.
func (l *Ledger) Record(ctx context.Context, device string) (LedgerRecord, error) {
	r, err := scanRecord(l.db.QueryRow(ctx, `SELECT `+ledgerColumns+` FROM ledger_devices WHERE device = ?`, device))
	if errors.Is(err, sql.ErrNoRows) {
		return r, notFound(device)
	}
	return r, ledgerErr(err, "reading %s", device)
}

// Records reads every record, sorted by device.
func (l *Ledger) Records(ctx context.Context) ([]LedgerRecord, error) {
	rows, err := l.db.Query(ctx, `SELECT `+ledgerColumns+` FROM ledger_devices ORDER BY device`)
	if err != nil {
		return nil, ledgerErr(err, "listing devices")
	}
	defer rows.Close()
	var out []LedgerRecord
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, ledgerErr(err, "listing devices")
		}
		out = append(out, r)
	}
	return out, ledgerErr(rows.Err(), "listing devices")
}

// Snapshot returns the device's identity and reference revision.
func (l *Ledger) Snapshot(ctx context.Context, device string) (string, int64, error) {
	var id string
	var rev int64
	err := l.db.QueryRow(ctx, `SELECT identity, revision FROM ledger_devices WHERE device = ?`, device).Scan(&id, &rev)
	if errors.Is(err, sql.ErrNoRows) || err == nil && id == "" {
		return "", 0, notFound(device)
	}
	return id, rev, ledgerErr(err, "reading the identity of %s", device)
}

// ProveEnrollment is the compare-and-set that establishes proof (see
// enrollment.ProofStore). The deadline is judged by the ledger's clock once
// the device's row is locked, just before the write.
func (l *Ledger) ProveEnrollment(ctx context.Context, device, identity, reference string, since int64, run string, deadline time.Time) (string, error) {
	if identity == "" || reference == "" || run == "" || deadline.IsZero() || since < 0 {
		return "", fmt.Errorf("ledger: proof of %q needs an identity, a reference, a run, a deadline and a revision >= 0: %w", device, hostforge.ErrInvalid)
	}
	var holder string
	err := l.db.InTx(ctx, func(tx *Tx) error {
		r, err := l.lockKnown(ctx, tx, device)
		if err != nil {
			return err
		}
		now := l.now()
		switch {
		case now.After(deadline):
			return fmt.Errorf("ledger: proof of %q arrived at %s, after its window closed at %s: %w", device, now.UTC().Format(time.RFC3339Nano), deadline.UTC().Format(time.RFC3339Nano), hostforge.ErrConflict)
		case r.Identity != identity:
			return fmt.Errorf("ledger: device %q has no identity %q (it is %q now): %w", device, identity, r.Identity, hostforge.ErrNotFound)
		case since > r.Revision:
			return fmt.Errorf("ledger: device %q is at reference revision %d, not %d: %w", device, r.Revision, since, hostforge.ErrInvalid)
		case r.Reference != reference:
			return fmt.Errorf("ledger: device %q projects Ironic reference %q, not %q: %w", device, r.Reference, reference, hostforge.ErrConflict)
		}
		var earlier int64
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM ledger_reference_history WHERE device = ? AND reference = ? AND revision >= ? AND revision < ?`,
			device, reference, since, r.Revision).Scan(&earlier); err != nil {
			return err
		}
		if earlier > 0 {
			return fmt.Errorf("ledger: device %q: reference %q was projected since revision %d, left and came back at %d: %w", device, reference, since, r.Revision, hostforge.ErrConflict)
		}
		if r.ProofState() == ProofStateValid {
			holder = r.Proof.Run
			return nil
		}
		if err := execOne(ctx, tx, device, `UPDATE ledger_devices SET proof_identity = ?, proof_reference = ?, proof_revision = ?, proof_run = ?, proof_at = ?,
			version = version + 1, updated_at = ? WHERE device = ? AND revision = ? AND identity = ?`,
			identity, reference, r.Revision, run, Nanos(now), Nanos(now), device, r.Revision, identity); err != nil {
			return err
		}
		holder = run
		return nil
	})
	return holder, ledgerErr(err, "proving the enrollment of %s", device)
}

// FailEnrollment is the identity-guarded failure write (see
// enrollment.ProofStore).
func (l *Ledger) FailEnrollment(ctx context.Context, device, identity, run string) (bool, error) {
	var cleared bool
	err := l.db.InTx(ctx, func(tx *Tx) error {
		r, err := l.lockKnown(ctx, tx, device)
		switch {
		case err != nil:
			return err
		case r.Identity != identity, r.ProofState() != ProofStateStale:
			// A replacement identity is untouched; matching proof is
			// preserved; no proof is nothing to clear.
			return nil
		}
		now := Nanos(l.now())
		_, err = tx.Exec(ctx, `UPDATE ledger_devices SET proof_identity = '', proof_reference = '', proof_revision = 0, proof_run = '', proof_at = 0,
			version = version + 1, updated_at = ? WHERE device = ? AND version = ?`, now, device, r.Version)
		cleared = err == nil
		return err
	})
	return cleared, ledgerErr(err, "the failure write of %s (run %s)", device, run)
}

// ProjectedReferences returns every device's projected reference.
func (l *Ledger) ProjectedReferences(ctx context.Context) (map[string]string, error) {
	rows, err := l.db.Query(ctx, `SELECT device, reference FROM ledger_devices`)
	if err != nil {
		return nil, ledgerErr(err, "reading the projected references")
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var d, ref string
		if err := rows.Scan(&d, &ref); err != nil {
			return nil, ledgerErr(err, "reading the projected references")
		}
		out[d] = ref
	}
	return out, ledgerErr(rows.Err(), "reading the projected references")
}

// ProjectReference records the device's projected reference: a change
// bumps the revision, appends it to the history and clears proof in the
// same transaction (see enrollment.ReferenceLedger).
func (l *Ledger) ProjectReference(ctx context.Context, device, reference string) (bool, error) {
	if err := checkDevice(device); err != nil {
		return false, err
	}
	if strings.ContainsAny(reference, " \t\r\n") {
		return false, fmt.Errorf("ledger: reference %q of %q: %w", reference, device, hostforge.ErrInvalid)
	}
	var changed bool
	err := l.db.InTx(ctx, func(tx *Tx) error {
		r, err := l.lock(ctx, tx, device, true)
		if err != nil || r.Reference == reference {
			return err
		}
		now := Nanos(l.now())
		rev := r.Revision + 1
		if err := execOne(ctx, tx, device, `UPDATE ledger_devices SET reference = ?, revision = ?, projected_at = ?,
			proof_identity = '', proof_reference = '', proof_revision = 0, proof_run = '', proof_at = 0,
			version = version + 1, updated_at = ? WHERE device = ? AND revision = ?`, reference, rev, now, now, device, r.Revision); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ledger_reference_history (device, revision, reference, projected_at) VALUES (?, ?, ?, ?)`,
			device, rev, reference, now); err != nil {
			return err
		}
		changed = true
		return nil
	})
	return changed, ledgerErr(err, "projecting %q for %s", reference, device)
}

// PlatformClass returns the device's platform_class, "" when unset or when
// the ledger does not know the device.
func (l *Ledger) PlatformClass(ctx context.Context, device string) (string, error) {
	var v string
	err := l.db.QueryRow(ctx, `SELECT platform_class FROM ledger_devices WHERE device = ?`, device).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, ledgerErr(err, "reading the platform_class of %s", device)
}

// SetPlatformClass records the device's platform_class, recording the
// device if it is new. An equal value writes nothing; a key longer than
// platformclass.MaxLen is refused.
func (l *Ledger) SetPlatformClass(ctx context.Context, device, value string) error {
	if err := checkDevice(device); err != nil {
		return err
	}
	if len(value) > platformclass.MaxLen {
		return fmt.Errorf("ledger: platform_class of %q is %d characters, longer than %d: %w", device, len(value), platformclass.MaxLen, hostforge.ErrInvalid)
	}
	err := l.db.InTx(ctx, func(tx *Tx) error {
		r, err := l.lock(ctx, tx, device, true)
		if err != nil || r.PlatformClass == value {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE ledger_devices SET platform_class = ?, version = version + 1, updated_at = ? WHERE device = ?`,
			value, Nanos(l.now()), device)
		return err
	})
	return ledgerErr(err, "setting the platform_class of %s", device)
}
