// Package sqlstoretest opens throwaway state databases for tests: a SQLite
// file in the test's temp dir always, and a fresh PostgreSQL database when
// HOSTFORGE_POSTGRES_DSN names a server (scripts/integration.d/postgres.sh
// starts one for `make integration`). Contract suites run once per engine.
package sqlstoretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge/adapters/sqlstore"
)

// EnvPostgres names the PostgreSQL server tests use (a pgx URL with
// database, user and password as the server needs).
const EnvPostgres = "HOSTFORGE_POSTGRES_DSN"

// Engine opens a migrated, empty database of one engine; each call is a
// new database.
type Engine struct {
	Driver sqlstore.Driver
	Open   func(t testing.TB) *sqlstore.DB
}

// Engines lists SQLite and, when HOSTFORGE_POSTGRES_DSN is set, PostgreSQL.
// Under HOSTFORGE_REQUIRE_INTEGRATION=1 a missing PostgreSQL fails the test.
func Engines(t testing.TB) []Engine {
	out := []Engine{{Driver: sqlstore.SQLite, Open: SQLite}}
	if os.Getenv(EnvPostgres) != "" {
		out = append(out, Engine{Driver: sqlstore.Postgres, Open: Postgres})
	} else if os.Getenv("HOSTFORGE_REQUIRE_INTEGRATION") == "1" {
		t.Fatalf("%s is not set, and HOSTFORGE_REQUIRE_INTEGRATION=1: PostgreSQL must be tested", EnvPostgres)
	}
	return out
}

// SQLite opens a migrated database in a new file under t.TempDir().
func SQLite(t testing.TB) *sqlstore.DB {
	t.Helper()
	return open(t, sqlstore.SQLite, filepath.Join(t.TempDir(), "state.db"))
}

// Postgres creates a fresh database on the server HOSTFORGE_POSTGRES_DSN
// names, opens and migrates it, and drops it when the test ends. It skips
// the test when the variable is unset.
func Postgres(t testing.TB) *sqlstore.DB {
	t.Helper()
	dsn := os.Getenv(EnvPostgres)
	if dsn == "" {
		t.Skipf("%s is not set: no PostgreSQL to test against", EnvPostgres)
	}
	ctx := context.Background()
	admin, err := sqlstore.Open(ctx, sqlstore.Postgres, dsn)
	if err != nil {
		t.Fatalf("opening PostgreSQL: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "hf_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database: %v", err)
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		t.Fatalf("%s must be a postgres:// URL", EnvPostgres)
	}
	u.Path = "/" + name
	db := open(t, sqlstore.Postgres, u.String())
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close()
	})
	return db
}

func open(t testing.TB, d sqlstore.Driver, dsn string) *sqlstore.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, d, dsn)
	if err != nil {
		t.Fatalf("opening %s: %v", d, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrating %s: %v", d, err)
	}
	return db
}

// Name is a subtest name for an engine.
func (e Engine) Name() string { return strings.ToLower(string(e.Driver)) }
