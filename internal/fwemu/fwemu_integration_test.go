//go:build integration

package fwemu_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
	"github.com/hostforge/hostforge/internal/fwemu"
)

// On the real PostgreSQL (scripts/integration.d/postgres.sh) three
// workers' executors share the upload slots through the database: the
// emulated BMCs never see more pushes in flight than max_uploads.
func TestUploadSlotsSharedOnPostgres(t *testing.T) {
	db := sqlstoretest.Postgres(t)
	store := sqlstore.NewFirmwareStore(db)
	rep, err := fwemu.Run(context.Background(), fwemu.Config{Hosts: 12, MaxUploads: 3, Workers: 3, UploadHold: 100 * time.Millisecond, Store: store, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep)
	if rep.Compliant != 12 || rep.Peak > 3 || rep.Peak < 2 {
		t.Fatalf("compliant %d, peak %d pushes in flight with 3 slots", rep.Compliant, rep.Peak)
	}
}
