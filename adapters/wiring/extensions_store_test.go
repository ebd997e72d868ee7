package wiring

import (
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionstest"
)

// The extension store in the ledger's database passes the store contract.
func TestLedgerExtensionsPassesTheContract(t *testing.T) {
	extensionstest.Run(t, func(t *testing.T) extensions.Store {
		l := &Ledger{cfg: sqlstore.LedgerConfig{Driver: string(sqlstore.SQLite), Path: filepath.Join(t.TempDir(), "ledger.db")}}
		t.Cleanup(func() { _ = l.Close() })
		return &ledgerExtensions{w: l}
	})
}
