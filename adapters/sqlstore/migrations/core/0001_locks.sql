-- Leases for named locks on SQLite (PostgreSQL uses advisory locks).
CREATE TABLE IF NOT EXISTS hostforge_locks (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
