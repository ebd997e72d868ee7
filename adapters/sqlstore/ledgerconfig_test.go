package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
)

func TestLedgerConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		c       sqlstore.LedgerConfig
		wantKey string
	}{
		{"sqlite with a path", sqlstore.LedgerConfig{Driver: "sqlite", Path: "/var/lib/hostforge/ledger.db"}, ""},
		{"postgres with a dsn file", sqlstore.LedgerConfig{Driver: "postgres", DSNFile: "/etc/hostforge/ledger.dsn"}, ""},
		{"no driver", sqlstore.LedgerConfig{Path: "x"}, "driver"},
		{"unknown driver", sqlstore.LedgerConfig{Driver: "mysql", Path: "x"}, "driver"},
		{"sqlite without a path", sqlstore.LedgerConfig{Driver: "sqlite"}, "path"},
		{"sqlite with a dsn file", sqlstore.LedgerConfig{Driver: "sqlite", Path: "x", DSNFile: "y"}, "dsn_file"},
		{"postgres without a dsn file", sqlstore.LedgerConfig{Driver: "postgres"}, "dsn_file"},
		{"postgres with a path", sqlstore.LedgerConfig{Driver: "postgres", DSNFile: "y", Path: "x"}, "path"},
		{"a negative projection interval", sqlstore.LedgerConfig{Driver: "sqlite", Path: "x", ProjectionInterval: -1}, "projection_interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			var ce *sqlstore.ConfigError
			if tt.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.As(err, &ce) || ce.Key != tt.wantKey || !errors.Is(err, hostforge.ErrInvalid) {
				t.Fatalf("Validate = %v, want a ConfigError of ledger.%s", err, tt.wantKey)
			}
		})
	}
}

func TestReadDSNFile(t *testing.T) {
	const secret = "s3cret-pw"
	dsn := "postgres://hf:" + secret + "@127.0.0.1:1/ledger?sslmode=disable"
	dir := t.TempDir()
	write := func(name string, mode os.FileMode, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		wantErr bool
	}{
		{"owner only", write("ok.dsn", 0o600, dsn+"\n"), false},
		{"owner read only", write("ro.dsn", 0o400, dsn), false},
		{"group readable", write("group.dsn", 0o640, dsn), true},
		{"world readable", write("world.dsn", 0o644, dsn), true},
		{"empty", write("empty.dsn", 0o600, "\n"), true},
		{"two lines", write("two.dsn", 0o600, dsn+"\n"+dsn), true},
		{"missing", filepath.Join(dir, "nope.dsn"), true},
		{"a directory", dir, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sqlstore.ReadDSNFile(tt.path)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ReadDSNFile = %q, %v", got, err)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Fatalf("the error shows the DSN: %v", err)
			}
			if err == nil && got != dsn {
				t.Fatalf("DSN %q", got)
			}
		})
	}
}

func TestOpenLedger(t *testing.T) {
	ctx := context.Background()
	l, db, err := sqlstore.OpenLedger(ctx, sqlstore.LedgerConfig{Driver: "sqlite", Path: filepath.Join(t.TempDir(), "ledger.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := l.Register(ctx, "h1"); err != nil {
		t.Fatal(err)
	}
	// A PostgreSQL that does not answer: STATE_STORE_UNAVAILABLE, and the
	// password is nowhere in the error.
	const secret = "pw-never-shown"
	p := filepath.Join(t.TempDir(), "ledger.dsn")
	if err := os.WriteFile(p, []byte("postgres://hf:"+secret+"@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=2"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = sqlstore.OpenLedger(ctx, sqlstore.LedgerConfig{Driver: "postgres", DSNFile: p})
	if hostforge.CodeOf(err) != sqlstore.Unavailable.Code || strings.Contains(err.Error(), secret) {
		t.Fatalf("OpenLedger on a PostgreSQL that is down: %v", err)
	}
}
