package firmwarefake_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/hostforge/hostforge/firmware"
	"github.com/hostforge/hostforge/firmware/firmwarefake"
	"github.com/hostforge/hostforge/firmware/firmwaretest"
)

func TestMemStoreContract(t *testing.T) {
	firmwaretest.Run(t, func(*testing.T) firmware.Store { return firmwarefake.NewMemStore() })
}

// The contract's concurrency cases start goroutines; none may outlive them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
