package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hostforge/hostforge/adapters/sqlstore"
)

// Open the ledger a config's ledger: section names (here an embedded
// SQLite file), project a device's Ironic reference, prove an enrollment
// against it and read the record back.
func ExampleOpenLedger() {
	dir, _ := os.MkdirTemp("", "ledger-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	l, db, err := sqlstore.OpenLedger(ctx, sqlstore.LedgerConfig{Driver: "sqlite", Path: filepath.Join(dir, "ledger.db")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	id, _ := l.Register(ctx, "cpu-r1-u10")
	_, since, _ := l.Snapshot(ctx, "cpu-r1-u10")
	_, _ = l.ProjectReference(ctx, "cpu-r1-u10", "ironic-cpu/node-1")
	holder, err := l.ProveEnrollment(ctx, "cpu-r1-u10", id, "ironic-cpu/node-1", since, "enroll/cpu-r1-u10/run-1", time.Now().Add(time.Minute))
	fmt.Println("holder:", holder, err)

	r, _ := l.Record(ctx, "cpu-r1-u10")
	fmt.Println(r.Reference, "revision", r.Revision, "proof", r.ProofState())
	// Output:
	// holder: enroll/cpu-r1-u10/run-1 <nil>
	// ironic-cpu/node-1 revision 1 proof valid
}
