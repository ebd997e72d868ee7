package netboxtest_test

import (
	"testing"

	"github.com/hostforge/hostforge/enrolltest/netboxtest"
	"github.com/hostforge/hostforge/fakes"
)

// The in-memory fake passes the contract suite.
func TestFakeNetBox(t *testing.T) {
	netboxtest.Run(t, func(t *testing.T, site *fakes.Site) netboxtest.Harness {
		return netboxtest.Harness{Client: site.NetBox}
	})
}
