package bmctest

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/bmc"
)

// RunArchiveVault is the contract of the vault as a host's retirement uses
// it (bmc.ArchiveVault): items are read back as written, a write replaces
// one item and keeps the others, a deletion removes one item and keeps the
// others, and deleting an item that is not there is not an error.
// newVault returns an empty vault for each subtest.
func RunArchiveVault(t *testing.T, newVault func(t *testing.T) bmc.ArchiveVault) {
	ctx := context.Background()
	admin := map[string]string{bmc.FieldUsername: "root", bmc.FieldPassword: "per-host-secret-1"}
	other := map[string]string{bmc.FieldUsername: "exporter", bmc.FieldPassword: "monitoring-secret-1"}
	seed := func(t *testing.T, v bmc.ArchiveVault) {
		t.Helper()
		for name, fields := range map[string]map[string]string{"bmc-admin-h1": admin, "ipmi-exporter": other} {
			if err := v.PutItem(ctx, name, fields); err != nil {
				t.Fatalf("PutItem(%s): %v", name, err)
			}
		}
	}
	item := func(t *testing.T, v bmc.ArchiveVault, name string) (map[string]string, bool) {
		t.Helper()
		f, err := v.Item(ctx, name)
		if errors.Is(err, hostforge.ErrNotFound) {
			return nil, false
		}
		if err != nil {
			t.Fatalf("Item(%s): %v", name, err)
		}
		return f, true
	}

	t.Run("ArchiveThenDelete", func(t *testing.T) {
		v := newVault(t)
		seed(t, v)
		archived := maps.Clone(admin)
		archived[bmc.FieldRetiredRun] = "run-1"
		if err := v.PutItem(ctx, bmc.ArchivedItem("bmc-admin-h1"), archived); err != nil {
			t.Fatal(err)
		}
		if err := v.DeleteItem(ctx, "bmc-admin-h1"); err != nil {
			t.Fatalf("DeleteItem: %v", err)
		}
		if _, ok := item(t, v, "bmc-admin-h1"); ok {
			t.Fatal("the deleted item still reads back")
		}
		if got, ok := item(t, v, bmc.ArchivedItem("bmc-admin-h1")); !ok || !maps.Equal(got, archived) {
			t.Fatalf("archive = %v (present %v), want %v", got, ok, archived)
		}
		if got, ok := item(t, v, "ipmi-exporter"); !ok || !maps.Equal(got, other) {
			t.Fatalf("another item after the deletion = %v (present %v), want it kept", got, ok)
		}
	})
	t.Run("DeleteAbsentIsNotAnError", func(t *testing.T) {
		v := newVault(t)
		seed(t, v)
		if err := v.DeleteItem(ctx, "bmc-admin-never"); err != nil {
			t.Fatalf("DeleteItem(absent): %v", err)
		}
		if got, ok := item(t, v, "bmc-admin-h1"); !ok || !maps.Equal(got, admin) {
			t.Fatalf("item after deleting an absent one = %v (present %v)", got, ok)
		}
	})
}
