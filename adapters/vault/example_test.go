package vault_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hostforge/hostforge/adapters/vault"
)

// A vault file shared by a worker and a CLI run: each write keeps the
// items the other wrote.
func ExampleFile() {
	dir, _ := os.MkdirTemp("", "vault-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vault.yaml")
	_ = vault.Create(path, map[string]map[string]string{"bmc-factory": {"username": "root", "password": "calvin"}})

	worker, _ := vault.Open(path)
	cli, _ := vault.Open(path)
	ctx := context.Background()
	_ = worker.PutItem(ctx, "bmc-admin-cpu-r1-u10", map[string]string{"username": "root", "password": "rotated-1"})
	_ = cli.PutItem(ctx, "bmc-admin-cpu-r1-u11", map[string]string{"username": "root", "password": "rotated-2"})

	names, _ := worker.Names(ctx)
	fmt.Println(names)
	// Output: [bmc-admin-cpu-r1-u10 bmc-admin-cpu-r1-u11 bmc-factory]
}
