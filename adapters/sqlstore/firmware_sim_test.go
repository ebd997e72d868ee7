package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/internal/fwsim"
)

// A small simulated fleet on a real SQLite file: every worker restart
// closes the database and opens it again, and nothing is lost.
func TestFirmwareFleetOnSQLiteSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fw.db")
	ctx := context.Background()
	var db *sqlstore.DB
	open := func() (firmware.Store, error) {
		if db != nil {
			_ = db.Close()
		}
		var err error
		if db, err = sqlstore.Open(ctx, sqlstore.SQLite, path); err != nil {
			return nil, err
		}
		if err := db.Migrate(ctx, sqlstore.FirmwareComponent); err != nil {
			return nil, err
		}
		return sqlstore.NewFirmwareStore(db), nil
	}
	t.Cleanup(func() {
		if db != nil {
			_ = db.Close()
		}
	})
	c := fwsim.Config{Hosts: 24, Seed: 5, Drifted: 0.6, Assigned: 0.3, Maintenance: 0.1, Faulty: 0.2, CeilingPercent: 40,
		Restarts: 3, CrashRate: 0.02, StoreFaultRate: 0.01}
	c.Store = func() (firmware.Store, func() (firmware.Store, error), error) {
		s, err := open()
		return s, open, err
	}
	s, err := fwsim.Build(c)
	if err != nil {
		t.Fatal(err)
	}
	rep := s.Run(ctx)
	for _, v := range rep.Violations {
		t.Error(v)
	}
	if rep.Restarts != 3 || rep.Compliant+rep.Exhausted != 24 {
		t.Fatalf("restarts %d, end states %d + %d", rep.Restarts, rep.Compliant, rep.Exhausted)
	}
}
