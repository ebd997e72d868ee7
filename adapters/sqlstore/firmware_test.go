package sqlstore_test

import (
	"testing"

	"github.com/hostforge/hostforge/adapters/sqlstore"
	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwaretest"
)

// The SQL firmware store passes the firmware.Store contract on SQLite and,
// under make integration, on PostgreSQL.
func TestFirmwareStoreContract(t *testing.T) {
	for _, e := range sqlstoretest.Engines(t) {
		t.Run(e.Name(), func(t *testing.T) {
			firmwaretest.Run(t, func(t *testing.T) firmware.Store { return sqlstore.NewFirmwareStore(e.Open(t)) })
		})
	}
}
