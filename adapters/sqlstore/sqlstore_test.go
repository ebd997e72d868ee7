package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
)

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	for _, e := range sqlstoretest.Engines(t) {
		t.Run(e.Name(), func(t *testing.T) {
			db := e.Open(t)
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 4 {
				wg.Add(1)
				go func() { defer wg.Done(); errs <- db.Migrate(ctx) }()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("concurrent Migrate: %v", err)
				}
			}
			var n int
			if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM hostforge_schema_migrations WHERE component = ?`, "core").Scan(&n); err != nil || n != 1 {
				t.Fatalf("core migrations recorded %d times (%v), want once", n, err)
			}
		})
	}
}

func TestRebind(t *testing.T) {
	pg := &sqlstore.DB{Driver: sqlstore.Postgres}
	if got := pg.Rebind(`UPDATE t SET a = ? WHERE b = ? AND c = ?`); got != `UPDATE t SET a = $1 WHERE b = $2 AND c = $3` {
		t.Fatalf("Rebind = %s", got)
	}
	lite := &sqlstore.DB{Driver: sqlstore.SQLite}
	if got := lite.Rebind(`a = ?`); got != `a = ?` {
		t.Fatalf("SQLite Rebind = %s", got)
	}
}

// Open never repeats the DSN or its password, and classifies the failure.
func TestOpenErrorsCarryNoSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dsn := "postgres://hf:s3cret-pw@127.0.0.1:1/none?connect_timeout=1"
	_, err := sqlstore.Open(ctx, sqlstore.Postgres, dsn)
	if !sqlstore.Unavailable.Is(err) {
		t.Fatalf("Open of a dead server = %v, want STATE_STORE_UNAVAILABLE", err)
	}
	if strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("error carries the password: %v", err)
	}
	if _, err := sqlstore.Open(ctx, "mysql", "x"); !sqlstore.Unavailable.Is(err) {
		t.Fatalf("unknown driver = %v", err)
	}
	if f, ok := hostforge.AsFailure(err); !ok || !f.Retryable {
		t.Fatalf("not a retryable failure: %v", err)
	}
}
