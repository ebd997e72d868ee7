package firmwarefake_test

import (
	"testing"

	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/firmware/firmwaretest"
)

func TestMemStoreContract(t *testing.T) {
	firmwaretest.Run(t, func(*testing.T) firmware.Store { return firmwarefake.NewMemStore() })
}
