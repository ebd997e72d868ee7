//go:build unix

package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
)

// The SQLite state file holds scout tasks with presigned URLs, task
// results and playbook outputs: it is created readable by its owner only,
// whatever the process's umask, and so are the journal files SQLite makes
// beside it.
func TestSQLiteStateFileIsCreatedOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o002) // a permissive umask, as a shared host may have
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "state.db")
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, sqlstore.SQLite, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if perm := st.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", filepath.Base(p), perm)
		}
	}
}

// An existing state file that group or others can read or write is
// refused before it is opened: a classified, non-retryable failure naming
// the file and its mode. The file is left as it was.
func TestSQLiteStateFileOthersCanReadIsRefused(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660, 0o606} {
		t.Run(fmt.Sprintf("%04o", mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			db, err := sqlstore.Open(ctx, sqlstore.SQLite, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if err := os.Chmod(path, mode); err != nil {
				t.Fatal(err)
			}
			_, err = sqlstore.Open(ctx, sqlstore.SQLite, path)
			if !sqlstore.StateFileExposed.Is(err) {
				t.Fatalf("Open of a %04o state file = %v, want %s", mode, err, sqlstore.StateFileExposed.Code)
			}
			f, _ := hostforge.AsFailure(err)
			if f.Retryable || !strings.Contains(f.Message, fmt.Sprintf("%04o", mode)) || !strings.Contains(f.Message, path) {
				t.Errorf("the failure must name the file and its mode and not be retryable: %v", err)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != mode {
				t.Errorf("the refused file's mode changed to %04o", st.Mode().Perm())
			}
		})
	}
	// A journal file left readable by others is refused too.
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlstore.Open(ctx, sqlstore.SQLite, path); !sqlstore.StateFileExposed.Is(err) || !strings.Contains(err.Error(), "-wal") {
		t.Fatalf("Open with a 0644 -wal file = %v, want %s naming it", err, sqlstore.StateFileExposed.Code)
	}
	// The owner's own file opens.
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(ctx, sqlstore.SQLite, path)
	if err != nil {
		t.Fatalf("a 0600 file: %v", err)
	}
	db.Close()
}
