package sqlstore_test

import (
	"testing"

	"github.com/hostforge/hostforge/adapters/sqlstore/sqlstoretest"
	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionstest"
)

func TestExtensionStoreContract(t *testing.T) {
	for _, e := range sqlstoretest.Engines(t) {
		t.Run(e.Name(), func(t *testing.T) {
			extensionstest.Run(t, func(t *testing.T) extensions.Store { return e.Open(t).Extensions() })
		})
	}
}
