package extensionsfake_test

import (
	"testing"

	"github.com/hostforge/hostforge/extensions"
	"github.com/hostforge/hostforge/extensions/extensionsfake"
	"github.com/hostforge/hostforge/extensions/extensionstest"
)

func TestStoreContract(t *testing.T) {
	extensionstest.Run(t, func(*testing.T) extensions.Store { return extensionsfake.NewStore() })
}
