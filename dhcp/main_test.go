package dhcp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The phase runs concurrent enrollments; no test may leave a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
