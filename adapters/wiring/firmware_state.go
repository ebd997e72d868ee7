package wiring

import (
	"context"
	"errors"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/firmware"
)

// openFirmwareStore opens the state database the firmware store lives in
// — the ledger: section's database, one database for all of hostforge's
// state — and migrates the firmware component. It is the one place that
// knows where that database is.
func openFirmwareStore(ctx context.Context, cfg *Config) (firmware.Store, func() error, error) {
	lc := cfg.Ledger
	if lc == nil {
		return nil, nil, cfg.invalid("ledger", "missing: the firmware store lives in the state database the ledger: section names")
	}
	dsn := lc.Path
	if sqlstore.Driver(lc.Driver) == sqlstore.Postgres {
		var err error
		if dsn, err = sqlstore.ReadDSNFile(lc.DSNFile); err != nil {
			var ce *sqlstore.ConfigError
			if errors.As(err, &ce) {
				return nil, nil, cfg.invalid("ledger."+ce.Key, "%s", ce.Reason)
			}
			return nil, nil, cfg.invalid("ledger.dsn_file", "%v", err)
		}
	}
	db, err := sqlstore.Open(ctx, sqlstore.Driver(lc.Driver), dsn)
	if err != nil {
		return nil, nil, hostforge.Classified(err)
	}
	if err := db.Migrate(ctx, sqlstore.FirmwareComponent); err != nil {
		_ = db.Close()
		return nil, nil, hostforge.Classified(err)
	}
	return sqlstore.NewFirmwareStore(db), db.Close, nil
}
