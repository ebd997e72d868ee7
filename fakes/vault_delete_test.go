package fakes_test

import (
	"testing"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/bmc/bmctest"
	"github.com/hostforge/hostforge/fakes"
)

func TestVaultArchiveContract(t *testing.T) {
	bmctest.RunArchiveVault(t, func(t *testing.T) bmc.ArchiveVault {
		v := fakes.NewSite().Vault
		for _, n := range v.Names() {
			v.Delete(n)
		}
		return v
	})
}
