package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver

	"github.com/hostforge/hostforge"
)

// Driver names an engine.
type Driver string

// The engines.
const (
	SQLite   Driver = "sqlite"
	Postgres Driver = "postgres"
)

// DefaultBusyTimeout is how long a SQLite connection waits for a lock.
const DefaultBusyTimeout = 10 * time.Second

// Unavailable: the state database could not be opened or did not answer.
var Unavailable = hostforge.Declare(hostforge.Spec{
	Code:      "STATE_STORE_UNAVAILABLE",
	Phase:     "state",
	Owner:     hostforge.OwnerInfraEng,
	Retryable: true,
	Action:    "The state database (SQLite file or PostgreSQL) could not be opened or did not answer (the message says which operation): check the path's permissions and disk, or the PostgreSQL server and the DSN file, then rerun.",
})

// DB is an open state database.
type DB struct {
	*sql.DB
	Driver Driver
}

// Open opens the database: for SQLite, dsn is a file path (created with
// mode 0600 if missing; refused with STATE_FILE_EXPOSED when group or
// others can read or write it); for PostgreSQL, a pgx connection string or URL. Open pings it.
// Errors never carry the DSN.
func Open(ctx context.Context, driver Driver, dsn string) (*DB, error) {
	var (
		db  *sql.DB
		err error
	)
	switch driver {
	case SQLite:
		if strings.TrimSpace(dsn) == "" {
			return nil, Unavailable.New("sqlite: no database path")
		}
		if err := privateSQLiteFile(dsn); err != nil {
			return nil, err
		}
		db, err = sql.Open("sqlite", sqliteDSN(dsn, DefaultBusyTimeout))
		if err == nil {
			// One connection: SQLite has one writer at a time, and a single
			// connection queues writers in Go instead of failing them with
			// SQLITE_BUSY; WAL keeps readers of other processes unblocked.
			db.SetMaxOpenConns(1)
		}
	case Postgres:
		db, err = sql.Open("pgx", dsn)
		if err == nil {
			db.SetMaxOpenConns(16)
			db.SetMaxIdleConns(8)
			db.SetConnMaxIdleTime(5 * time.Minute)
		}
	default:
		return nil, Unavailable.New("unknown state driver %q (want sqlite or postgres)", driver)
	}
	if err != nil {
		return nil, Unavailable.New("%s: opening the database failed", driver)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, Unavailable.New("%s: the database does not answer: %s", driver, redact(err, dsn))
	}
	return &DB{DB: db, Driver: driver}, nil
}

// sqliteDSN builds modernc's file URI with the pragmas every connection runs.
func sqliteDSN(path string, busy time.Duration) string {
	q := url.Values{}
	for _, p := range []string{
		"busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")",
		"journal_mode(WAL)",
		"synchronous(NORMAL)",
		"foreign_keys(ON)",
	} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// redact removes the DSN (and its password) from a driver's error text.
func redact(err error, dsn string) string {
	s := err.Error()
	if dsn != "" {
		s = strings.ReplaceAll(s, dsn, "[dsn]")
	}
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			s = strings.ReplaceAll(s, pw, "[redacted]")
		}
	}
	for _, f := range strings.Fields(dsn) {
		if k, v, ok := strings.Cut(f, "="); ok && strings.EqualFold(k, "password") && v != "" {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}

// Rebind turns ? placeholders into $1, $2, … for PostgreSQL. It does not
// look inside string literals: statements pass values as arguments only.
func (db *DB) Rebind(q string) string {
	if db.Driver != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Exec, Query and QueryRow rebind q and run it.
func (db *DB) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return db.ExecContext(ctx, db.Rebind(q), args...)
}

// Query runs a query with rebound placeholders.
func (db *DB) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return db.QueryContext(ctx, db.Rebind(q), args...)
}

// QueryRow runs a one-row query with rebound placeholders.
func (db *DB) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return db.QueryRowContext(ctx, db.Rebind(q), args...)
}

// Tx is a transaction whose statements are rebound for the engine.
type Tx struct {
	*sql.Tx
	db *DB
}

// Exec runs a statement in the transaction.
func (tx *Tx) Exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return tx.ExecContext(ctx, tx.db.Rebind(q), args...)
}

// Query runs a query in the transaction.
func (tx *Tx) Query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return tx.QueryContext(ctx, tx.db.Rebind(q), args...)
}

// QueryRow runs a one-row query in the transaction.
func (tx *Tx) QueryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return tx.QueryRowContext(ctx, tx.db.Rebind(q), args...)
}

// Driver is the transaction's engine.
func (tx *Tx) Driver() Driver { return tx.db.Driver }

// InTx runs fn in a transaction and commits it, or rolls it back when fn
// returns an error. A serialization failure or deadlock on PostgreSQL
// (40001, 40P01) reruns fn, up to 5 times: fn must be safe to rerun.
// SQLite transactions begin IMMEDIATE (they take the write lock first).
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = db.inTx(ctx, fn)
		if !retryableTx(err) {
			return err
		}
	}
	return err
}

func (db *DB) inTx(ctx context.Context, fn func(tx *Tx) error) error {
	stx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	return db.finish(stx, fn)
}

// finish runs fn in the begun transaction and commits it, or rolls it
// back when fn returns an error.
func (db *DB) finish(stx *sql.Tx, fn func(tx *Tx) error) (err error) {
	defer func() {
		if err != nil {
			_ = stx.Rollback()
		}
	}()
	if err = fn(&Tx{Tx: stx, db: db}); err != nil {
		return err
	}
	return stx.Commit()
}

// retryableTx reports a PostgreSQL serialization failure or deadlock.
func retryableTx(err error) bool {
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) {
		switch coded.SQLState() {
		case "40001", "40P01":
			return true
		}
	}
	return false
}

// Nanos stores a time as UTC Unix nanoseconds; the zero time is 0.
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UTC().UnixNano()
}

// Time reads a time stored by Nanos; 0 is the zero time.
func Time(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Wrap classifies a database error as STATE_STORE_UNAVAILABLE for op,
// unless it is already a Failure, a wait or a context error.
func Wrap(err error, op string, args ...any) error {
	if err == nil || hostforge.Settled(err) {
		return err
	}
	return Unavailable.Wrap(err, op, args...)
}

// String renders the DB for logs without its DSN.
func (db *DB) String() string { return fmt.Sprintf("sqlstore(%s)", db.Driver) }
