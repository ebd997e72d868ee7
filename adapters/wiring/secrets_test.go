package wiring

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hostforge/hostforge"
)

func TestDSNSecrets(t *testing.T) {
	for dsn, pw := range map[string]string{
		"postgres://hostforge:s3cr%40t@db.example:5432/ledger":          "s3cr@t",
		"host=db.example user=hostforge password='pa ss' dbname=ledger": "pa ss",
		"host=db.example password=plain dbname=ledger":                  "plain",
	} {
		if got := dsnSecrets(dsn); !slices.Contains(got, pw) || !slices.Contains(got, dsn) {
			t.Errorf("dsnSecrets(%q) = %q, want the DSN and %q", dsn, got, pw)
		}
	}
	// Open's part: the ledger's DSN file is read and registered.
	f := filepath.Join(t.TempDir(), "ledger.dsn")
	if err := os.WriteFile(f, []byte("postgres://u:dsn-pw-1@127.0.0.1/l\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig([]byte("site: lab1\nnetbox:\n  url: https://netbox.example.net\nledger:\n  driver: postgres\n  dsn_file: " + f + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := hostforge.NewSecrets()
	registerConfigSecrets(cfg, s)
	if got := s.Scrub("pq: password authentication failed: dsn-pw-1"); got != "pq: password authentication failed: "+hostforge.Redacted {
		t.Fatalf("got %q", got)
	}
}
