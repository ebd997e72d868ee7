package wiring

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
)

// errLedgerClosed: the systems were closed while a dispatch ran.
var errLedgerClosed = errors.New("the ledger was closed")

// openExtensionStore returns the store of extension execution records and
// outputs: the state database of the ledger: section, whose schema gains
// the extension tables on first use. Without a ledger: section, records
// are kept in this process's memory and lost when it exits (a workflow's
// own report — its Temporal history, the CLI's output — still says what
// ran), which Open logs.
func openExtensionStore(_ context.Context, s *Systems, log *slog.Logger) (extensions.Store, error) {
	if s.Ledger != nil {
		return &ledgerExtensions{w: s.Ledger}, nil
	}
	log.Warn("extension execution records are kept in memory: the config has no ledger: section naming a state database", "phase", "wiring")
	return extensionsfake.NewStore(), nil
}

// ledgerExtensions is the extension store in the ledger's database. Like
// the ledger, it opens the database on first use and again after an
// attempt failed; the extensions schema is migrated once per connection.
type ledgerExtensions struct {
	w        *Ledger
	mu       sync.Mutex
	migrated *sqlstore.DB
}

var _ extensions.Store = (*ledgerExtensions)(nil)

func (e *ledgerExtensions) store(ctx context.Context) (*sqlstore.ExtensionStore, error) {
	if _, err := e.w.ledger(ctx); err != nil {
		if _, ok := hostforge.AsFailure(err); ok {
			return nil, err
		}
		return nil, sqlstore.Wrap(err, "opening the ledger's database for extension records")
	}
	e.w.mu.Lock()
	db := e.w.db
	e.w.mu.Unlock()
	if db == nil {
		return nil, sqlstore.Wrap(errLedgerClosed, "extension records")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.migrated != db {
		if err := db.Migrate(ctx, sqlstore.ComponentExtensions); err != nil {
			return nil, err
		}
		e.migrated = db
	}
	return db.Extensions(), nil
}

// PutExecution records a delivery.
func (e *ledgerExtensions) PutExecution(ctx context.Context, x extensions.Execution) error {
	if err := x.Validate(); err != nil {
		return err
	}
	st, err := e.store(ctx)
	if err != nil {
		return err
	}
	return st.PutExecution(ctx, x)
}

// StartDelivery records the start of a delivery's effect.
func (e *ledgerExtensions) StartDelivery(ctx context.Context, x extensions.Execution) (extensions.Execution, bool, error) {
	if err := x.ValidateStart(); err != nil {
		return extensions.Execution{}, false, err
	}
	st, err := e.store(ctx)
	if err != nil {
		return extensions.Execution{}, false, err
	}
	return st.StartDelivery(ctx, x)
}

// Execution returns a delivery's record.
func (e *ledgerExtensions) Execution(ctx context.Context, id string) (extensions.Execution, bool, error) {
	st, err := e.store(ctx)
	if err != nil {
		return extensions.Execution{}, false, err
	}
	return st.Execution(ctx, id)
}

// Executions returns the matching records.
func (e *ledgerExtensions) Executions(ctx context.Context, q extensions.Query) ([]extensions.Execution, error) {
	st, err := e.store(ctx)
	if err != nil {
		return nil, err
	}
	return st.Executions(ctx, q)
}

// PutOutputs replaces an extension's outputs.
func (e *ledgerExtensions) PutOutputs(ctx context.Context, o extensions.Outputs) error {
	if err := o.Validate(); err != nil {
		return err
	}
	st, err := e.store(ctx)
	if err != nil {
		return err
	}
	return st.PutOutputs(ctx, o)
}

// Outputs returns an extension's outputs.
func (e *ledgerExtensions) Outputs(ctx context.Context, ext string) (extensions.Outputs, bool, error) {
	st, err := e.store(ctx)
	if err != nil {
		return extensions.Outputs{}, false, err
	}
	return st.Outputs(ctx, ext)
}
