package fakes_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostforge/hostforge/fakes"
	"github.com/hostforge/hostforge/ironic"
	"github.com/hostforge/hostforge/ironic/ironictest"
)

func TestIronicContract(t *testing.T) {
	ironictest.Run(t, func(t *testing.T) ironictest.Env {
		site := fakes.NewSite()
		ir := site.AddIronic("ironic-1")
		return ironictest.Env{
			Client: ir, Driver: "redfish",
			Interfaces: map[string]string{"raid": "agent", "inspect": "inspector"},
			Sleep:      site.Clock.Advance,
			Poll:       10 * time.Second, Timeout: time.Hour,
			HoldLock: func(t *testing.T, n ironic.Node) { ir.HoldLock(n.Name, "other-conductor", time.Minute) },
			CleanFail: func(t *testing.T, n ironic.Node) {
				ir.FailCleaning(n.Name, 1)
				if err := ir.ChangeProvisionState(context.Background(), n.UUID, ironic.ActionProvide); err != nil {
					t.Fatalf("provide: %v", err)
				}
			},
		}
	})
}
