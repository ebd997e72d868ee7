package vault

import (
	"path/filepath"
	"testing"

	"github.com/hostforge/hostforge/bmc"
	"github.com/hostforge/hostforge/bmc/bmctest"
)

func TestArchiveVaultContract(t *testing.T) {
	bmctest.RunArchiveVault(t, func(t *testing.T) bmc.ArchiveVault {
		path := filepath.Join(t.TempDir(), "vault.yaml")
		if err := Create(path, map[string]map[string]string{}); err != nil {
			t.Fatal(err)
		}
		v, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return v
	})
}
