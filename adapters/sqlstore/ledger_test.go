package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
	"github.com/hostforge/hostforge/enrollment/ledgertest"
)

// newLedger opens a fresh ledger on the engine.
func newLedger(t *testing.T, e sqlstoretest.Engine) (*sqlstore.Ledger, *sqlstore.DB) {
	t.Helper()
	db := e.Open(t)
	l, err := sqlstore.NewLedger(context.Background(), db)
	if err != nil {
		t.Fatalf("NewLedger: %v", err)
	}
	return l, db
}

// TestLedgerContract runs the ledger contract suite on SQLite (always) and
// PostgreSQL (when HOSTFORGE_POSTGRES_DSN names a server).
func TestLedgerContract(t *testing.T) {
	for _, e := range sqlstoretest.Engines(t) {
		t.Run(e.Name(), func(t *testing.T) {
			ledgertest.Run(t, func(t *testing.T) ledgertest.Ledger {
				l, db := newLedger(t, e)
				return ledgertest.Ledger{
					Proofs:      l,
					References:  l,
					Fleet:       l,
					SetIdentity: l.SetIdentity,
					Inspect: func(ctx context.Context, device string) (ledgertest.Record, error) {
						r, err := l.Record(ctx, device)
						if errors.Is(err, hostforge.ErrNotFound) {
							return ledgertest.Record{}, nil
						}
						rec := ledgertest.Record{Identity: r.Identity, Reference: r.Reference, Revision: r.Revision, PlatformClass: r.PlatformClass, Version: r.Version}
						if p := r.Proof; p != nil {
							rec.Proof = &ledgertest.Proof{Identity: p.Identity, Reference: p.Reference, Revision: p.Revision, Run: p.Run}
						}
						return rec, err
					},
					Now:    l.Clock.Now,
					Down:   func() { _ = db.Close() },
					Retire: l,
				}
			})
		})
	}
}

func TestLedgerRecordAndProofState(t *testing.T) {
	for _, e := range sqlstoretest.Engines(t) {
		t.Run(e.Name(), func(t *testing.T) {
			l, _ := newLedger(t, e)
			ctx := context.Background()
			id, err := l.Register(ctx, "h1")
			if err != nil || id == "" {
				t.Fatalf("Register = %q, %v", id, err)
			}
			if again, err := l.Register(ctx, "h1"); err != nil || again != id {
				t.Fatalf("Register twice = %q, %v; want the same identity %q", again, err, id)
			}
			if _, err := l.ProjectReference(ctx, "h1", "ironic-cpu/n-1"); err != nil {
				t.Fatal(err)
			}
			if _, err := l.ProveEnrollment(ctx, "h1", id, "ironic-cpu/n-1", 0, "wf/run", time.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			r, err := l.Record(ctx, "h1")
			if err != nil || r.ProofState() != sqlstore.ProofStateValid || r.Proof.Run != "wf/run" || r.ProjectedAt.IsZero() || r.Proof.At.IsZero() {
				t.Fatalf("record %+v proof %+v, %v", r, r.Proof, err)
			}
			newID, err := l.NewIdentity(ctx, "h1")
			if err != nil || newID == id {
				t.Fatalf("NewIdentity = %q, %v", newID, err)
			}
			if r, _ := l.Record(ctx, "h1"); r.ProofState() != sqlstore.ProofStateStale {
				t.Fatalf("after a replacement the proof is %s, want stale", r.ProofState())
			}
			if _, err := l.Record(ctx, "ghost"); !errors.Is(err, hostforge.ErrNotFound) {
				t.Fatalf("Record of an unknown device: %v", err)
			}
			all, err := l.Records(ctx)
			if err != nil || len(all) != 1 || all[0].Device != "h1" {
				t.Fatalf("Records = %+v, %v", all, err)
			}
			for _, bad := range []string{"", " "} {
				if _, err := l.Register(ctx, bad); !errors.Is(err, hostforge.ErrInvalid) {
					t.Fatalf("Register(%q): %v", bad, err)
				}
			}
			if _, err := l.ProjectReference(ctx, "h1", "has space"); !errors.Is(err, hostforge.ErrInvalid) {
				t.Fatalf("a reference with a space: %v", err)
			}
		})
	}
}
