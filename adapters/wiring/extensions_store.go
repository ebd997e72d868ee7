package wiring

import (
	"context"
	"log/slog"

	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// openExtensionStore returns the store of extension execution records and
// outputs for the wired systems. They belong in the state database the
// config's ledger: section configures (adapters/sqlstore: migrate
// sqlstore.ComponentExtensions there and return db.Extensions()); until a
// config names that database, records are kept in this process's memory
// and are lost when it exits — a workflow's own report (its Temporal
// history, the CLI's output) still says what ran.
func openExtensionStore(_ context.Context, _ *Systems, log *slog.Logger) (extensions.Store, error) {
	log.Warn("extension execution records are kept in memory: this config names no state database", "phase", "wiring")
	return extensionsfake.NewStore(), nil
}
