package dhcp

import (
	"fmt"
	"path"
	"strings"
)

// Config is a site's DHCP server: which software it runs, where host files
// go and how the service is tested, restarted and checked. Zero fields take
// the flavour's defaults ([Defaults]).
type Config struct {
	// Flavour is "isc" (the default) or "kea".
	Flavour Flavour `json:"flavour,omitempty"`
	// Dir is the DHCP-owned directory host files are written to: an absolute
	// path. Default /etc/dhcp/hostforge.d (ISC) or /etc/kea/hostforge.d (Kea).
	Dir string `json:"dir,omitempty"`
	// ConfigTest checks the service's whole configuration without applying
	// it; exit status 0 means valid.
	ConfigTest string `json:"config_test,omitempty"`
	// Restart restarts the service.
	Restart string `json:"restart,omitempty"`
	// Status exits 0 when the service is running.
	Status string `json:"status,omitempty"`
	// Lock is the path the phase locks on the server (flock) around every
	// change — backup, rename, config test, restart, status and rollback —
	// so that workers in several processes or on several machines change
	// the server one at a time. An absolute path: a directory, or a file
	// that is created when absent. Default: Dir itself, which needs no extra
	// file. Site scripts that restart the service by hand can take the same
	// lock: "flock /etc/dhcp/hostforge.d systemctl restart isc-dhcp-server".
	Lock string `json:"lock,omitempty"`
}

// Defaults returns the flavour's default configuration (Debian packages
// isc-dhcp-server and kea-dhcp4-server, managed by systemd).
func Defaults(f Flavour) Config {
	switch f {
	case Kea:
		return Config{
			Flavour:    Kea,
			Dir:        "/etc/kea/hostforge.d",
			ConfigTest: "kea-dhcp4 -t /etc/kea/kea-dhcp4.conf",
			Restart:    "systemctl restart kea-dhcp4-server",
			Status:     "systemctl is-active --quiet kea-dhcp4-server",
			Lock:       "/etc/kea/hostforge.d",
		}
	default:
		return Config{
			Flavour:    ISC,
			Dir:        "/etc/dhcp/hostforge.d",
			ConfigTest: "dhcpd -t -q -cf /etc/dhcp/dhcpd.conf",
			Restart:    "systemctl restart isc-dhcp-server",
			Status:     "systemctl is-active --quiet isc-dhcp-server",
			Lock:       "/etc/dhcp/hostforge.d",
		}
	}
}

// Resolved returns c with every zero field set to its flavour's default,
// and an error naming the first invalid field.
func (c Config) Resolved() (Config, error) {
	if c.Flavour == "" {
		c.Flavour = ISC
	}
	if c.Flavour != ISC && c.Flavour != Kea {
		return c, &FieldError{Field: "flavour", Value: string(c.Flavour), Reason: `want "isc" or "kea"`}
	}
	d := Defaults(c.Flavour)
	if c.Dir == "" {
		c.Dir = d.Dir
	}
	if c.ConfigTest == "" {
		c.ConfigTest = d.ConfigTest
	}
	if c.Restart == "" {
		c.Restart = d.Restart
	}
	if c.Status == "" {
		c.Status = d.Status
	}
	if c.Lock == "" {
		c.Lock = c.Dir
	}
	if !path.IsAbs(c.Dir) || path.Clean(c.Dir) != c.Dir || c.Dir == "/" {
		return c, &FieldError{Field: "dir", Value: c.Dir, Reason: "want a clean absolute directory path other than /"}
	}
	if strings.ContainsAny(c.Dir, "\x00\n") {
		return c, &FieldError{Field: "dir", Value: c.Dir, Reason: "contains a NUL or newline"}
	}
	if !path.IsAbs(c.Lock) || path.Clean(c.Lock) != c.Lock || c.Lock == "/" || strings.ContainsAny(c.Lock, "\x00\n") {
		return c, &FieldError{Field: "lock", Value: c.Lock, Reason: "want a clean absolute path other than /, without NUL or newline"}
	}
	for _, f := range []struct{ name, cmd string }{{"config_test", c.ConfigTest}, {"restart", c.Restart}, {"status", c.Status}} {
		if strings.ContainsAny(f.cmd, "\x00\n") {
			return c, &FieldError{Field: f.name, Value: f.cmd, Reason: "a command must be one line"}
		}
	}
	return c, nil
}

// ShellQuote quotes s as one POSIX shell word.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (c Config) String() string {
	return fmt.Sprintf("%s in %s", c.Flavour, c.Dir)
}
