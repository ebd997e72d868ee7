// Package sqlstore is hostforge's SQL state adapter: one implementation of
// the state interfaces that must survive a restart (the fleet-manager
// ledger, the firmware update manager's state, extension execution records)
// on two engines.
//
//   - SQLite through modernc.org/sqlite (pure Go): the embedded default. A
//     file path, nothing to start; WAL journal, a busy timeout, and one
//     writer connection so writers queue instead of failing with SQLITE_BUSY.
//     The file is created with mode 0600 (its journal files take its mode),
//     and a state file or journal file that group or others can read or
//     write is refused (STATE_FILE_EXPOSED, naming the file and its mode):
//     it holds scout tasks with presigned URLs, results and playbook outputs.
//   - PostgreSQL through pgx: what several workers or replicas share, with
//     row-level compare-and-set and advisory locks.
//
// Migrations are embedded and versioned per component: the files
// migrations/<component>/NNNN_name.sql run in order, each once, recorded in
// hostforge_schema_migrations (component, version). Migrators that start
// together are serialised: on PostgreSQL by a session advisory lock taken
// before any DDL, the migrations table's own creation included. A file that needs
// engine-specific SQL comes as NNNN_name.sqlite.sql and
// NNNN_name.postgres.sql; a plain .sql file runs on both. Statements are
// written with ? placeholders; [DB.Rebind] turns them into $n for
// PostgreSQL. Times are stored as UTC Unix nanoseconds (BIGINT), so both
// engines compare them the same way.
//
// Each store (ledger, firmware, extensions) lives in its own file and
// migration directory and passes its consumer's contract suite on both
// engines: SQLite in the unit suite, PostgreSQL in `make integration`
// (scripts/integration.d/postgres.sh starts a throwaway cluster and exports
// HOSTFORGE_POSTGRES_DSN). The DSN is a secret (it may carry a password):
// it never appears in an error or a log line.
package sqlstore
