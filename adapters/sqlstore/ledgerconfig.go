package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/enrollment"
)

// LedgerConfig is the `ledger:` section of a hostforge config file:
//
//	ledger:
//	  driver: sqlite
//	  path: /var/lib/hostforge/ledger.db
//
// or
//
//	ledger:
//	  driver: postgres
//	  dsn_file: /etc/hostforge/ledger.dsn   # owner-only (0600); the DSN is never logged
//	  projection_interval: 1m               # hostforge worker's Ironic projection
type LedgerConfig struct {
	Driver  string `yaml:"driver"`
	Path    string `yaml:"path"`
	DSNFile string `yaml:"dsn_file"`
	// ProjectionInterval is the pause between the worker's projection
	// passes (enrollment.DefaultProjectionInterval when zero).
	ProjectionInterval enrollment.Duration `yaml:"projection_interval"`
}

// ConfigError is a problem with one key of the ledger section.
type ConfigError struct {
	// Key is the key under ledger: (driver, path, dsn_file).
	Key    string
	Reason string
}

func (e *ConfigError) Error() string { return "ledger." + e.Key + ": " + e.Reason }

// Unwrap makes a ConfigError a hostforge.ErrInvalid.
func (e *ConfigError) Unwrap() error { return hostforge.ErrInvalid }

// Validate checks the section without touching the file system.
func (c LedgerConfig) Validate() error {
	switch Driver(c.Driver) {
	case SQLite:
		if strings.TrimSpace(c.Path) == "" {
			return &ConfigError{"path", "missing: the SQLite file (created if absent)"}
		}
		if c.DSNFile != "" {
			return &ConfigError{"dsn_file", "is for driver postgres; driver sqlite takes path"}
		}
	case Postgres:
		if strings.TrimSpace(c.DSNFile) == "" {
			return &ConfigError{"dsn_file", "missing: the file holding the PostgreSQL connection string (mode 0600)"}
		}
		if c.Path != "" {
			return &ConfigError{"path", "is for driver sqlite; driver postgres takes dsn_file"}
		}
	case "":
		return &ConfigError{"driver", "missing: sqlite or postgres"}
	default:
		return &ConfigError{"driver", fmt.Sprintf("%q: want sqlite or postgres", c.Driver)}
	}
	if c.ProjectionInterval < 0 {
		return &ConfigError{"projection_interval", "negative duration"}
	}
	return nil
}

// ReadDSNFile reads a PostgreSQL DSN from a file that only its owner may
// read or write (mode 0600 or stricter): a DSN carries the password. The
// error names the file and its mode, never its contents.
func ReadDSNFile(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", &ConfigError{"dsn_file", fmt.Sprintf("%s: %v", path, errWithoutPath(err))}
	}
	if !st.Mode().IsRegular() {
		return "", &ConfigError{"dsn_file", fmt.Sprintf("%s is not a regular file", path)}
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", &ConfigError{"dsn_file", fmt.Sprintf("%s has mode %04o; a DSN file must be readable by its owner only: chmod 600 %s", path, perm, path)}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", &ConfigError{"dsn_file", fmt.Sprintf("%s: %v", path, errWithoutPath(err))}
	}
	dsn := strings.TrimSpace(string(b))
	if dsn == "" || strings.ContainsAny(dsn, "\n\r") {
		return "", &ConfigError{"dsn_file", fmt.Sprintf("%s must hold one connection string on one line", path)}
	}
	return dsn, nil
}

func errWithoutPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// OpenLedger opens the database the section names, migrates the ledger
// and returns it with its database (close it when done). A bad section is
// a *ConfigError; a database that does not answer is
// STATE_STORE_UNAVAILABLE. Neither carries the DSN.
func OpenLedger(ctx context.Context, c LedgerConfig) (*Ledger, *DB, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	dsn := c.Path
	if Driver(c.Driver) == Postgres {
		var err error
		if dsn, err = ReadDSNFile(c.DSNFile); err != nil {
			return nil, nil, err
		}
	}
	db, err := Open(ctx, Driver(c.Driver), dsn)
	if err != nil {
		return nil, nil, err
	}
	l, err := NewLedger(ctx, db)
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return l, db, nil
}
