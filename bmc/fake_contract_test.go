package bmc_test

import (
	"context"
	"testing"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/bmc/bmctest"
	"github.com/hostforge/hostforge/fakes"
)

// The in-memory fake passes the same contract as the Redfish adapter.
func TestFakeBMCContract(t *testing.T) {
	for _, v := range bmc.Vendors {
		t.Run(string(v), func(t *testing.T) {
			bmctest.Run(t, func(t *testing.T) bmctest.Env {
				site := fakes.NewSite()
				h := site.AddHost(fakes.HostSpec{Name: "c1", Vendor: string(v)})
				cred, err := bmc.AdminCredential(context.Background(), site.Vault, fakes.AdminItem(h.Name))
				if err != nil {
					t.Fatal(err)
				}
				return bmctest.Env{Connector: site.BMCs, Address: h.OOBIP, Admin: cred, Vendor: v}
			})
		})
	}
}
