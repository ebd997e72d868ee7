// Package ledgertest is the contract suite of the fleet manager's ledger:
// the completion-proof store (enrollment.ProofStore), the Ironic
// projection it is compared against (enrollment.ReferenceLedger) and the
// platform_class record (enrollment.FleetManager). Every implementation
// runs it — the in-memory fake (fakes.FleetProofs and fakes.FleetManager),
// the SQL ledger on SQLite in the unit suite and on PostgreSQL in the
// integration run, and a user's own adapter to a real fleet manager:
//
//	func TestLedgerContract(t *testing.T) {
//		ledgertest.Run(t, func(t *testing.T) ledgertest.Ledger { ... })
//	}
//
// It checks the compare-and-set of the resolved reference against the
// projected one; that every later reference change clears proof with a
// revision, so A → B → A cannot bring old proof back; the identity-guarded
// failure writes; that diagnostic and unclassifiable completions write
// nothing; platform_class get and set with no write for an equal value;
// that of two writers racing the same compare-and-set exactly one wins;
// that no reference change is lost under concurrent writers; that a
// compare-and-set arriving after its window's deadline is refused by the
// store itself; and that a ledger that is down surfaces as
// hostforge.ErrUnavailable, which the consumers turn into
// PLATFORM_CLASS_RECORD_FAILED and the completion-proof codes.
package ledgertest
