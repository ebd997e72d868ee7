package wiring

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/firmware"
)

// openFirmwareStore opens the state database the firmware store lives in
// (firmware.state) and migrates the firmware component. It is the one
// place that knows where that database is.
func openFirmwareStore(ctx context.Context, cfg *Config) (firmware.Store, func() error, error) {
	st := cfg.Firmware.State
	dsn := st.Path
	if sqlstore.Driver(st.Driver) == sqlstore.Postgres {
		var err error
		if dsn, err = readDSNFile(st.DSNFile); err != nil {
			return nil, nil, cfg.invalid("firmware.state.dsn_file", "%v", err)
		}
	}
	db, err := sqlstore.Open(ctx, sqlstore.Driver(st.Driver), dsn)
	if err != nil {
		return nil, nil, hostforge.Classified(err)
	}
	if err := db.Migrate(ctx, sqlstore.FirmwareComponent); err != nil {
		_ = db.Close()
		return nil, nil, hostforge.Classified(err)
	}
	return sqlstore.NewFirmwareStore(db), db.Close, nil
}

// readDSNFile reads a PostgreSQL DSN from a file only its owner may read:
// a DSN carries a password. Errors name the file, never its contents.
func readDSNFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%s has mode %04o; a DSN file must be readable by its owner only: chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	dsn := strings.TrimSpace(string(b))
	if dsn == "" || strings.ContainsAny(dsn, "\n\r") {
		return "", fmt.Errorf("%s must hold one connection string on one line", path)
	}
	return dsn, nil
}
