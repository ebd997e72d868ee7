package sqlstore

import (
	"context"
	"database/sql"
	"hash/fnv"
	"time"
)

// TryLock takes the named lock if it is free and returns its release, or
// ok=false when another holder has it. On PostgreSQL it is a session
// advisory lock held on a dedicated connection, so it is released when the
// holder's connection dies. On SQLite it is a lease row that expires after
// lease (a crashed holder's lease lapses); now is the caller's clock.
//
// The firmware update manager's pass runs under it, so two workers never
// start updates from the same snapshot.
func (db *DB) TryLock(ctx context.Context, name, holder string, now time.Time, lease time.Duration) (release func(), ok bool, err error) {
	if db.Driver == Postgres {
		return db.tryAdvisory(ctx, name)
	}
	err = db.InTx(ctx, func(tx *Tx) error {
		var cur string
		var exp int64
		switch err := tx.QueryRow(ctx, `SELECT holder, expires_at FROM hostforge_locks WHERE name = ?`, name).Scan(&cur, &exp); {
		case err == sql.ErrNoRows:
			_, err = tx.Exec(ctx, `INSERT INTO hostforge_locks (name, holder, expires_at) VALUES (?, ?, ?)`, name, holder, Nanos(now.Add(lease)))
			ok = err == nil
			return err
		case err != nil:
			return err
		case cur != holder && exp > Nanos(now):
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE hostforge_locks SET holder = ?, expires_at = ? WHERE name = ?`, holder, Nanos(now.Add(lease)), name)
		ok = err == nil
		return err
	})
	if err != nil || !ok {
		return nil, false, Wrap(err, "taking lock %s", name)
	}
	return func() {
		_, _ = db.Exec(context.WithoutCancel(ctx), `DELETE FROM hostforge_locks WHERE name = ? AND holder = ?`, name, holder)
	}, true, nil
}

func (db *DB) tryAdvisory(ctx context.Context, name string) (func(), bool, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, false, Wrap(err, "taking lock %s", name)
	}
	key := lockKey(name)
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&got); err != nil {
		_ = conn.Close()
		return nil, false, Wrap(err, "taking lock %s", name)
	}
	if !got {
		_ = conn.Close()
		return nil, false, nil
	}
	return func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key)
		_ = conn.Close()
	}, true, nil
}

// lockKey maps a lock name to PostgreSQL's 64-bit advisory key.
func lockKey(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return int64(h.Sum64())
}
