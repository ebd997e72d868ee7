package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var migrations embed.FS

// migration is one versioned file of a component.
type migration struct {
	version int
	name    string
	sql     string
}

// Components lists the components that have migrations.
func Components() []string {
	ents, _ := fs.ReadDir(migrations, "migrations")
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// load reads a component's migrations for the engine, in version order.
// Two files of one version for the same engine are an error.
func load(component string, d Driver) ([]migration, error) {
	dir := path.Join("migrations", component)
	ents, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: no migrations for component %q", component)
	}
	byVersion := map[int]migration{}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		base := strings.TrimSuffix(name, ".sql")
		switch {
		case strings.HasSuffix(base, ".sqlite"):
			if d != SQLite {
				continue
			}
		case strings.HasSuffix(base, ".postgres"):
			if d != Postgres {
				continue
			}
		}
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("sqlstore: migration %s/%s: name must start with a positive number and _", component, name)
		}
		if prev, dup := byVersion[v]; dup {
			return nil, fmt.Errorf("sqlstore: migration %s: %s and %s share version %d", component, prev.name, name, v)
		}
		b, err := fs.ReadFile(migrations, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		byVersion[v] = migration{version: v, name: name, sql: string(b)}
	}
	out := make([]migration, 0, len(byVersion))
	for _, m := range byVersion {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrate brings the named components' schemas up to date (every component
// when none is named). Each migration runs once, in its own transaction,
// recorded in hostforge_schema_migrations. It is safe to run concurrently
// from several processes: on PostgreSQL a session advisory lock is taken
// before any DDL — the migrations table's own CREATE TABLE IF NOT EXISTS
// included, which PostgreSQL does not make safe against a concurrent
// creator — and held until the last migration; on SQLite the database's
// one connection and its immediate transactions serialise them.
func (db *DB) Migrate(ctx context.Context, components ...string) error {
	if len(components) == 0 {
		components = Components()
	}
	conn, release, err := db.migrationLock(ctx)
	if err != nil {
		return err
	}
	defer release()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS hostforge_schema_migrations (
		component  TEXT NOT NULL,
		version    BIGINT NOT NULL,
		name       TEXT NOT NULL,
		applied_at BIGINT NOT NULL,
		PRIMARY KEY (component, version))`); err != nil {
		return Wrap(err, "creating the migrations table")
	}
	for _, c := range append([]string{"core"}, components...) {
		ms, err := load(c, db.Driver)
		if err != nil {
			return Unavailable.Wrap(err, "reading migrations of %s", c)
		}
		for _, m := range ms {
			if err := db.apply(ctx, conn, c, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrationLockSQL names the advisory lock every migrator takes (the key
// earlier versions took per migration, so they exclude each other too).
const migrationLockSQL = `hashtext('hostforge_schema_migrations')`

// migrationLock returns the connection a migration runs on, holding the
// migration lock on PostgreSQL, and its release. A lock that cannot be
// released discards its connection, so it never returns to the pool still
// held.
func (db *DB) migrationLock(ctx context.Context) (*sql.Conn, func(), error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, Wrap(err, "connecting to migrate")
	}
	if db.Driver != Postgres {
		return conn, func() { _ = conn.Close() }, nil
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(`+migrationLockSQL+`)`); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
		return nil, nil, Wrap(err, "taking the migration lock")
	}
	return conn, func() {
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+migrationLockSQL+`)`); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}, nil
}

// apply runs one migration on conn, in a transaction, unless it is
// recorded already.
func (db *DB) apply(ctx context.Context, conn *sql.Conn, component string, m migration) error {
	stx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return Wrap(err, "migrating %s to version %d", component, m.version)
	}
	return Wrap(db.finish(stx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM hostforge_schema_migrations WHERE component = ? AND version = ?`, component, m.version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %s/%s: %w", component, m.name, err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO hostforge_schema_migrations (component, version, name, applied_at) VALUES (?, ?, ?, ?)`,
			component, m.version, m.name, time.Now().UTC().UnixNano())
		return err
	}), "migrating %s to version %d", component, m.version)
}
