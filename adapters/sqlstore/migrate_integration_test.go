//go:build integration

package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
)

// Workers that start together on a fresh PostgreSQL database all migrate
// it at once, each from its own process (here: its own pool). Every one of
// them must succeed, and every migration must be recorded once: the
// advisory lock is taken before any DDL, the migrations table's own
// CREATE TABLE IF NOT EXISTS included (PostgreSQL's IF NOT EXISTS is not
// safe against a concurrent creator: it fails with a unique violation on
// pg_type).
func TestConcurrentMigratorsOnAFreshDatabase(t *testing.T) {
	dsn := os.Getenv(sqlstoretest.EnvPostgres)
	if dsn == "" {
		t.Skipf("%s is not set: no PostgreSQL to test against", sqlstoretest.EnvPostgres)
	}
	ctx := context.Background()
	admin, err := sqlstore.Open(ctx, sqlstore.Postgres, dsn)
	if err != nil {
		t.Fatalf("opening PostgreSQL: %v", err)
	}
	defer admin.Close()
	const trials, workers = 20, 4
	failures := 0
	for trial := range trials {
		var b [6]byte
		_, _ = rand.Read(b[:])
		name := "hf_migrate_" + hex.EncodeToString(b[:])
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("creating database: %v", err)
		}
		u, _ := url.Parse(dsn)
		u.Path = "/" + name
		dbs := make([]*sqlstore.DB, workers)
		for i := range dbs {
			if dbs[i], err = sqlstore.Open(ctx, sqlstore.Postgres, u.String()); err != nil {
				t.Fatalf("opening %s: %v", name, err)
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, workers)
		start := make(chan struct{})
		for i, db := range dbs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = db.Migrate(ctx)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				failures++
				t.Errorf("trial %d, worker %d: %v", trial, i, err)
			}
		}
		if err := once(ctx, dbs[0]); err != nil {
			t.Errorf("trial %d: %v", trial, err)
		}
		for _, db := range dbs {
			_ = db.Close()
		}
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Fatalf("dropping %s: %v", name, err)
		}
	}
	if failures > 0 {
		t.Fatalf("%d of %d concurrent migrations failed", failures, trials*workers)
	}
}

// once checks that every migration is recorded exactly once.
func once(ctx context.Context, db *sqlstore.DB) error {
	rows, err := db.Query(ctx, `SELECT component, version, COUNT(*) FROM hostforge_schema_migrations GROUP BY component, version`)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var c string
		var v, count int
		if err := rows.Scan(&c, &v, &count); err != nil {
			return err
		}
		if count != 1 {
			return fmt.Errorf("migration %s/%d recorded %d times", c, v, count)
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no migration was recorded")
	}
	return rows.Err()
}
