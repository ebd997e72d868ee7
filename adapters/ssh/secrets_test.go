package ssh_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hostforge/hostforge"
)

// What the server prints (a config test that quotes a file, a shell that
// echoes its input) reaches the DHCP phase's messages: it is scrubbed of
// the process's secrets first.
func TestCommandOutputIsScrubbed(t *testing.T) {
	f := newFixture(t)
	f.cfg.Secrets = hostforge.NewSecrets("shared-secret-77")
	c, err := f.dialer(t).DialClient(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := c.Run(context.Background(), "echo 'dhcpd: line 3: bad value shared-secret-77' >&2; exit 1")
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out.Output); strings.Contains(s, "shared-secret-77") || !strings.Contains(s, "bad value "+hostforge.Redacted) {
		t.Fatalf("output %q", s)
	}
}
