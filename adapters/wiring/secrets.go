package wiring

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/hostforge/hostforge"
	"github.com/hostforge/hostforge/adapters/sqlstore"
)

// registerConfigSecrets registers the secrets the config's files hold
// beside the vault: the ledger's PostgreSQL DSN and the password inside
// it, so a database error that quotes either is scrubbed like any other
// remote text. A DSN file that does not read is left to the ledger's own
// wiring to report.
func registerConfigSecrets(cfg *Config, secrets *hostforge.Secrets) {
	if cfg.Ledger == nil || cfg.Ledger.DSNFile == "" {
		return
	}
	dsn, err := sqlstore.ReadDSNFile(cfg.Ledger.DSNFile)
	if err != nil {
		return
	}
	secrets.Add(dsnSecrets(dsn)...)
}

var dsnPassword = regexp.MustCompile(`(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// dsnSecrets are a DSN and the password it carries, in URL form
// (postgres://user:pw@host/db) or keyword form (password=pw).
func dsnSecrets(dsn string) []string {
	out := []string{dsn}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
	}
	for _, m := range dsnPassword.FindAllStringSubmatch(dsn, -1) {
		out = append(out, strings.Trim(m[1], "'"))
	}
	return out
}
